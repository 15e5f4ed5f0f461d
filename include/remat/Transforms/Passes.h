//===- Passes.h - remat passes and pipelines ---------------------*- C++ -*-===//

#ifndef REMAT_TRANSFORMS_PASSES_H
#define REMAT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

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

/// Where the lowering pipelines free buffers (docs/early-frees.md).
enum class DeallocMode { Early, Upstream, UpstreamLiveness };

/// Options shared by the remat pipelines.
struct RematPipelineOptions
    : public mlir::PassPipelineOptions<RematPipelineOptions> {
  Option<std::string> solver{*this, "solver",
                             llvm::cl::desc("Solver name, 'none' or 'all'"),
                             llvm::cl::init("chen-sqrtn")};
  Option<std::string> budget{
      *this, "budget",
      llvm::cl::desc("Memory budget: bytes, KiB/MiB/GiB, or N% of the "
                     "checkpoint-all peak"),
      llvm::cl::init("")};
  Option<double> timeLimit{
      *this, "time-limit",
      llvm::cl::desc("Wall-clock limit in seconds for solvers that search "
                     "(auto, checkmate-ilp, checkmate-lp, hong-cubic)"),
      llvm::cl::init(10.0)};
  Option<unsigned> slots{
      *this, "slots",
      llvm::cl::desc("Memory slots S of the discretised dynamic programs "
                     "(rotor, revolve)"),
      llvm::cl::init(500)};
  Option<DeallocMode> dealloc{
      *this, "dealloc", llvm::cl::desc("Where buffers are freed"),
      llvm::cl::init(DeallocMode::Early),
      llvm::cl::values(
          clEnumValN(DeallocMode::Early, "early",
                     "remat-early-free: right after the last use (default)"),
          clEnumValN(DeallocMode::Upstream, "upstream",
                     "upstream buffer-deallocation-pipeline: at the end of "
                     "the block"),
          clEnumValN(DeallocMode::UpstreamLiveness, "upstream-liveness",
                     "upstream buffer-deallocation-pipeline, then "
                     "optimize-allocation-liveness"))};
  Option<bool> autodiff{
      *this, "autodiff",
      llvm::cl::desc("The input is a forward function (result #0 a loss "
                     "marked remat.loss): build its training step with "
                     "remat-autodiff first"),
      llvm::cl::init(false)};
  Option<std::string> entry{
      *this, "entry",
      llvm::cl::desc("Generate a main that calls this function on "
                     "deterministic inputs (remat-generate-main)"),
      llvm::cl::init("")};
};

/// normalize destinations + solve + apply: the rematerialised step, tensors.
void buildRematPipeline(mlir::OpPassManager &pm,
                        const RematPipelineOptions &options);
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

/// Registers the dialects that the remat pipelines need (and only those).
void registerRematDialects(mlir::DialectRegistry &registry);

} // namespace remat

#endif // REMAT_TRANSFORMS_PASSES_H
