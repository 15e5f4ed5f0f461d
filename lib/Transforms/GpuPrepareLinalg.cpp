//===- GpuPrepareLinalg.cpp - Give every linalg op outer parallel loops ---===//
//
// remat-prepare-linalg-for-gpu: on buffers, before
// convert-linalg-to-parallel-loops. Every linalg op must become a kernel:
// host code never touches device buffers. convert-linalg-to-parallel-loops
// makes an `scf.parallel` only of the *leading* parallel dimensions, so
// parallel dimensions are interchanged to the front, and an op without any
// (a full reduction, a rank-0 op) is wrapped in a one-iteration
// `scf.parallel`, i.e. a one-thread kernel.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATPREPARELINALGFORGPUPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

// -debug-only=remat-prepare-linalg-for-gpu: the ops wrapped or interchanged.
#define DEBUG_TYPE "remat-prepare-linalg-for-gpu"

namespace {

struct RematPrepareLinalgForGpuPass
    : remat::impl::RematPrepareLinalgForGpuPassBase<
          RematPrepareLinalgForGpuPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Interchanges the loops of `op` so that its parallel dimensions come
  /// first, keeping the relative order of the others. Generalizes a named op.
  LogicalResult moveParallelDimsOutermost(IRRewriter &rewriter,
                                          linalg::LinalgOp op);
  /// Wraps `op` in `scf.parallel (%i) = (0) to (1) step (1)`.
  void wrapInOneIterationLoop(IRRewriter &rewriter, linalg::LinalgOp op);
};

} // namespace

LogicalResult RematPrepareLinalgForGpuPass::moveParallelDimsOutermost(
    IRRewriter &rewriter, linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> permutation;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::parallel)
      permutation.push_back(i);
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it != utils::IteratorType::parallel)
      permutation.push_back(i);

  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op.emitError("remat-prepare-linalg-for-gpu: cannot generalize "
                          "this op to move its parallel loops outermost");
    generic = *generalized;
  }
  // interchangeGenericOp: new loop i is old loop permutation[i]; linalg.index
  // ops in the body are remapped.
  if (failed(linalg::interchangeGenericOp(rewriter, generic, permutation)))
    return generic.emitError("remat-prepare-linalg-for-gpu: cannot "
                             "interchange the loops of this op");
  return success();
}

void RematPrepareLinalgForGpuPass::wrapInOneIterationLoop(
    IRRewriter &rewriter, linalg::LinalgOp op) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{one}, ValueRange{one});
  // The body holds only its terminator (scf.reduce): move the op before it.
  rewriter.moveOpBefore(op, loop.getBody()->getTerminator());
}

void RematPrepareLinalgForGpuPass::runOnOperation() {
  SmallVector<linalg::LinalgOp> ops;
  getOperation().walk([&](linalg::LinalgOp op) {
    if (!op->getParentOfType<scf::ParallelOp>())
      ops.push_back(op);
  });

  IRRewriter rewriter(&getContext());
  for (linalg::LinalgOp op : ops) {
    if (!op.hasPureBufferSemantics()) {
      op.emitError("remat-prepare-linalg-for-gpu: expected an op on buffers "
                   "(run after bufferization)");
      return signalPassFailure();
    }
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    unsigned numParallel = llvm::count(iterators, utils::IteratorType::parallel);
    if (numParallel == 0) {
      LLVM_DEBUG(llvm::dbgs() << "remat-prepare-linalg-for-gpu: "
                              << op->getName() << " at " << op->getLoc()
                              << ": no parallel dimension, one thread\n");
      wrapInOneIterationLoop(rewriter, op);
      continue;
    }
    bool leading = llvm::all_of(
        llvm::ArrayRef(iterators).take_front(numParallel),
        [](utils::IteratorType it) { return it == utils::IteratorType::parallel; });
    if (leading)
      continue;
    LLVM_DEBUG(llvm::dbgs() << "remat-prepare-linalg-for-gpu: "
                            << op->getName() << " at " << op->getLoc()
                            << ": parallel dimensions moved outermost\n");
    if (failed(moveParallelDimsOutermost(rewriter, op)))
      return signalPassFailure();
  }
}
