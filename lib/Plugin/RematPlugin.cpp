//===- RematPlugin.cpp - the remat passes as an mlir-opt plugin ------------===//
//
// Loaded by a stock `mlir-opt` (docs/use-in-your-pipeline.md):
//
//   mlir-opt --load-pass-plugin=RematPlugin.so \
//            --load-dialect-plugin=RematPlugin.so \
//            --remat-pipeline="solver=chen-sqrtn" step.mlir
//
// Two entry points in one library, because mlir-opt asks for them separately:
// the pass plugin registers the remat passes and pipelines; the dialect plugin
// adds the `remat` dialect, which verifies the `remat.*` markers and provides
// `remat.kernel`. Without the dialect plugin the markers are still read by
// the passes, only not verified, and `remat.kernel` does not parse.
//
// The library links the shared libMLIR.so and libLLVM.so that Debian's
// mlir-opt itself uses, and nothing static of MLIR: the dynamic loader then
// binds the plugin to the process's one copy of MLIR, so the passes land in
// the same pass registry and the dialect in the same registry that mlir-opt
// reads (lib/Plugin/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "RematPasses", LLVM_VERSION_STRING, []() {
            remat::registerRematPasses();
            remat::registerRematPipelines();
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  // Only the remat dialect: mlir-opt registers every upstream dialect and
  // extension (bufferization models included) itself.
  return {MLIR_PLUGIN_API_VERSION, "RematDialect", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<remat::RematDialect>();
          }};
}
