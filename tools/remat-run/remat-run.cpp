//===- remat-run.cpp - Compile a training step, run it, report its peak ---===//
//
//   remat-run FILE.mlir [--solver=NAME] [--budget=B] [--entry=FUNC]
//                       [--dealloc=early|upstream|upstream-liveness] [--print-ir]
//
// 1. Parses FILE and runs the remat pipeline (normalize, solve, apply); reads
//    the simulator's prediction from the step: `remat.predicted_peak_bytes`
//    and `remat.fixed_bytes`.
// 2. Adds a `main` (remat-generate-main) unless the module has one; a
//    module's own main gets every call of each step it calls wrapped in the
//    runtime's measurement window (remat-instrument-step-calls, OwnMain.h),
//    and with several steps one `remat-run: step=NAME ...` line each. Lowers
//    the module to the LLVM dialect (bufferize, free, lower).
// 3. Runs it with mlir-runner and the project's CPU runtime, which counts the
//    bytes the program really allocates, and prints the program's output and
//        remat-run: fixed_bytes=F total_peak_bytes=T
//        remat-run: measured_peak_bytes=N predicted_peak_bytes=M
//
// Environment: REMAT_MLIR_RUNNER overrides the mlir-runner path,
// REMAT_RUNTIME_LIBRARY the runtime library.
//
// --target=gpu compiles the step to a standalone executable for an NVIDIA GPU
// instead and reports device bytes (GpuTarget.cpp, docs/gpu.md).
//
//===----------------------------------------------------------------------===//

#include "GpuTarget.h"
#include "ProfileCosts.h"
#include "OwnMain.h"
#include "RuntimeReport.h"

#include "remat/Solvers/Solver.h"
#include "remat/Support/ContextOptions.h"
#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>
#include <string>

