//===- GpuTarget.cpp - remat-run --target=gpu -----------------------------===//
//
// Ahead-of-time GPU executables (docs/gpu.md):
//   1. `main` becomes `int main()`, which announces the simulator's figures to
//      the runtime (remat_rt_set_prediction) and calls the generated main;
//   2. remat-lower-to-gpu after the rewrite (buildLowerBufferizedToGpuPipeline);
//   3. translation to LLVM IR in process (kernels are embedded as
//      gpu.binary globals loaded by global constructors);
//   4. llc to an object file, the system C++ driver to link it with the
//      static CUDA runtime and libcuda: the executable needs no MLIR or LLVM;
//   5. unless --gpu-compile-only, run it and print its output and the
//      `remat-run:` lines, measured on device bytes.
//
// Environment: REMAT_LLC, REMAT_CXX, REMAT_CUDA_RUNTIME_STATIC and
// REMAT_CUDA_DRIVER_LIBRARY override the paths found at configure time.
//
//===----------------------------------------------------------------------===//

#include "GpuTarget.h"
#include "RuntimeReport.h"

#include "remat/Transforms/GpuPipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

#ifndef REMAT_LLC
#define REMAT_LLC ""
#endif
#ifndef REMAT_CXX_LINKER
#define REMAT_CXX_LINKER ""
#endif
#ifndef REMAT_CUDA_RUNTIME_STATIC
#define REMAT_CUDA_RUNTIME_STATIC ""
#endif
#ifndef REMAT_CUDA_DRIVER_LIBRARY
#define REMAT_CUDA_DRIVER_LIBRARY ""
#endif

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Target { Cpu, Gpu };

cl::OptionCategory &category() {
  static cl::OptionCategory c("remat-run GPU options (--target=gpu)");
  return c;
}

cl::opt<Target> target(
    "target", cl::desc("Where the step runs"), cl::init(Target::Cpu),
    cl::values(clEnumValN(Target::Cpu, "cpu",
                          "JIT on the CPU with mlir-runner (default)"),
               clEnumValN(Target::Gpu, "gpu",
                          "ahead-of-time executable for an NVIDIA GPU")),
    cl::cat(category()));
cl::opt<std::string> gpuChip("gpu-chip", cl::desc("Target GPU"),
                             cl::init("sm_90"), cl::cat(category()));
cl::opt<std::string> gpuFeatures("gpu-features",
                                 cl::desc("NVVM features (PTX version)"),
                                 cl::init("+ptx80"), cl::cat(category()));
cl::opt<remat::GpuBinaryFormat> gpuFormat(
    "gpu-format", cl::desc("Kernel binary format"),
    cl::init(remat::GpuBinaryFormat::Ptx),
    cl::values(clEnumValN(remat::GpuBinaryFormat::Ptx, "ptx",
                          "PTX, JIT-compiled by the driver at load (default)"),
               clEnumValN(remat::GpuBinaryFormat::Cubin, "cubin",
                          "cubin (ptxas at compile time)"),
               clEnumValN(remat::GpuBinaryFormat::Fatbin, "fatbin",
                          "fatbin (ptxas and fatbinary at compile time)")),
    cl::cat(category()));
cl::opt<int64_t> gpuBlockSize("gpu-block-size",
                              cl::desc("Largest number of threads per block"),
                              cl::init(256), cl::cat(category()));
cl::opt<std::string>
    gpuExecutable("gpu-executable",
                  cl::desc("Keep the executable at this path (default: a "
                           "temporary file, removed after the run)"),
                  cl::init(""), cl::cat(category()));
cl::opt<bool> gpuCompileOnly(
    "gpu-compile-only",
    cl::desc("Build the executable (see --gpu-executable) but do not run it"),
    cl::init(false), cl::cat(category()));

int fail(const llvm::Twine &message) {
  llvm::outs().flush();
  llvm::errs() << "remat-run: error: " << message << "\n";
  return 1;
}

/// The environment variable, else the configured path, else `name` on PATH.
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

std::string orNone(std::optional<int64_t> v) {
  return v ? std::to_string(*v) : std::string("none");
}

