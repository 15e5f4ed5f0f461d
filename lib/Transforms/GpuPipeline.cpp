//===- GpuPipeline.cpp - remat-lower-to-gpu and its registrations ---------===//
//
// The GPU pipeline (docs/gpu.md). It shares the front of the CPU path
// (remat-pipeline, one-shot bufferization with the same options,
// remat-early-free), so the device program allocates and frees exactly the
// buffers the CPU program does, in the same order: the measured device peak is
// the simulator's peak. The heavy GPU/NVVM/translation headers stay in this
// translation unit.
//
//===----------------------------------------------------------------------===//

#include "remat/Transforms/GpuPipeline.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#ifndef REMAT_CUDA_TOOLKIT_PATH
#define REMAT_CUDA_TOOLKIT_PATH ""
#endif

using namespace mlir;

llvm::StringRef remat::getConfiguredCudaToolkitPath() {
  return REMAT_CUDA_TOOLKIT_PATH;
}

void remat::registerRematGpuDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  // nvvm-attach-target puts #nvvm.target on kernel modules;
  // gpu-module-to-binary serializes them through its interface, which
  // translates the module to LLVM IR first.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  // gpu.binary / gpu.launch_func to LLVM IR (remat-run --target=gpu).
  registerGPUDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm and gpu-to-llvm collect their patterns from the
  // conversion-to-LLVM interfaces of the loaded dialects.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
}

void remat::buildLowerBufferizedToGpuPipeline(
    OpPassManager &pm, const RematGpuPipelineOptions &options) {
  // --- Buffers: exactly the CPU path's (buildLowerBufferizedToCpuPipeline
  // with dealloc=early), so that the device buffers are the predicted ones.
  addRematBufferizePasses(pm);
  pm.addNestedPass<func::FuncOp>(createRematEarlyFreePass());
  if (options.arena)
    pm.addPass(createRematAssignArenaPass());
  // The planned contractions become cuBLAS/cuDNN calls (host functions on
  // device pointers), their workspace a device buffer around them.
  if (options.kernels == KernelMode::Library) {
    RematLowerLibraryCallsPassOptions libraryOptions;
    libraryOptions.target = "gpu";
    pm.addPass(createRematLowerLibraryCallsPass(libraryOptions));
  }

  // --- Kernels: every linalg op becomes a parallel loop nest (parallel
  // dimensions outermost, one-iteration loops for ops without any), tiled
  // into thread blocks, then a gpu.launch, outlined into a gpu.module.
  // Strided copies (padding, slices) become kernels too.
  pm.addNestedPass<func::FuncOp>(createRematCopiesToLinalgPass());
  // Long reductions (statistics, losses): a block per output element.
  if (options.kernels == KernelMode::Library)
    pm.addNestedPass<func::FuncOp>(createRematGpuBlockReductionsPass());
  pm.addNestedPass<func::FuncOp>(createRematPrepareLinalgForGpuPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // Adjacent loops over the same iterations as one kernel.
  if (options.fuseLoops)
    pm.addNestedPass<func::FuncOp>(createRematFuseParallelLoopsPass());
  RematMapParallelLoopsToGpuPassOptions mapOptions;
  mapOptions.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(
      createRematMapParallelLoopsToGpuPass(mapOptions));
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  // Constants and index computations move into the kernels instead of being
  // passed as arguments.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());

  // --- Host buffers on the device, freed where the CPU path frees them; one
  // async token threaded through each block (one stream, program order).
  pm.addPass(createRematHostBuffersToGpuPass());
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  // Library calls queue on the program's one stream: no host wait before
  // them.
  if (options.kernels == KernelMode::Library)
    pm.addPass(createRematGpuAsyncLibraryCallsPass());

  // --- Device code to NVVM. Structured control flow, affine index
  // arithmetic and strided metadata first (host and device alike).
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());

  // --- Host code to LLVM: functions (with the C interface of the runtime's
  // printing functions), then the GPU ops to calls of the mgpu* runtime.
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());

  // --- Kernel modules to binaries embedded in the host module.
  GpuModuleToBinaryPassOptions binary;
  switch (options.format) {
  case GpuBinaryFormat::Ptx:
    binary.compilationTarget = "isa";
    break;
  case GpuBinaryFormat::Cubin:
    binary.compilationTarget = "bin";
    break;
  case GpuBinaryFormat::Fatbin:
    binary.compilationTarget = "fatbin";
    break;
  }
  binary.toolkitPath = options.toolkit.empty()
                           ? getConfiguredCudaToolkitPath().str()
                           : options.toolkit.getValue();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void remat::buildRematLowerToGpuPipeline(
    OpPassManager &pm, const RematGpuPipelineOptions &options) {
  RematPipelineOptions remat;
#define REMAT_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)        \
  remat.FIELD = options.FIELD;
#include "remat/Transforms/PipelineOptions.def"
  remat.kernels = options.kernels;
  remat.target = LibraryTarget::Gpu;
  remat.dealloc = options.arena ? DeallocMode::Arena : DeallocMode::Early;
  buildRematPipeline(pm, remat);
  buildLowerBufferizedToGpuPipeline(pm, options);
}

void remat::registerRematGpuPipelines() {
  registerModulePipeline<RematGpuPipelineOptions>(
      "remat-lower-to-gpu",
      "remat-pipeline, then bufferization and early frees as on the CPU, "
      "kernels for every linalg op, device allocations and frees in place of "
      "the host ones, NVVM and a kernel binary (PTX/cubin/fatbin), host code "
      "to the LLVM dialect calling the project's CUDA runtime",
      buildRematLowerToGpuPipeline);
}