#ifndef REMAT_RUNTIME_LIBRARY
#define REMAT_RUNTIME_LIBRARY ""
#endif
#ifndef REMAT_MLIR_RUNNER
#define REMAT_MLIR_RUNNER ""
#endif
#ifndef REMAT_C_RUNNER_UTILS
#define REMAT_C_RUNNER_UTILS ""
#endif
#ifndef REMAT_RUNNER_UTILS
#define REMAT_RUNNER_UTILS ""
#endif

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("remat-run options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                               cl::Required, cl::cat(category));
// The pipeline's options (remat/Transforms/PipelineOptions.def).
#define REMAT_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)        \
  cl::opt<TYPE> FIELD(FLAG, cl::desc(DESCRIPTION), cl::init(DEFAULT),          \
                      cl::cat(category));
#include "remat/Transforms/PipelineOptions.def"
cl::opt<remat::DeallocMode> dealloc("dealloc",
                                    cl::desc("Where buffers are freed"),
                                    cl::init(remat::DeallocMode::Arena),
                                    cl::values(REMAT_DEALLOC_MODE_VALUES),
                                    cl::cat(category));
cl::opt<remat::KernelMode> kernels("kernels",
                                   cl::desc("Who runs the contractions"),
                                   cl::init(remat::KernelMode::Library),
                                   cl::values(REMAT_KERNEL_MODE_VALUES),
                                   cl::cat(category));
cl::opt<unsigned> optLevel("opt-level",
                           cl::desc("LLVM optimisation level of the compiled "
                                    "step (0-3; default 3, or "
                                    "REMAT_RUN_OPT_LEVEL)"),
                           cl::init(3), cl::cat(category));
cl::opt<std::string> profileCosts(
    "profile-costs",
    cl::desc("Time every op of the step as written (solver none) on the "
             "target and write the input with the measured nanoseconds as "
             "each op's remat.cost to this file (use with --repeat); with "
             "--gpu-compile-only, the input with its ops numbered "
             "(remat.profile_id) that the executable's 'remat-profile:' "
             "lines name"),
    cl::value_desc("file"), cl::init(""), cl::cat(category));
cl::opt<bool> printIR("print-ir",
                      cl::desc("Print the rematerialised module (tensors, "
                               "with the generated main) before running it"),
                      cl::init(false), cl::cat(category));
cl::opt<bool> keepTemps("keep-temps",
                        cl::desc("Keep the lowered module and the program's "
                                 "output in temporary files and name them"),
                        cl::init(false), cl::cat(category), cl::Hidden);

int fail(const llvm::Twine &message) {
  llvm::outs().flush();
  llvm::errs() << "remat-run: error: " << message << "\n";
  return 1;
}

/// An integer attribute (or an integral float) of `op`, if present.
std::optional<int64_t> getIntAttr(Operation *op, llvm::StringRef name) {
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

/// The first of: the environment variable, the path CMake baked in, the
/// program found on PATH.
std::string findTool(const char *envVar, llvm::StringRef builtIn,
                     llvm::StringRef name) {
  if (const char *env = std::getenv(envVar); env && *env)
    return env;
  if (!builtIn.empty() && llvm::sys::fs::exists(builtIn))
    return builtIn.str();
  if (!name.empty())
    if (auto found = llvm::sys::findProgramByName(name))
      return *found;
  return builtIn.str();
}


/// Lowers `module` (tensors, with a main) for the CPU, runs it with
/// mlir-runner and the project's runtime, forwards its output and prints the
/// `remat-run:` lines; `report` gets the runtime's report.
int runOnCpu(ModuleOp module, const remat::RematPipelineOptions &options,
             std::optional<int64_t> predicted, std::optional<int64_t> fixed,
             std::optional<int64_t> livePeak,
             const std::vector<remat_run::MeasuredStep> &ownSteps,
             remat_run::RuntimeReport &report);

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerPassManagerCLOptions();
  // -debug, -debug-only=<type,...> (remat/Support/Debug.h).
  remat::registerDebugOptions();
  // An error on a step is one line unless --mlir-print-op-on-diagnostic.
  remat::registerContextOptionsQuietByDefault(&category);
  cl::HideUnrelatedOptions({&category, &remat_run::gpuOptionCategory(),
                           &remat::debugOptionCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "remat-run: rematerialise a training step, run it on the CPU and "
      "compare the measured peak with the predicted one\n");
  // Every numeric option is range-checked before any work.
  if (llvm::Error err = remat::checkTimeLimit(timeLimit, "--time-limit"))
    return fail(llvm::toString(std::move(err)));
  if (llvm::Error err = remat::checkMemorySlots(slots, "--slots"))
    return fail(llvm::toString(std::move(err)));
  if (std::string error = remat_run::checkGpuOptions(); !error.empty())
    return fail(error);
  // REMAT_RUN_OPT_LEVEL: the default level (the test suite compiles quickly
  // at 0: LLVM's -O3 on a model's step takes seconds; the flag wins).
  if (!optLevel.getNumOccurrences())
    if (const char *env = std::getenv("REMAT_RUN_OPT_LEVEL"); env && *env) {
      unsigned level;
      if (llvm::StringRef(env).getAsInteger(10, level))
        return fail("REMAT_RUN_OPT_LEVEL must be an integer in [0, 3], got '" +
                    std::string(env) + "'");
      optLevel = level;
    }
  if (optLevel > 3)
    return fail("--opt-level must be in [0, 3], got " +
                std::to_string(optLevel.getValue()));

  DialectRegistry registry;
  remat::registerRematDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // Parse, with diagnostics printed against the source.
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openInputFile(inputFile, &errorMessage);
  if (!buffer)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return fail("cannot parse '" + inputFile + "'");

  remat::RematPipelineOptions options;
#define REMAT_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, DESCRIPTION)        \
  options.FIELD = FIELD;
#include "remat/Transforms/PipelineOptions.def"
  options.dealloc = dealloc;
  options.kernels = kernels;
  options.target = remat_run::targetIsGpu() ? remat::LibraryTarget::Gpu
                                            : remat::LibraryTarget::Cpu;

  // --profile-costs: the ops of the step as written are numbered, and a
  // copy of the input keeps the numbers to take the measured costs.
  OwningOpRef<ModuleOp> profiled;
  func::FuncOp profiledStep;
  if (!profileCosts.empty()) {
    if (solver.getNumOccurrences() && solver != "none")
      return fail("--profile-costs times the step as written: it runs with "
                  "--solver=none");
    options.solver = "none";
    std::string error;
    func::FuncOp target =
        remat_run::findProfiledStep(*module, entry, error);
    if (!target)
      return fail(error);
    unsigned numbered = remat_run::numberOpsForProfile(target);
    profiled = module->clone();
    profiledStep = profiled->lookupSymbol<func::FuncOp>(target.getSymName());
    llvm::errs() << "remat-run: profiling " << numbered << " ops of '"
                 << target.getSymName() << "'\n";
  }
  // A module's own main runs as it is: --entry then only names the step
  // whose calls are measured, and no main is generated.
  const bool ownMain = module->lookupSymbol("main") != nullptr;
  if (ownMain)
    options.entry = "";

  // 1. The rematerialised step, still on tensors.
  {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return fail("bad pass manager options");
    remat::buildRematPipeline(pm, options);
    if (failed(pm.run(*module)))
      return fail("the remat pipeline failed");
  }

  // The steps that the module's own main calls (OwnMain.h), each call of
  // each measured on its own; several get a line each.
  std::vector<remat_run::MeasuredStep> ownSteps;
  if (ownMain) {
    std::string error = remat_run::findStepsOfOwnMain(*module, entry, ownSteps);
    if (!error.empty())
      return fail(error + " in '" + inputFile + "'");
    if (!ownSteps.empty() &&
        failed(remat_run::instrumentStepCalls(*module, ownSteps, repeat)))
      return fail("cannot measure the calls of the training steps in the "
                  "module's main");
    if (ownSteps.size() > 1 && remat_run::targetIsGpu())
      return fail("the module's main calls several training steps; "
                  "--target=gpu measures one: choose it with --entry");
  }

  // The step whose prediction we compare with: --entry, else the one function
  // that remat-apply annotated (the worst of a main's several steps).
  func::FuncOp step;
  if (ownMain) {
    if (!ownSteps.empty())
      step = module->lookupSymbol<func::FuncOp>(
          remat_run::worstStep(ownSteps).name);
  } else if (!entry.empty()) {
    step = module->lookupSymbol<func::FuncOp>(entry);
    if (!step)
      return fail("no function '" + entry + "' in '" + inputFile + "'");
  } else {
    for (auto func : module->getOps<func::FuncOp>()) {
      if (!func->hasAttr("remat.predicted_peak_bytes"))
        continue;
      if (step)
        return fail("several training steps ('" + step.getSymName() +
                    "', '" + func.getSymName() + "'): choose one with --entry");
      step = func;
    }
  }
  std::optional<int64_t> predicted, fixed, livePeak;
  if (step) {
    predicted = getIntAttr(step, "remat.predicted_peak_bytes");
    fixed = getIntAttr(step, "remat.fixed_bytes");
    // With an arena the prediction is the arena's figure; the simulator's
    // live peak is beside it.
    livePeak = getIntAttr(step, "remat.live_peak_bytes");
    if (!livePeak)
      livePeak = predicted;
  }

  // 2. A main that calls the step, unless the pipeline or the user made one
  //    (whose calls of the steps were wrapped above).
  if (!module->lookupSymbol("main")) {
    if (!step)
      return fail("no training step found (no function carries "
                  "remat.predicted_peak_bytes) and no main: use --entry");
    PassManager pm(&context);
    remat::RematGenerateMainPassOptions mainOptions;
    mainOptions.entry = step.getSymName().str();
    mainOptions.repeat = repeat;
    pm.addPass(remat::createRematGenerateMainPass(mainOptions));
    if (failed(pm.run(*module)))
      return fail("cannot generate a main for '" + step.getSymName() + "'");
  }
  if (profiled) {
    PassManager pm(&context);
    pm.addPass(remat::createRematInstrumentOpTimersPass());
    if (failed(pm.run(*module)))
      return fail("cannot instrument the ops for --profile-costs");
  }
  if (printIR) {
    module->print(llvm::outs());
    llvm::outs() << "\n";
    llvm::outs().flush();
  }
  remat_run::RuntimeReport report;
  int rc = remat_run::targetIsGpu()
               ? remat_run::runOnGpu(*module, predicted, fixed, livePeak,
                                     dealloc, kernels, keepTemps, report)
               : runOnCpu(*module, options, predicted, fixed, livePeak,
                          ownSteps, report);
  if (rc != 0 || !profiled)
    return rc;
  // Built to run elsewhere: the input with its ops numbered, so that the
  // executable's `remat-profile: op=<id> ns=<ns>` lines can be read back.
  if (remat_run::targetIsGpu() && remat_run::gpuCompileOnlyRequested()) {
    if (std::string error = remat_run::writeModule(*profiled, profileCosts);
        !error.empty())
      return fail(error);
    llvm::errs() << "remat-run: wrote '" << profileCosts
                 << "': the step's ops numbered (remat.profile_id); the "
                    "executable prints 'remat-profile: op=<id> ns=<ns>' "
                    "for each\n";
    return 0;
  }
  if (report.opNs.empty())
    return fail("--profile-costs: the program timed no op (no measured "
                "window ran the step?)");
  double total = remat_run::applyProfiledCosts(profiledStep, report);
  if (std::string error = remat_run::writeModule(*profiled, profileCosts);
      !error.empty())
    return fail(error);
  char totalText[64];
  std::snprintf(totalText, sizeof(totalText), "%.6g", total * 1e-9);
  llvm::errs() << "remat-run: wrote '" << profileCosts << "': "
               << report.opNs.size() << " ops timed, "
               << totalText << " s in all\n";
  return 0;
}

namespace {

int runOnCpu(ModuleOp module, const remat::RematPipelineOptions &options,
             std::optional<int64_t> predicted, std::optional<int64_t> fixed,
             std::optional<int64_t> livePeak,
             const std::vector<remat_run::MeasuredStep> &ownSteps,
             remat_run::RuntimeReport &report) {
  // 3. Lower to the LLVM dialect.
  {
    PassManager pm(module.getContext());
    if (failed(applyPassManagerCLOptions(pm)))
      return fail("bad pass manager options");
    remat::buildLowerBufferizedToCpuPipeline(pm, options);
    if (failed(pm.run(module)))
      return fail("lowering to the LLVM dialect failed");
  }

  // 4. Write it out and run it.
  llvm::SmallString<128> irPath, outPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("remat-run", "mlir", irPath))
    return fail("cannot create a temporary file: " + ec.message());
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("remat-run", "out", outPath))
    return fail("cannot create a temporary file: " + ec.message());
  std::optional<llvm::FileRemover> removeIR, removeOut;
  if (!keepTemps) {
    removeIR.emplace(irPath);
    removeOut.emplace(outPath);
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(irPath, ec);
    if (ec)
      return fail("cannot write '" + irPath + "': " + ec.message());
    module.print(os);
    os << "\n";
    os.close();
    if (os.has_error())
      return fail("cannot write '" + irPath + "'");
  }

  std::string runner =
      findTool("REMAT_MLIR_RUNNER", REMAT_MLIR_RUNNER, "mlir-runner");
  std::string runtime =
      findTool("REMAT_RUNTIME_LIBRARY", REMAT_RUNTIME_LIBRARY, "");
  if (runner.empty() || !llvm::sys::fs::can_execute(runner))
    return fail("cannot find mlir-runner (set REMAT_MLIR_RUNNER)");
  if (runtime.empty() || !llvm::sys::fs::exists(runtime))
    return fail("cannot find the CPU runtime library '" + runtime +
                "' (set REMAT_RUNTIME_LIBRARY)");
  // MLIR's runner utilities: memrefCopy (copies the lowering cannot inline)
  // and what a module's own main prints with (printF32, printNewline and
  // vector.print in the C utilities; printMemrefF32 in the C++ ones).
  std::string sharedLibs = "-shared-libs=" + runtime;
  for (llvm::StringRef utils : {REMAT_C_RUNNER_UTILS, REMAT_RUNNER_UTILS})
    if (!utils.empty() && llvm::sys::fs::exists(utils))
      sharedLibs += "," + utils.str();

  std::string opt = "-O" + std::to_string(optLevel.getValue());
  llvm::SmallVector<llvm::StringRef> args = {
      runner, irPath, "-e", "main", "-entry-point-result=void", opt,
      sharedLibs};
  // stdin from /dev/null, stdout to a file, stderr inherited (the runtime's
  // errors and crashes reach the user directly).
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(outPath), std::nullopt};
  if (keepTemps)
    llvm::errs() << "remat-run: lowered module " << irPath
                 << ", program output " << outPath << "\n";
  llvm::outs().flush();
  std::string execError;
  bool execFailed = false;
  int rc = llvm::sys::ExecuteAndWait(runner, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &execError, &execFailed);

  // Forward the program's output, keeping the runtime's report for us.
  remat_run::ProgramOutput output =
      remat_run::forwardProgramOutput(outPath, /*dropRunLines=*/false);
  report = output.report;

  if (execFailed)
    return fail("cannot run '" + runner + "': " + execError);
  if (rc != 0)
    return fail("'" + runner + "' failed (" +
                (rc < 0 ? "crashed" : "exit code " + std::to_string(rc)) +
                (execError.empty() ? "" : ": " + execError) + ")");
  if (!output.readError.empty())
    return fail("cannot read the program's output: " + output.readError);
  if (!output.sawReport)
    return fail("the program printed no 'remat-runtime:' line (was the "
                "runtime library loaded?)");
  if (output.badReport)
    return fail("malformed 'remat-runtime:' line");

  if (ownSteps.size() > 1) {
    std::string missing = remat_run::printStepLines(ownSteps, output.tags);
    if (!missing.empty())
      return fail(missing);
  }
  llvm::outs() << "remat-run: fixed_bytes=" << orNone(fixed)
               << " total_peak_bytes=" << *report.totalPeak << "\n";
  remat_run::printStepSeconds(report);
  remat_run::printMemoryFigures(report, livePeak);
  llvm::outs() << "remat-run: measured_peak_bytes=" << *report.stepPeak
               << " predicted_peak_bytes=" << orNone(predicted) << "\n";
  llvm::outs().flush();
  return 0;
}

} // namespace
