//===- EarlyFree.cpp - free every buffer right after its last use ---------===//
//
// Upstream `ownership-based-buffer-deallocation` frees a buffer at the end of
// its block, so a training step keeps every activation to the end and
// rematerialisation saves nothing. Upstream `optimize-allocation-liveness`
// then moves such a dealloc up to the last use (through every alias
// BufferViewFlowAnalysis finds), which gives the same placement on our steps
// but costs seconds on large ones (docs/early-frees.md). This pass inserts
// each `memref.dealloc` right after the last op of the allocation's block that
// uses the buffer through any alias: the Free placement the simulator
// predicts (Schedule.h, insertEarlyFrees), in one linear pass.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace remat {
#define GEN_PASS_DEF_REMATEARLYFREEPASS
#define GEN_PASS_DEF_REMATCHECKLOWERABLEPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

#define DEBUG_TYPE "remat-early-free"

namespace {

struct EarlyFree : public remat::impl::RematEarlyFreePassBase<EarlyFree> {
  using Base::Base;

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<memref::AllocOp> allocs;
    func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    if (allocs.empty())
      return;
    // Every value that may alias a buffer: views, casts, values selected or
    // yielded from regions, call results (conservatively).
    BufferViewFlowAnalysis aliasAnalysis(func.getOperation());
    for (memref::AllocOp alloc : allocs)
      freeAfterLastUse(alloc, aliasAnalysis);
  }

  /// Inserts the dealloc of `alloc` after the last op of its block that uses
  /// an alias, unless an alias escapes the block (returned, yielded, passed
  /// to a successor block) or the buffer is already freed.
  void freeAfterLastUse(memref::AllocOp alloc,
                        const BufferViewFlowAnalysis &aliasAnalysis) {
    Block *block = alloc->getBlock();
    Operation *lastUse = alloc;
    for (Value alias : aliasAnalysis.resolve(alloc.getResult())) {
      // An alias defined outside the block (a region result, a block
      // argument) means the buffer outlives the block: not ours to free.
      Operation *definedIn =
          alias.getDefiningOp()
              ? block->findAncestorOpInBlock(*alias.getDefiningOp())
              : nullptr;
      if (alias != alloc.getResult() && !definedIn) {
        LLVM_DEBUG(llvm::dbgs() << "remat-early-free: kept " << alloc
                                << ": an alias is defined outside its block\n");
        return;
      }
      for (OpOperand &use : alias.getUses()) {
        Operation *owner = use.getOwner();
        if (isa<memref::DeallocOp, bufferization::DeallocOp>(owner)) {
          LLVM_DEBUG(llvm::dbgs() << "remat-early-free: kept " << alloc
                                  << ": already freed\n");
          return;
        }
        if (owner->hasTrait<OpTrait::IsTerminator>() &&
            owner->getBlock() == block) {
          // Returned or passed on: the receiver owns it.
          LLVM_DEBUG(llvm::dbgs() << "remat-early-free: kept " << alloc
                                  << ": leaves its block through "
                                  << owner->getName() << "\n");
          return;
        }
        Operation *user = block->findAncestorOpInBlock(*owner);
        if (!user)
          return;
        if (lastUse->isBeforeInBlock(user))
          lastUse = user;
      }
    }
    OpBuilder builder(alloc->getContext());
    builder.setInsertionPointAfter(lastUse);
    memref::DeallocOp::create(builder, alloc.getLoc(), alloc.getResult());
    LLVM_DEBUG(llvm::dbgs() << "remat-early-free: " << alloc
                            << " freed after its last use, "
                            << lastUse->getName() << " at "
                            << lastUse->getLoc() << "\n");
  }
};

struct CheckLowerable
    : public remat::impl::RematCheckLowerablePassBase<CheckLowerable> {
  using Base::Base;

  void runOnOperation() override {
    WalkResult result = getOperation().walk([](remat::KernelOp kernel) {
      kernel.emitError("cannot lower opaque kernel '")
          << kernel.getKernel()
          << "': remat.kernel ops stand for framework operators without an "
             "implementation; they can be analysed and solved "
             "(--remat-report, remat-solve) but not compiled";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
