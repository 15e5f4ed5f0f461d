//===- TestPasses.h - test-only passes of remat-opt -------------*- C++ -*-===//
//
// Not a public header: remat-opt registers these for lit
// (registerRematTestPasses); the plugin and installed tree do not have them.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_TESTPASSES_TESTPASSES_H
#define REMAT_TESTPASSES_TESTPASSES_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"

namespace remat {

#define GEN_PASS_DECL
#include "TestPasses.h.inc"

/// Registers test-remat-training-graph and test-remat-structure.
#define GEN_PASS_REGISTRATION
#include "TestPasses.h.inc"

} // namespace remat

#endif // REMAT_TESTPASSES_TESTPASSES_H
