//===- PrepareLoopsForCpu.cpp - Innermost loops the vectoriser takes ------===//
//
// remat-prepare-loops-for-cpu (Passes.td). The ops that no library runs
// (elementwise ops, reductions, pooling, transposes, and contractions in
// element types the libraries do not take) are compiled by
// convert-linalg-to-loops and LLVM at -O3: this pass picks, per op, the
// innermost loop that LLVM's loop vectoriser can turn into vector code.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Debug.h"
#include "remat/Transforms/ContractionMatch.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace remat {
#define GEN_PASS_DEF_REMATPREPARELOOPSFORCPUPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

#define DEBUG_TYPE "remat-prepare-loops-for-cpu"

namespace {

/// How well one step of `loop` suits vector code, over every operand: a unit
/// stride or no movement (the operand is invariant) counts 2, any other
/// stride -1 (a gather or scatter).
int vectorScore(ArrayRef<SmallVector<int64_t>> coefficients, unsigned loop) {
  int score = 0;
  for (const SmallVector<int64_t> &c : coefficients) {
    int64_t stride = c[loop];
    score += (stride == 0 || stride == 1) ? 2 : -1;
  }
  return score;
}

/// The `arith.addf` that combines the output's old value with the body's
/// contribution, when the op has one output whose new value is exactly that.
arith::AddFOp addCombiner(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1)
    return nullptr;
  Block *body = op.getBody();
  BlockArgument out = body->getArgument(op.getNumDpsInputs());
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || (add.getLhs() != out && add.getRhs() != out) ||
      !out.hasOneUse())
    return nullptr;
  return add;
}

/// The f32 transcendental functions written in-line as upstream's
/// polynomial approximations (MathTransforms' PolynomialApproximation.cpp:
/// range reduction and minimax polynomials, a few ulp), not libm calls.
bool approximatedInLine(StringRef name) {
  static constexpr StringRef kNames[] = {"exp",  "expm1", "log", "log1p",
                                         "log2", "tanh",  "erf"};
  name.consume_front("math.");
  return llvm::is_contained(kNames, name);
}

/// A libm call per element (`expf`, `logf`, `tanhf`...) stops LLVM's loop
/// vectoriser: softmax, GELU, the losses and their gradients stayed scalar.
/// Their approximations are arith ops it vectorises. Only f32 (f64 keeps
/// libm's accuracy), only these ops and what their rewrites create.
LogicalResult approximateTranscendentals(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<math::MathDialect>(op->getDialect()) &&
        approximatedInLine(op->getName().getStringRef()) &&
        op->getNumResults() == 1 && op->getResult(0).getType().isF32())
      ops.push_back(op);
  });
  if (ops.empty())
    return success();
  RewritePatternSet patterns(root->getContext());
  populateMathPolynomialApproximationPatterns(patterns, approximatedInLine);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  config.enableFolding(false);
  return applyOpPatternsGreedily(ops, std::move(patterns), config);
}

struct RematPrepareLoopsForCpuPass
    : remat::impl::RematPrepareLoopsForCpuPassBase<
          RematPrepareLoopsForCpuPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(approximateTranscendentals(getOperation())))
      return signalPassFailure();
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 1 &&
          !isa<linalg::FillOp, linalg::CopyOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      prepare(rewriter, op);
  }

  void prepare(IRRewriter &rewriter, linalg::LinalgOp op) {
    unsigned numLoops = op.getNumLoops();
    SmallVector<SmallVector<int64_t>> coefficients;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue; // scalars
      std::optional<SmallVector<int64_t>> c =
          remat::loopAddressCoefficients(op, &operand);
      if (!c)
        return; // not analysable: leave the op as it is
      coefficients.push_back(std::move(*c));
    }
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    auto isParallel = [&](unsigned l) {
      return iterators[l] == utils::IteratorType::parallel;
    };
    // The best innermost loop; loops of a single iteration never are.
    unsigned best = numLoops - 1;
    int bestScore = std::numeric_limits<int>::min();
    for (unsigned l = 0; l < numLoops; ++l) {
      if (ranges[l] == 1)
        continue;
      int score = vectorScore(coefficients, l);
      bool better = score > bestScore ||
                    (score == bestScore && isParallel(l) && !isParallel(best));
      if (better) {
        best = l;
        bestScore = score;
      }
    }
    bool reductionInnermost = !isParallel(best);
    if (best == numLoops - 1 && !reductionInnermost)
      return; // already the best, nothing to reassociate

    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return;
      generic = *generalized;
    }
    if (best != numLoops - 1) {
      SmallVector<unsigned> permutation;
      for (unsigned l = 0; l < numLoops; ++l)
        if (l != best)
          permutation.push_back(l);
      permutation.push_back(best);
      if (failed(linalg::interchangeGenericOp(rewriter, generic, permutation)))
        return;
      LLVM_DEBUG(llvm::dbgs() << "remat-prepare-loops-for-cpu: "
                              << generic->getLoc() << ": loop " << best
                              << " innermost\n");
    }
    if (reductionInnermost)
      if (arith::AddFOp add = addCombiner(generic)) {
        add.setFastmathAttr(arith::FastMathFlagsAttr::get(
            &getContext(), add.getFastmath() | arith::FastMathFlags::reassoc));
        LLVM_DEBUG(llvm::dbgs() << "remat-prepare-loops-for-cpu: "
                                << generic->getLoc()
                                << ": reduction innermost, reassociated\n");
      }
  }
};

} // namespace
