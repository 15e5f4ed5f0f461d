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
#include "remat/Transforms/BufferOrigin.h"
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
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/StringSet.h"

namespace remat {
#define GEN_PASS_DEF_REMATPREPARELOOPSFORCPUPASS
#define GEN_PASS_DEF_REMATSHARELOOPSACROSSTHREADSPASS
#define GEN_PASS_DEF_REMATOUTLINELOOPNESTSPASS
#define GEN_PASS_DEF_REMATPROMOTELOOPACCUMULATORSPASS
#define GEN_PASS_DEF_REMATKEEPINNERLOOPSROLLEDPASS
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

/// Whether `loop` names the output element in every output of `op`: a
/// result of each output's map is exactly that loop, and no other result
/// uses it.
bool namesOutputElement(linalg::LinalgOp op, unsigned loop) {
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    bool plain = false;
    for (AffineExpr result : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(result);
          dim && dim.getPosition() == loop)
        plain = true;
      else if (result.isFunctionOfDim(loop))
        return false;
    }
    if (!plain)
      return false;
  }
  return true;
}

/// The `arith.addf` combiners of a reduction: for every output, the addf
/// that adds the body's contribution to the output's old value and is the
/// output's new value (a batch norm's gradient sums two such outputs in one
/// pass). Empty unless every output has one.
SmallVector<arith::AddFOp> addCombiners(linalg::GenericOp op) {
  SmallVector<arith::AddFOp> adds;
  Block *body = op.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  for (unsigned i = 0, e = op.getNumDpsInits(); i < e; ++i) {
    BlockArgument out = body->getArgument(op.getNumDpsInputs() + i);
    auto add = yield.getOperand(i).getDefiningOp<arith::AddFOp>();
    if (!add || (add.getLhs() != out && add.getRhs() != out) ||
        !out.hasOneUse())
      return {};
    adds.push_back(add);
  }
  return adds;
}

/// The float constant `v` is (a scalar, or a splat of one), if it is one.
std::optional<APFloat> floatConstant(Value v) {
  APFloat value(APFloat::Bogus());
  if (!matchPattern(v, m_ConstantFloat(&value)))
    return std::nullopt;
  return value;
}

/// `arith.maximumf` / `arith.minimumf` as compares and selects that give the
/// same result bit for bit: a NaN operand gives a NaN, and +0 is above -0
/// (arith's semantics, IEEE 754-2019 maximum/minimum). LLVM lowers the two
/// ops to the `llvm.maximum`/`llvm.minimum` intrinsics, which x86 has no
/// vector instruction for before AVX10.2: the loop vectoriser left every loop
/// with one scalar (ReLU6 and clamps, max pooling; mobilenet_v2's ReLU6 ran at
/// 0.75 G elements/s). Upstream's arith-expand rewrites them the same way
/// but returns either zero when the operands are +0 and -0.
///
///   pick = lhs ugt rhs ? lhs : rhs      (ult for minimumf; true if lhs is NaN)
///   pick = lhs oeq rhs ? bits(lhs) & bits(rhs) : pick   (| for minimumf)
///   pick = rhs uno rhs ? rhs : pick
///
/// Equal operands differ only as +0 and -0, whose bitwise and (or) is the
/// maximum (minimum). With a constant operand (moved to the right) the NaN
/// test goes when it is not a NaN, and the zero test unless it is a zero of
/// the sign that loses (-0 for maximumf, +0 for minimumf).
Value expandMaximumMinimum(OpBuilder &b, Location loc, Value lhs, Value rhs,
                           bool isMaximum) {
  if (floatConstant(lhs) && !floatConstant(rhs))
    std::swap(lhs, rhs);
  std::optional<APFloat> constant = floatConstant(rhs);
  Value pick = arith::SelectOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc,
                            isMaximum ? arith::CmpFPredicate::UGT
                                      : arith::CmpFPredicate::ULT,
                            lhs, rhs),
      lhs, rhs);
  if (!constant || (constant->isZero() && constant->isNegative() == isMaximum)) {
    Type type = lhs.getType();
    auto floatType = cast<FloatType>(getElementTypeOrSelf(type));
    Type intType = b.getIntegerType(floatType.getWidth());
    if (auto vector = dyn_cast<VectorType>(type))
      intType = vector.clone(intType);
    Value lhsBits = arith::BitcastOp::create(b, loc, intType, lhs);
    Value rhsBits = arith::BitcastOp::create(b, loc, intType, rhs);
    Value bits = isMaximum
                     ? arith::AndIOp::create(b, loc, lhsBits, rhsBits).getResult()
                     : arith::OrIOp::create(b, loc, lhsBits, rhsBits).getResult();
    Value equal =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, lhs, rhs);
    pick = arith::SelectOp::create(
        b, loc, equal, arith::BitcastOp::create(b, loc, type, bits), pick);
  }
  if (!constant || constant->isNaN()) {
    Value rhsIsNaN =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, rhs, rhs);
    pick = arith::SelectOp::create(b, loc, rhsIsNaN, rhs, pick);
  }
  return pick;
}

