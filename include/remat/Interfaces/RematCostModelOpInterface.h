//===- RematCostModelOpInterface.h - what an op costs ------------*- C++ -*-===//
//
// The op interface that tells the training-graph extraction an op's cost,
// workspace and in-place updates (RematCostModelOpInterface.td) and the
// queries extraction makes through it. The models of the upstream ops are in
// remat/Transforms/ExternalModels.h.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERFACES_REMATCOSTMODELOPINTERFACE_H
#define REMAT_INTERFACES_REMATCOSTMODELOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"

#include <cstdint>

namespace remat {
namespace detail {
/// A destination-style op's result tied to `operand` when `operand` is one
/// of its inits, else null (the interface's default in-place rule).
mlir::Value destinationTiedResult(mlir::OpOperand &operand);
} // namespace detail
} // namespace remat

#include "remat/Interfaces/RematCostModelOpInterface.h.inc"

namespace remat {

/// The cost extraction gives `op`: `remat.cost` when the op carries it, else
/// the interface's, else 1 (an op no model describes).
double getRematCost(mlir::Operation *op);

/// The workspace bytes of `op` by its interface; 0 without one.
uint64_t getRematWorkspaceBytes(mlir::Operation *op);

/// The result that updates `operand`'s buffer in place, by the owner's
/// interface; without one, the destination-style tie (upstream's own
/// declaration of which result reuses which init).
mlir::Value getRematInPlaceResult(mlir::OpOperand &operand);

} // namespace remat

#endif // REMAT_INTERFACES_REMATCOSTMODELOPINTERFACE_H
