//===- GpuTarget.h - remat-run --target=gpu ----------------------*- C++ -*-===//
//
// The GPU mode of remat-run (docs/gpu.md): lowers the rematerialised step
// with remat-lower-to-gpu, compiles it ahead of time to a standalone
// executable (LLVM IR, llc, the system C++ driver) linked with the project's
// static CUDA runtime and libcuda only, and runs it.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TOOLS_REMATRUN_GPUTARGET_H
#define REMAT_TOOLS_REMATRUN_GPUTARGET_H

#include "RuntimeReport.h"
#include "remat/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>
#include <string>

namespace remat_run {

/// The category of the GPU options (--target, --gpu-*), shown by --help.
llvm::cl::OptionCategory &gpuOptionCategory();
/// Whether --target=gpu was given.
bool targetIsGpu();
/// Whether --gpu-compile-only was given (the executable is built, not run).
bool gpuCompileOnlyRequested();
/// The range checks of the numeric GPU options (--gpu-block-size in
/// [1, 1024]): an error message, or empty.
std::string checkGpuOptions();

/// Compiles `module` (the rematerialised step on tensors, with a `main`) for
/// the GPU, builds the executable and, unless --gpu-compile-only, runs it and
/// prints its output and the `remat-run:` lines (device bytes). Returns the
/// process exit code.
int runOnGpu(mlir::ModuleOp module, std::optional<int64_t> predicted,
             std::optional<int64_t> fixed, std::optional<int64_t> livePeak,
             remat::DeallocMode dealloc,
             remat::KernelMode kernels, bool keepTemps,
             RuntimeReport &report);

} // namespace remat_run

#endif // REMAT_TOOLS_REMATRUN_GPUTARGET_H
