//===- Passes.td - remat pass declarations -----------------*- tablegen -*-===//

#ifndef REMAT_TRANSFORMS_PASSES
#define REMAT_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

// The options that choose and bound the solve, declared once: remat-apply,
// remat-print-report and remat-check-options take them, and the pipelines hand
// them on (RematPipelineOptions::applyOptions). Their defaults are the C++
// constants of remat/Solvers/Solver.h, which remat-solve uses too.
defvar RematBudgetOption =
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Memory budget: bytes (with optional KiB/MiB/GiB), N% of the "
           "checkpoint-all peak, or empty for none">;
defvar RematSearchOptions = [
    Option<"timeLimit", "time-limit", "double",
           /*default=*/"::remat::kDefaultTimeLimitSeconds",
           "Wall-clock limit in seconds (finite, >= 0; 0: no time-bounded "
           "search) for solvers that search (auto, checkmate-ilp, "
           "checkmate-lp, hong-cubic)">,
    Option<"slots", "slots", "unsigned",
           /*default=*/"::remat::kDefaultMemorySlots",
           "Memory slots S in [1, 2^20] of the discretised dynamic programs "
           "(rotor, revolve; seeds/004 §5.2)">,
    Option<"progress", "progress", "bool", /*default=*/"false",
           "Print the progress of long searches (Checkmate's CBC) to stderr">,
    Option<"startOrder", "start-order", "std::string",
           /*default=*/"\"program\"",
           "The node order the solver starts from: 'program' (the step's "
           "own), 'reordered' (the memory-minimising topological order of "
           "solver=reorder) or 'best' (both, half the time limit each, the "
           "better plan)">,
];
defvar RematSolverOption =
    Option<"solver", "solver", "std::string",
           /*default=*/"::remat::kDefaultSolverName",
           "Solver name (see remat-solve --list), or 'none' to keep the "
           "program order">;

