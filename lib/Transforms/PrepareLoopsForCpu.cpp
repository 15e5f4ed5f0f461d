//===- PrepareLoopsForCpu.cpp - Innermost loops the vectoriser takes ------===//
//
// remat-prepare-loops-for-cpu (Passes.td). The ops that no library runs
// (elementwise ops, reductions, pooling, transposes, and contractions in
// element types the libraries do not take) are compiled by
// convert-linalg-to-loops and LLVM at -O3: this pass picks, per op, the
// innermost loop that LLVM's loop vectoriser can turn into vector code.
// remat-share-loops-across-threads and remat-outline-loop-nests (also
// Passes.td) finish the loops' CPU lowering: OpenMP, one function per nest.
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
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/StringSet.h"

namespace remat {
#define GEN_PASS_DEF_REMATPREPARELOOPSFORCPUPASS
#define GEN_PASS_DEF_REMATSHARELOOPSACROSSTHREADSPASS
#define GEN_PASS_DEF_REMATOUTLINELOOPNESTSPASS
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

/// The number of iterations of a loop with constant bounds, or nullopt.
std::optional<int64_t> tripCount(Value lower, Value upper, Value step) {
  std::optional<int64_t> lb = getConstantIntValue(lower),
                         ub = getConstantIntValue(upper),
                         st = getConstantIntValue(step);
  if (!lb || !ub || !st || *st <= 0)
    return std::nullopt;
  return *ub > *lb ? (*ub - *lb + *st - 1) / *st : 0;
}

/// The iterations of a parallel loop over its first `numDims` dimensions
/// (all by default), or nullopt.
std::optional<int64_t> tripCount(scf::ParallelOp loop,
                                 unsigned numDims = ~0u) {
  int64_t trips = 1;
  for (auto [d, bounds] : llvm::enumerate(llvm::zip(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))) {
    if (d >= numDims)
      break;
    auto [lb, ub, st] = bounds;
    std::optional<int64_t> t = tripCount(lb, ub, st);
    if (!t)
      return std::nullopt;
    trips *= *t;
  }
  return trips;
}

/// Operations executed by one run of `block`: its loops' bodies times their
/// trip counts, every other op once. nullopt where a bound is not constant.
std::optional<int64_t> operationsExecuted(Block &block) {
  int64_t total = 0;
  for (Operation &op : block) {
    int64_t trips = 1;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      std::optional<int64_t> t = tripCount(
          loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      if (!t)
        return std::nullopt;
      trips = *t;
    } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      std::optional<int64_t> t = tripCount(loop);
      if (!t)
        return std::nullopt;
      trips = *t;
    }
    int64_t inner = 1;
    for (Region &region : op.getRegions())
      for (Block &b : region) {
        std::optional<int64_t> n = operationsExecuted(b);
        if (!n)
          return std::nullopt;
        inner += *n;
      }
    total += trips * inner;
  }
  return total;
}

struct RematShareLoopsAcrossThreadsPass
    : remat::impl::RematShareLoopsAcrossThreadsPassBase<
          RematShareLoopsAcrossThreadsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Post-order: a nest's inner parallel loops come before the outer one.
    SmallVector<scf::ParallelOp> sequential;
    // (Loops with reductions, never ours, are left to upstream as written.)
    module.walk([&](scf::ParallelOp loop) {
      if (loop.getNumReductions() == 0 &&
          (loop->getParentOfType<scf::ParallelOp>() || !pays(loop)))
        sequential.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : sequential) {
      rewriter.setInsertionPoint(loop);
      if (failed(scf::parallelForToNestedFors(rewriter, loop))) {
        loop.emitError() << getArgument()
                         << ": cannot turn this parallel loop into scf.for";
        return signalPassFailure();
      }
    }
    // Only the leading dimensions are shared (the others become loops
    // inside): convert-scf-to-openmp collapses every dimension of a loop
    // into one, and the div/mod indexing that takes would keep LLVM's
    // vectoriser off the innermost loop.
    SmallVector<scf::ParallelOp> shared;
    module.walk([&](scf::ParallelOp loop) { shared.push_back(loop); });
    for (scf::ParallelOp loop : shared)
      shareLeadingDimensions(rewriter, loop);
    // The rest as OpenMP work sharing, by upstream's conversion.
    OpPassManager openmp(ModuleOp::getOperationName());
    openmp.addPass(createConvertSCFToOpenMPPass());
    if (failed(runPipeline(openmp, module)))
      return signalPassFailure();
    // It wraps each body in a memref.alloca_scope (for allocas in the
    // body, freed per iteration); our bodies have none, and a scope whose
    // body later becomes several blocks (its inner scf.for lowered to
    // branches) is invalid. Upstream's own canonicalization of the scope
    // inlines those without allocas, and nothing else is touched.
    SmallVector<Operation *> scopes;
    module.walk([&](memref::AllocaScopeOp scope) {
      scopes.push_back(scope);
    });
    if (scopes.empty())
      return;
    RewritePatternSet patterns(&getContext());
    memref::AllocaScopeOp::getCanonicalizationPatterns(patterns,
                                                       &getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    config.enableFolding(false);
    if (failed(applyOpPatternsGreedily(scopes, std::move(patterns), config)))
      return signalPassFailure();
  }

  /// Keeps in `loop` its leading dimensions up to the first whose
  /// iterations number at least kChunks together (never the innermost one
  /// of several) and moves the others into scf.for loops in its body.
  static void shareLeadingDimensions(IRRewriter &rewriter,
                                     scf::ParallelOp loop) {
    constexpr int64_t kChunks = 64; // enough to balance a few threads
    if (loop.getNumReductions() != 0)
      return;
    unsigned numDims = loop.getNumLoops(), keep = 0;
    while (keep + 1 < numDims && *tripCount(loop, keep) < kChunks)
      ++keep;
    if (keep == 0)
      keep = 1;
    if (keep == numDims)
      return;
    Location loc = loop.getLoc();
    rewriter.setInsertionPoint(loop);
    auto outer = scf::ParallelOp::create(
        rewriter, loc, loop.getLowerBound().take_front(keep),
        loop.getUpperBound().take_front(keep),
        loop.getStep().take_front(keep));
    SmallVector<Value> ivs(outer.getInductionVars());
    rewriter.setInsertionPointToStart(outer.getBody());
    Operation *innermostEnd = nullptr;
    for (unsigned d = keep; d < numDims; ++d) {
      auto inner = scf::ForOp::create(rewriter, loc, loop.getLowerBound()[d],
                                      loop.getUpperBound()[d],
                                      loop.getStep()[d]);
      ivs.push_back(inner.getInductionVar());
      innermostEnd = inner.getBody()->getTerminator();
      rewriter.setInsertionPoint(innermostEnd);
    }
    Block *body = loop.getBody();
    rewriter.eraseOp(body->getTerminator()); // scf.reduce without operands
    rewriter.inlineBlockBefore(body, innermostEnd, ivs);
    rewriter.eraseOp(loop);
  }

  /// A fork and a join cost a few microseconds: worth it for a loop that
  /// has iterations to share and enough operations in all of them.
  bool pays(scf::ParallelOp loop) {
    std::optional<int64_t> trips = tripCount(loop);
    if (!trips || *trips < 2)
      return false;
    std::optional<int64_t> body = operationsExecuted(*loop.getBody());
    return body && *trips * *body >= static_cast<int64_t>(minOperations);
  }
};

