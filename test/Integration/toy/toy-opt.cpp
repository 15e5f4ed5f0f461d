//===- toy-opt.cpp - a dialect of its own, differentiated and planned -----===//
//
// Built against an installed remat (find_package(Remat), Remat::Passes) by
// test/Integration/toy-dialect.test. `toy.scaled_tanh` (ToyOps.td) is an op
// remat knows nothing of; it tells the remat passes
//  * its reverse-mode rule: RematDifferentiableOpInterface, declared in its
//    ODS definition and implemented below (buildAdjoints);
//  * its cost: RematCostModelOpInterface, an external model attached to the
//    registry (ScaledTanhCostModel), with the workspace its lowering uses.
// `toy-lower` rewrites the op into linalg so that the step can be compiled;
// the `toy-lower-to-cpu` pipeline runs it before remat's CPU lowering of a
// planned step.
//
//===----------------------------------------------------------------------===//

#include "remat/Interfaces/RematCostModelOpInterface.h"
#include "remat/Interfaces/RematDifferentiableOpInterface.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "ToyDialect.h.inc"
#define GET_OP_CLASSES
#include "ToyOps.h.inc"

#include "ToyDialect.cpp.inc"
#define GET_OP_CLASSES
#include "ToyOps.cpp.inc"

using namespace mlir;

void toy::ToyDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ToyOps.cpp.inc"
      >();
}

/// A linalg.generic over `type`'s shape (identity maps, parallel) whose
/// element is `body` of the elements of `ins`.
static Value elementwise(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange ins,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  SmallVector<AffineMap> maps(ins.size() + 1,
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ins, ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l,
                                       body(nb, l, args.drop_back()));
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// The reverse-mode rule (RematDifferentiableOpInterface)
//===----------------------------------------------------------------------===//

/// y = s * tanh(x + bias): d(x + bias) = g * s * (1 - tanh^2) =
/// g * (s - y * y / s), from the saved result alone (the inputs need not be
/// kept for the backward).
bool toy::ScaledTanhOp::adjointFromResults() { return true; }

LogicalResult toy::ScaledTanhOp::buildAdjoints(remat::ReverseModeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  auto type = cast<RankedTensorType>(getType());
  Value g = ctx.getAdjoint(getResult());
  double scale = getScale().convertToDouble();
  // x and bias get the same adjoint; each its own tensor (the adjoint a
  // later op accumulates into one of them is updated in place).
  for (Value operand : {getX(), getBias()}) {
    if (!ctx.needsAdjoint(operand))
      continue;
    Value d = elementwise(
        b, getLoc(), type, ValueRange{getResult(), g},
        [&](OpBuilder &nb, Location l, ValueRange e) -> Value {
          Value s = arith::ConstantOp::create(
              nb, l, FloatAttr::get(type.getElementType(), scale));
          Value yy = arith::MulFOp::create(nb, l, e[0], e[0]);
          Value slope = arith::SubFOp::create(
              nb, l, s, arith::DivFOp::create(nb, l, yy, s));
          return arith::MulFOp::create(nb, l, e[1], slope);
        });
    ctx.accumulate(operand, d, getLoc());
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The cost model (RematCostModelOpInterface, an external model)
//===----------------------------------------------------------------------===//

namespace {

/// Three FLOPs per element (add, tanh, mul), and the scratch tensor of
/// x + bias that the lowering (LowerToyPass) computes first: a workspace of
/// one result's bytes while the op runs.
struct ScaledTanhCostModel
    : remat::RematCostModelOpInterface::ExternalModel<ScaledTanhCostModel,
                                                      toy::ScaledTanhOp> {
  double getRematCost(Operation *op) const {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    return 3.0 * static_cast<double>(type.getNumElements());
  }
  uint64_t getRematWorkspaceBytes(Operation *op) const {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    return type.getNumElements() * type.getElementTypeBitWidth() / 8;
  }
};

//===----------------------------------------------------------------------===//
// toy-lower: the op as two linalg.generic ops
//===----------------------------------------------------------------------===//

struct LowerToyPass
    : public PassWrapper<LowerToyPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerToyPass)

  StringRef getArgument() const final { return "toy-lower"; }
  StringRef getDescription() const final {
    return "Lower toy.scaled_tanh to linalg.generic on tensors";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect,
                    math::MathDialect, tensor::TensorDialect>();
  }

  void runOnOperation() override {
    SmallVector<toy::ScaledTanhOp> ops;
    getOperation().walk([&](toy::ScaledTanhOp op) { ops.push_back(op); });
    for (toy::ScaledTanhOp op : ops) {
      IRRewriter b(op);
      Location loc = op.getLoc();
      auto type = cast<RankedTensorType>(op.getType());
      // t = x + bias (the workspace the cost model declares), then
      // y = scale * tanh(t).
      Value t = elementwise(b, loc, type, ValueRange{op.getX(), op.getBias()},
                            [](OpBuilder &nb, Location l, ValueRange e) {
                              return arith::AddFOp::create(nb, l, e[0], e[1])
                                  .getResult();
                            });
      double scale = op.getScale().convertToDouble();
      Value y = elementwise(
          b, loc, type, ValueRange{t},
          [&](OpBuilder &nb, Location l, ValueRange e) -> Value {
            Value s = arith::ConstantOp::create(
                nb, l, FloatAttr::get(type.getElementType(), scale));
            return arith::MulFOp::create(nb, l, s,
                                         math::TanhOp::create(nb, l, e[0]));
          });
      b.replaceOp(op, y);
    }
  }
};

} // namespace

int main(int argc, char **argv) {
  DialectRegistry registry;
  registry.insert<toy::ToyDialect>();
  remat::registerRematDialects(registry);
  registry.addExtension(+[](MLIRContext *ctx, toy::ToyDialect *) {
    toy::ScaledTanhOp::attachInterface<ScaledTanhCostModel>(*ctx);
  });
  remat::registerRematPasses();
  remat::registerRematPipelines();
  PassRegistration<LowerToyPass>();
  // A planned step (remat-pipeline) to the LLVM dialect: the toy ops first,
  // then remat's own lowering with the same options.
  remat::registerModulePipeline<remat::RematPipelineOptions>(
      "toy-lower-to-cpu",
      "toy-lower, then remat's CPU lowering of a planned step",
      [](OpPassManager &pm, const remat::RematPipelineOptions &options) {
        pm.addPass(std::make_unique<LowerToyPass>());
        remat::buildLowerBufferizedToCpuPipeline(pm, options);
      });
  return asMainReturnCode(MlirOptMain(
      argc, argv, "toy-opt: a dialect of its own with the remat passes\n",
      registry));
}
