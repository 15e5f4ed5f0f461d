//===- GpuMapParallelLoops.cpp - Tile scf.parallel into GPU blocks --------===//
//
// remat-map-parallel-loops-to-gpu: every outermost `scf.parallel` becomes a
// loop over tiles (the grid) around a loop inside a tile (the threads of a
// block), with `mapping` attributes for convert-parallel-loops-to-gpu.
// Upstream gpu-map-parallel-loops maps each loop to one level only, which
// for a loop nest straight out of linalg means one thread per block; tiling
// first gives blocks of up to `block-size` threads.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Debug.h"
#include "remat/Transforms/BufferOrigin.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

namespace remat {
#define GEN_PASS_DEF_REMATMAPPARALLELLOOPSTOGPUPASS
#define GEN_PASS_DEF_REMATFUSEPARALLELLOOPSPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

// -debug-only=remat-map-parallel-loops-to-gpu: the block shape of every loop.
#define DEBUG_TYPE "remat-map-parallel-loops-to-gpu"

namespace {

/// The hardware dimensions, innermost loop dimension first.
constexpr gpu::Processor kBlocks[] = {gpu::Processor::BlockX,
                                      gpu::Processor::BlockY,
                                      gpu::Processor::BlockZ};
constexpr gpu::Processor kThreads[] = {gpu::Processor::ThreadX,
                                       gpu::Processor::ThreadY,
                                       gpu::Processor::ThreadZ};

/// The static trip count of dimension `d` of `loop`, if its bounds and step
/// are constants.
std::optional<int64_t> staticTripCount(scf::ParallelOp loop, unsigned d) {
  APInt lb, ub, step;
  if (!matchPattern(loop.getLowerBound()[d], m_ConstantInt(&lb)) ||
      !matchPattern(loop.getUpperBound()[d], m_ConstantInt(&ub)) ||
      !matchPattern(loop.getStep()[d], m_ConstantInt(&step)) ||
      step.getSExtValue() <= 0)
    return std::nullopt;
  int64_t span = ub.getSExtValue() - lb.getSExtValue();
  if (span <= 0)
    return 0;
  return (span + step.getSExtValue() - 1) / step.getSExtValue();
}

struct RematMapParallelLoopsToGpuPass
    : remat::impl::RematMapParallelLoopsToGpuPassBase<
          RematMapParallelLoopsToGpuPass> {
  using Base::Base;

  void runOnOperation() override;
};

} // namespace

void RematMapParallelLoopsToGpuPass::runOnOperation() {
  if (blockSize < 1 || blockSize > 1024) {
    getOperation().emitError()
        << "remat-map-parallel-loops-to-gpu: block-size "
        << static_cast<int64_t>(blockSize) << " is not in [1, 1024]";
    return signalPassFailure();
  }
  SmallVector<scf::ParallelOp> outermost;
  getOperation().walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>() &&
        !loop->hasAttr(gpu::getMappingAttrName()))
      outermost.push_back(loop);
  });

  MLIRContext *ctx = &getContext();
  for (scf::ParallelOp loop : outermost) {
    if (!loop.getInitVals().empty()) {
      loop.emitError("remat-map-parallel-loops-to-gpu: parallel loops with "
                     "reductions are not supported");
      return signalPassFailure();
    }
    unsigned rank = loop.getNumLoops();
    unsigned mapped = std::min(rank, 3u);

    // Threads per block, innermost dimension first: it takes as many as it
    // has iterations (up to the block size), the next ones what is left.
    // CUDA's limits on a block's shape: 1024 threads in x and y, 64 in z
    // (the driver rejects a launch of block (1, 1, 128) as an invalid value);
    // on the grid, 65535 blocks in y and z.
    constexpr int64_t kMaxThreads[] = {1024, 1024, 64};
    constexpr int64_t kMaxBlocksYZ = 65535;
    SmallVector<int64_t> tileSizes(rank, 1);
    int64_t left = blockSize;
    for (unsigned k = 0; k < mapped; ++k) {
      unsigned d = rank - 1 - k;
      std::optional<int64_t> trips = staticTripCount(loop, d);
      int64_t tile = trips ? std::min(*trips, left) : left;
      tile = std::min(std::max<int64_t>(tile, 1), kMaxThreads[k]);
      if (k > 0 && trips && llvm::divideCeil(*trips, tile) > kMaxBlocksYZ) {
        loop.emitError("remat-map-parallel-loops-to-gpu: dimension ")
            << d << " of " << *trips << " iterations needs more than "
            << kMaxBlocksYZ << " blocks of " << tile << " threads";
        return signalPassFailure();
      }
      tileSizes[d] = tile;
      left = std::max<int64_t>(left / tile, 1);
    }

    // A bound check in the tile instead of `min` bounds keeps the block size
    // a constant (convert-parallel-loops-to-gpu needs launch-invariant
    // bounds).
    LLVM_DEBUG({
      llvm::dbgs() << "remat-map-parallel-loops-to-gpu: loop at "
                   << loop.getLoc() << ": " << rank << " dims, threads [";
      llvm::interleaveComma(tileSizes, llvm::dbgs());
      llvm::dbgs() << "]\n";
    });
    auto [outer, inner] =
        scf::tileParallelLoop(loop, tileSizes, /*noMinMaxBounds=*/true);

    auto identity = AffineMap::getMultiDimIdentityMap(1, ctx);
    auto mapping = [&](ArrayRef<gpu::Processor> ids) {
      SmallVector<gpu::ParallelLoopDimMappingAttr> attrs;
      for (unsigned d = 0; d < rank; ++d) {
        unsigned k = rank - 1 - d;
        gpu::Processor id = k < mapped ? ids[k] : gpu::Processor::Sequential;
        attrs.push_back(
            gpu::ParallelLoopDimMappingAttr::get(ctx, id, identity, identity));
      }
      return attrs;
    };
    if (failed(gpu::setMappingAttr(outer, mapping(kBlocks))) ||
        failed(gpu::setMappingAttr(inner, mapping(kThreads))))
      return signalPassFailure();
    // Fold the new step computations (step * tile) to constants, so that
    // kernel outlining sinks them into the kernels instead of passing them as
    // arguments. Only these index ops are visited: buffers are left alone.
    SmallVector<Operation *> stepOps;
    for (Value step : outer.getStep())
      if (Operation *def = step.getDefiningOp())
        stepOps.push_back(def);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(stepOps, FrozenRewritePatternSet(), config);
  }
}

