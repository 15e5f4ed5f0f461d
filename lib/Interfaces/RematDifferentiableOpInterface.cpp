//===- RematDifferentiableOpInterface.cpp - reverse-mode rules -----------===//
//
// The context of reverse-mode rules (RematDifferentiableOpInterface.h): the
// accumulation of adjoints and the zeros the rules build with.
//
//===----------------------------------------------------------------------===//

#include "remat/Interfaces/RematDifferentiableOpInterface.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

#include "remat/Interfaces/RematDifferentiableOpInterface.cpp.inc"

bool remat::isDifferentiableType(Type type) {
  if (auto ranked = dyn_cast<RankedTensorType>(type))
    return isa<FloatType>(ranked.getElementType());
  return isa<FloatType>(type);
}

Value remat::ReverseModeContext::zeros(Type type, Location loc) {
  auto ranked = cast<RankedTensorType>(type);
  Value empty = tensor::EmptyOp::create(builder, loc, ranked.getShape(),
                                        ranked.getElementType());
  Value zero = arith::ConstantOp::create(
      builder, loc, FloatAttr::get(ranked.getElementType(), 0.0));
  return linalg::FillOp::create(builder, loc, ValueRange{zero},
                                ValueRange{empty})
      .getResult(0);
}

void remat::ReverseModeContext::accumulate(Value value, Value contribution,
                                           Location loc) {
  auto it = adjoints.find(value);
  if (it == adjoints.end()) {
    adjoints[value] = contribution;
    return;
  }
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type) {
    it->second = arith::AddFOp::create(builder, loc, it->second, contribution);
    return;
  }
  // acc + contribution, elementwise, into the adjoint so far (in place once
  // bufferized: nothing reads the previous sum afterwards).
  unsigned rank = type.getRank();
  AffineMap id = builder.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto add = linalg::GenericOp::create(
      builder, loc, TypeRange{cast<RankedTensorType>(it->second.getType())},
      ValueRange{contribution}, ValueRange{it->second},
      ArrayRef<AffineMap>{id, id}, iters,
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value s = arith::AddFOp::create(nb, l, args[1], args[0]);
        linalg::YieldOp::create(nb, l, s);
      });
  it->second = add.getResult(0);
}

LogicalResult remat::emitNoAdjointRule(Operation *op) {
  return op->emitOpError()
         << "cannot be differentiated: remat-autodiff has no rule for '"
         << op->getName() << "' (it lies between a parameter and the loss)";
}
