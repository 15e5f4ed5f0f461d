//===- InstrumentOpTimers.cpp - Time the ops of a step --------------------===//
//
// remat-instrument-op-timers (Passes.td): the measurement behind
// `remat-run --profile-costs`; remat-apply-profiled-costs: the measured
// times of a profile run elsewhere (a GPU executable) as the ops' costs.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <set>

#include "llvm/Support/MemoryBuffer.h"

namespace remat {
#define GEN_PASS_DEF_REMATINSTRUMENTOPTIMERSPASS
#define GEN_PASS_DEF_REMATAPPLYPROFILEDCOSTSPASS
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

bool remat::parseProfileLines(llvm::StringRef text,
                              std::map<int64_t, int64_t> &opNs,
                              std::string &error) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    llvm::StringRef rest = line;
    if (!rest.consume_front("remat-profile:"))
      continue;
    rest = rest.trim();
    int64_t id = -1, ns = -1;
    if (!rest.consume_front("op=") ||
        rest.consumeInteger(10, id) || !rest.consume_front(" ns=") ||
        rest.consumeInteger(10, ns) || !rest.trim().empty() || id < 0 ||
        ns < 0) {
      error = ("a profile line that does not read 'remat-profile: op=<id> "
               "ns=<ns>': '" + line + "'")
                  .str();
      return false;
    }
    opNs[id] = ns;
  }
  return true;
}

double remat::applyProfiledCosts(func::FuncOp step,
                                 const std::map<int64_t, int64_t> &opNs) {
  Builder b(step.getContext());
  double total = 0;
  for (Operation &op : step.getBody().front()) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    double ns = 0;
    if (auto id = op.getAttrOfType<IntegerAttr>(
            remat::RematDialect::kProfileIdAttr)) {
      auto it = opNs.find(id.getInt());
      if (it != opNs.end())
        ns = static_cast<double>(it->second);
      op.removeAttr(remat::RematDialect::kProfileIdAttr);
    }
    total += ns;
    op.setAttr(remat::RematDialect::kCostAttr, b.getF64FloatAttr(ns));
  }
  return total;
}

namespace {

struct RematApplyProfiledCostsPass
    : remat::impl::RematApplyProfiledCostsPassBase<
          RematApplyProfiledCostsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (profile.empty()) {
      module.emitError() << getArgument()
                         << ": no profile given (option profile=<file>)";
      return signalPassFailure();
    }
    auto buffer = llvm::MemoryBuffer::getFile(profile);
    if (!buffer) {
      module.emitError() << getArgument() << ": cannot read '" << profile
                         << "': " << buffer.getError().message();
      return signalPassFailure();
    }
    std::map<int64_t, int64_t> opNs;
    std::string error;
    if (!remat::parseProfileLines((*buffer)->getBuffer(), opNs, error)) {
      module.emitError() << getArgument() << ": '" << profile << "': "
                         << error;
      return signalPassFailure();
    }
    if (opNs.empty()) {
      module.emitError() << getArgument() << ": '" << profile
                         << "' has no 'remat-profile: op=<id> ns=<ns>' line "
                            "(the output of a profile executable?)";
      return signalPassFailure();
    }
    // The functions whose ops are numbered, and every number they carry.
    SmallVector<func::FuncOp> numbered;
    std::set<int64_t> ids;
    for (auto func : module.getOps<func::FuncOp>()) {
      bool any = false;
      func.walk([&](Operation *op) {
        if (auto id = op->getAttrOfType<IntegerAttr>(
                remat::RematDialect::kProfileIdAttr)) {
          ids.insert(id.getInt());
          any = true;
        }
      });
      if (any)
        numbered.push_back(func);
    }
    if (numbered.empty()) {
      module.emitError() << getArgument()
                         << ": no op carries remat.profile_id (apply it to "
                            "the numbered step that remat-run "
                            "--profile-costs wrote beside the executable)";
      return signalPassFailure();
    }
    for (auto [id, ns] : opNs)
      if (!ids.count(id)) {
        module.emitError() << getArgument() << ": '" << profile
                           << "' times op " << id
                           << ", which no op carries: a profile of another "
                              "numbered step?";
        return signalPassFailure();
      }
    for (func::FuncOp func : numbered) {
      double total = remat::applyProfiledCosts(func, opNs);
      LLVM_DEBUG(llvm::dbgs() << getArgument() << ": @" << func.getSymName()
                              << ": " << total << " ns measured\n");
      (void)total;
    }
  }
};

} // namespace
