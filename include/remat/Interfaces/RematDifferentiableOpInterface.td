//===- RematDifferentiableOpInterface.td - reverse-mode rules -*- tablegen -*-===//
//
// The reverse-mode derivative rule of an op, for remat-autodiff. Upstream
// ops get external models (remat::registerRematDifferentiableModels, attached
// by remat::registerRematDialects); a dialect of its own implements the
// interface on its ops or attaches a model the same way.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERFACES_REMATDIFFERENTIABLEOPINTERFACE_TD
#define REMAT_INTERFACES_REMATDIFFERENTIABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def RematDifferentiableOpInterface
    : OpInterface<"RematDifferentiableOpInterface"> {
  let cppNamespace = "::remat";
  let description = [{
    The reverse-mode rule of an op. remat-autodiff emits the backward of a
    forward function in reverse program order, op by op, right before its
    return: when an op is reached, every use of its results lies behind it,
    so their adjoints are complete. It then asks the op's rule to emit the IR
    that computes the adjoints of its operands from those of its results,
    through a remat::ReverseModeContext (RematDifferentiableOpInterface.h):
    the builder, the result adjoints, which operands need one, accumulation
    into an operand's adjoint, zeros.

    What the backward keeps is what the rule's IR reads: a forward operand or
    result it reads is a saved activation, which the rematerialisation
    planner may keep or recompute. A rule should read what the framework's
    own backward reads (the result of a tanh, not its input) and recompute
    cheap values rather than read them.

    An op on a path from a parameter to the loss without this interface is a
    located error naming the op.
  }];
  let methods = [
    InterfaceMethod<[{
        Whether `operand` carries a derivative: the pass asks the rule for
        an adjoint of `operand` (ReverseModeContext::needsAdjoint) only when
        this holds, and a parameter that reaches the loss only through
        operands without one gets a zero gradient. By default, a float or a
        ranked tensor of floats. Values that the op's regions capture from
        above always may carry one.
      }],
      "bool", "isDifferentiableOperand",
      (ins "::mlir::OpOperand &":$operand), "",
      [{ return ::remat::isDifferentiableType(operand.get().getType()); }]>,
    InterfaceMethod<[{
        Whether the rule can compute every operand adjoint from the op's
        results alone (and the result adjoints), so that saving the result
        saves the operands: tanh, exp, sqrt, ReLU. Rules that recompute an op
        inside their own IR ask it: the linalg.generic rule reads a body op's
        saved result instead of recomputing it when this holds.
      }],
      "bool", "adjointFromResults", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Emits, at `ctx.getBuilder()`'s insertion point, the IR that computes
        the adjoint of every operand for which `ctx.needsAdjoint` holds from
        the adjoints of the results (`ctx.getAdjoint`; null for a result
        that does not reach the loss: zero), and adds each into the operand's
        adjoint (`ctx.accumulate`). Called only when some result has an
        adjoint. Fails with a located error when the op, as written, has no
        derivative the rule knows.
      }],
      "::llvm::LogicalResult", "buildAdjoints",
      (ins "::remat::ReverseModeContext &":$ctx)>,
  ];
}

#endif // REMAT_INTERFACES_REMATDIFFERENTIABLEOPINTERFACE_TD
