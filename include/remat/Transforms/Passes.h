//===- Passes.h - remat passes and pipelines ---------------------*- C++ -*-===//

#ifndef REMAT_TRANSFORMS_PASSES_H
#define REMAT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "remat/Runtime/GpuLibrary.h"
#include "mlir/Pass/PassRegistry.h"
#include "remat/Solvers/Solver.h"

#include <map>
#include <string>

namespace mlir {
class DialectRegistry;
namespace arith { class ArithDialect; }
namespace linalg { class LinalgDialect; }
namespace math { class MathDialect; }
namespace tensor { class TensorDialect; }
namespace memref { class MemRefDialect; }
} // namespace mlir

namespace remat {

#define GEN_PASS_DECL
#include "remat/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "remat/Transforms/Passes.h.inc"

/// Where the lowering pipelines put and free buffers (docs/early-frees.md,
/// docs/memory-plan.md).
enum class DeallocMode { Arena, Early, Upstream, UpstreamLiveness };

/// The values of the `dealloc` option (RematPipelineOptions, remat-run).
#define REMAT_DEALLOC_MODE_VALUES                                              \
  clEnumValN(::remat::DeallocMode::Arena, "arena",                             \
             "every buffer of the step at its planned offset of one arena, "   \
             "allocated once (default)"),                                      \
      clEnumValN(::remat::DeallocMode::Early, "early",                         \
                 "remat-early-free: a malloc per buffer, freed right after "   \
                 "its last use"),                                              \
      clEnumValN(::remat::DeallocMode::Upstream, "upstream",                   \
                 "upstream buffer-deallocation-pipeline: at the end of the "   \
                 "block"),                                                     \
      clEnumValN(::remat::DeallocMode::UpstreamLiveness, "upstream-liveness",  \
                 "upstream buffer-deallocation-pipeline, then "                \
                 "optimize-allocation-liveness")

/// Who runs the contractions (matrix products, convolutions) of the
/// lowered step.
enum class KernelMode { Library, Loops };

/// The values of the `kernels` option (RematPipelineOptions, remat-run).
#define REMAT_KERNEL_MODE_VALUES                                               \
  clEnumValN(::remat::KernelMode::Library, "library",                          \
             "vendor libraries where they apply (oneDNN on the CPU, cuBLAS "   \
             "and cuDNN on the GPU; default)"),                                \
      clEnumValN(::remat::KernelMode::Loops, "loops",                          \
                 "compiled loop nests only")

/// The library the contractions are planned for (remat-plan-library-calls).
enum class LibraryTarget { None, Cpu, Gpu };

/// The options of the remat pipelines (PipelineOptions.def).
struct RematPipelineOptions
    : public mlir::PassPipelineOptions<RematPipelineOptions> {
#define REMAT_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)        \
  Option<TYPE> FIELD{*this, FLAG, llvm::cl::desc(DESCRIPTION),                 \
                     llvm::cl::init(DEFAULT)};
#include "remat/Transforms/PipelineOptions.def"
  Option<DeallocMode> dealloc{*this, "dealloc",
                              llvm::cl::desc("Where buffers live and are "
                                             "freed"),
                              llvm::cl::init(DeallocMode::Arena),
                              llvm::cl::values(REMAT_DEALLOC_MODE_VALUES)};
  Option<KernelMode> kernels{*this, "kernels",
                             llvm::cl::desc("Who runs the contractions"),
                             llvm::cl::init(KernelMode::Library),
                             llvm::cl::values(REMAT_KERNEL_MODE_VALUES)};
  Option<LibraryTarget> target{
      *this, "target",
      llvm::cl::desc("The library whose calls remat-pipeline plans (their "
                     "workspace is part of the plan); the lowering pipelines "
                     "set it to their own"),
      llvm::cl::init(LibraryTarget::None),
      llvm::cl::values(
          clEnumValN(LibraryTarget::None, "none", "no library calls"),
          clEnumValN(LibraryTarget::Cpu, "cpu", "oneDNN"),
          clEnumValN(LibraryTarget::Gpu, "gpu", "cuBLAS and cuDNN"))};

  /// The options the pipelines hand to remat-apply (and, the same ones, to
  /// remat-check-options).
  RematApplyPassOptions applyOptions() const;
};

/// normalize destinations + solve + apply: the rematerialised step, tensors.
void buildRematPipeline(mlir::OpPassManager &pm,
                        const RematPipelineOptions &options);
/// remat-check-lowerable, then one-shot bufferization with the options the
/// prediction needs (whole module, identity layouts at function boundaries,
/// no alignment padding): the start of both lowerings, before the frees.
void addRematBufferizePasses(mlir::OpPassManager &pm);
/// The part of remat-lower-to-cpu after the rewrite: one-shot bufferization,
/// frees (`dealloc`), lowering to the LLVM dialect with the generic allocation
/// functions of the project's runtime.
void buildLowerBufferizedToCpuPipeline(mlir::OpPassManager &pm,
                                       const RematPipelineOptions &options);
/// remat-generate-main (if `entry` is set) + remat-pipeline +
/// buildLowerBufferizedToCpuPipeline.
void buildRematLowerToCpuPipeline(mlir::OpPassManager &pm,
                                  const RematPipelineOptions &options);
/// Registers remat-pipeline, remat-report and remat-lower-to-cpu.
void registerRematPipelines();

/// Why `pipeline` cannot be built into `pm`, or nothing when it can. The remat
/// pipelines add module passes (option checks, call inlining, autodiff,
/// whole-module bufferization) and nest their function passes themselves, so
/// they need a pass manager anchored on `builtin.module`. On one nested under
/// `func.func` or `gpu.module`, MLIR aborts when the first module pass is
/// added; under `any(...)` the module passes never run, silently.
std::optional<std::string> checkPipelineAnchor(const mlir::OpPassManager &pm,
                                               llvm::StringRef pipeline);

/// Registers the pipeline `arg` as mlir::PassPipelineRegistration<Options>
/// does, except that a textual pipeline that nests it under another op
/// (`builtin.module(func.func(remat-pipeline))`) is an error of the pipeline
/// text naming the op it needs (checkPipelineAnchor), in remat-opt and in a
/// stock mlir-opt with the plugin alike, instead of an abort.
template <typename Options>
void registerModulePipeline(
    llvm::StringRef arg, llvm::StringRef description,
    std::function<void(mlir::OpPassManager &, const Options &)> builder) {
  mlir::registerPassPipeline(
      arg, description,
      [builder, name = arg.str()](
          mlir::OpPassManager &pm, llvm::StringRef optionsText,
          llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
              errorHandler) -> mlir::LogicalResult {
        Options options;
        if (mlir::failed(options.parseFromString(optionsText)))
          return mlir::failure();
        if (std::optional<std::string> error = checkPipelineAnchor(pm, name))
          return errorHandler(*error);
        builder(pm, options);
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)>
             optionsHandler) { optionsHandler(Options()); });
}

/// The times of a profile run: the `remat-profile: op=<id> ns=<ns>` lines
/// of a step's output (other lines are skipped), by op id; a line that names
/// an op but does not read as one is an error (its text in `error`).
bool parseProfileLines(llvm::StringRef text, std::map<int64_t, int64_t> &opNs,
                       std::string &error);

/// Sets `remat.cost` on every op of `step`'s body: the measured nanoseconds
/// of the ops numbered with `remat.profile_id` (`opNs`; 0 when not timed), 0
/// for the others; drops the numbers. Returns the total of the measured
/// costs. (remat-run --profile-costs, remat-apply-profiled-costs.)
double applyProfiledCosts(mlir::func::FuncOp step,
                          const std::map<int64_t, int64_t> &opNs);

/// Registers the dialects that the remat pipelines need (and only those).
void registerRematDialects(mlir::DialectRegistry &registry);

} // namespace remat

#endif // REMAT_TRANSFORMS_PASSES_H