/// Every `arith.maximumf` and `arith.minimumf` under `root`, expanded.
void expandMaximumsAndMinimums(Operation *root) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<arith::MaximumFOp, arith::MinimumFOp>(op))
      ops.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    Value expanded = expandMaximumMinimum(rewriter, op->getLoc(),
                                          op->getOperand(0), op->getOperand(1),
                                          isa<arith::MaximumFOp>(op));
    rewriter.replaceOp(op, expanded);
  }
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

/// `op`'s loops in groups of adjacent loops that one loop can replace: the
/// same iterator type, static ranges, and in every operand the outer loop's
/// step moves the address exactly as the inner loop's whole range does
/// (coefficient[i] == coefficient[i + 1] * range[i + 1]; an operand that
/// neither loop moves qualifies). A single group per loop where nothing
/// merges, or where an operand cannot be analysed.
SmallVector<ReassociationIndices> contiguousLoopGroups(linalg::LinalgOp op) {
  unsigned numLoops = op.getNumLoops();
  SmallVector<ReassociationIndices> singles;
  for (unsigned l = 0; l < numLoops; ++l)
    singles.push_back({static_cast<int64_t>(l)});
  SmallVector<SmallVector<int64_t>> coefficients;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    std::optional<SmallVector<int64_t>> c =
        remat::loopAddressCoefficients(op, &operand);
    if (!c)
      return singles;
    coefficients.push_back(std::move(*c));
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto mergeable = [&](unsigned outer) {
    unsigned inner = outer + 1;
    if (iterators[outer] != iterators[inner] ||
        ShapedType::isDynamic(ranges[outer]) ||
        ShapedType::isDynamic(ranges[inner]))
      return false;
    return llvm::all_of(coefficients, [&](const SmallVector<int64_t> &c) {
      return c[outer] == c[inner] * ranges[inner];
    });
  };
  SmallVector<ReassociationIndices> groups = {{0}};
  for (unsigned l = 1; l < numLoops; ++l) {
    if (mergeable(l - 1))
      groups.back().push_back(l);
    else
      groups.push_back({static_cast<int64_t>(l)});
  }
  return groups;
}

/// Views `op`'s memref operands without the dimensions of size 1 that their
/// indexing maps index by the constant 0 (the exporter's grouped views of a
/// batch norm, 4x1x96x32x32 read at (n, 0, c, h, w)): each such dimension is
/// collapsed into a neighbour (memref.collapse_shape, a view) and its
/// constant dropped from the map, so that the maps become projections that
/// collapseOpIterationDims takes. Operands with no other dimension stay.
void dropConstantUnitDims(IRRewriter &rewriter, linalg::GenericOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool changed = false;
  SmallVector<std::pair<unsigned, Value>> newOperands;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    SmallVector<bool> drop;
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      auto constant = dyn_cast<AffineConstantExpr>(expr);
      drop.push_back(constant && constant.getValue() == 0 &&
                     type.getDimSize(i) == 1);
    }
    if (llvm::none_of(drop, [](bool d) { return d; }) ||
        llvm::all_of(drop, [](bool d) { return d; }))
      continue;
    // Each kept dimension takes the dropped ones before it; the last kept
    // one also those after it.
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    SmallVector<AffineExpr> kept;
    for (unsigned i = 0; i < drop.size(); ++i) {
      pending.push_back(i);
      if (!drop[i]) {
        groups.push_back(pending);
        pending.clear();
        kept.push_back(map.getResult(i));
      }
    }
    llvm::append_range(groups.back(), pending);
    if (!memref::CollapseShapeOp::isGuaranteedCollapsible(type, groups))
      continue;
    rewriter.setInsertionPoint(op);
    Value view = memref::CollapseShapeOp::create(rewriter, op.getLoc(),
                                                 operand.get(), groups);
    newOperands.push_back({operand.getOperandNumber(), view});
    maps[operand.getOperandNumber()] =
        AffineMap::get(map.getNumDims(), map.getNumSymbols(), kept,
                       op.getContext());
    changed = true;
  }
  if (!changed)
    return;
  rewriter.modifyOpInPlace(op, [&] {
    for (auto [number, view] : newOperands)
      op->setOperand(number, view);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  });
}

