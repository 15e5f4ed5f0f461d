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
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
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
