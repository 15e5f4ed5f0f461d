//===- Pipelines.cpp - the remat pipelines and dialect registration -------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Transforms/ExternalModels.h"
#include "remat/Transforms/GpuPipeline.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void remat::registerRematExternalModels(DialectRegistry &registry) {
  registerRematCostModels(registry);
  registerRematDifferentiableModels(registry);
}

void remat::registerRematDialects(DialectRegistry &registry) {
  registry.insert<RematDialect, func::FuncDialect, arith::ArithDialect,
                  linalg::LinalgDialect, tensor::TensorDialect,
                  memref::MemRefDialect, bufferization::BufferizationDialect,
                  scf::SCFDialect, cf::ControlFlowDialect, math::MathDialect,
                  affine::AffineDialect, index::IndexDialect,
                  vector::VectorDialect, LLVM::LLVMDialect,
                  // The CPU lowering's threads
                  // (remat-share-loops-across-threads), so its output parses.
                  omp::OpenMPDialect>();
  // Bufferization of the step (one-shot-bufferize) and the allocation
  // interface that upstream deallocation needs.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  // What the upstream ops cost (extraction) and how they are differentiated
  // (remat-autodiff): the remat op interfaces (ExternalModels.h).
  registerRematExternalModels(registry);
  // GPU/NVVM dialects and translations of remat-lower-to-gpu (GpuPipeline.cpp).
  registerRematGpuDialects(registry);
}

/// The options of the solve, which remat-apply, remat-check-options and
/// remat-print-report share (Passes.td's RematSolverOption, RematBudgetOption
/// and RematSearchOptions), from the pipeline's.
template <typename PassOptions>
static PassOptions solveOptions(const remat::RematPipelineOptions &options) {
  PassOptions passOptions;
  passOptions.solver = options.solver;
  passOptions.budget = options.budget;
  passOptions.timeLimit = options.timeLimit;
  passOptions.slots = options.slots;
  passOptions.progress = options.progress;
  passOptions.startOrder = options.startOrder;
  return passOptions;
}

remat::RematApplyPassOptions remat::RematPipelineOptions::applyOptions() const {
  auto apply = solveOptions<remat::RematApplyPassOptions>(*this);
  // The arena's placement is part of the plan (its figure meets the budget).
  apply.arena = dealloc == DeallocMode::Arena;
  return apply;
}

/// remat-plan-library-calls for the pipeline's target, unless the kernels
/// are loops or no target is set.
static void addPlanLibraryCalls(OpPassManager &funcPm,
                                const remat::RematPipelineOptions &options) {
  using namespace remat;
  if (options.kernels != KernelMode::Library ||
      options.target == LibraryTarget::None)
    return;
  RematPlanLibraryCallsPassOptions planOptions;
  planOptions.target = options.target == LibraryTarget::Gpu ? "gpu" : "cpu";
  planOptions.gpuWorkspaceLimit = options.gpuWorkspaceLimit;
  funcPm.addPass(createRematPlanLibraryCallsPass(planOptions));
}

void remat::buildRematPipeline(OpPassManager &pm,
                               const RematPipelineOptions &options) {
  // Option ranges, and a step for an explicit budget or solver to apply to:
  // remat-apply, a function pass, cannot see that no function is a step.
  pm.addPass(createRematCheckOptionsPass(
      solveOptions<RematCheckOptionsPassOptions>(options)));
  // Calls of pure functions become ops of the step, which the graph sees
  // (and which remat-autodiff can differentiate).
  pm.addPass(createRematInlineCallsPass());
  if (options.autodiff)
    pm.addPass(createRematAutodiffPass());
  // The wrapper `main` is generated before any step changes its order so
  // that it sees the entry's signature (a training step's, after autodiff).
  if (!options.entry.empty()) {
    RematGenerateMainPassOptions mainOptions;
    mainOptions.entry = options.entry;
    mainOptions.repeat = options.repeat;
    pm.addPass(createRematGenerateMainPass(mainOptions));
  }
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  // Private destinations make the graph's values the program's buffers.
  funcPm.addPass(createRematNormalizeDestinationsPass());
  // The contractions a library will run, with the workspace it needs: part
  // of the plan, so before the solve.
  addPlanLibraryCalls(funcPm, options);
  funcPm.addPass(createRematApplyPass(options.applyOptions()));
}

void remat::addRematBufferizePasses(OpPassManager &pm) {
  // Opaque kernels have no implementation: say so at their location.
  pm.addPass(createRematCheckLowerablePass());
  // Whole-module bufferization with identity layouts at function boundaries
  // and no alignment padding: every buffer is exactly its tensor's bytes, as
  // the training graph predicts (docs/use-in-your-pipeline.md says why each
  // option is needed).
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.bufferAlignment = 0;
  // A caller's training loop carries tensors in scf.for (SGD: each iteration
  // yields new weights), which one-shot bufferization otherwise rejects
  // ("Yield operand #0 is not equivalent to the corresponding iter bbArg").
  // Only loops bufferize differently: a step is one block without loops, so
  // its buffers, and the prediction, are unchanged.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
}