struct RematPrepareLoopsForCpuPass
    : remat::impl::RematPrepareLoopsForCpuPassBase<
          RematPrepareLoopsForCpuPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(approximateTranscendentals(getOperation())))
      return signalPassFailure();
    expandMaximumsAndMinimums(getOperation());
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() && op.getNumLoops() > 1 &&
          !isa<linalg::FillOp, linalg::CopyOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      if (linalg::LinalgOp prepared = prepare(rewriter, op))
        collapseContiguousLoops(rewriter, prepared);
  }

  /// Interchanges `op`'s loops (and marks its sums reassociable); returns
  /// the op as it leaves it, or null when it cannot analyse it.
  linalg::LinalgOp prepare(IRRewriter &rewriter, linalg::LinalgOp op) {
    unsigned numLoops = op.getNumLoops();
    SmallVector<SmallVector<int64_t>> coefficients;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<MemRefType>(operand.get().getType()))
        continue; // scalars
      std::optional<SmallVector<int64_t>> c =
          remat::loopAddressCoefficients(op, &operand);
      if (!c)
        return nullptr; // not analysable: leave the op as it is
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
    // Around it, the loops that name an output element (a plain dimension
    // of every output) outside the others: each output element then takes
    // all its terms while it is in cache, rather than once per sweep over
    // the whole output (remat-autodiff's transposes put their reductions
    // first: a transformer's dense embedding gradient swept its 512 KB
    // output 128 times, 12x slower). An output element's terms still
    // come in the same order (the other loops keep theirs): the same bits.
    SmallVector<unsigned> permutation;
    for (bool outputLoops : {true, false})
      for (unsigned l = 0; l < numLoops; ++l)
        if (l != best && namesOutputElement(op, l) == outputLoops)
          permutation.push_back(l);
    permutation.push_back(best);
    bool identity = llvm::equal(permutation, llvm::seq<unsigned>(0, numLoops));
    if (identity && !reductionInnermost)
      return op; // already the best, nothing to reassociate

    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return nullptr;
      generic = *generalized;
    }
    if (!identity) {
      if (failed(linalg::interchangeGenericOp(rewriter, generic, permutation)))
        return nullptr;
      LLVM_DEBUG(llvm::dbgs() << "remat-prepare-loops-for-cpu: "
                              << generic->getLoc() << ": loop " << best
                              << " innermost, output loops outside\n");
    }
    if (!reductionInnermost)
      return generic;
    SmallVector<arith::AddFOp> adds = addCombiners(generic);
    for (arith::AddFOp add : adds)
      add.setFastmathAttr(arith::FastMathFlagsAttr::get(
          &getContext(), add.getFastmath() | arith::FastMathFlags::reassoc));
    if (!adds.empty())
      LLVM_DEBUG(llvm::dbgs() << "remat-prepare-loops-for-cpu: "
                              << generic->getLoc() << ": reduction innermost, "
                              << adds.size() << " sum(s) reassociated\n");
    return generic;
  }

  /// Adjacent loops of `op` become one loop where that walks every operand
  /// exactly as the two did (upstream's collapseOpIterationDims; the
  /// operands become memref.collapse_shape views, no copy). LLVM -O3 unrolls
  /// a short innermost loop completely (a 32-pixel image row) before its loop
  /// vectoriser runs, which then vectorised the row loop around it with
  /// gathers and scatters: mobilenet_v2's ReLU6 over 4x96x32x32 took 480 us,
  /// a tenth of the speed of a copy. One loop of 393,216 iterations
  /// vectorises as a copy does.
  void collapseContiguousLoops(IRRewriter &rewriter, linalg::LinalgOp op) {
    // An op that reads its loop indices (a max pooling's gradient gathers
    // through them) would recompute each collapsed index by a division and
    // a remainder per element: measured 3.7x slower on resnet50's.
    if (!op.getBlock()->getOps<linalg::IndexOp>().empty())
      return;
    SmallVector<ReassociationIndices> groups = contiguousLoopGroups(op);
    if (groups.size() == op.getNumLoops())
      return;
    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return;
      generic = *generalized;
    }
    op = generic;
    dropConstantUnitDims(rewriter, generic);
    if (!llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isProjectedPermutation(); }) ||
        !linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), groups))
      return;
    FailureOr<linalg::CollapseResult> collapsed =
        linalg::collapseOpIterationDims(op, groups, rewriter);
    if (failed(collapsed))
      return;
    LLVM_DEBUG(llvm::dbgs() << "remat-prepare-loops-for-cpu: " << op->getLoc()
                            << ": " << op.getNumLoops() << " loops collapsed to "
                            << groups.size() << "\n");
    rewriter.replaceOp(op, collapsed->results);
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

