//===- GpuHostBuffers.cpp - Host allocations become device allocations ----===//
//
// remat-host-buffers-to-gpu: after kernel outlining, the host functions only
// allocate, launch, free and call. Every `memref.alloc` becomes a `gpu.alloc`
// and every `memref.dealloc` a `gpu.dealloc` *at the same place*, so that the
// device program allocates the buffers the simulator predicts and frees them
// where remat-early-free put the frees. After this pass every buffer lives on
// the device. An op left on the host that reads or writes buffer contents (a
// `main` that extracts and prints the step's loss) works on a host copy: the
// buffer is copied to a host allocation before it (gpu.memcpy) and back after
// it if it writes, and the copy is freed right after, so that the device
// figures the simulator predicts are unchanged.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SmallVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATHOSTBUFFERSTOGPUPASS
#define GEN_PASS_DEF_REMATGPUASYNCLIBRARYCALLSPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

// -debug-only=remat-host-buffers-to-gpu: every host op that reads or writes a
// device buffer through a host copy.
#define DEBUG_TYPE "remat-host-buffers-to-gpu"

namespace {

/// The device buffers `op` reads or writes on the host, each with whether it
/// writes; in operand order, each once.
SmallVector<std::pair<Value, bool>> hostAccesses(Operation *op) {
  SmallVector<std::pair<Value, bool>> accesses;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return accesses;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const MemoryEffects::EffectInstance &effect : instances) {
    bool writes = isa<MemoryEffects::Write>(effect.getEffect());
    if (!writes && !isa<MemoryEffects::Read>(effect.getEffect()))
      continue;
    Value value = effect.getValue();
    if (!value || !isa<BaseMemRefType>(value.getType()))
      continue;
    auto *it = llvm::find_if(accesses, [&](auto &a) { return a.first == value; });
    if (it == accesses.end())
      accesses.push_back({value, writes});
    else
      it->second |= writes;
  }
  return accesses;
}

/// Runs `op` on host copies of the device buffers it accesses (see the file
/// comment); fails, with an error at `op`, on a buffer that gpu.memcpy cannot
/// copy whole (a strided view, a dynamic shape).
LogicalResult accessThroughHostCopies(IRRewriter &rewriter, Operation *op) {
  SmallVector<std::pair<Value, bool>> accesses = hostAccesses(op);
  for (auto [buffer, writes] : accesses) {
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || !type.getLayout().isIdentity() || !type.hasStaticShape())
      return op->emitError()
             << "remat-host-buffers-to-gpu: '" << op->getName()
             << "' reads or writes a device buffer of type " << buffer.getType()
             << " on the host; only statically shaped identity-layout buffers "
                "can be copied to the host for it";
  }
  for (auto [buffer, writes] : accesses) {
    auto type = cast<MemRefType>(buffer.getType());
    Location loc = op->getLoc();
    LLVM_DEBUG(llvm::dbgs() << "remat-host-buffers-to-gpu: " << op->getName()
                            << " at " << loc << " " << (writes ? "writes" : "reads")
                            << " a device " << type << " through a host copy\n");
    rewriter.setInsertionPoint(op);
    // A host allocation: created after the walk, so it stays memref.alloc.
    Value host = memref::AllocOp::create(rewriter, loc, type);
    gpu::MemcpyOp::create(rewriter, loc, /*asyncToken=*/Type(),
                          /*asyncDependencies=*/ValueRange(), host, buffer);
    op->replaceUsesOfWith(buffer, host);
    rewriter.setInsertionPointAfter(op);
    if (writes)
      gpu::MemcpyOp::create(rewriter, loc, /*asyncToken=*/Type(),
                            /*asyncDependencies=*/ValueRange(), buffer, host);
    memref::DeallocOp::create(rewriter, loc, host);
  }
  return success();
}

/// Uses of a host global that only read its address on the host (the
/// descriptors of library calls): the global can stay where it is.
bool onlyAddressTaken(Value global) {
  return llvm::all_of(global.getUsers(), [](Operation *user) {
    return isa<memref::ExtractAlignedPointerAsIndexOp,
               memref::ExtractStridedMetadataOp>(user);
  });
}

struct RematHostBuffersToGpuPass
    : remat::impl::RematHostBuffersToGpuPassBase<RematHostBuffersToGpuPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// `remat_rt_device_constant`, declared once per module.
  func::FuncOp deviceConstant;

  /// A constant tensor read by kernels or device copies: replaced by its
  /// device copy, which the runtime makes at its first use and keeps
  /// (constant bytes, outside the step's figures), viewed with the global's
  /// type. Globals whose address alone is used on the host stay.
  LogicalResult globalOnDevice(IRRewriter &rewriter,
                               memref::GetGlobalOp global);

  /// Rewrites one host function; false after an error.
  bool convertFunction(func::FuncOp func);
};

} // namespace

