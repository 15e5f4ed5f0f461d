//===- RematDifferentiableOpInterface.h - reverse-mode rules -----*- C++ -*-===//
//
// The op interface of reverse-mode rules (RematDifferentiableOpInterface.td)
// and the context a rule emits its IR through. The models of the upstream
// ops are in remat/Transforms/ExternalModels.h.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERFACES_REMATDIFFERENTIABLEOPINTERFACE_H
#define REMAT_INTERFACES_REMATDIFFERENTIABLEOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace remat {

/// A float, or a ranked tensor of floats: the values that carry adjoints.
bool isDifferentiableType(mlir::Type type);

/// What a reverse-mode rule sees of the differentiation in progress: the
/// builder (its insertion point is where the backward of the op goes), the
/// adjoints so far and which values need one. remat-autodiff owns one per
/// function; a rule only reads result adjoints and adds to operand ones.
///
/// Adjoints have their value's type: a tensor's is a tensor of the same
/// shape, a scalar's a scalar.
class ReverseModeContext {
public:
  explicit ReverseModeContext(mlir::MLIRContext *context) : builder(context) {}

  /// Where the rule emits its IR (before the function's return, after the
  /// backward of the ops that follow the one being differentiated).
  mlir::OpBuilder &getBuilder() { return builder; }

  /// The adjoint accumulated so far for `value`, null if none: a result of
  /// the op being differentiated has its complete adjoint (null: it does not
  /// reach the loss, its adjoint is zero); an operand has the sum of what
  /// the ops after this one contributed.
  mlir::Value getAdjoint(mlir::Value value) const {
    return adjoints.lookup(value);
  }

  /// Whether `value` lies on a path from a parameter to the loss: the rule
  /// must compute its adjoint, and should not for any other operand.
  bool needsAdjoint(mlir::Value value) const { return needed.contains(value); }

  /// Adds `contribution` to `value`'s adjoint: the first contribution is the
  /// adjoint, a later one is added to it (a linalg.generic of addf over a
  /// tensor, an arith.addf on a scalar) at the builder's insertion point.
  void accumulate(mlir::Value value, mlir::Value contribution,
                  mlir::Location loc);

  /// Replaces `value`'s adjoint by `total`, which already includes the
  /// previous one: for a rule that accumulates in place (an adjoint
  /// generic whose init is getAdjoint(value)).
  void setAdjoint(mlir::Value value, mlir::Value total) {
    adjoints[value] = total;
  }

  /// A tensor of zeros of the ranked tensor type `type` (tensor.empty and a
  /// linalg.fill of 0) at the builder's insertion point.
  mlir::Value zeros(mlir::Type type, mlir::Location loc);

  /// For the pass: `value` needs an adjoint.
  void setNeedsAdjoint(mlir::Value value) { needed.insert(value); }

private:
  mlir::OpBuilder builder;
  llvm::DenseMap<mlir::Value, mlir::Value> adjoints;
  llvm::DenseSet<mlir::Value> needed;
};

/// The located error of an op that has no reverse-mode rule (or none for the
/// form it is written in) although it lies between a parameter and the loss.
mlir::LogicalResult emitNoAdjointRule(mlir::Operation *op);

} // namespace remat

#include "remat/Interfaces/RematDifferentiableOpInterface.h.inc"

#endif // REMAT_INTERFACES_REMATDIFFERENTIABLEOPINTERFACE_H