/// Runs `program args...` with stdout to `outPath` (or inherited if empty);
/// returns an error message, or "" on success.
std::string execute(llvm::StringRef program,
                    llvm::ArrayRef<llvm::StringRef> args,
                    llvm::StringRef outPath = "") {
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""),
      outPath.empty() ? std::optional<llvm::StringRef>() : outPath,
      std::nullopt};
  std::string error;
  bool execFailed = false;
  llvm::outs().flush();
  int rc = llvm::sys::ExecuteAndWait(program, args, std::nullopt, redirects,
                                     0, 0, &error, &execFailed);
  if (execFailed)
    return "cannot run '" + program.str() + "': " + error;
  if (rc != 0)
    return "'" + program.str() + "' failed (" +
           (rc < 0 ? "crashed" : "exit code " + std::to_string(rc)) +
           (error.empty() ? "" : ": " + error) + ")";
  return "";
}

/// Turns the module's `main` into `int main()` that announces the prediction
/// and calls the old one: a C program's main must return an int.
LogicalResult wrapMain(ModuleOp module, std::optional<int64_t> predicted,
                       std::optional<int64_t> fixed) {
  auto oldMain = module.lookupSymbol<func::FuncOp>("main");
  if (!oldMain || oldMain.isExternal() ||
      oldMain.getFunctionType().getNumInputs() != 0 ||
      oldMain.getFunctionType().getNumResults() != 0)
    return module.emitError("remat-run --target=gpu: expected a "
                            "`func.func @main()` without arguments or "
                            "results");
  MLIRContext *ctx = module.getContext();
  OpBuilder builder(ctx);
  Location loc = oldMain.getLoc();
  oldMain.setSymName("remat_step_main");
  oldMain.setPrivate();

  builder.setInsertionPointToEnd(module.getBody());
  auto i64 = builder.getI64Type();
  auto i32 = builder.getI32Type();
  auto announce = func::FuncOp::create(
      builder, loc, "remat_rt_set_prediction",
      FunctionType::get(ctx, {i64, i64}, {}));
  announce.setPrivate();
  auto newMain = func::FuncOp::create(builder, loc, "main",
                                      FunctionType::get(ctx, {}, {i32}));
  builder.setInsertionPointToStart(newMain.addEntryBlock());
  Value p = arith::ConstantIntOp::create(builder, loc, i64,
                                         predicted.value_or(-1));
  Value f = arith::ConstantIntOp::create(builder, loc, i64, fixed.value_or(-1));
  func::CallOp::create(builder, loc, announce, ValueRange{p, f});
  func::CallOp::create(builder, loc, oldMain, ValueRange{});
  Value zero = arith::ConstantIntOp::create(builder, loc, i32, 0);
  func::ReturnOp::create(builder, loc, zero);
  return success();
}


} // namespace

llvm::cl::OptionCategory &remat_run::gpuOptionCategory() { return category(); }

bool remat_run::targetIsGpu() { return target == Target::Gpu; }
bool remat_run::gpuCompileOnlyRequested() { return gpuCompileOnly; }

std::string remat_run::checkGpuOptions() {
  // The bound of remat-map-parallel-loops-to-gpu (threads per block).
  if (gpuBlockSize < 1 || gpuBlockSize > 1024)
    return "--gpu-block-size must be in [1, 1024], got " +
           std::to_string(gpuBlockSize.getValue());
  return "";
}