void remat::buildLowerBufferizedToCpuPipeline(
    OpPassManager &pm, const RematPipelineOptions &options) {
  addRematBufferizePasses(pm);
  if (options.dealloc == DeallocMode::Early ||
      options.dealloc == DeallocMode::Arena) {
    pm.addNestedPass<func::FuncOp>(createRematEarlyFreePass());
    // The plan's placement: every buffer the step frees at its offset of
    // one arena (the frees, which gave the lifetimes, disappear).
    if (options.dealloc == DeallocMode::Arena)
      pm.addPass(createRematAssignArenaPass());
  } else {
    // The references: frees at the end of each block, optionally moved up to
    // the last use by upstream's liveness optimisation.
    bufferization::buildBufferDeallocationPipeline(pm);
    if (options.dealloc == DeallocMode::UpstreamLiveness)
      pm.addNestedPass<func::FuncOp>(
          bufferization::createOptimizeAllocationLivenessPass());
    // Clones that ownership-based deallocation inserts (e.g. for a returned
    // argument) become memref.alloc + memref.copy.
    pm.addPass(createConvertBufferizationToMemRefPass());
  }
  // The planned contractions become oneDNN calls, their workspace allocated
  // and freed around them.
  if (options.kernels == KernelMode::Library) {
    RematLowerLibraryCallsPassOptions libraryOptions;
    libraryOptions.target = "cpu";
    pm.addPass(createRematLowerLibraryCallsPass(libraryOptions));
  }
  // Strided copies (padding) as loops the compiler vectorises, instead of
  // the runtime's element-by-element memrefCopy.
  pm.addNestedPass<func::FuncOp>(createRematCopiesToLinalgPass());
  // Innermost loops that LLVM's vectoriser takes (kernels=loops keeps the
  // ops' own order: the reference).
  if (options.kernels == KernelMode::Library)
    pm.addNestedPass<func::FuncOp>(createRematPrepareLoopsForCpuPass());
  if (options.parallelLoops) {
    // The outermost parallel loop of each large nest as OpenMP work
    // sharing; every other loop sequential.
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    pm.addPass(createRematShareLoopsAcrossThreadsPass());
  } else {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  }
  // Sums carried in registers, so that LLVM vectorises them.
  if (options.kernels == KernelMode::Library) {
    pm.addNestedPass<func::FuncOp>(createRematPromoteLoopAccumulatorsPass());
    pm.addNestedPass<func::FuncOp>(createRematKeepInnerLoopsRolledPass());
  }
  // One function per loop nest: LLVM's -O3 on a whole step as one function
  // costs more than linearly in its size.
  if (options.outlineLoopNests)
    pm.addPass(createRematOutlineLoopNestsPass());
  // Vector ops of a module's own code (vector.print in a test's main).
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // The generic allocation functions are the project runtime's hooks that
  // count live and peak bytes.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (math.erf: GELU, and the backward that
  // remat-autodiff builds of it) becomes a call of the C library's function.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  // The OpenMP regions' types and operands, after the ops in them.
  if (options.parallelLoops)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // After the functions: vector.print calls printF32 & co., which a module
  // that also calls them directly has declared as func.func; converted
  // first, those declarations are the llvm.func the vector lowering reuses.
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void remat::buildRematLowerToCpuPipeline(OpPassManager &pm,
                                         const RematPipelineOptions &options) {
  RematPipelineOptions cpu;
  cpu.copyOptionValuesFrom(options);
  cpu.target = LibraryTarget::Cpu;
  buildRematPipeline(pm, cpu);
  buildLowerBufferizedToCpuPipeline(pm, cpu);
}

std::optional<std::string>
remat::checkPipelineAnchor(const OpPassManager &pm, StringRef pipeline) {
  std::optional<StringRef> anchor = pm.getOpName();
  if (anchor && *anchor == ModuleOp::getOperationName())
    return std::nullopt;
  std::string where = anchor ? "nested under '" + anchor->str() + "'"
                             : std::string("nested under 'any' (an op-agnostic "
                                           "pass manager, where its module "
                                           "passes would never run)");
  return "'" + pipeline.str() + "' must run on 'builtin.module' (it adds " +
         "module passes and nests its function passes itself), not " + where +
         "; put it directly inside 'builtin.module(...)'";
}

void remat::registerRematPipelines() {
  registerModulePipeline<RematPipelineOptions>(
      "remat-pipeline",
      "Rematerialise every training step: check the options, inline calls "
      "of pure functions, normalize destinations, solve, apply the plan "
      "(tensors in, tensors out)",
      buildRematPipeline);
  registerModulePipeline<RematPipelineOptions>(
      "remat-report",
      "Print the plans of `solver` (or all solvers) for every training step "
      "as JSON; the IR is left as it is apart from inlined calls of pure "
      "functions and normalized destinations",
      [](OpPassManager &pm, const RematPipelineOptions &options) {
        pm.addPass(createRematInlineCallsPass());
        if (options.autodiff)
          pm.addPass(createRematAutodiffPass());
        pm.addNestedPass<func::FuncOp>(createRematNormalizeDestinationsPass());
        // target=cpu|gpu: the plans of that lowering, library workspaces
        // counted.
        addPlanLibraryCalls(pm.nest<func::FuncOp>(), options);
        auto report = solveOptions<RematReportPassOptions>(options);
        // The plans of the lowering: placed in an arena unless dealloc says
        // otherwise.
        report.arena = options.dealloc == DeallocMode::Arena;
        pm.addPass(createRematReportPass(report));
      });
  registerModulePipeline<EmptyPipelineOptions>(
      "remat-export-graph",
      "Print the training graph of the module's step as NetworkX node-link "
      "JSON for remat-solve (calls of pure functions inlined, normalized "
      "destinations, so that the graph's values are the bufferized "
      "program's buffers)",
      [](OpPassManager &pm, const EmptyPipelineOptions &) {
        pm.addPass(createRematInlineCallsPass());
        pm.addNestedPass<func::FuncOp>(createRematNormalizeDestinationsPass());
        pm.addPass(createRematPrintGraphPass());
      });
  registerModulePipeline<RematPipelineOptions>(
      "remat-lower-to-cpu",
      "remat-pipeline, then one-shot bufferization, early frees and lowering "
      "to the LLVM dialect with the runtime's counting allocation functions",
      buildRematLowerToCpuPipeline);
  registerRematGpuPipelines();
}