//===----------------------------------------------------------------------===//
// remat-fuse-parallel-loops
//===----------------------------------------------------------------------===//

#undef DEBUG_TYPE
#define DEBUG_TYPE "remat-fuse-parallel-loops"

namespace {

/// One memory access of a loop body.
struct Access {
  Value buffer;
  ValueRange indices;
  bool write;
};

/// The accesses of `loop`'s body, or nullopt when it touches memory other
/// than by memref.load and memref.store (or nests another scf.parallel).
std::optional<SmallVector<Access>> accessesOf(scf::ParallelOp loop) {
  SmallVector<Access> accesses;
  bool ok = true;
  loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      accesses.push_back({load.getMemRef(), load.getIndices(), false});
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      accesses.push_back({store.getMemRef(), store.getIndices(), true});
    } else if (isa<scf::ParallelOp>(op) ||
               (op->getNumRegions() == 0 && !isMemoryEffectFree(op))) {
      ok = false;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (!ok)
    return std::nullopt;
  return accesses;
}

bool sameBound(Value a, Value b) {
  if (a == b)
    return true;
  std::optional<int64_t> x = getConstantIntValue(a), y = getConstantIntValue(b);
  return x && y && *x == *y;
}

bool sameIterations(scf::ParallelOp a, scf::ParallelOp b) {
  if (a.getNumLoops() != b.getNumLoops() || a.getNumResults() != 0 ||
      b.getNumResults() != 0 || !a->getDiscardableAttrDictionary().empty() ||
      !b->getDiscardableAttrDictionary().empty())
    return false;
  for (unsigned i = 0; i < a.getNumLoops(); ++i)
    if (!sameBound(a.getLowerBound()[i], b.getLowerBound()[i]) ||
        !sameBound(a.getUpperBound()[i], b.getUpperBound()[i]) ||
        !sameBound(a.getStep()[i], b.getStep()[i]))
      return false;
  return true;
}

/// The induction variables of `loop` whose dimension has more than one
/// iteration (or an unknown count).
SmallVector<Value> varyingInductionVars(scf::ParallelOp loop) {
  SmallVector<Value> varying;
  for (unsigned i = 0; i < loop.getNumLoops(); ++i) {
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[i]);
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[i]);
    std::optional<int64_t> step = getConstantIntValue(loop.getStep()[i]);
    if (!lb || !ub || !step || *ub - *lb > *step)
      varying.push_back(loop.getInductionVars()[i]);
  }
  return varying;
}