int remat_run::runOnGpu(ModuleOp module, std::optional<int64_t> predicted,
                        std::optional<int64_t> fixed,
                        std::optional<int64_t> livePeak,
                        remat::DeallocMode dealloc,
                        remat::KernelMode kernels, bool keepTemps,
                        remat_run::RuntimeReport &report) {
  if (dealloc != remat::DeallocMode::Arena &&
      dealloc != remat::DeallocMode::Early)
    return fail("--target=gpu places buffers in an arena (--dealloc=arena) "
                "or frees them with remat-early-free (--dealloc=early)");

  // 1-2. int main(), then the GPU lowering.
  if (failed(wrapMain(module, predicted, fixed)))
    return fail("cannot prepare main for the executable");
  {
    PassManager pm(module.getContext());
    if (failed(applyPassManagerCLOptions(pm)))
      return fail("bad pass manager options");
    remat::RematGpuPipelineOptions options;
    options.chip = gpuChip;
    options.features = gpuFeatures;
    options.format = gpuFormat;
    options.blockSize = gpuBlockSize;
    options.kernels = kernels;
    options.arena = dealloc == remat::DeallocMode::Arena;
    remat::buildLowerBufferizedToGpuPipeline(pm, options);
    if (failed(pm.run(module)))
      return fail("lowering to the GPU failed");
  }

  // 3. LLVM IR, in process.
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "remat-step");
  if (!llvmModule)
    return fail("cannot translate the lowered module to LLVM IR");

  llvm::SmallString<128> irPath, objPath, exePath, outPath;
  for (auto [path, suffix] :
       {std::pair{&irPath, "ll"}, {&objPath, "o"}, {&outPath, "out"}})
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("remat-run-gpu", suffix, *path))
      return fail("cannot create a temporary file: " + ec.message());
  std::optional<llvm::FileRemover> removeIR, removeObj, removeOut, removeExe;
  if (!keepTemps) {
    removeIR.emplace(irPath);
    removeObj.emplace(objPath);
    removeOut.emplace(outPath);
  }
  if (gpuExecutable.empty()) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "remat-run-gpu", "exe", exePath))
      return fail("cannot create a temporary file: " + ec.message());
    if (!keepTemps)
      removeExe.emplace(exePath);
  } else {
    exePath = gpuExecutable;
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(irPath, ec);
    if (ec)
      return fail("cannot write '" + irPath + "': " + ec.message());
    llvmModule->print(os, nullptr);
    os.close();
    if (os.has_error())
      return fail("cannot write '" + irPath + "'");
  }
  if (keepTemps)
    llvm::errs() << "remat-run: LLVM IR " << irPath << ", object " << objPath
                 << ", executable " << exePath << ", program output "
                 << outPath << "\n";

  // 4. Object file and executable.
  std::string llc = findTool("REMAT_LLC", REMAT_LLC, "llc");
  if (llc.empty() || !llvm::sys::fs::can_execute(llc))
    return fail("cannot find llc (set REMAT_LLC)");
  if (std::string error =
          execute(llc, {llc, "-O2", "-filetype=obj", "-relocation-model=pic",
                        irPath, "-o", objPath});
      !error.empty())
    return fail(error);

  std::string runtime =
      findTool("REMAT_CUDA_RUNTIME_STATIC", REMAT_CUDA_RUNTIME_STATIC, "");
  std::string driver =
      findTool("REMAT_CUDA_DRIVER_LIBRARY", REMAT_CUDA_DRIVER_LIBRARY, "");
  if (runtime.empty() || !llvm::sys::fs::exists(runtime))
    return fail("the CUDA runtime library was not built (no CUDA toolkit "
                "found when the project was configured; set "
                "REMAT_CUDA_RUNTIME_STATIC)");
  if (driver.empty() || !llvm::sys::fs::exists(driver))
    return fail("cannot find libcuda to link with (set "
                "REMAT_CUDA_DRIVER_LIBRARY)");
  std::string cxx = findTool("REMAT_CXX", REMAT_CXX_LINKER, "c++");
  if (cxx.empty() || !llvm::sys::fs::can_execute(cxx))
    return fail("cannot find a C++ compiler driver to link with (set "
                "REMAT_CXX)");
  if (std::string error = execute(cxx, {cxx, objPath, "-o", exePath, runtime,
                                        driver, "-lpthread", "-ldl"});
      !error.empty())
    return fail(error);
  if (gpuCompileOnly) {
    if (!gpuExecutable.empty())
      llvm::outs() << "remat-run: wrote " << exePath << "\n";
    llvm::outs() << "remat-run: fixed_bytes=" << orNone(fixed) << "\n";
    llvm::outs() << "remat-run: predicted_peak_bytes=" << orNone(predicted)
                 << "\n";
    llvm::outs().flush();
    return 0;
  }

  // 5. Run it; forward its output, keeping the runtime's report for us.
  std::string runError = execute(exePath, {exePath}, outPath);
  // The executable prints its own remat-run: lines; ours follow.
  remat_run::ProgramOutput output =
      remat_run::forwardProgramOutput(outPath, /*dropRunLines=*/true);
  report = output.report;
  if (!runError.empty())
    return fail(runError);
  if (!output.readError.empty())
    return fail("cannot read the program's output: " + output.readError);
  if (!output.sawReport)
    return fail("the program printed no 'remat-runtime:' line");
  if (output.badReport)
    return fail("malformed 'remat-runtime:' line");
  llvm::outs() << "remat-run: fixed_bytes=" << orNone(fixed)
               << " total_peak_bytes=" << *report.totalPeak << "\n";
  // The device time of the step windows (synchronized at both ends).
  remat_run::printStepSeconds(report);
  remat_run::printMemoryFigures(report, livePeak);
  llvm::outs() << "remat-run: measured_peak_bytes=" << *report.stepPeak
               << " predicted_peak_bytes=" << orNone(predicted) << "\n";
  llvm::outs().flush();
  return 0;
}
