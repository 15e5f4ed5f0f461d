//===- RematDialect.td - the remat dialect -----------------*- tablegen -*-===//

#ifndef REMAT_DIALECT_REMAT_TD
#define REMAT_DIALECT_REMAT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "remat/Interfaces/RematCostModelOpInterface.td"

def Remat_Dialect : Dialect {
  let name = "remat";
  let cppNamespace = "::remat";
  let summary = "Conventions and ops for rematerialisation of training steps";
  let description = [{
    The conventions of DESIGN.md §4, as discardable attributes verified by the
    dialect:
    - `remat.loss` (unit, on an op): its results are the loss;
    - `remat.tangent` (unit, on a function argument): a gradient seed input;
    - `remat.param` (unit, on a function argument): a trained parameter, whose
      gradient a differentiated step returns;
    - `remat.seed` (unit, on an op with results): the value starting reverse
      mode inside the step;
    - `remat.phase` ("forward" | "backward", on an op): overrides the split;
    - `remat.cost` (non-negative float, on an op): overrides the cost model;
    - `remat.recompute` (non-negative integer, on an op): marks a recomputed
      copy; the integer makes every copy distinct so CSE never merges copies;
    - `remat.step` (unit, on a function): a training step even when nothing
      inside it is marked (then the ops its result #0 depends on are forward).
    And `remat.kernel`, an opaque, pure op for graphs exported from frameworks.
  }];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    static constexpr llvm::StringLiteral kLossAttr = "remat.loss";
    static constexpr llvm::StringLiteral kTangentAttr = "remat.tangent";
    static constexpr llvm::StringLiteral kParamAttr = "remat.param";
    static constexpr llvm::StringLiteral kSeedAttr = "remat.seed";
    static constexpr llvm::StringLiteral kPhaseAttr = "remat.phase";
    static constexpr llvm::StringLiteral kCostAttr = "remat.cost";
    static constexpr llvm::StringLiteral kRecomputeAttr = "remat.recompute";
    static constexpr llvm::StringLiteral kStepAttr = "remat.step";
    /// remat-plan-library-calls: the library operation that runs the op
    /// and the workspace it needs (LibraryCalls.h).
    static constexpr llvm::StringLiteral kLibraryCallAttr =
        "remat.library_call";
    static constexpr llvm::StringLiteral kWorkspaceAttr =
        "remat.workspace_bytes";
    /// remat-run --profile-costs: the number of an op whose time is measured
    /// (remat-instrument-op-timers).
    static constexpr llvm::StringLiteral kProfileIdAttr = "remat.profile_id";
    /// remat-apply with an arena: the arena offset of each operand's buffer
    /// (-1: none), of the op's workspace, and the arena's size on the step.
    static constexpr llvm::StringLiteral kOperandOffsetsAttr =
        "remat.operand_offsets";
    /// Key of the metadata of the fused location remat-apply gives a fresh
    /// destination (tensor.empty) with the arena offset of the node output
    /// built in it; survives bufferization, read by remat-assign-arena.
    static constexpr llvm::StringLiteral kArenaOffsetLocKey =
        "remat.arena_offset";
    static constexpr llvm::StringLiteral kWorkspaceOffsetAttr =
        "remat.workspace_offset";
    static constexpr llvm::StringLiteral kArenaBytesAttr = "remat.arena_bytes";
  }];
}

class Remat_Op<string mnemonic, list<Trait> traits = []>
    : Op<Remat_Dialect, mnemonic, traits>;

def Remat_KernelOp : Remat_Op<"kernel", [Pure,
    DeclareOpInterfaceMethods<RematCostModelOpInterface,
                              ["getRematWorkspaceBytes"]>]> {
  let summary = "An opaque, pure computation on statically shaped tensors";
  let description = [{
    Stands for an operator of a framework graph (for example
    `"aten.convolution"`) whose body is unknown: it reads its operands and
    produces fresh tensors. The training-graph extraction treats it like any
    other op (its cost comes from `remat.cost`, else the number of output
    elements; its workspace from `remat.workspace_bytes`, else none); it
    cannot be lowered, and lowering reports so.

    ```mlir
    %y = remat.kernel "aten.relu"(%x) {remat.cost = 1024.0}
        : (tensor<4x256xf32>) -> tensor<4x256xf32>
    ```
  }];
  let arguments = (ins StrAttr:$kernel, Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$outputs);
  let assemblyFormat = [{
    $kernel `(` $inputs `)` attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
}

#endif // REMAT_DIALECT_REMAT_TD
