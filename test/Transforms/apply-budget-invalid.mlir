// RUN: remat-opt %s --verify-diagnostics --remat-pipeline="solver=chen-sqrtn budget=1e20" -o /dev/null
// RUN: remat-opt %s --verify-diagnostics --remat-report="solver=chen-sqrtn budget=1e20" -o /dev/null
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=18446744073709551616" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVER
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=16777216TiB" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OVERUNIT
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=nan" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=inf" -o /dev/null 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=12abc" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=0%" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZEROPCT
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=1e-9%" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TINYPCT
// RUN: remat-opt %s --remat-report="solver=chen-sqrtn budget=1e19" -o /dev/null | FileCheck %s --check-prefix=HUGE

// Budgets (remat/Support/Budget.h) are exact: one above 2^64-1 bytes, or one
// of 0 bytes, is an error at the step that quotes the text. The float round
// trip of the old parser turned 1e20 into a budget of 0 bytes.

// OVER: error: invalid budget '18446744073709551616': it exceeds 2^64-1 bytes
// OVERUNIT: error: invalid budget '16777216TiB': it exceeds 2^64-1 bytes
// NEGATIVE: error: invalid budget '-1': a budget cannot be negative
// NAN: error: invalid budget 'nan': a budget must be a finite number
// INF: error: invalid budget 'inf': a budget must be a finite number
// SYNTAX: error: invalid budget '12abc': expected bytes
// ZERO: error: invalid budget '0': a budget must be at least 1 byte
// ZEROPCT: error: invalid budget '0%': a percentage must be more than 0%
// TINYPCT: error: invalid budget '1e-9%': that percentage of the reference of 20 bytes is less than 1 byte

// 1e19 bytes fits a uint64_t: the report says it to the byte.
// HUGE: "budget_bytes": 10000000000000000000
// HUGE: "meets_budget": true

// expected-error @below {{invalid budget '1e20': it exceeds 2^64-1 bytes}}
func.func @step(%x: tensor<4xf32>) -> (tensor<f32> {remat.loss}) {
  %c = arith.constant dense<0.0> : tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<4xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%y : tensor<4xf32>) outs(%c : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