/// Where a memref's bytes come from, as far as views show it: the value
/// they are a view of (a function argument, a fresh allocation, or something
/// else) and, for a `memref.view` at a constant byte shift of a fresh
/// allocation (the step's arena), the bytes of that view.
struct MemrefOrigin {
  enum Kind { Argument, Fresh, Global, Unknown } kind = Unknown;
  Value root;
  std::optional<std::pair<int64_t, int64_t>> bytes; // [begin, end)
};

MemrefOrigin memrefOrigin(Value value) {
  MemrefOrigin origin;
  // A reinterpret_cast may reach bytes outside its source's shape (within
  // the same allocation): byte ranges below it are not bounds.
  bool boundedByViews = true;
  while (true) {
    if (auto cast = value.getDefiningOp<memref::ReinterpretCastOp>()) {
      boundedByViews = false;
      value = cast.getSource();
      continue;
    }
    if (auto view = value.getDefiningOp<memref::ViewOp>()) {
      auto type = view.getType();
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      if (shift && type.hasStaticShape() && type.getLayout().isIdentity() &&
          type.getElementType().isIntOrFloat())
        origin.bytes = {*shift,
                        *shift + type.getNumElements() *
                                     ((type.getElementTypeBitWidth() + 7) / 8)};
      else
        origin.bytes.reset();
      value = view.getSource();
      continue;
    }
    if (auto viewLike = value.getDefiningOp<ViewLikeOpInterface>()) {
      value = viewLike.getViewSource();
      continue;
    }
    break;
  }
  origin.root = value;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
      origin.kind = MemrefOrigin::Argument;
  } else if (isa<memref::AllocOp, memref::AllocaOp>(value.getDefiningOp())) {
    origin.kind = MemrefOrigin::Fresh;
  } else if (isa<memref::GetGlobalOp>(value.getDefiningOp())) {
    origin.kind = MemrefOrigin::Global;
  } else if (auto call = value.getDefiningOp<func::CallOp>()) {
    // The runtime's arena of the step: memory no argument can point into.
    if (call.getCallee() == "remat_rt_arena")
      origin.kind = MemrefOrigin::Fresh;
  }
  if (origin.kind != MemrefOrigin::Fresh || !boundedByViews)
    origin.bytes.reset();
  return origin;
}

} // namespace

bool remat::provablyDisjoint(Value a, Value b) {
  MemrefOrigin x = memrefOrigin(a), y = memrefOrigin(b);
  if (x.kind == MemrefOrigin::Unknown || y.kind == MemrefOrigin::Unknown)
    return false;
  if (x.kind == MemrefOrigin::Global && y.kind == MemrefOrigin::Global)
    return x.root.getDefiningOp<memref::GetGlobalOp>().getName() !=
           y.root.getDefiningOp<memref::GetGlobalOp>().getName();
  if (x.root != y.root)
    return x.kind == MemrefOrigin::Fresh || y.kind == MemrefOrigin::Fresh;
  return x.bytes && y.bytes &&
         (x.bytes->second <= y.bytes->first ||
          y.bytes->second <= x.bytes->first);
}

