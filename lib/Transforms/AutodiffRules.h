//===- AutodiffRules.h - the reverse-mode rules of upstream ops -*- C++ -*-===//
//
// Shared by the rule files of remat-autodiff (private to lib/Transforms):
// the scalar rules, which the linalg rule applies to the ops of a body and
// the scalar ops' models to ops outside bodies (AutodiffRules.cpp), and the
// linalg rule (AutodiffLinalgRule.cpp), which the models of every linalg
// structured op call.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_TRANSFORMS_AUTODIFFRULES_H
#define REMAT_LIB_TRANSFORMS_AUTODIFFRULES_H

#include "remat/Interfaces/RematDifferentiableOpInterface.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace remat {
namespace autodiff {

/// Builds the scalar arithmetic of the rules at one location.
struct ScalarEmitter {
  mlir::OpBuilder &b;
  mlir::Location loc;

  mlir::Value cst(mlir::Type t, double v) {
    return mlir::arith::ConstantOp::create(b, loc, mlir::FloatAttr::get(t, v));
  }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddFOp::create(b, loc, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return mlir::arith::SubFOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulFOp::create(b, loc, x, y);
  }
  mlir::Value div(mlir::Value x, mlir::Value y) {
    return mlir::arith::DivFOp::create(b, loc, x, y);
  }
  mlir::Value neg(mlir::Value x) {
    return mlir::arith::NegFOp::create(b, loc, x);
  }
  mlir::Value cmp(mlir::arith::CmpFPredicate p, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpFOp::create(b, loc, p, x, y);
  }
  mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, loc, c, x, y);
  }
  mlir::Value zeroLike(mlir::Value x) { return cst(x.getType(), 0.0); }
};

/// Contributions (operand index, adjoint) of the adjoint `g` of `op`'s only
/// result. `x` are the op's operands and `r` its result as seen where the
/// rule is emitted; `resultSaved` says that `r` is the saved forward result
/// rather than a recomputed one, so that rules that can be written with the
/// result alone (max/min against a constant: ReLU) do not need the operand.
/// Returns false when the op has no rule.
bool scalarAdjoint(
    ScalarEmitter &e, mlir::Operation *op, llvm::ArrayRef<mlir::Value> x,
    mlir::Value r, mlir::Value g,
    llvm::SmallVectorImpl<std::pair<unsigned, mlir::Value>> &out,
    bool resultSaved = false);

/// The ops whose float results carry no derivative (integer and index
/// computations, comparisons) are recognised by their types: an op with no
/// float operand contributes nothing.
bool hasFloatOperand(mlir::Operation *op);

/// The rule of a linalg structured op on tensors: linalg.generic directly, a
/// named op through its generalized form (AutodiffLinalgRule.cpp).
mlir::LogicalResult differentiateLinalg(mlir::linalg::LinalgOp op,
                                        ReverseModeContext &ctx);

} // namespace autodiff
} // namespace remat

#endif // REMAT_LIB_TRANSFORMS_AUTODIFFRULES_H
