//===- ProfileCosts.h - remat-run --profile-costs ---------------*- C++ -*-===//
//
// Cost model checked against the clock (issue 21 item 5): the ops of the step
// are numbered (`remat.profile_id`), timed on the target by the runtime
// (remat-instrument-op-timers), and written back as `remat.cost` (nanoseconds
// on this machine) into a copy of the input, which the solvers then plan
// with instead of FLOP counts.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_REMATRUN_PROFILECOSTS_H
#define REMAT_TOOLS_REMATRUN_PROFILECOSTS_H

#include "RuntimeReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace remat_run {

/// The step whose ops are profiled: `entry` if set, else the one training
/// step of `module`; null with `error` set otherwise.
mlir::func::FuncOp findProfiledStep(mlir::ModuleOp module,
                                    llvm::StringRef entry, std::string &error);

/// Numbers every op of `step`'s body that can take time (not constants,
/// tensor.empty, views or the terminator) with `remat.profile_id`; returns
/// how many.
unsigned numberOpsForProfile(mlir::func::FuncOp step);

/// Sets `remat.cost` on every op of `step`'s body: the measured nanoseconds
/// of the numbered ops (report.opNs), 0 for the others; drops the numbers.
/// Returns the total of the measured costs.
double applyProfiledCosts(mlir::func::FuncOp step,
                          const RuntimeReport &report);

/// Writes `module` to `path` (temporary file, then renamed); an error
/// message or "".
std::string writeModule(mlir::ModuleOp module, llvm::StringRef path);

} // namespace remat_run

#endif // REMAT_TOOLS_REMATRUN_PROFILECOSTS_H
