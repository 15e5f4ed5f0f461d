//===- RematCostModelOpInterface.td - what an op costs ----*- tablegen -*-===//
//
// How the training-graph extraction (remat/Transforms/GraphExtraction.h)
// learns what running an op costs, how much scratch memory it needs, and
// which of its operand buffers it overwrites. Upstream ops get external
// models (remat::registerRematCostModels, attached by
// remat::registerRematDialects); a dialect of its own implements the
// interface on its ops or attaches a model the same way.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_INTERFACES_REMATCOSTMODELOPINTERFACE_TD
#define REMAT_INTERFACES_REMATCOSTMODELOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def RematCostModelOpInterface : OpInterface<"RematCostModelOpInterface"> {
  let cppNamespace = "::remat";
  let description = [{
    The cost model of one op for rematerialisation planning. A node of the
    training graph is a group of ops (an initialisation chain, its head and
    the head's views); the node costs the sum of its ops' costs and needs the
    largest workspace of its ops while it runs. Every solver trades this
    cost against memory, and the simulator adds the workspace to the live
    bytes while the node runs: a workspace the program does not allocate, or
    allocates without declaring it, breaks `measured == predicted`.

    Extraction reads the three figures through `remat::getRematCost`,
    `remat::getRematWorkspaceBytes` and `remat::getRematInPlaceResult`
    (RematCostModelOpInterface.h), which apply the `remat.cost` override and
    give ops without the interface the fallback of the built-in model.
  }];
  let methods = [
    InterfaceMethod<[{
        The cost of one execution of the op in the unit of the step's costs:
        the built-in models count floating-point operations (a linalg op's
        iteration points times its body's ops), zero for ops that allocate
        or alias without computing (`tensor.empty`, reshapes), one for a
        scalar op. `remat.cost` on the op (written by hand or measured by
        `remat-run --profile-costs`) takes precedence over this method.
      }],
      "double", "getRematCost", (ins)>,
    InterfaceMethod<[{
        The scratch bytes the op needs while it runs, beyond its results
        (a library call's workspace): counted as live memory during its
        node only. The lowering must allocate exactly this much around the
        op, or nothing if zero.
      }],
      "uint64_t", "getRematWorkspaceBytes", (ins), "",
      [{ return 0; }]>,
    InterfaceMethod<[{
        The result whose buffer is `operand`'s buffer when the program is
        bufferized in place (the op updates that operand's buffer), or null.
        Extraction records the pair so that the simulator reuses the buffer
        when nothing reads the operand afterwards. By default, a
        destination-style op's init and its tied result.
      }],
      "::mlir::Value", "getRematInPlaceResult",
      (ins "::mlir::OpOperand &":$operand), "",
      [{ return ::remat::detail::destinationTiedResult(operand); }]>,
  ];
}

#endif // REMAT_INTERFACES_REMATCOSTMODELOPINTERFACE_TD
