//===- GpuBlockReductions.cpp - Long reductions as block reductions -------===//
//
// remat-gpu-block-reductions (Passes.td). A normalisation's statistics or a
// loss reduce thousands of elements into each of a few outputs; one thread per
// output, as remat-map-parallel-loops-to-gpu maps them, leaves the GPU
// nearly idle. Here each output element gets a block: the threads stride
// over the reduction domain, `gpu.all_reduce` (lowered by
// convert-gpu-to-nvvm to warp shuffles and shared memory) combines them, and
// thread 0 writes.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <limits>

namespace remat {
#define GEN_PASS_DEF_REMATGPUBLOCKREDUCTIONSPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

#define DEBUG_TYPE "remat-gpu-block-reductions"

namespace {

/// The combiner of one output: its kind and identity.
struct Combiner {
  Operation *op = nullptr;
  /// The combiner's operand that is not the output's old value.
  Value contribution;
  gpu::AllReduceOperation kind;
  TypedAttr identity;
};

/// The combiner of output `i`: `yield[i] = combine(out_i, contribution)`,
/// `out_i` read by the combiner only and the combiner's result only yielded.
std::optional<Combiner> matchCombiner(linalg::GenericOp op, unsigned i) {
  Block *body = op.getBody();
  BlockArgument out = body->getArgument(op.getNumDpsInputs() + i);
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *def = yield.getOperand(i).getDefiningOp();
  if (!def || def->getBlock() != body || def->getNumOperands() != 2 ||
      def->getNumResults() != 1 || !def->getResult(0).hasOneUse() ||
      !out.hasOneUse() || *out.getUsers().begin() != def)
    return std::nullopt;
  Combiner c;
  c.op = def;
  c.contribution =
      def->getOperand(0) == out ? def->getOperand(1) : def->getOperand(0);
  if (c.contribution == out)
    return std::nullopt;
  Type type = out.getType();
  Builder b(op.getContext());
  auto floatIdentity = [&](double v) -> TypedAttr {
    return b.getFloatAttr(type, v);
  };
  double inf = std::numeric_limits<double>::infinity();
  if (isa<arith::AddFOp>(def)) {
    c.kind = gpu::AllReduceOperation::ADD;
    c.identity = floatIdentity(0.0);
  } else if (isa<arith::MulFOp>(def)) {
    c.kind = gpu::AllReduceOperation::MUL;
    c.identity = floatIdentity(1.0);
  } else if (isa<arith::MaximumFOp>(def)) {
    c.kind = gpu::AllReduceOperation::MAXIMUMF;
    c.identity = floatIdentity(-inf);
  } else if (isa<arith::MaxNumFOp>(def)) {
    c.kind = gpu::AllReduceOperation::MAXNUMF;
    c.identity = floatIdentity(-inf);
  } else if (isa<arith::MinimumFOp>(def)) {
    c.kind = gpu::AllReduceOperation::MINIMUMF;
    c.identity = floatIdentity(inf);
  } else if (isa<arith::MinNumFOp>(def)) {
    c.kind = gpu::AllReduceOperation::MINNUMF;
    c.identity = floatIdentity(inf);
  } else if (isa<arith::AddIOp>(def) && isa<IntegerType>(type)) {
    c.kind = gpu::AllReduceOperation::ADD;
    c.identity = b.getIntegerAttr(type, 0);
  } else if (isa<arith::MulIOp>(def) && isa<IntegerType>(type)) {
    c.kind = gpu::AllReduceOperation::MUL;
    c.identity = b.getIntegerAttr(type, 1);
  } else {
    return std::nullopt;
  }
  return c;
}

/// Every output's combiner (a normalisation's gradient sums two, a loss its
/// sum and its count), or none when one output has none.
std::optional<SmallVector<Combiner>> matchCombiners(linalg::GenericOp op) {
  if (op.getNumDpsInits() < 1 || op.getNumResults() != 0)
    return std::nullopt;
  SmallVector<Combiner> combiners;
  for (unsigned i = 0, e = op.getNumDpsInits(); i < e; ++i) {
    std::optional<Combiner> c = matchCombiner(op, i);
    if (!c)
      return std::nullopt;
    combiners.push_back(*c);
  }
  return combiners;
}

struct RematGpuBlockReductionsPass
    : remat::impl::RematGpuBlockReductionsPassBase<
          RematGpuBlockReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockSize < 32 || blockSize > 1024 || blockSize % 32) {
      getOperation().emitError()
          << getArgument() << ": block-size must be a multiple of 32 in "
          << "[32, 1024]";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && !op->getParentOfType<scf::ParallelOp>())
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : candidates)
      rewrite(rewriter, op);
  }

  /// Replaces `op` by its block-reduction launch when it qualifies.
  void rewrite(IRRewriter &rewriter, linalg::GenericOp op) {
    std::optional<SmallVector<Combiner>> combiners = matchCombiners(op);
    if (!combiners)
      return;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return;
    SmallVector<unsigned> parallel, reduced;
    for (auto [l, it] : llvm::enumerate(op.getIteratorTypesArray()))
      (it == utils::IteratorType::parallel ? parallel : reduced).push_back(l);
    int64_t outputs = 1, terms = 1;
    for (unsigned l : parallel)
      outputs *= ranges[l];
    for (unsigned l : reduced)
      terms *= ranges[l];
    // Long reductions get a block; so do shorter ones with few outputs, where
    // one thread per output would leave the GPU nearly idle (a layer
    // normalisation's 256 terms for each of 128 tokens).
    bool longEnough = terms >= minReduction ||
                      (outputs < fewOutputs && terms >= minFewOutputsReduction);
    if (reduced.empty() || !longEnough || outputs < 1 ||
        outputs > std::numeric_limits<int32_t>::max())
      return;
    // Every input a buffer (scalars are passed as they are) with a linear
    // map; the output's map a projected permutation of the parallel loops.
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };
    Value one = index(1);
    auto launch = gpu::LaunchOp::create(rewriter, loc, index(outputs), one,
                                        one, index(blockSize), one, one);
    Block &body = launch.getBody().front();
    rewriter.setInsertionPointToStart(&body);
    Value blockId = launch.getBlockIds().x;
    Value threadId = launch.getThreadIds().x;
    auto inner = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(rewriter, loc, v);
    };

    // The loop indices: the parallel ones from the block, row-major.
    SmallVector<Value> loops(ranges.size());
    Value rest = blockId;
    for (unsigned l : llvm::reverse(parallel)) {
      Value r = inner(ranges[l]);
      loops[l] = arith::RemUIOp::create(rewriter, loc, rest, r);
      rest = arith::DivUIOp::create(rewriter, loc, rest, r);
    }

    SmallVector<Value> identities;
    for (const Combiner &c : *combiners)
      identities.push_back(arith::ConstantOp::create(rewriter, loc, c.identity));
    Block *opBody = op.getBody();
    llvm::SmallPtrSet<Operation *, 4> combinerOps;
    for (const Combiner &c : *combiners)
      combinerOps.insert(c.op);
    auto forOp = scf::ForOp::create(
        rewriter, loc, threadId, inner(terms), inner(blockSize), identities,
        [&](OpBuilder &b, Location l, Value linear, ValueRange acc) {
          SmallVector<Value> indices = loops;
          Value left = linear;
          for (unsigned r : llvm::reverse(reduced)) {
            Value size = arith::ConstantIndexOp::create(b, l, ranges[r]);
            indices[r] = arith::RemUIOp::create(b, l, left, size);
            left = arith::DivUIOp::create(b, l, left, size);
          }
          // The body on the loaded elements, up to the contributions.
          IRMapping map;
          for (OpOperand *input : op.getDpsInputOperands()) {
            Value v = input->get();
            BlockArgument arg = opBody->getArgument(input->getOperandNumber());
            if (!isa<MemRefType>(v.getType())) {
              map.map(arg, v);
              continue;
            }
            AffineMap m = op.getMatchingIndexingMap(input);
            SmallVector<Value> at;
            for (AffineExpr e : m.getResults())
              at.push_back(affine::AffineApplyOp::create(
                  b, l, AffineMap::get(m.getNumDims(), 0, e), indices));
            map.map(arg, memref::LoadOp::create(b, l, v, at));
          }
          for (Operation &bodyOp : opBody->without_terminator()) {
            if (combinerOps.contains(&bodyOp))
              continue;
            if (auto idx = dyn_cast<linalg::IndexOp>(bodyOp)) {
              map.map(idx.getResult(), indices[idx.getDim()]);
              continue;
            }
            b.clone(bodyOp, map);
          }
          SmallVector<Value> next;
          for (auto [c, partial] : llvm::zip(*combiners, acc)) {
            Operation *combined = b.clone(*c.op, map);
            combined->setOperands(
                ValueRange{partial, map.lookupOrDefault(c.contribution)});
            next.push_back(combined->getResult(0));
          }
          scf::YieldOp::create(b, l, next);
        });
    // One tree per output; thread 0 combines each block's result into its
    // output.
    SmallVector<Value> totals;
    for (auto [c, partial] : llvm::zip(*combiners, forOp.getResults()))
      totals.push_back(gpu::AllReduceOp::create(
          rewriter, loc, c.identity.getType(), partial,
          gpu::AllReduceOperationAttr::get(rewriter.getContext(), c.kind),
          /*uniform=*/true));
    Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        threadId, inner(0));
    auto ifOp = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
    rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
    // The outputs' maps read the parallel loops only: the reduced ones are
    // given 0.
    SmallVector<Value> outLoops = loops;
    for (unsigned r : reduced)
      outLoops[r] = inner(0);
    for (auto [i, c] : llvm::enumerate(*combiners)) {
      OpOperand *init = op.getDpsInitOperand(i);
      AffineMap outMap = op.getMatchingIndexingMap(init);
      SmallVector<Value> at;
      for (AffineExpr e : outMap.getResults())
        at.push_back(affine::AffineApplyOp::create(
            rewriter, loc, AffineMap::get(outMap.getNumDims(), 0, e),
            outLoops));
      Value old = memref::LoadOp::create(rewriter, loc, init->get(), at);
      IRMapping finalMap;
      Operation *result = rewriter.clone(*c.op, finalMap);
      result->setOperands(ValueRange{old, totals[i]});
      memref::StoreOp::create(rewriter, loc, result->getResult(0), init->get(),
                              at);
    }
    rewriter.setInsertionPointToEnd(&body);
    gpu::TerminatorOp::create(rewriter, loc);
    LLVM_DEBUG(llvm::dbgs() << getArgument() << ": " << loc << ": " << outputs
                            << " blocks of " << blockSize << " threads over "
                            << terms << " terms\n");
    rewriter.eraseOp(op);
  }
};

} // namespace
