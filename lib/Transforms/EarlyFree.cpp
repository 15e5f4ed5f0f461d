//===- EarlyFree.cpp - free every buffer right after its last use ---------===//
//
// Upstream `ownership-based-buffer-deallocation` frees a buffer at the end of
// its block, so a training step keeps every activation to the end and
// rematerialisation saves nothing. `optimize-allocation-liveness` moves a
// dealloc up to the last use, but only follows direct users of the
// allocation, not views. This pass places each `memref.dealloc` right after
// the last op that reads or writes the buffer through any alias, which is the
// Free placement the simulator predicts (Schedule.h, insertEarlyFrees). See
// docs/early-frees.md for the comparison.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATEARLYFREEPASS
#define GEN_PASS_DEF_REMATCHECKLOWERABLEPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

namespace {

/// Results of `op` that alias operand `source` (views of the buffer).
bool isAliasingView(Operation *op, Value source) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource() == source;
  return isa<memref::CastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
             memref::ReinterpretCastOp, memref::AssumeAlignmentOp>(op);
}

struct EarlyFree : public remat::impl::RematEarlyFreePassBase<EarlyFree> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
      return; // multi-block functions: left to upstream deallocation
    Block &block = func.front();
    SmallVector<memref::AllocOp> allocs;
    for (Operation &op : block)
      if (auto alloc = dyn_cast<memref::AllocOp>(&op))
        allocs.push_back(alloc);

    for (memref::AllocOp alloc : allocs) {
      // Every alias of the buffer: the allocation and its views, transitively.
      llvm::SetVector<Value> aliases;
      aliases.insert(alloc.getResult());
      Operation *lastUse = alloc;
      bool escapes = false, alreadyFreed = false;
      for (size_t i = 0; i < aliases.size(); ++i) {
        Value alias = aliases[i];
        for (OpOperand &use : alias.getUses()) {
          Operation *user = block.findAncestorOpInBlock(*use.getOwner());
          if (!user) {
            escapes = true;
            continue;
          }
          if (isa<memref::DeallocOp>(use.getOwner()))
            alreadyFreed = true;
          if (isa<func::ReturnOp>(use.getOwner()))
            escapes = true; // returned: the caller owns it
          if (use.getOwner() == user && isAliasingView(user, alias))
            for (Value result : user->getResults())
              if (isa<BaseMemRefType>(result.getType()))
                aliases.insert(result);
          if (lastUse->isBeforeInBlock(user))
            lastUse = user;
        }
      }
      if (escapes || alreadyFreed)
        continue;
      OpBuilder builder(func.getContext());
      builder.setInsertionPointAfter(lastUse);
      memref::DeallocOp::create(builder, alloc.getLoc(), alloc.getResult());
    }
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
