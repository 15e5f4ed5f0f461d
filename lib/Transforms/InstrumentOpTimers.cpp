//===- InstrumentOpTimers.cpp - Time the ops of a step --------------------===//
//
// remat-instrument-op-timers (Passes.td): the measurement behind
// `remat-run --profile-costs`.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace remat {
#define GEN_PASS_DEF_REMATINSTRUMENTOPTIMERSPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

#define DEBUG_TYPE "remat-instrument-op-timers"

namespace {

struct RematInstrumentOpTimersPass
    : remat::impl::RematInstrumentOpTimersPassBase<
          RematInstrumentOpTimersPass> {
  using Base::Base;

  /// The runtime's function `name(i64)`, declared once.
  func::FuncOp declare(OpBuilder &builder, ModuleOp module,
                       llvm::StringRef name) {
    auto type = FunctionType::get(module.getContext(),
                                  {builder.getI64Type()}, {});
    if (auto existing = module.lookupSymbol<func::FuncOp>(name)) {
      if (existing.getFunctionType() == type)
        return existing;
      existing.emitError() << "'" << name
                           << "' is reserved for the runtime's op timers";
      return nullptr;
    }
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(module.getBody());
    auto fn = func::FuncOp::create(builder, module.getLoc(), name, type);
    fn.setPrivate();
    return fn;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<Operation *, int64_t>> timed;
    module.walk([&](Operation *op) {
      if (auto id = op->getAttrOfType<IntegerAttr>(
              remat::RematDialect::kProfileIdAttr))
        timed.push_back({op, id.getInt()});
    });
    if (timed.empty())
      return;
    OpBuilder builder(module.getContext());
    func::FuncOp begin = declare(builder, module, "remat_rt_op_begin");
    func::FuncOp end = declare(builder, module, "remat_rt_op_end");
    if (!begin || !end)
      return signalPassFailure();
    for (auto [op, id] : timed) {
      Location loc = op->getLoc();
      builder.setInsertionPoint(op);
      Value idValue =
          arith::ConstantIntOp::create(builder, loc, builder.getI64Type(), id);
      func::CallOp::create(builder, loc, begin, ValueRange{idValue});
      builder.setInsertionPointAfter(op);
      func::CallOp::create(builder, loc, end, ValueRange{idValue});
    }
    LLVM_DEBUG(llvm::dbgs() << "remat-instrument-op-timers: " << timed.size()
                            << " ops timed\n");
  }
};

} // namespace