namespace {

struct RematPromoteLoopAccumulatorsPass
    : remat::impl::RematPromoteLoopAccumulatorsPassBase<
          RematPromoteLoopAccumulatorsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops)
      promote(rewriter, loop);
  }

  /// One accumulator: the element the loop reads and writes back at the
  /// same loop-invariant indices.
  struct Accumulator {
    memref::LoadOp load;
    memref::StoreOp store;
  };

  void promote(IRRewriter &rewriter, scf::ForOp loop) {
    // The element is loaded before the loop and stored after it: only where
    // the loop runs at least once did the loop itself touch it.
    std::optional<int64_t> trips = tripCount(
        loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
    if (!trips || *trips < 1)
      return;
    Block *body = loop.getBody();
    auto invariant = [&](Value v) {
      return !loop.getBodyRegion().isAncestor(v.getParentRegion());
    };
    SmallVector<memref::LoadOp> loads;
    SmallVector<memref::StoreOp> stores;
    for (Operation &op : body->without_terminator()) {
      if (op.getNumRegions() != 0)
        return; // innermost loops only
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        loads.push_back(load);
        continue;
      }
      if (auto store = dyn_cast<memref::StoreOp>(op)) {
        stores.push_back(store);
        continue;
      }
      if (!isMemoryEffectFree(&op))
        return; // a call, an allocation, another write
    }
    // Every store is an accumulator: its memref has exactly one load in the
    // loop, before it, at the same invariant indices.
    SmallVector<Accumulator> accumulators;
    for (memref::StoreOp store : stores) {
      if (!llvm::all_of(store.getIndices(), invariant) ||
          invariant(store.getValueToStore()))
        return;
      memref::LoadOp match;
      for (memref::LoadOp load : loads) {
        if (load.getMemRef() != store.getMemRef())
          continue;
        if (match || !llvm::equal(load.getIndices(), store.getIndices()) ||
            !load->isBeforeInBlock(store))
          return;
        match = load;
      }
      if (!match)
        return;
      accumulators.push_back({match, store});
    }
    if (accumulators.empty())
      return;
    // No other access may reach an accumulator's bytes.
    for (Accumulator &acc : accumulators) {
      Value memref = acc.store.getMemRef();
      for (memref::LoadOp load : loads)
        if (load != acc.load && !remat::provablyDisjoint(load.getMemRef(), memref))
          return;
      for (Accumulator &other : accumulators)
        if (&other != &acc &&
            !remat::provablyDisjoint(other.store.getMemRef(), memref))
          return;
    }
    // init = load before the loop; the loop carries the value; store after.
    rewriter.setInsertionPoint(loop);
    SmallVector<Value> inits;
    for (Accumulator &acc : accumulators)
      inits.push_back(memref::LoadOp::create(rewriter, acc.load.getLoc(),
                                             acc.load.getMemRef(),
                                             acc.load.getIndices()));
    FailureOr<LoopLikeOpInterface> promoted = loop.replaceWithAdditionalYields(
        rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument> carried) {
          SmallVector<Value> yields;
          for (auto [acc, arg] : llvm::zip(accumulators, carried)) {
            rewriter.replaceAllUsesWith(acc.load.getResult(), arg);
            yields.push_back(acc.store.getValueToStore());
          }
          return yields;
        });
    if (failed(promoted))
      return;
    auto newLoop = cast<scf::ForOp>(promoted->getOperation());
    rewriter.setInsertionPointAfter(newLoop);
    unsigned first = newLoop.getNumResults() - accumulators.size();
    for (auto [k, acc] : llvm::enumerate(accumulators)) {
      memref::StoreOp::create(rewriter, acc.store.getLoc(),
                              newLoop.getResult(first + k),
                              acc.store.getMemRef(), acc.store.getIndices());
      rewriter.eraseOp(acc.store);
      rewriter.eraseOp(acc.load);
    }
  }
};

struct RematKeepInnerLoopsRolledPass
    : remat::impl::RematKeepInnerLoopsRolledPassBase<
          RematKeepInnerLoopsRolledPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto annotation = LLVM::LoopAnnotationAttr::get(
        context, /*disableNonforced=*/nullptr, /*vectorize=*/nullptr,
        /*interleave=*/nullptr,
        LLVM::LoopUnrollAttr::get(context, /*disable=*/BoolAttr::get(context, true),
                                  /*count=*/nullptr, /*runtimeDisable=*/nullptr,
                                  /*full=*/nullptr, /*followupUnrolled=*/nullptr,
                                  /*followupRemainder=*/nullptr,
                                  /*followupAll=*/nullptr),
        /*unrollAndJam=*/nullptr, /*licm=*/nullptr, /*distribute=*/nullptr,
        /*pipeline=*/nullptr, /*peeled=*/nullptr, /*unswitch=*/nullptr,
        /*mustProgress=*/nullptr, /*isVectorized=*/nullptr,
        /*startLoc=*/nullptr, /*endLoc=*/nullptr, /*parallelAccesses=*/{});
    getOperation().walk([&](scf::ForOp loop) {
      bool innermost = true;
      loop.getBody()->walk([&](LoopLikeOpInterface) {
        innermost = false;
        return WalkResult::interrupt();
      });
      std::optional<int64_t> trips = tripCount(
          loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      if (innermost && trips && *trips >= static_cast<int64_t>(minTripCount))
        loop->setAttr("loop_annotation", annotation);
    });
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
