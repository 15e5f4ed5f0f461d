//===- consumer-opt.cpp - an mlir-opt of an out-of-tree compiler ----------===//
//
// Built against an installed remat (find_package(Remat), Remat::Passes) by
// test/Integration/consumer.test: the registrations a compiler's own driver
// makes to run the remat passes and pipelines.
//
//===----------------------------------------------------------------------===//

#include "remat/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  remat::registerRematDialects(registry);
  remat::registerRematPasses();
  remat::registerRematPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "consumer-opt: the remat passes, installed\n", registry));
}
