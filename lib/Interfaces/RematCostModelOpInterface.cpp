//===- RematCostModelOpInterface.cpp - what an op costs ------------------===//
//
// The queries extraction makes (RematCostModelOpInterface.h): the interface
// where the op has it, the `remat.cost` override, the fallback otherwise.
//
//===----------------------------------------------------------------------===//

#include "remat/Interfaces/RematCostModelOpInterface.h"
#include "remat/Dialect/RematDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;

#include "remat/Interfaces/RematCostModelOpInterface.cpp.inc"

Value remat::detail::destinationTiedResult(OpOperand &operand) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(operand.getOwner());
  if (!dps || !dps.isDpsInit(&operand))
    return nullptr;
  return dps.getTiedOpResult(&operand);
}

double remat::getRematCost(Operation *op) {
  // A measured or hand-written cost wins over any model.
  if (auto cost = op->getAttrOfType<FloatAttr>(RematDialect::kCostAttr))
    return cost.getValueAsDouble();
  if (auto model = dyn_cast<RematCostModelOpInterface>(op))
    return model.getRematCost();
  return 1;
}

uint64_t remat::getRematWorkspaceBytes(Operation *op) {
  if (auto model = dyn_cast<RematCostModelOpInterface>(op))
    return model.getRematWorkspaceBytes();
  return 0;
}

Value remat::getRematInPlaceResult(OpOperand &operand) {
  if (auto model = dyn_cast<RematCostModelOpInterface>(operand.getOwner()))
    return model.getRematInPlaceResult(operand);
  return detail::destinationTiedResult(operand);
}