bool RematHostBuffersToGpuPass::convertFunction(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) { ops.push_back(op); });

  IRRewriter rewriter(&getContext());
  bool ok = true;
  for (Operation *op : ops) {
    rewriter.setInsertionPoint(op);
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      auto replacement = gpu::AllocOp::create(
          rewriter, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
          /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
          alloc.getSymbolOperands(), /*hostShared=*/false);
      rewriter.replaceOp(alloc, replacement.getMemref());
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      gpu::DeallocOp::create(rewriter, dealloc.getLoc(), /*asyncToken=*/Type(),
                             /*asyncDependencies=*/ValueRange(),
                             dealloc.getMemref());
      rewriter.eraseOp(dealloc);
      continue;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      // gpu.memcpy copies the bytes of the destination's shape from the
      // aligned pointers plus offset: right only for contiguous buffers.
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (!source || !target || !source.getLayout().isIdentity() ||
          !target.getLayout().isIdentity() || !source.hasStaticShape()) {
        copy.emitError("remat-host-buffers-to-gpu: only copies between "
                       "statically shaped identity-layout buffers can run on "
                       "the GPU");
        ok = false;
        continue;
      }
      gpu::MemcpyOp::create(rewriter, copy.getLoc(), /*asyncToken=*/Type(),
                            /*asyncDependencies=*/ValueRange(),
                            copy.getTarget(), copy.getSource());
      rewriter.eraseOp(copy);
      continue;
    }
    if (isa<memref::AllocaOp>(op)) {
      op->emitError("remat-host-buffers-to-gpu: a stack buffer on the host "
                    "cannot be accessed by kernels");
      ok = false;
      continue;
    }
    if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
      if (failed(globalOnDevice(rewriter, global)))
        ok = false;
      continue;
    }
    // Calls hand descriptors to other host functions or to the runtime
    // (which copies device results back to print them): no host access here.
    if (isa<func::CallOp>(op) ||
        isa_and_nonnull<gpu::GPUDialect>(op->getDialect()))
      continue;
    if (failed(accessThroughHostCopies(rewriter, op)))
      ok = false;
  }
  return ok;
}

LogicalResult
RematHostBuffersToGpuPass::globalOnDevice(IRRewriter &rewriter,
                                          memref::GetGlobalOp global) {
  if (onlyAddressTaken(global.getResult()))
    return success();
  auto type = global.getType();
  if (!type.getLayout().isIdentity() || !type.hasStaticShape())
    return global.emitError()
           << "remat-host-buffers-to-gpu: a constant of type " << type
           << " cannot be copied to the device (only statically shaped "
              "identity-layout constants can)";
  ModuleOp module = global->getParentOfType<ModuleOp>();
  MLIRContext *ctx = global.getContext();
  auto bytesType = MemRefType::get({ShapedType::kDynamic},
                                   IntegerType::get(ctx, 8));
  if (!deviceConstant) {
    auto fnType = FunctionType::get(
        ctx, {IndexType::get(ctx), IntegerType::get(ctx, 64)}, {bytesType});
    deviceConstant =
        module.lookupSymbol<func::FuncOp>("remat_rt_device_constant");
    if (deviceConstant && deviceConstant.getFunctionType() != fnType)
      return deviceConstant.emitError()
             << "'remat_rt_device_constant' is reserved for the runtime";
    if (!deviceConstant) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToEnd(module.getBody());
      deviceConstant = func::FuncOp::create(
          rewriter, module.getLoc(), "remat_rt_device_constant", fnType);
      deviceConstant.setPrivate();
      deviceConstant->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
    }
  }
  Location loc = global.getLoc();
  rewriter.setInsertionPointAfter(global);
  int64_t bytes = type.getNumElements() *
                  llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  Value host =
      memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, global);
  Value size = arith::ConstantIntOp::create(rewriter, loc,
                                            rewriter.getI64Type(), bytes);
  auto call = func::CallOp::create(rewriter, loc, deviceConstant,
                                   ValueRange{host, size});
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value view = memref::ViewOp::create(rewriter, loc, type, call.getResult(0),
                                      zero, ValueRange{});
  rewriter.replaceAllUsesExcept(global.getResult(), view,
                                host.getDefiningOp());
  LLVM_DEBUG(llvm::dbgs() << "remat-host-buffers-to-gpu: constant @"
                          << global.getName() << " (" << bytes
                          << " bytes) copied to the device at its first use\n");
  return success();
}

void RematHostBuffersToGpuPass::runOnOperation() {
  bool ok = true;
  // Host functions are the module's func.func ops; kernels live in
  // gpu.module ops and are not visited.
  for (auto func : getOperation().getOps<func::FuncOp>())
    ok &= convertFunction(func);
  if (!ok)
    signalPassFailure();
}

namespace {

/// See Passes.td: the blocking waits in front of library calls.
struct RematGpuAsyncLibraryCallsPass
    : remat::impl::RematGpuAsyncLibraryCallsPassBase<
          RematGpuAsyncLibraryCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<gpu::WaitOp> dropped;
    getOperation().walk([&](func::CallOp call) {
      // The library's calls, and the op timers of a profile
      // (remat-instrument-op-timers), which synchronize themselves when
      // they time on the host clock (CudaRuntime.cpp, REMAT_CUDA_OP_TIMING).
      if (!llvm::is_contained({llvm::StringRef("remat_lib_contraction"),
                               llvm::StringRef("remat_rt_op_begin"),
                               llvm::StringRef("remat_rt_op_end")},
                              call.getCallee()))
        return;
      // The op before the call with side effects, the pure ones between
      // (descriptor addresses, pointer arithmetic, views) skipped.
      for (Operation *prev = call->getPrevNode(); prev;
           prev = prev->getPrevNode()) {
        if (isMemoryEffectFree(prev))
          continue;
        auto wait = dyn_cast<gpu::WaitOp>(prev);
        if (wait && !wait.getAsyncToken())
          dropped.push_back(wait);
        break;
      }
    });
    for (gpu::WaitOp wait : dropped)
      wait.erase();
    LLVM_DEBUG(llvm::dbgs() << "remat-gpu-async-library-calls: "
                            << dropped.size()
                            << " host synchronizations removed\n");
  }
};

} // namespace
