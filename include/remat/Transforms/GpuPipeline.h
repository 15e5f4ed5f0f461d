//===- GpuPipeline.h - remat-lower-to-gpu --------------------------*- C++ -*-===//
//
// The GPU lowering of a rematerialised training step (docs/gpu.md): the remat
// pipeline, one-shot bufferization and early frees exactly as on the CPU path,
// then linalg to parallel loops, thread blocks and outlined kernels, every
// host allocation and free turned into a device allocation and free in place,
// kernels to NVVM and a PTX/cubin/fatbin binary, host code to the LLVM
// dialect calling the `mgpu*` functions of the project's CUDA runtime
// (lib/Runtime/CudaRuntime.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TRANSFORMS_GPUPIPELINE_H
#define REMAT_TRANSFORMS_GPUPIPELINE_H

#include "mlir/Pass/PassOptions.h"
#include "remat/Solvers/Solver.h"
#include "remat/Transforms/Passes.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace remat {

/// What `gpu-module-to-binary` embeds for each kernel module.
enum class GpuBinaryFormat {
  /// PTX text, JIT-compiled by the driver when the module is loaded
  /// (`mgpuModuleLoadJIT`); needs no CUDA toolkit at compile time.
  Ptx,
  /// A cubin for `chip` (ptxas from the CUDA toolkit).
  Cubin,
  /// A fatbin with the cubin and the PTX (ptxas and fatbinary).
  Fatbin,
};

/// Options of remat-lower-to-gpu.
struct RematGpuPipelineOptions
    : public mlir::PassPipelineOptions<RematGpuPipelineOptions> {
  // remat-pipeline's options (PipelineOptions.def); the frees are always
  // remat-early-free's.
#define REMAT_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)        \
  Option<TYPE> FIELD{*this, FLAG, llvm::cl::desc(DESCRIPTION),                 \
                     llvm::cl::init(DEFAULT)};
#include "remat/Transforms/PipelineOptions.def"
  Option<bool> arena{*this, "arena",
                     llvm::cl::desc("Every buffer of the step at its planned "
                                    "offset of one device arena, allocated "
                                    "once (else a device allocation per "
                                    "buffer, freed after its last use)"),
                     llvm::cl::init(true)};
  Option<KernelMode> kernels{*this, "kernels",
                             llvm::cl::desc("Who runs the contractions"),
                             llvm::cl::init(KernelMode::Library),
                             llvm::cl::values(REMAT_KERNEL_MODE_VALUES)};
  Option<bool> fuseLoops{
      *this, "fuse-loops",
      llvm::cl::desc("Adjacent loops over the same iterations as one kernel "
                     "(remat-fuse-parallel-loops; false: one kernel per "
                     "linalg op)"),
      llvm::cl::init(true)};
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Target GPU (NVVM chip)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("NVVM target features (the PTX version; CUDA 13's "
                     "ptxas needs +ptx80 or later for sm_90)"),
      llvm::cl::init("+ptx80")};
  Option<GpuBinaryFormat> format{
      *this, "format", llvm::cl::desc("Kernel binary format"),
      llvm::cl::init(GpuBinaryFormat::Ptx),
      llvm::cl::values(
          clEnumValN(GpuBinaryFormat::Ptx, "ptx",
                     "PTX text, JIT-compiled by the driver (no ptxas)"),
          clEnumValN(GpuBinaryFormat::Cubin, "cubin", "cubin (needs ptxas)"),
          clEnumValN(GpuBinaryFormat::Fatbin, "fatbin",
                     "fatbin (needs ptxas and fatbinary)"))};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("Optimisation level of the kernels"),
                            llvm::cl::init(2)};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Largest number of threads per "
                                           "block"),
                            llvm::cl::init(256)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit directory for ptxas/fatbinary (default: "
                     "the one found when the project was configured)"),
      llvm::cl::init("")};
};

/// The part of remat-lower-to-gpu after the rewrite (tensors in, LLVM dialect
/// with embedded kernel binaries out). Bufferization and frees are those of
/// the CPU path (buildLowerBufferizedToCpuPipeline with dealloc=early).
void buildLowerBufferizedToGpuPipeline(mlir::OpPassManager &pm,
                                       const RematGpuPipelineOptions &options);
/// remat-generate-main (if `entry` is set) + remat-pipeline +
/// buildLowerBufferizedToGpuPipeline.
void buildRematLowerToGpuPipeline(mlir::OpPassManager &pm,
                                  const RematGpuPipelineOptions &options);
/// Registers remat-lower-to-gpu.
void registerRematGpuPipelines();
/// Registers the GPU and NVVM dialects, the NVVM target attribute, the
/// conversion-to-LLVM interfaces and the LLVM IR translations that the GPU
/// pipeline and `gpu-module-to-binary` need.
void registerRematGpuDialects(mlir::DialectRegistry &registry);
/// The CUDA toolkit directory found when the project was configured, or "".
llvm::StringRef getConfiguredCudaToolkitPath();

} // namespace remat

#endif // REMAT_TRANSFORMS_GPUPIPELINE_H