/// Whether every store of one loop and every access of the other touch
/// either the same buffer at the same element or buffers that cannot
/// overlap; `firstToSecond` maps the first loop's induction variables to
/// the second's, `varying` are the second's that take several values. The
/// same element must be indexed by every varying induction variable, so
/// that no two iterations share it.
bool independentExceptSameElement(ArrayRef<Access> first,
                                  ArrayRef<Access> second,
                                  const IRMapping &firstToSecond,
                                  ArrayRef<Value> varying) {
  auto compatible = [&](const Access &x, const Access &y) {
    if (x.buffer != y.buffer)
      return remat::provablyDisjoint(x.buffer, y.buffer);
    if (x.indices.size() != y.indices.size())
      return false;
    for (auto [i, j] : llvm::zip(x.indices, y.indices))
      if (firstToSecond.lookupOrDefault(i) != j)
        return false;
    return llvm::all_of(varying, [&](Value iv) {
      return llvm::is_contained(y.indices, iv);
    });
  };
  for (const Access &x : first)
    for (const Access &y : second)
      if ((x.write || y.write) && !compatible(x, y))
        return false;
  return true;
}

struct RematFuseParallelLoopsPass
    : remat::impl::RematFuseParallelLoopsPassBase<RematFuseParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    unsigned fused = 0;
    getOperation()->walk([&](Block *block) {
      scf::ParallelOp previous;
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        auto loop = dyn_cast<scf::ParallelOp>(op);
        if (!loop) {
          // Views, constants, index arithmetic between two loops are fine;
          // anything that touches memory (or a region) ends the chain.
          if (!isMemoryEffectFree(&op) || op.getNumRegions() != 0)
            previous = nullptr;
          continue;
        }
        if (previous && tryFuse(previous, loop))
          ++fused;
        previous = loop;
      }
    });
    LLVM_DEBUG(llvm::dbgs() << "remat-fuse-parallel-loops: " << fused
                            << " loops fused into the next\n");
  }

private:
  /// Moves `first`'s body to the start of `second`'s when legal.
  bool tryFuse(scf::ParallelOp first, scf::ParallelOp second) {
    if (!sameIterations(first, second))
      return false;
    std::optional<SmallVector<Access>> a = accessesOf(first);
    std::optional<SmallVector<Access>> b = accessesOf(second);
    if (!a || !b)
      return false;
    IRMapping firstToSecond;
    firstToSecond.map(first.getInductionVars(), second.getInductionVars());
    if (!independentExceptSameElement(*a, *b, firstToSecond,
                                      varyingInductionVars(second)))
      return false;
    OpBuilder builder(second.getBody(), second.getBody()->begin());
    for (Operation &op : first.getBody()->without_terminator())
      builder.clone(op, firstToSecond);
    first.erase();
    return true;
  }
};

} // namespace