struct RematOutlineLoopNestsPass
    : remat::impl::RematOutlineLoopNestsPassBase<RematOutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    // The symbols taken (a lookup in the module per new name would scan it:
    // quadratic on a step of thousands of nests).
    taken.clear();
    for (Operation &op : module.getOps())
      if (auto name = op.getAttrOfType<StringAttr>(
              SymbolTable::getSymbolAttrName()))
        taken.insert(name.getValue());
    IRRewriter rewriter(&getContext());
    for (func::FuncOp function : functions) {
      if (function.isExternal())
        continue;
      // The outermost loops: a nest moves whole, with what it contains.
      SmallVector<Operation *> nests;
      function.walk<WalkOrder::PreOrder>([&](Operation *op) {
        if (!isa<scf::ForOp, scf::ParallelOp, scf::WhileOp, omp::ParallelOp>(
                op))
          return WalkResult::advance();
        nests.push_back(op);
        return WalkResult::skip();
      });
      unsigned number = 0;
      for (Operation *nest : nests)
        if (failed(outline(rewriter, function, nest, number)))
          return signalPassFailure();
    }
  }

  llvm::StringSet<> taken;

  /// Moves `nest` into a new function `<function>.loops<N>` and calls it.
  LogicalResult outline(IRRewriter &rewriter, func::FuncOp function,
                        Operation *nest, unsigned &number) {
    Location loc = nest->getLoc();
    // The nest inside an scf.execute_region, whose one-block region
    // upstream's outlining takes (the yielded values become results).
    rewriter.setInsertionPoint(nest);
    auto wrapper =
        scf::ExecuteRegionOp::create(rewriter, loc, nest->getResultTypes());
    nest->replaceAllUsesWith(wrapper->getResults());
    Block *body = rewriter.createBlock(&wrapper.getRegion());
    rewriter.moveOpBefore(nest, body, body->end());
    rewriter.setInsertionPointToEnd(body);
    scf::YieldOp::create(rewriter, loc, nest->getResults());
    // Constants are cloned in (LLVM folds them into the nest's code), not
    // passed: only buffers and computed values become arguments.
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(wrapper.getRegion(), captured);
    rewriter.setInsertionPointToStart(body);
    for (Value value : captured) {
      Operation *def = value.getDefiningOp();
      if (!def || def->getNumOperands() != 0 || def->getNumRegions() != 0 ||
          !def->hasTrait<OpTrait::ConstantLike>())
        continue;
      Value inside = rewriter.clone(*def)->getResult(
          cast<OpResult>(value).getResultNumber());
      rewriter.replaceUsesWithIf(value, inside, [&](OpOperand &use) {
        return wrapper->isProperAncestor(use.getOwner());
      });
    }
    std::string name;
    do {
      name = (function.getSymName() + ".loops" + Twine(number++)).str();
    } while (!taken.insert(name).second);
    FailureOr<func::FuncOp> outlined =
        outlineSingleBlockRegion(rewriter, loc, wrapper.getRegion(), name);
    if (failed(outlined))
      return wrapper.emitError()
             << getArgument() << ": cannot outline this loop nest";
    outlined->setPrivate();
    // Internal and never inlined back (LLVM would inline a function called
    // once, and the step would again be one function).
    outlined->getOperation()->setAttr(
        "llvm.linkage",
        LLVM::LinkageAttr::get(&getContext(), LLVM::Linkage::Internal));
    outlined->getOperation()->setAttr(
        "passthrough", rewriter.getArrayAttr(rewriter.getStringAttr(
                           "noinline")));
    // The wrapper now holds the call: its block goes where it stood.
    Block &callBlock = wrapper.getRegion().front();
    auto yield = cast<scf::YieldOp>(callBlock.getTerminator());
    SmallVector<Value> results(yield.getOperands());
    rewriter.inlineBlockBefore(&callBlock, wrapper);
    rewriter.replaceOp(wrapper, results);
    rewriter.eraseOp(yield);
    return success();
  }
};

} // namespace
