//===- ToyOps.td - a dialect outside remat ------------------*- tablegen -*-===//
//
// One fused op, `toy.scaled_tanh`, which declares its reverse-mode rule
// (RematDifferentiableOpInterface) in its definition; its cost model is an
// external model attached in toy-opt.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TOY_OPS_TD
#define TOY_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "remat/Interfaces/RematDifferentiableOpInterface.td"

def Toy_Dialect : Dialect {
  let name = "toy";
  let cppNamespace = "::toy";
  let summary = "A fused op of a compiler of its own";
}

def Toy_ScaledTanhOp : Op<Toy_Dialect, "scaled_tanh", [Pure,
    AllTypesMatch<["x", "bias", "result"]>,
    DeclareOpInterfaceMethods<RematDifferentiableOpInterface,
                              ["adjointFromResults"]>]> {
  let summary = "result = scale * tanh(x + bias), elementwise";
  let arguments = (ins AnyRankedTensor:$x, AnyRankedTensor:$bias,
                       F64Attr:$scale);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $x `,` $bias attr-dict `:` type($result)
  }];
}

#endif // TOY_OPS_TD