def RematNormalizeDestinationsPass
    : InterfacePass<"remat-normalize-destinations", "mlir::FunctionOpInterface"> {
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
    `linalg.copy` of it into a new `tensor.empty`. A result of the step that
    is a proper `tensor.extract_slice` (through reshapes and casts: the
    gradient of a padded input, cut out of the padded gradient) is copied
    into a `tensor.empty` of its own before the return: one-shot
    bufferization returns identity layouts only and would copy the strided
    view there itself, into a buffer no node of the graph accounts for.
    Program results are unchanged.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def RematInlineCallsPass : Pass<"remat-inline-calls", "mlir::ModuleOp"> {
  let summary = "Inline the calls of pure functions into every training step";
  let description = [{
    Runs first in the remat pipelines (`remat-pipeline`, `remat-report`,
    `remat-export-graph`), so that a step may call helper functions: in
    every training step, a `func.call` whose callee is a `func.func` of the
    module with a body of one block, no op with memory effects (nested calls
    of such functions included), no recursion, and no `remat` marker of its
    own (it is not a training step) is replaced by the callee's ops. The
    extraction then sees ordinary ops: each gets its own cost, may be
    recomputed alone, and bufferizes into the buffers that the simulator
    predicts. Kept as a call, the callee's temporaries and the buffer it
    returns (which `remat-early-free` cannot free: only the callee knows
    where it came from) would be memory that no graph node accounts for.

    Markers on the call carry over: `remat.phase` to every inlined op,
    `remat.loss` and `remat.seed` to the inlined ops that define the returned
    values. Functions that are not training steps, and the callees
    themselves, are not changed.

    Errors, at the call: a call with a tensor result that cannot be inlined
    (the message says why: the callee is only declared, has several blocks,
    has an op with memory effects, is recursive or is a training step), since
    it cannot be a node of the training graph; `remat.cost` on a call (put
    the costs on the callee's ops); `remat.loss` or `remat.seed` on a call
    whose returned value is not computed by the callee. Calls without tensor
    results that cannot be inlined (a print in the backward part) are left
    for the extraction, which rejects side effects in the forward part.
  }];
}

def RematAutodiffPass : Pass<"remat-autodiff", "mlir::ModuleOp"> {
  let summary = "Build the training step of a forward function by reverse-mode differentiation";
  let description = [{
    Turns a forward function into a training step of DESIGN.md §4. The
    function (every function whose result #0 is marked `remat.loss`, on the
    function result or on the op that defines it; or the one named by
    `function`) keeps its name and arguments; its results become the loss,
    then the gradient of every argument marked `remat.param`, in argument
    order (every statically shaped float tensor argument when none is
    marked), then its other original results. Reverse mode starts from a
    `linalg.fill` of 1 marked `remat.seed` (a fill rather than a dense
    constant, which the GPU lowering would have to copy from a host
    global); the emitted backward ops carry `remat.phase = "backward"`. Every `func.call` of the function in the
    module gets the new results (the old results keep their meaning).

    The backward is emitted in reverse program order; each adjoint is read
    by the ops of one forward op's backward and then dead, so that
    `remat-early-free` frees it there and `solver=none` is already a good
    order. Values used several times accumulate their adjoints (in place
    where the rule allows); ops whose results do not reach the loss, and
    operands that do not depend on a parameter, get no backward.

    The pass knows no op: each op's `RematDifferentiableOpInterface`
    (remat/Interfaces) says which operands carry a derivative and emits its
    backward through a `remat::ReverseModeContext`; an op of another dialect
    is differentiated by implementing it (or attaching an external model).
    The upstream ops' rules, attached by `registerRematDialects` (and
    declared as this pass's dependencies):
    `linalg.generic` with any indexing maps and iterators (per
    differentiable input one generic over the same iteration domain that
    recomputes the scalar body, differentiates it in reverse and
    accumulates through the input's map: broadcasts become reductions,
    reductions become broadcasts, window maps become scatter-adds; outputs
    that overwrite, add, subtract, fma, or keep a max/min (maximumf/minimumf,
    or a select on an ordering comparison of the element with the previous
    value) — the adjoint goes to the elements equal to the result — or keep
    the element of the last iteration where a condition that reads no
    previous value holds (a select: the adjoint goes to that position,
    recovered from the condition); values gathered with
    `tensor.extract` from a captured tensor); the named linalg ops through
    their generalized form (matmul, batch_matmul, matvec, convolutions with
    strides and dilations, pooling, fill, transpose, broadcast, reduce,
    copy, map, elementwise); `tensor` empty, extract_slice, insert_slice,
    collapse_shape, expand_shape, pad, concat, cast and extract; scalar
    `arith`/`math` ops. Body ops: arith addf, subf, mulf, divf, negf,
    maximumf, minimumf, maxnumf, minnumf, select, extf, truncf, constants;
    math exp, exp2, expm1, log, log2, log10, log1p, tanh, sqrt, rsqrt, powf,
    erf, absf, copysign, fma, sin, cos; integer and comparison ops carry no
    derivative; an `arith.bitcast` to an integer and back to the same float
    type is the identity.

    Errors, located: an op on a path from a parameter to the loss without
    the interface, or whose rule rejects it (named), a select combiner proven neither a max/min nor a last
    position, a float computed from reinterpreted bits, a value of dynamic
    shape on that path, a call (inline it first: the pipelines run
    `remat-inline-calls` before), a function that is already a training
    step (`remat.step`, a seed, a tangent, backward-phase ops), a second
    result marked `remat.loss`, a loss that is not a scalar float, no
    possible parameter, no function to differentiate (naming a `remat.loss`
    on a result other than #0). A loss that depends on no parameter is a
    warning.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The forward function to differentiate (default: every function "
           "whose result #0 is marked remat.loss)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::math::MathDialect",
                           "mlir::tensor::TensorDialect"];
}


def RematPrintGraphPass : Pass<"remat-print-graph", "mlir::ModuleOp"> {
  let summary = "Print the training graph of a step as JSON";
  let description = [{
    Extracts the training graph of the module's training step (the one named
    by `function` when there are several) and prints it to stdout as JSON:
    NetworkX node-link (`format=node-link`, the default), which `remat-solve`
    reads back into the same graph, or the project's native format
    (`format=native`); docs/formats.md describes both. `remat-solve` on the
    printed graph then solves exactly the problem that `--remat-report`
    solves on the step. Run after `remat-normalize-destinations` (the
    `remat-export-graph` pipeline does), so that the graph's values are the
    buffers of the bufferized program. The IR is not changed.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"node-link\"",
           "Output format: node-link or native">,
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The training step to print (needed when there are several)">,
  ];
}


def RematApplyPass : InterfacePass<"remat-apply", "mlir::FunctionOpInterface"> {
  let summary = "Solve for a checkpointing plan and rewrite the step to follow it";
  let description = [{
    For every training step: extracts the training graph, runs the solver
    named by `solver` under `budget`, validates the plan with the simulator,
    then reorders the step's ops into the plan's order and clones every
    recomputed node right before the backward op that needs it. With
    `solver=none` the order is the program's, with each node's ops gathered
    where the node runs (an initialisation written far above its user moves
    down to it, where the prediction allocates its buffer). Clones carry
    `remat.recompute = <instance>` (unique per clone) so that `-cse` never
    merges them back. The predicted figures are attached to the function as
    `remat.predicted_peak_bytes`, `remat.predicted_cost`,
    `remat.recomputations`, `remat.fixed_bytes` and `remat.solver`.

    Errors (with the function's location): `time-limit` not a finite number
    of seconds, 0 or more, `slots` outside [1, 2^20] (on every function);
    unknown solver; a budget below what the solver can reach (the message
    gives the least feasible budget of the available solvers); any input the
    extraction rejects. Functions that are not training steps are left
    alone. A function pass cannot see the module: that no function at all is
    a training step is checked by `remat-check-options`, which the remat
    pipelines run first.

    Anchored on `FunctionOpInterface`: nest it under the function op of your
    pipeline (`builtin.module(func.func(remat-apply{...}))`). The graph comes
    from the `TrainingGraphAnalysis` (reused when an earlier pass computed it
    and nothing changed the IR since). Under `--mlir-timing` the extraction
    and the solve are the rows `(A) remat::TrainingGraphAnalysis` and
    `(A) remat solve` of the pass; `-debug-only=remat-apply` prints the plan's
    figures; optimization remarks (`--remarks-filter=remat`) say per
    function which plan was taken, and per forward node whose buffers the
    backward reads whether it is kept or recomputed, and why.

    With `arena` (the lowering pipelines' default, `dealloc=arena`), the
    plan also says where each byte lives (MemoryPlacement.h): every buffer
    the step allocates and frees gets an offset of one arena, from the
    placement of the plan's buffer lifetimes (best of the greedy heuristics
    and skyline dives; MiniMalloc's exact search within
    `arena-search-time` seconds when set), the step's results included:
    they are views of the arena, valid until the step runs again (a TFLite
    interpreter's outputs are the same). Every op of the rewritten step carries
    `remat.operand_offsets` (the arena offset of each operand's buffer, -1
    for others) and, with a workspace, `remat.workspace_offset`, which
    `remat-assign-arena` applies after bufferization. The figure is then the
    arena: `remat.predicted_peak_bytes` = `remat.arena_bytes`, next to
    `remat.live_peak_bytes` (the simulator's peak) and `remat.output_bytes`
    (the returned buffers' part); a budget applies to it,
    and a plan that fits in live bytes but not in its arena is solved again
    under a budget lowered by the difference (up to 4 times) before the
    budget is declared infeasible.
  }];
  let options = [
    RematSolverOption, RematBudgetOption,
    Option<"arena", "arena", "bool", /*default=*/"false",
           "Place the plan's buffers in one arena (remat-assign-arena)">,
    Option<"arenaAlignment", "arena-alignment", "int64_t", /*default=*/"64",
           "Alignment of every arena offset, bytes (a power of two)">,
    Option<"arenaSearchTime", "arena-search-time", "double",
           /*default=*/"0",
           "Seconds of MiniMalloc's exact search for a smaller arena (0: the "
           "heuristics only, deterministic)">,
  ] # RematSearchOptions;
}

def RematReportPass : Pass<"remat-print-report", "mlir::ModuleOp"> {
  let summary = "Print the plans of one or all solvers as JSON";
  let description = [{
    For every training step of the module, runs `solver` (or every solver for
    `all`) and prints one JSON document to stdout: per function, per solver,
    the simulator's predicted peak, fixed bytes, cost, overhead, number of
    recomputations, whether the budget is met, and the schedule. The IR is not
    changed.

    Errors (at the module): `time-limit` not a finite number of seconds,
    0 or more, `slots` outside [1, 2^20], and a module in which no
    function is a training step (there would be no plan to report: the
    message says what marks a step). Functions that are not training steps
    beside one that is are left out of the report.

    With `arena` (remat-report's default, `dealloc=arena`), every plan is
    placed as remat-apply places it (solved again when its arena exceeds the
    budget): `arena_bytes`, `live_peak_bytes` (the simulator's peak),
    `output_bytes`, `fragmentation` (arena / live peak - 1), `placement`
    (the method, and whether proven optimal) and `placement_seconds`, and
    `meets_budget` is the arena's.
  }];
  let options = [
    Option<"solver", "solver", "std::string", /*default=*/"\"all\"",
           "Solver name, or 'all' for every solver that applies">,
    RematBudgetOption,
    Option<"withTimeline", "timeline", "bool", /*default=*/"false",
           "Include the per-step memory timeline">,
    Option<"arena", "arena", "bool", /*default=*/"false",
           "Place every plan's buffers in one arena (as remat-apply)">,
    Option<"arenaAlignment", "arena-alignment", "int64_t", /*default=*/"64",
           "Alignment of every arena offset, bytes (a power of two)">,
    Option<"arenaSearchTime", "arena-search-time", "double",
           /*default=*/"0",
           "Seconds of MiniMalloc's exact search for a smaller arena">,
  ] # RematSearchOptions;
}

def RematCheckOptionsPass : Pass<"remat-check-options", "mlir::ModuleOp"> {
  let summary = "Check remat-apply's options against the whole module";
  let description = [{
    Runs first in `remat-pipeline` (and so in `remat-lower-to-cpu`,
    `remat-lower-to-gpu` and `remat-run`), with the options that the pipeline
    hands to `remat-apply`, because `remat-apply` is a function pass and
    cannot see the module. Errors, at the module:

    * `time-limit` not a finite number of seconds, 0 or more, or `slots`
      outside [1, 2^20];
    * a `budget`, or a `solver` other than the default `chen-sqrtn`, given
      while no function of the module is a training step: the request would
      apply to nothing. The message says what marks a step (DESIGN.md §4):
      `remat.step` on the function, `remat.loss` on an op or a result,
      `remat.seed` on an op, `remat.tangent` on an argument, or
      `remat.phase` on an op.

    Functions that are not training steps beside one that is (a module's own
    `main`, helpers) are left alone, silently. Without a budget and with the
    default solver, a module without any step passes through unchanged: the
    lowering pipelines then simply lower it.
  }];
  let options = [RematSolverOption, RematBudgetOption] # RematSearchOptions;
}

def RematEarlyFreePass : InterfacePass<"remat-early-free", "mlir::FunctionOpInterface"> {
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

def RematPlanLibraryCallsPass
    : InterfacePass<"remat-plan-library-calls", "mlir::FunctionOpInterface"> {
  let summary = "Choose the contractions that vendor libraries run and plan "
                "their workspace";
  let description = [{
    Runs on tensors, before `remat-apply`, so that the plan counts the memory
    the libraries need. Every linalg op that is a contraction by its indexing
    maps and body (ContractionMatch.h: matrix products, batched or not, and
    convolutions forward, backward-data and backward-weights, with strides,
    dilation and groups, whether written as named ops or as
    `linalg.generic`) and that the `target`'s library can run gets

      `remat.library_call = "<gemm|conv_fwd|conv_bwd_data|conv_bwd_weights>"`
      `remat.workspace_bytes = <N>`

    N is what the library needs as scratch memory at this op: on the CPU
    oneDNN's own answer (its scratchpad and the working copies of the
    operands in the layouts of its fast kernels: CpuLibrary.h); on the GPU the
    policy of GpuLibrary.h, min(`gpu-workspace-limit`, largest operand).
    The training graph counts it as the node's workspace (held only while
    the op runs), and `remat-lower-library-calls` allocates exactly that.
    An output zeroed by a `linalg.fill` right before is overwritten rather
    than accumulated into. Ops the library cannot run stay loop nests; with
    `-debug-only=remat-plan-library-calls` each says why.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Library of the calls: cpu (oneDNN) or gpu (cuBLAS, cuDNN)">,
    Option<"gpuWorkspaceLimit", "gpu-workspace-limit", "int64_t",
           /*default=*/"::remat::lib::kDefaultGpuWorkspaceLimit",
           "Most bytes of workspace a GPU library call gets">,
  ];
}

def RematLowerLibraryCallsPass
    : Pass<"remat-lower-library-calls", "mlir::ModuleOp"> {
  let summary = "Replace the planned contractions by calls of the runtime's "
                "library function";
  let description = [{
    Runs on buffers, after `remat-early-free`. Every linalg op carrying
    `remat.library_call` (remat-plan-library-calls) is matched again on its
    buffers, described (LibraryCalls.h: sizes and strides, the descriptor a
    constant global) and replaced in place by

      %ws = memref.alloc() : memref<Nxi8>          // remat.workspace_bytes
      func.call @remat_lib_contraction(desc, in0, in1, out, ws, N)
      memref.dealloc %ws

    with the operands' element pointers, so that the workspace is allocated
    and freed around the call as the simulator counts it. A `linalg.fill`
    of zero that only initialises the output is removed and the call
    overwrites instead of accumulating. When the buffers' layouts no longer
    allow the call (a view with strides the library cannot take) or need more
    workspace than planned, the op stays a loop nest, still between the
    planned allocation and free, so that the measured peak is the predicted
    one; `-debug-only=remat-lower-library-calls` says so.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Library of the calls: cpu (oneDNN) or gpu (cuBLAS, cuDNN)">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def RematCopiesToLinalgPass
    : InterfacePass<"remat-copies-to-linalg", "mlir::FunctionOpInterface"> {
  let summary = "Turn copies between strided buffers into linalg.copy";
  let description = [{
    Runs on buffers. A `memref.copy` whose source or target is not a
    contiguous identity-layout buffer (the padding of a convolution's input:
    bufferized `tensor.insert_slice` into a larger buffer) becomes a
    `linalg.copy`, which both lowerings compile to loops (a kernel on the
    GPU, a vectorisable loop nest on the CPU) instead of the runtime's
    element-by-element `memrefCopy` or a rejected `gpu.memcpy`. Contiguous
    copies stay `memref.copy` (a `memcpy`).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def RematInstrumentOpTimersPass
    : Pass<"remat-instrument-op-timers", "mlir::ModuleOp"> {
  let summary = "Time every op that carries remat.profile_id";
  let description = [{
    Runs on tensors, after `remat-apply` (timers are side effects the
    training graph would refuse). Brackets every op carrying
    `remat.profile_id = <id>` between `remat_rt_op_begin(id)` and
    `remat_rt_op_end(id)`: whatever the op becomes (a library call, a loop
    nest, a kernel and its launch, a copy into a padded buffer), its wall
    time inside each measured window is the runtime's, which prints
    `remat-profile: op=<id> ns=<median>` at exit. `remat-run
    --profile-costs=FILE` numbers the ops of the step, runs this, and writes
    the measured times back as `remat.cost` so that the solvers optimise
    the time of this machine rather than FLOPs.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect"];
}

def RematApplyProfiledCostsPass
    : Pass<"remat-apply-profiled-costs", "mlir::ModuleOp"> {
  let summary = "Take each op's measured time from a profile run as its cost";
  let description = [{
    The other half of a profile built to run elsewhere: `remat-run STEP
    --profile-costs=F --target=gpu --gpu-compile-only` writes F (the step
    with its ops numbered, `remat.profile_id`) and an executable that prints
    `remat-profile: op=<id> ns=<ns>`; run on the device, its output is
    `profile`. This pass sets each numbered op's `remat.cost` to its measured
    nanoseconds (0 if it was not timed), every other op of that function to
    0, and drops the numbers, as `remat-run --profile-costs` does when it
    runs the step itself: the solvers then optimise the device's time.
    Errors: an unreadable file, one without profile lines, a line naming an
    op no op carries, or a module without numbered ops.
  }];
  let options = [
    Option<"profile", "profile", "std::string", /*default=*/"\"\"",
           "The profile run's output (its remat-profile: lines)">,
  ];
}

def RematPrepareLoopsForCpuPass
    : InterfacePass<"remat-prepare-loops-for-cpu", "mlir::FunctionOpInterface"> {
  let summary = "Choose each linalg op's innermost loop for the vectoriser";
  let description = [{
    Runs on buffers, before `convert-linalg-to-loops`, in the CPU lowering
    with `kernels=library`. `convert-linalg-to-loops` nests the loops in the
    op's iteration order, and LLVM's loop vectoriser then works on the
    innermost one: it needs unit-stride (or invariant) accesses there, and a
    reassociable combiner when that loop is a reduction. For every linalg op
    the innermost loop becomes the one whose step touches the operands best
    (unit stride or invariant counts for, any other stride against; a
    parallel loop wins ties), the others keep their order:

    * a matrix product or convolution left to loops gets its output's
      contiguous column innermost (`C[m,n] += A[m,k] B[k,n]` as m, k, n):
      every output element still sums its terms in the same order, so the
      results are bit-identical;
    * a reduction along a contiguous dimension (the sums of a
      normalisation) keeps it innermost, and its `arith.addf` combiner gets
      `fastmath<reassoc>`, so that the vectoriser accumulates in several
      partial sums (blocks of lanes) and adds them at the end: deterministic
      (the same code every run and under every plan), and at least as
      accurate as one sequential sum.

    Then adjacent loops that walk every operand as one loop would (same
    iterator type; in each operand the outer step moves the address by the
    inner loop's whole range) become one loop (upstream's
    `collapseOpIterationDims`; the operands become `memref.collapse_shape`
    views, after operands read at a constant 0 in a dimension of size 1
    are viewed without it): LLVM -O3 unrolls a short innermost loop
    (a 32-pixel row) completely before its loop vectoriser runs, which then
    vectorised the loop around it with gathers and scatters. An elementwise
    op over a whole NCHW buffer is one loop.

    Ops without loops, fills and copies are left alone.

    `arith.maximumf` and `arith.minimumf` become compares and selects with
    the same result bit for bit (NaN wins, +0 above -0): x86 has no vector
    instruction for the `llvm.maximum`/`llvm.minimum` they otherwise lower
    to (before AVX10.2), and the vectoriser left ReLU6, clamps and max
    pooling scalar. Upstream's `arith-expand` returns either zero for +0
    against -0.

    First, the f32 `math.exp`, `expm1`, `log`, `log1p`, `log2`, `tanh` and
    `erf` become upstream's polynomial approximations (a few ulp; arith ops
    in-line): a libm call per element would keep the vectoriser off the
    loops of softmax, GELU, the losses and their gradients. f64 keeps libm.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def RematShareLoopsAcrossThreadsPass
    : Pass<"remat-share-loops-across-threads", "mlir::ModuleOp"> {
  let summary = "Make the parallel loops worth a fork OpenMP work sharing";
  let description = [{
    Runs after `convert-linalg-to-parallel-loops`, in the CPU lowering with
    `parallel-loops` (the default). `convert-linalg-to-parallel-loops` gives
    every linalg op an `scf.parallel` over its leading parallel loops (and
    one more after each reduction loop). Here only the outermost parallel
    loop of a nest stays parallel, and only when it has at least two
    iterations and the whole nest executes at least `min-operations`
    operations (constant bounds; a fork and a join cost microseconds, a
    small elementwise op less): every other `scf.parallel` becomes nested
    `scf.for` loops. Then upstream's `convert-scf-to-openmp` makes each
    remaining one an `omp.parallel` + `omp.wsloop`, and the
    `memref.alloca_scope` it wraps each body in is inlined where the body
    has no `memref.alloca` (the scope's own canonicalization; a scope whose
    body becomes several blocks when its inner loops are lowered would be
    invalid).

    Which iterations a thread runs changes no arithmetic: every output
    element is computed by one thread in the same order, so the results are
    the same for any number of threads and bit-identical to the sequential
    loops, with one exception: a reduction that remat-prepare-loops-for-cpu
    marked reassociable may be vectorised with other partial sums inside a
    parallel region than outside, so its last bits may differ from the
    sequential build's (each build is deterministic). No allocation is added
    (the threads' stacks belong to the OpenMP runtime, not to the step).
    OMP_NUM_THREADS sets the threads at run time.
  }];
  let options = [
    Option<"minOperations", "min-operations", "uint64_t",
           /*default=*/"131072",
           "Fewest operations a loop nest executes to be shared by threads">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::omp::OpenMPDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def RematPromoteLoopAccumulatorsPass
    : InterfacePass<"remat-promote-loop-accumulators",
                    "mlir::FunctionOpInterface"> {
  let summary = "Carry a loop's sums in registers instead of memory";
  let description = [{
    Runs on loops, after `convert-linalg-to-loops` (or `-parallel-loops`),
    in the CPU lowering with `kernels=library`. The loops of a linalg
    reduction load the output element, add to it and store it back in every
    iteration; the address does not move, but LLVM cannot keep the value in
    a register (nor vectorise the sum) unless it proves that no other access
    of the loop reaches those bytes, which it cannot for views of one arena.
    Here, in every innermost `scf.for` with constant bounds and at least one
    iteration whose only writes are such stores
    (each with one load of the same memref at the same loop-invariant
    indices before it), the element is loaded once before the loop, carried
    as an `iter_args` value and stored once after it, provided that every
    other memref the loop reads, and every other accumulator, is provably
    disjoint from it: views of the step's arena (or of one allocation) at
    constant, non-overlapping byte ranges (no `memref.reinterpret_cast` in
    between), two allocations, an allocation and a function argument or a
    global, or two different globals. Memory of any other origin (a call's
    result, a cast) is taken to alias everything: left alone.

    The values computed are the same, in the same order; with the
    `fastmath<reassoc>` that remat-prepare-loops-for-cpu gives a sum along
    a contiguous dimension, LLVM then vectorises it (a batch norm's
    gradient sums over 4x96x32x32: 1.3 ms to LLVM's vector speed).
  }];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect"];
}

def RematKeepInnerLoopsRolledPass
    : InterfacePass<"remat-keep-inner-loops-rolled",
                    "mlir::FunctionOpInterface"> {
  let summary = "Keep LLVM from unrolling the innermost loops before it vectorises them";
  let description = [{
    Runs on loops, after remat-promote-loop-accumulators, in the CPU
    lowering with `kernels=library`. Every innermost `scf.for` of at least
    `min-trip-count` iterations (constant bounds) gets `loop_annotation =
    #llvm.loop_annotation<unroll = <disable = true>>`, which the lowering
    carries to its back edge as `llvm.loop.unroll.disable`. LLVM -O3 unrolls a
    short constant loop completely before its loop vectoriser runs; the
    vectoriser then widens the loop around it instead, with gathers and
    scatters (a strided outer loop): a padded copy's 32-pixel rows, a batch
    norm's 4x4 planes. Kept rolled, the inner loop is the one vectorised.
    Nothing is computed differently.
  }];
  let options = [
    Option<"minTripCount", "min-trip-count", "uint64_t", /*default=*/"16",
           "Fewest iterations of an innermost loop kept rolled">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def RematOutlineLoopNestsPass
    : Pass<"remat-outline-loop-nests", "mlir::ModuleOp"> {
  let summary = "Give every loop nest of the CPU lowering its own function";
  let description = [{
    Runs at the end of the CPU lowering's loop stage (after the linalg ops
    became loops and the shared ones OpenMP regions). Every outermost loop
    nest (`scf.for`, `scf.parallel`, `scf.while`, `omp.parallel`) of a
    function with a body moves into a new private function of its own,
    called where the nest was: the constants it reads are cloned in, every
    other value it reads is an argument, and the values it yields are the
    function's results. The new functions are internal and `noinline` for
    LLVM.

    Why: a training step lowered as one function is thousands of loop nests
    in one LLVM function, and some of LLVM's -O3 passes cost more than
    linearly in a function's size (IndVarSimplify took half of -O3 on
    resnet50's step; densenet121's took more than ten minutes). One function
    per nest optimises each nest alone, in time linear in the step, and the
    code of each nest is the same as before (static shapes and strides stay
    in the argument types; a call per nest costs nanoseconds).

    Nothing is computed differently and nothing is allocated: the functions
    read and write the same buffers in the same order.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def RematAssignArenaPass : Pass<"remat-assign-arena", "mlir::ModuleOp"> {
  let summary = "Put every buffer of a step at its planned offset of one arena";
  let description = [{
    Runs on buffers, after `remat-early-free` and before
    `remat-lower-library-calls`, in the lowering pipelines with
    `dealloc=arena` (the default). In every function carrying
    `remat.arena_bytes` (remat-apply with `arena`), the function first calls
    `remat_rt_arena(id, bytes)`, which returns the step's arena (allocated
    at its first call and kept: reused by every later call of the step; one
    arena per step function), and every `memref.alloc` of the function's
    body becomes `memref.view %arena[offset]`, its free gone. The offset is
    the plan's: it is read from `remat.operand_offsets` on the ops that use
    the buffer. The buffers the step returns are views of the arena too,
    valid until the step runs again: a free of such a result in a caller
    (`bufferization.dealloc_tensor` of `remat-run --repeat`'s loop) is
    removed. An allocation without a planned offset stays one. The offsets
    are checked against the buffers' lifetimes in the program (allocation to
    free, or to the end for a result): two buffers alive at once never
    overlap, or the pass fails naming them.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
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
    Option<"repeat", "repeat", "unsigned", /*default=*/"0",
           "After the call whose results are printed, call the entry this "
           "many more times, each in its own window, freeing its results "
           "(for timing: remat-run --repeat)">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

//===----------------------------------------------------------------------===//
// GPU lowering (remat-lower-to-gpu, docs/gpu.md)
//===----------------------------------------------------------------------===//

def RematInstrumentStepCallsPass
    : Pass<"remat-instrument-step-calls", "mlir::ModuleOp"> {
  let summary = "Measure every call of the training step that a module's own "
                "code makes";
  let description = [{
    For a module that brings its own `main` (the usual MLIR runner test: build
    inputs, call the step, print with `vector.print`, `printF32` or
    `printMemrefF32`), wraps every `func.call` of `entry` outside `entry`
    itself in `remat_rt_step_begin` / `remat_rt_step_end`, so that the runtime
    measures the window of that call: the bytes the step allocates, without
    the inputs `main` built. That is the quantity the simulator predicts
    (arguments are fixed memory). An argument that bufferization would give
    another layout than the step's identity one — a view (a slice of a
    bigger tensor), a tensor carried by a loop (the weights of an SGD loop in
    `scf.for`) or yielded by a region — is copied before the window opens:
    bufferization would otherwise copy it inside the window. With several
    entries (`entry=a,b`), the calls of entry k open windows tagged k
    (`remat_rt_step_begin_tagged(k)`), and the runtime reports each step's
    peak on its own line (`remat-runtime-step: tag=k ...`). Fails, at the
    step, when nothing calls an entry.
  }];
  let options = [
    ListOption<"entry", "entry", "std::string",
               "Names of the training steps whose calls are measured">,
    Option<"repeat", "repeat", "unsigned", /*default=*/"0",
           "After every measured call, call the step this many more times "
           "on the same arguments, each in its own window, freeing its "
           "results (for timing: remat-run --repeat)">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def RematPrepareLinalgForGpuPass
    : InterfacePass<"remat-prepare-linalg-for-gpu", "mlir::FunctionOpInterface"> {
  let summary = "Put parallel loops outermost and give every linalg op one";
  let description = [{
    Runs on buffers, before `convert-linalg-to-parallel-loops`, so that every
    linalg op becomes an `scf.parallel` nest that `remat-map-parallel-loops-to-gpu`
    can turn into a kernel (host code must never touch device buffers):

    * A linalg op whose parallel dimensions are not all outermost (e.g.
      iterators `[reduction, parallel]`) is generalized if it is a named op and
      interchanged so that they are. The relative order of the reduction
      dimensions is kept, so every output element is accumulated in the same
      order and the results are bit-identical to the CPU path.
    * A linalg op without any parallel dimension (a full reduction, a rank-0
      fill or generic) is wrapped in a one-iteration `scf.parallel`: it becomes
      a kernel with one thread.

    Ops already inside an `scf.parallel` are left alone. Ops on tensors are an
    error (run after bufferization).

    Example: `linalg.generic {iterator_types = ["reduction", "reduction"]}`
    becomes `scf.parallel (%i) = (%c0) to (%c1) step (%c1) { linalg.generic ... }`.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def RematGpuBlockReductionsPass
    : InterfacePass<"remat-gpu-block-reductions", "mlir::FunctionOpInterface"> {
  let summary = "Reduce long reductions with a thread block per output element";
  let description = [{
    Runs on buffers in the GPU lowering (`kernels=library`), before
    `remat-prepare-linalg-for-gpu`. A linalg op with at least
    `min-reduction` iterations to reduce per output element (the sums of a
    normalisation, a loss, a weight gradient left to loops) - or at least
    `min-few-outputs-reduction` when it has fewer than `few-outputs` output
    elements - would otherwise
    run one thread per output element, the reduction serial in the thread,
    and a full reduction in one thread. Such an op whose body yields, for
    every output, `out = combine(out, f(inputs))` (combine: addf, mulf,
    maximumf, maxnumf, minimumf, minnumf, addi, muli; `out` read nowhere
    else, the combined value only yielded; several outputs - a batch norm's
    two gradient sums, a loss and its count - each get their own) becomes a
    `gpu.launch` of one block of `block-size` threads per output element:
    each thread combines a strided share of the reduction domain from the
    combiner's identity, `gpu.all_reduce` combines the threads' partial
    results (a fixed tree: deterministic), and thread 0 combines it into the
    output. Each output element's terms are then summed in another order than
    on the CPU; `kernels=loops` keeps one thread per element.
  }];
  let options = [
    Option<"minReduction", "min-reduction", "int64_t", /*default=*/"512",
           "Fewest reduced iterations per output element for a block">,
    Option<"fewOutputs", "few-outputs", "int64_t", /*default=*/"8192",
           "Below this many output elements, one thread each leaves the GPU "
           "nearly idle: min-few-outputs-reduction terms suffice for a block">,
    Option<"minFewOutputsReduction", "min-few-outputs-reduction", "int64_t",
           /*default=*/"64",
           "Fewest reduced iterations per output element for a block when "
           "there are fewer than few-outputs output elements">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def RematFuseParallelLoopsPass
    : InterfacePass<"remat-fuse-parallel-loops", "mlir::FunctionOpInterface"> {
  let summary = "Fuse adjacent scf.parallel loops over the same iterations "
                "(one GPU kernel instead of several)";
  let description = [{
    Runs on buffers after `convert-linalg-to-parallel-loops`, before the loops
    are mapped to the GPU: every linalg op is one `scf.parallel` and becomes
    one kernel launch, and most of a step's launches are small elementwise
    ops, fills and copies over the same iteration space one after the other
    (a batch norm's fills, statistics and scaling, an activation and its
    mask). Two adjacent loops (only side-effect-free ops such as views and
    constants between them) are fused into one when

    * their bounds and steps are equal (the same values, or equal
      constants), neither contains a nested `scf.parallel`, and their bodies
      touch memory only through `memref.load` / `memref.store` (loops and
      conditionals around them allowed);
    * for every store of one loop and every load or store of the other: the
      same buffer value is accessed at the same indices (the loops'
      induction variables or values defined outside, position by position,
      every induction variable of more than one iteration among them: no
      two iterations share the element), else the two buffers cannot
      overlap.

    Then every iteration of the fused loop does the first loop's work and
    the second's on the same element, and no iteration reads or writes what
    another iteration of the other loop writes: the results are those of
    the two loops in sequence. Whether two buffers can overlap is
    `remat::provablyDisjoint` (BufferOrigin.h, shared with
    remat-promote-loop-accumulators): two allocations, an allocation and an
    argument or a global, two globals, or slices of the arena
    (`memref.view` at constant byte offsets) whose byte ranges are disjoint;
    the arena placement's offsets say exactly which buffers share memory. Nothing is allocated, freed or moved: the memory plan is
    unchanged. Chains fuse pairwise in program order.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

def RematMapParallelLoopsToGpuPass
    : InterfacePass<"remat-map-parallel-loops-to-gpu", "mlir::FunctionOpInterface"> {
  let summary = "Tile outermost scf.parallel loops into thread blocks and map "
                "them to the GPU grid";
  let description = [{
    For every outermost `scf.parallel` without a `mapping` attribute: tiles it
    (`scf::tileParallelLoop`, with a bound check instead of `min` bounds, so
    that the block size is a constant) into a loop over tiles and a loop
    inside a tile of at most `block-size` iterations, and maps them for
    `convert-parallel-loops-to-gpu`: the tile loop to the grid, the loop
    inside the tile to the threads of a block, one thread per iteration (one
    per output element for a lowered linalg op).

    The innermost dimension is mapped to `x` and gets the largest share of
    the block (`min(trip count, block-size)`), the next ones to `y` and `z`
    with what is left, so that consecutive threads touch consecutive elements
    of row-major buffers. Dimensions beyond the three innermost are sequential
    (a loop in every thread). Nested `scf.parallel` and `scf.for` loops stay
    sequential inside the thread.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Largest number of threads per block">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect"];
}

def RematHostBuffersToGpuPass
    : Pass<"remat-host-buffers-to-gpu", "mlir::ModuleOp"> {
  let summary = "Turn host allocations into device allocations, in place";
  let description = [{
    Runs after `gpu-kernel-outlining`, before `gpu-async-region`. In every
    host function (`func.func` outside `gpu.module`), replaces
    `memref.alloc` by `gpu.alloc` and `memref.dealloc` by `gpu.dealloc` at the
    same place, so that the device buffers are exactly the buffers of the CPU
    path and are freed exactly where `remat-early-free` placed the frees: the
    device peak is the simulator's peak. `memref.copy` between identity-layout
    buffers becomes `gpu.memcpy`.

    The new ops are synchronous; `gpu-async-region` then threads one
    `!gpu.async.token` through the allocations, launches, copies and frees of
    each block (in program order, on one stream) and inserts a host
    synchronization before every host op with side effects (calls) and
    before returning.

    A constant tensor (`memref.get_global`) that a kernel reads becomes its
    device copy: `remat_rt_device_constant(address, bytes)` copies it at its
    first use and keeps it for the program (constant bytes, outside the
    step's figures), viewed with the global's type. A global whose address
    alone is read on the host (a library call's descriptor) stays.

    Errors: stack buffers (`memref.alloca`); a `memref.copy` with a
    non-identity layout (remat-copies-to-linalg makes those kernels first).
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect"];
}

def RematGpuAsyncLibraryCallsPass
    : Pass<"remat-gpu-async-library-calls", "mlir::ModuleOp"> {
  let summary = "Drop the host synchronization before each library call";
  let description = [{
    Runs after `gpu-async-region`, which puts a blocking `gpu.wait` (a host
    synchronization: `mgpuStreamSynchronize`) before every host call, the
    runtime's `remat_lib_contraction` included: about one per convolution,
    60 per step of resnet18, each of which empties the GPU's queue and
    exposes the launch latency of what follows. The project's CUDA runtime
    runs every stream of the program as its one stream (`mgpuStreamCreate`)
    and queues the library's work on that stream (CudaLibrary.cpp), so the
    call is ordered after the kernels before it and before the ones after it
    without the host waiting: this pass removes a blocking `gpu.wait` when
    the next op with side effects after it is such a call. The same for the
    op timers of a profile (`remat_rt_op_begin` / `_end`,
    remat-instrument-op-timers): they record events on that stream, or
    synchronize the device themselves when asked to time each op alone
    (`REMAT_CUDA_OP_TIMING=sync`). Every other synchronization stays (calls
    of other functions, returns, host reads).

    Only for programs linked with the project's CUDA runtime (remat-run
    --target=gpu, `remat-lower-to-gpu`); with upstream's runtime wrappers
    (one CUDA stream per token) the waits are needed.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

#endif // REMAT_TRANSFORMS_PASSES
