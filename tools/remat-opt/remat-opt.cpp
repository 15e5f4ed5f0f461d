//===- remat-opt.cpp - the remat optimizer driver -------------------------===//
//
// An mlir-opt for the remat passes and pipelines. It registers only the
// dialects the pipelines need and the upstream passes the tests and users
// combine with them (no InitAllDialects/InitAllPasses: those cost minutes of
// build time on the project's 2-core machines). `-debug` and
// `-debug-only=<type,...>` print the LLVM_DEBUG output of the remat passes
// and solvers also with Debian's NDEBUG LLVM (remat/Support/Debug.h).
//
//===----------------------------------------------------------------------===//

#include "remat/Support/ContextOptions.h"
#include "remat/Support/Debug.h"
#include "TestPasses.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  // Before MlirOptMain parses the command line.
  remat::registerDebugOptions();
  // An error on a step is one line, not the whole function after it.
  remat::registerContextOptionsQuietByDefault();
  mlir::DialectRegistry registry;
  remat::registerRematDialects(registry);
  remat::registerRematPasses();
  remat::registerRematPipelines();
  // test-remat-training-graph, test-remat-structure (lit only).
  remat::registerRematTestPasses();
  // Upstream passes that are used next to ours (tests, comparisons).
  mlir::registerTransformsPasses();
  mlir::bufferization::registerBufferizationPasses();
  mlir::bufferization::registerBufferizationPipelines();
  mlir::memref::registerMemRefPasses();
  mlir::registerConvertLinalgToLoopsPass();
  mlir::registerFinalizeMemRefToLLVMConversionPass();
  mlir::registerSCFToControlFlowPass();
  mlir::registerConvertFuncToLLVMPass();
  mlir::registerArithToLLVMConversionPass();
  mlir::registerConvertControlFlowToLLVMPass();
  mlir::registerReconcileUnrealizedCastsPass();
  // What remat-lower-to-cpu does with math ops (tests that lower by hand).
  mlir::registerConvertMathToLLVMPass();
  mlir::registerConvertMathToLibmPass();
  // The upstream steps of remat-lower-to-gpu, for tests and custom pipelines
  // (the GPU/NVVM dialects and translations come with registerRematDialects).
  mlir::registerGPUPasses();
  mlir::registerConvertLinalgToParallelLoopsPass();
  mlir::registerConvertParallelLoopToGpuPass();
  mlir::registerConvertGpuOpsToNVVMOps();
  mlir::registerGpuToLLVMConversionPass();
  mlir::registerLowerAffinePass();
  mlir::registerConvertIndexToLLVMPass();
  // The CPU lowering's threads (parallel-loops).
  mlir::registerConvertSCFToOpenMPPass();
  mlir::registerConvertOpenMPToLLVMPass();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "remat-opt: rematerialisation for MLIR training steps\n",
      registry));
}
