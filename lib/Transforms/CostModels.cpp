//===- CostModels.cpp - RematCostModelOpInterface on upstream ops ---------===//
//
// The built-in cost model of DESIGN.md §4 as external models: FLOPs of linalg
// structured ops from their iteration domain and body, zero for views and
// `tensor.empty`, one for any other tensor, arith or math op. A library call
// planned on a linalg op (remat-plan-library-calls) declares its workspace
// through the model, from the `remat.workspace_bytes` the planner stored.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Interfaces/RematCostModelOpInterface.h"
#include "remat/Transforms/ExternalModels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

#include <algorithm>

using namespace mlir;
using remat::RematCostModelOpInterface;

namespace {

/// A linalg structured op: one execution of its body per point of the
/// iteration domain (a dynamic range counts 1), each body op one FLOP.
template <typename OpTy>
struct LinalgCostModel
    : RematCostModelOpInterface::ExternalModel<LinalgCostModel<OpTy>, OpTy> {
  double getRematCost(Operation *op) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    double points = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      points *= ShapedType::isDynamic(range) ? 1 : static_cast<double>(range);
    size_t bodyOps = 0;
    if (Block *body = linalgOp.getBlock())
      bodyOps = body->getOperations().size() - 1; // not the terminator
    return points * static_cast<double>(std::max<size_t>(bodyOps, 1));
  }

  uint64_t getRematWorkspaceBytes(Operation *op) const {
    if (auto ws = op->getAttrOfType<IntegerAttr>(
            remat::RematDialect::kWorkspaceAttr))
      if (ws.getInt() > 0)
        return ws.getInt();
    return 0;
  }
};

/// A tensor op: `tensor.empty` allocates and views alias their source
/// (after bufferization neither computes anything); the rest count one.
template <typename OpTy>
struct TensorCostModel
    : RematCostModelOpInterface::ExternalModel<TensorCostModel<OpTy>, OpTy> {
  double getRematCost(Operation *op) const {
    return isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
               tensor::ExtractSliceOp, tensor::CastOp, tensor::BitcastOp>(op)
               ? 0
               : 1;
  }
};

/// A scalar (or elementwise) arith or math op outside a body: one.
template <typename OpTy>
struct UnitCostModel
    : RematCostModelOpInterface::ExternalModel<UnitCostModel<OpTy>, OpTy> {
  double getRematCost(Operation *) const { return 1; }
};

template <template <typename> class Model, typename... OpTys>
void attachAll(MLIRContext *ctx) {
  (OpTys::template attachInterface<Model<OpTys>>(*ctx), ...);
}

} // namespace

void remat::registerRematCostModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachAll<LinalgCostModel,
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
              >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attachAll<TensorCostModel,
#define GET_OP_LIST
#include "mlir/Dialect/Tensor/IR/TensorOps.cpp.inc"
              >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachAll<UnitCostModel,
#define GET_OP_LIST
#include "mlir/Dialect/Arith/IR/ArithOps.cpp.inc"
              >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachAll<UnitCostModel,
#define GET_OP_LIST
#include "mlir/Dialect/Math/IR/MathOps.cpp.inc"
              >(ctx);
  });
}
