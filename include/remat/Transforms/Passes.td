//===- Passes.td - remat pass declarations -----------------*- tablegen -*-===//

#ifndef REMAT_TRANSFORMS_PASSES
#define REMAT_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def RematNormalizeDestinationsPass
    : Pass<"remat-normalize-destinations", "mlir::func::FuncOp"> {
  let summary = "Give every destination-style op a destination of its own";
  let description = [{
    Contract: in every training step (a function that carries a `remat`
    marker), after this pass the `outs` operand of every destination-style op
    is produced by a chain `tensor.empty -> (destination-style op)*` whose every
    link has exactly one use. One-shot bufferization then writes every such
    chain into one fresh buffer, in place, so that the buffers the training
    graph predicts are exactly the buffers the compiled program allocates
    (DESIGN.md §5).

    A shared `tensor.empty` or init chain is duplicated per user. A destination
    that is anything else (a function argument, a value still read later) is
    replaced by `tensor.empty` when the op's payload never reads it, else by a
    `linalg.copy` of it into a new `tensor.empty`. Program results are
    unchanged.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def TestTrainingGraphPass : Pass<"test-remat-training-graph", "mlir::func::FuncOp"> {
  let summary = "Print the training graph extracted from each training step";
  let description = [{
    Test-only. Extracts the TrainingGraph of every training step and prints its
    nodes (phase, cost, the ops they group), values (bytes, producer, users),
    the saved activations and the fixed bytes to stdout.
  }];
}

def RematApplyPass : Pass<"remat-apply", "mlir::func::FuncOp"> {
  let summary = "Solve for a checkpointing plan and rewrite the step to follow it";
  let description = [{
    For every training step: extracts the training graph, runs the solver
    named by `solver` under `budget`, validates the plan with the simulator,
    then reorders the step's ops into the plan's order and clones every
    recomputed node right before the backward op that needs it. Clones carry
    `remat.recompute = <instance>` (unique per clone) so that `-cse` never
    merges them back. The predicted figures are attached to the function as
    `remat.predicted_peak_bytes`, `remat.predicted_cost`,
    `remat.recomputations`, `remat.fixed_bytes` and `remat.solver`.

    Errors (with the function's location): unknown solver; a budget below what
    the solver can reach (the message gives the least feasible budget of the
    available solvers); any input the extraction rejects.
  }];
  let options = [
    Option<"solver", "solver", "std::string", /*default=*/"\"chen-sqrtn\"",
           "Solver name (see remat-solve --list), or 'none' to keep the "
           "program order">,
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Memory budget: bytes (with optional KiB/MiB/GiB), N% of the "
           "checkpoint-all peak, or empty for none">,
    Option<"printTiming", "print-timing", "bool", /*default=*/"false",
           "Print the wall time of extraction, solving (with simulation) "
           "and the rewrite to stderr, one line per function">,
  ];
}

def RematReportPass : Pass<"remat-print-report", "mlir::ModuleOp"> {
  let summary = "Print the plans of one or all solvers as JSON";
  let description = [{
    For every training step of the module, runs `solver` (or every solver for
    `all`) and prints one JSON document to stdout: per function, per solver,
    the simulator's predicted peak, fixed bytes, cost, overhead, number of
    recomputations, whether the budget is met, and the schedule. The IR is not
    changed.
  }];
  let options = [
    Option<"solver", "solver", "std::string", /*default=*/"\"all\"",
           "Solver name or 'all'">,
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Memory budget (bytes, KiB/MiB/GiB, or N%)">,
    Option<"withTimeline", "timeline", "bool", /*default=*/"false",
           "Include the per-step memory timeline">,
  ];
}

def RematEarlyFreePass : Pass<"remat-early-free", "mlir::func::FuncOp"> {
  let summary = "Free every buffer right after its last use";
  let description = [{
    Runs after one-shot bufferization. For every `memref.alloc`, inserts
    `memref.dealloc` right after the last op of the allocation's block that
    uses the buffer through any alias (views, casts, `arith.select`, region
    results, call results: BufferViewFlowAnalysis). A buffer with an alias
    that leaves its block (returned, yielded, passed to a successor) or that
    is already freed is left alone; returned buffers belong to the caller.
    This is the placement the simulator predicts (insertEarlyFrees). Upstream
    `ownership-based-buffer-deallocation` frees at the end of the block;
    with `optimize-allocation-liveness` after it, upstream reaches the same
    placement on the project's steps, at a far higher compile time: see
    docs/early-frees.md.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def RematCheckLowerablePass : Pass<"remat-check-lowerable", "mlir::ModuleOp"> {
  let summary = "Reject ops that the lowering pipelines cannot lower";
  let description = [{
    Runs first in the lowering pipelines: every `remat.kernel` (an opaque op
    from an exported framework graph, which has no implementation) is an error
    at its location, instead of an obscure bufferization failure later.
  }];
}

def RematGenerateMainPass : Pass<"remat-generate-main", "mlir::ModuleOp"> {
  let summary = "Add a `main` that calls an entry function on deterministic inputs";
  let description = [{
    Adds `func.func @main()` that builds a deterministic input for every
    argument of `entry` (a ranked, statically shaped tensor of f32/f64/integer
    elements, filled by a formula of the element index), calls
    `remat_rt_step_begin`, calls `entry`, calls `remat_rt_step_end`, and prints
    every result through the runtime (`remat_rt_print_*`: shape, an FNV-1a hash
    of the bits and the sum). The runtime library (lib/Runtime) provides those
    functions. Fails if `entry` does not exist or has unsupported argument or
    result types.
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "Name of the function to call">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

#endif // REMAT_TRANSFORMS_PASSES
