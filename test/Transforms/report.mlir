// RUN: remat-opt %S/apply.mlir --remat-report="solver=all" -o /dev/null | FileCheck %s
// RUN: remat-opt %S/apply.mlir --remat-report="solver=chen-sqrtn budget=80%" -o /dev/null | FileCheck %s --check-prefix=BUDGET

// One JSON document: per function, every solver's simulated figures and plan
// (keys in alphabetical order: each plan's "solver" comes last).
// CHECK: "functions": [
// CHECK: "checkpoint_all_peak_bytes": 324
// CHECK: "function": "square_chain"
// CHECK: "plans": [
// CHECK: "peak_bytes": 324
// CHECK: "solver": "none"
// CHECK: "schedule": [
// CHECK: "compute": 0
// CHECK: "num_recomputations": 0
// CHECK: "peak_bytes": 324
// CHECK: "solver": "checkpoint-all"
// CHECK: "num_recomputations": 2
// CHECK: "peak_bytes": 260
// CHECK: "solver": "chen-sqrtn"

// 80% of the checkpoint-all peak is 259 bytes: chen-sqrtn's 260 do not fit,
// which the report says without failing.
// BUDGET: "budget_bytes": 259
// BUDGET: "meets_budget": false
// BUDGET: "solver": "chen-sqrtn"
