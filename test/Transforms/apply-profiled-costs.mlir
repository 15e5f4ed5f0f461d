// RUN: remat-opt %s --remat-apply-profiled-costs="profile=%S/Inputs/apply-profiled-costs.txt" | FileCheck %s
//
// The measured times of a profile run elsewhere (remat-run --profile-costs
// with --gpu-compile-only wrote the numbered step; the executable printed the
// remat-profile lines) become the ops' costs: numbered ops their nanoseconds
// (0 if not timed), the other ops of the function 0; the numbers are dropped.
// Errors: apply-profiled-costs-errors.mlir.

func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill {remat.profile_id = 0 : i64, remat.cost = 4.0 : f64} ins(%cst : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.add {remat.profile_id = 1 : i64, remat.cost = 4.0 : f64} ins(%x, %f : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %m = linalg.mul {remat.profile_id = 2 : i64, remat.cost = 4.0 : f64} ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %m : tensor<4xf32>
}

// CHECK-LABEL: func.func @train_step
// CHECK: arith.constant {remat.cost = 0.000000e+00 : f64}
// CHECK: tensor.empty() {remat.cost = 0.000000e+00 : f64}
// CHECK: linalg.fill {remat.cost = 1.500000e+03 : f64}
// CHECK: linalg.add {remat.cost = 0.000000e+00 : f64}
// CHECK: linalg.mul {remat.cost = 2.500000e+05 : f64}
// CHECK-NOT: remat.profile_id
