// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-pipeline="budget=100%" -o /dev/null
// RUN: not remat-opt %s --split-input-file --remat-pipeline="solver=rotor" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SOLVER
// RUN: not remat-opt %s --split-input-file --remat-report="solver=all" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not remat-run %s --budget=1MiB 2>&1 | FileCheck %s --check-prefix=RUN-BUDGET
// Without a budget and with the default solver, a module without a step
// passes through (the lowering pipelines lower it as it is).
// RUN: remat-opt %s --split-input-file --remat-pipeline | FileCheck %s --check-prefix=DEFAULT

// Numeric options out of range: an error naming the option and the value, at
// the module (pipelines, report) or at the function (remat-apply alone),
// never a silently different plan.
// RUN: not remat-opt %S/apply.mlir --remat-pipeline="solver=auto budget=60% time-limit=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not remat-opt %S/apply.mlir --remat-pipeline="solver=auto time-limit=nan" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not remat-opt %S/apply.mlir --remat-pipeline="solver=auto time-limit=inf" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INF
// time-limit=0 is no time-bounded search (Checkmate returns its warm start):
// RUN: remat-opt %S/apply.mlir --remat-pipeline="solver=checkmate-ilp time-limit=0" | FileCheck %s --check-prefix=ZERO
// RUN: not remat-opt %S/apply.mlir --remat-pipeline="solver=rotor slots=2000000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOTS
// RUN: not remat-opt %S/apply.mlir --remat-report="solver=all time-limit=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not remat-opt %S/apply.mlir --remat-report="solver=all slots=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOTS0
// RUN: not remat-opt %S/apply.mlir --pass-pipeline='builtin.module(func.func(remat-apply{solver=auto time-limit=nan}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=APPLY
// RUN: not remat-opt %S/apply.mlir --remat-lower-to-cpu="solver=auto time-limit=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not remat-run %S/apply.mlir --time-limit=nan 2>&1 | FileCheck %s --check-prefix=RUN-NAN
// RUN: not remat-run %S/apply.mlir --slots=0 2>&1 | FileCheck %s --check-prefix=RUN-SLOTS
// RUN: not remat-run %S/apply.mlir --target=gpu --gpu-block-size=0 2>&1 | FileCheck %s --check-prefix=RUN-BLOCK

// SOLVER: error: no function of the module is a training step, so solver=rotor would apply to nothing; mark the step
// REPORT: error: no function of the module is a training step, so there is no plan to report; mark the step with 'remat.step'
// RUN-BUDGET: error: no function of the module is a training step, so budget=1MiB would apply to nothing
// RUN-BUDGET: remat-run: error: the remat pipeline failed
// DEFAULT: func.func @forward_only
// DEFAULT-NOT: remat.solver
// DEFAULT: func.func @helper
// DEFAULT-NOT: remat.solver
// DEFAULT: func.func @step
// DEFAULT-SAME: remat.solver = "chen-sqrtn"

// NEGATIVE: apply.mlir:0:0: error: time-limit must be a finite number of seconds, 0 or more (0: no time-bounded search), got -1
// NAN: error: time-limit must be a finite number of seconds, 0 or more (0: no time-bounded search), got nan
// INF: error: time-limit must be a finite number of seconds, 0 or more (0: no time-bounded search), got inf
// ZERO: remat.solver = "checkmate-ilp"
// SLOTS: error: slots must be in [1, 1048576], got 2000000
// SLOTS0: error: slots must be in [1, 1048576], got 0
// APPLY: apply.mlir:42:1: error: time-limit must be a finite number of seconds, 0 or more (0: no time-bounded search), got nan
// RUN-NAN: remat-run: error: --time-limit must be a finite number of seconds, 0 or more (0: no time-bounded search), got nan
// RUN-SLOTS: remat-run: error: --slots must be in [1, 1048576], got 0
// RUN-BLOCK: remat-run: error: --gpu-block-size must be in [1, 1024], got 0

// A budget (or a solver other than the default) for a module in which no
// function is a training step applies to nothing: an error at the module
// that says what marks a step. It passed through unchanged before.
// expected-error @+1 {{no function of the module is a training step, so budget=100% would apply to nothing; mark the step with 'remat.step' on the function, 'remat.loss' on its loss (an op or a result), 'remat.seed' on the op that starts the backward, 'remat.tangent' on a gradient argument or 'remat.phase' on an op}}
module {
  func.func @forward_only(%x: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.negf ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
  func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Beside a step, functions that are not steps are left alone, silently.
module {
  func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @step(%x: tensor<4xf32>) -> (tensor<4xf32> {remat.loss}) {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.negf ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
