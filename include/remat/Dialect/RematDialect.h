//===- RematDialect.h - the remat dialect ------------------------*- C++ -*-===//

#ifndef REMAT_DIALECT_REMATDIALECT_H
#define REMAT_DIALECT_REMATDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "remat/Interfaces/RematCostModelOpInterface.h"

#include "remat/Dialect/RematDialect.h.inc"

#define GET_OP_CLASSES
#include "remat/Dialect/RematOps.h.inc"

#endif // REMAT_DIALECT_REMATDIALECT_H
