//===- OwnMain.h - The steps that a module's own main calls -----*- C++ -*-===//
//
// remat-run on a module that brings its own `main` (MLIR's runner-test
// style, or a training loop): which training steps that main calls, every
// call of each measured in a window of its own, and one line per step.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUN_OWNMAIN_H
#define REMAT_RUN_OWNMAIN_H

#include "RuntimeReport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace remat_run {

/// A training step that remat-run measures, with the simulator's figures
/// (remat.predicted_peak_bytes, remat.fixed_bytes on the function).
struct MeasuredStep {
  std::string name;
  std::optional<int64_t> predicted, fixed;
};

/// The steps whose calls the module's own main makes: `entry` alone when it
/// is given, else every function that remat-apply annotated and that other
/// code of the module calls (none when no function is a step: main then
/// runs unmeasured). Returns why the steps cannot be measured, or "".
std::string findStepsOfOwnMain(mlir::ModuleOp module, llvm::StringRef entry,
                               std::vector<MeasuredStep> &steps);

/// Wraps every call of the steps in the runtime's window
/// (remat-instrument-step-calls; tagged by step when there are several).
mlir::LogicalResult instrumentStepCalls(mlir::ModuleOp module,
                                        const std::vector<MeasuredStep> &steps,
                                        unsigned repeat = 0);

/// For several steps: one line per step,
///   remat-run: step=NAME fixed_bytes=F measured_peak_bytes=N
///     predicted_peak_bytes=M calls=C
/// from the runtime's per-step report. Returns why a step's figures are
/// missing, or "".
std::string printStepLines(const std::vector<MeasuredStep> &steps,
                           const std::map<int64_t, TaggedStepReport> &tags);

/// The largest prediction and its step's fixed bytes among `steps`, the
/// figures the summary lines compare with the worst measured window.
MeasuredStep worstStep(const std::vector<MeasuredStep> &steps);

} // namespace remat_run

#endif // REMAT_RUN_OWNMAIN_H
