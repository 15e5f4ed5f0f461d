//===- RematDialect.cpp - the remat dialect and its conventions -----------===//
//
// The dialect mostly verifies the discardable `remat.*` attributes that carry
// the conventions of DESIGN.md §4, so that a misplaced or mistyped marker is
// an error with a location rather than a silently ignored hint.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace remat;

#include "remat/Dialect/RematDialect.cpp.inc"

#define GET_OP_CLASSES
#include "remat/Dialect/RematOps.cpp.inc"

void RematDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "remat/Dialect/RematOps.cpp.inc"
      >();
}

/// Attributes the remat-apply pass attaches to a rewritten function.
static bool isResultAnnotation(StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases({"remat.predicted_peak_bytes", "remat.predicted_cost",
              "remat.recomputations", "remat.fixed_bytes", "remat.solver",
              "remat.budget_bytes", "remat.live_peak_bytes",
              "remat.output_bytes", "remat.placement"},
             true)
      .Default(false);
}

LogicalResult RematDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  Attribute value = attr.getValue();
  if (name == kLossAttr || name == kSeedAttr) {
    if (!isa<UnitAttr>(value))
      return op->emitOpError() << "'" << name << "' must be a unit attribute";
    // No result-count check: after bufferization the marked op writes a
    // buffer instead of returning a tensor, and keeps its marker.
    return success();
  }
  if (name == kPhaseAttr) {
    auto str = dyn_cast<StringAttr>(value);
    if (!str || (str.getValue() != "forward" && str.getValue() != "backward"))
      return op->emitOpError()
             << "'" << name << "' must be \"forward\" or \"backward\"";
    return success();
  }
  if (name == kCostAttr) {
    // NaN fails `>= 0`; infinity passes it and would only fail the training
    // graph's own check much later, as an internal error.
    auto cost = dyn_cast<FloatAttr>(value);
    if (!cost || !(cost.getValueAsDouble() >= 0) ||
        !std::isfinite(cost.getValueAsDouble()))
      return op->emitOpError() << "'" << name
                               << "' must be a finite, non-negative float "
                                  "attribute, got "
                               << value;
    return success();
  }
  if (name == kRecomputeAttr) {
    auto instance = dyn_cast<IntegerAttr>(value);
    if (!instance || instance.getValue().isNegative())
      return op->emitOpError()
             << "'" << name << "' must be a non-negative integer attribute";
    return success();
  }
  if (name == kTangentAttr || name == kParamAttr)
    return op->emitOpError() << "'" << name
                             << "' is only valid on function arguments";
  if (name == kStepAttr) {
    if (!isa<UnitAttr>(value) || !isa<FunctionOpInterface>(op))
      return op->emitOpError()
             << "'" << name << "' must be a unit attribute on a function";
    return success();
  }
  if (name == kLibraryCallAttr) {
    auto str = dyn_cast<StringAttr>(value);
    if (!str || !llvm::is_contained({"gemm", "conv_fwd", "conv_bwd_data",
                                     "conv_bwd_weights"},
                                    str.getValue()))
      return op->emitOpError()
             << "'" << name
             << "' must be \"gemm\", \"conv_fwd\", \"conv_bwd_data\" or "
                "\"conv_bwd_weights\"";
    return success();
  }
  if (name == kOperandOffsetsAttr) {
    auto offsets = dyn_cast<ArrayAttr>(value);
    if (!offsets || !llvm::all_of(offsets, [](Attribute a) {
          auto i = dyn_cast<IntegerAttr>(a);
          return i && i.getValue().getSExtValue() >= -1;
        }))
      return op->emitOpError()
             << "'" << name
             << "' must be an array of integers, each an offset or -1";
    return success();
  }
  if (name == kWorkspaceAttr || name == kProfileIdAttr ||
      name == kWorkspaceOffsetAttr || name == kArenaBytesAttr) {
    auto bytes = dyn_cast<IntegerAttr>(value);
    if (!bytes || bytes.getValue().isNegative())
      return op->emitOpError()
             << "'" << name << "' must be a non-negative integer attribute";
    return success();
  }
  if (isResultAnnotation(name))
    return success();
  return op->emitOpError() << "unknown remat attribute '" << name << "'";
}

LogicalResult RematDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name != kTangentAttr && name != kParamAttr)
    return op->emitOpError() << "'" << name << "' on argument #" << argIndex
                             << " is not a valid argument attribute";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitOpError() << "'" << name << "' must be a unit attribute";
  return success();
}

LogicalResult RematDialect::verifyRegionResultAttribute(Operation *op,
                                                        unsigned,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name != kLossAttr)
    return op->emitOpError() << "'" << name << "' on result #" << resultIndex
                             << " is not a valid result attribute";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitOpError() << "'" << name << "' must be a unit attribute";
  return success();
}

LogicalResult KernelOp::verify() {
  if (getKernel().empty())
    return emitOpError("needs a non-empty kernel name");
  if (getOutputs().empty())
    return emitOpError("must produce at least one tensor");
  return success();
}

/// An opaque kernel's cost without `remat.cost`: the elements it produces.
double KernelOp::getRematCost() {
  double elements = 0;
  for (Type type : getResultTypes())
    if (auto shaped = dyn_cast<ShapedType>(type);
        shaped && shaped.hasStaticShape())
      elements += static_cast<double>(shaped.getNumElements());
  return elements;
}

/// The workspace an exporter declared on the kernel, if any.
uint64_t KernelOp::getRematWorkspaceBytes() {
  if (auto ws = (*this)->getAttrOfType<IntegerAttr>(RematDialect::kWorkspaceAttr))
    if (ws.getInt() > 0)
      return ws.getInt();
  return 0;
}
