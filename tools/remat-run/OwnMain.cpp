//===- OwnMain.cpp - The steps that a module's own main calls -------------===//
//
// See OwnMain.h. A main may call several steps (a GAN's two networks, a
// model and its EMA copy, a training loop that also evaluates): each one's
// calls are measured in windows tagged with the step's index
// (remat_rt_step_begin_tagged), so that the runtime reports each step's own
// peak and remat-run compares it with that step's prediction.
//
//===----------------------------------------------------------------------===//

#include "OwnMain.h"

#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace remat_run {

namespace {

std::optional<int64_t> intAttr(Operation *op, llvm::StringRef name) {
  Attribute attr = op->getAttr(name);
  if (auto i = dyn_cast_or_null<IntegerAttr>(attr))
    return i.getValue().getSExtValue();
  if (auto f = dyn_cast_or_null<FloatAttr>(attr))
    return static_cast<int64_t>(f.getValueAsDouble());
  return std::nullopt;
}

std::string orNone(std::optional<int64_t> v) {
  return v ? std::to_string(*v) : std::string("none");
}

} // namespace

std::string findStepsOfOwnMain(ModuleOp module, llvm::StringRef entry,
                               std::vector<MeasuredStep> &steps) {
  auto measured = [](func::FuncOp func) {
    return MeasuredStep{func.getSymName().str(),
                        intAttr(func, "remat.predicted_peak_bytes"),
                        intAttr(func, "remat.fixed_bytes")};
  };
  if (!entry.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func)
      return "no function '" + entry.str() + "'";
    steps.push_back(measured(func));
    return "";
  }
  // The callees of calls outside themselves (a step that calls itself is no
  // step; remat-inline-calls leaves none in a step anyway).
  llvm::SmallPtrSet<Operation *, 4> called;
  module.walk([&](func::CallOp call) {
    Operation *callee = module.lookupSymbol(call.getCalleeAttr());
    if (callee && !callee->isAncestor(call))
      called.insert(callee);
  });
  std::vector<std::string> uncalled;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func->hasAttr("remat.predicted_peak_bytes"))
      continue;
    if (called.contains(func))
      steps.push_back(measured(func));
    else
      uncalled.push_back(func.getSymName().str());
  }
  // No step at all: main runs unmeasured (the report has no prediction), as
  // a plain program would.
  if (steps.empty() && !uncalled.empty())
    return "the module's main calls no training step ('" + uncalled.front() +
           "' is one, but nothing calls it)";
  return "";
}

LogicalResult instrumentStepCalls(ModuleOp module,
                                  const std::vector<MeasuredStep> &steps,
                                  unsigned repeat) {
  PassManager pm(module.getContext());
  remat::RematInstrumentStepCallsPassOptions options;
  options.repeat = repeat;
  for (const MeasuredStep &step : steps)
    options.entry.push_back(step.name);
  pm.addPass(remat::createRematInstrumentStepCallsPass(options));
  return pm.run(module);
}

std::string printStepLines(const std::vector<MeasuredStep> &steps,
                           const std::map<int64_t, TaggedStepReport> &tags) {
  std::string missing;
  for (auto [tag, step] : llvm::enumerate(steps)) {
    auto it = tags.find(static_cast<int64_t>(tag));
    llvm::outs() << "remat-run: step=" << step.name
                 << " fixed_bytes=" << orNone(step.fixed)
                 << " measured_peak_bytes="
                 << (it == tags.end() ? std::string("none")
                                      : std::to_string(it->second.stepPeak))
                 << " predicted_peak_bytes=" << orNone(step.predicted)
                 << " calls="
                 << (it == tags.end() ? 0 : it->second.windows) << "\n";
    if (it == tags.end() && missing.empty())
      missing = "the program never called '" + step.name + "'";
  }
  llvm::outs().flush();
  return missing;
}

MeasuredStep worstStep(const std::vector<MeasuredStep> &steps) {
  MeasuredStep worst;
  for (const MeasuredStep &step : steps)
    if (!worst.predicted || (step.predicted && *step.predicted > *worst.predicted))
      worst = step;
  return worst;
}

} // namespace remat_run
