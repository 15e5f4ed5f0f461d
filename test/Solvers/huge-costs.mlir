// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-report="solver=all budget=70%" -o /dev/null | FileCheck %s

// Huge but finite costs are a valid graph: every solver of the report plans
// it. Rotor's table holds floats, which overflowed to +inf for costs above
// about 3e38 and read as "no sequence is feasible", failing the whole
// report; its costs are now scaled by a power of two.

// CHECK: "function": "huge"
// CHECK: "solver": "rotor"
func.func @huge(%x: tensor<16xf32>) -> tensor<16xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  %y1 = remat.kernel "a"(%x) {remat.cost = 1.0e300} : (tensor<16xf32>) -> tensor<16xf32>
  %y2 = remat.kernel "b"(%y1) {remat.cost = 1.0e300} : (tensor<16xf32>) -> tensor<16xf32>
  %y3 = remat.kernel "c"(%y2) {remat.cost = 1.0e300} : (tensor<16xf32>) -> tensor<16xf32>
  %y4 = remat.kernel "d"(%y3) {remat.cost = 1.0e300} : (tensor<16xf32>) -> tensor<16xf32>
  %g1 = remat.kernel "gd"(%y4, %y3, %seed) : (tensor<16xf32>, tensor<16xf32>, f32) -> tensor<16xf32>
  %g2 = remat.kernel "gc"(%g1, %y2) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %g3 = remat.kernel "gb"(%g2, %y1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %g3 : tensor<16xf32>
}

// -----

// Each cost is finite, their sum is not: an error at the op that makes it
// overflow, before any solver compares infinities.
func.func @too_huge(%x: tensor<16xf32>) -> tensor<16xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  %y1 = remat.kernel "a"(%x) {remat.cost = 1.0e308} : (tensor<16xf32>) -> tensor<16xf32>
  // expected-error @+1 {{the costs of training step 'too_huge' sum to more than 1.79769e+308 with this op's (1e+308); the total cost of a step must be finite: scale 'remat.cost' down}}
  %y2 = remat.kernel "b"(%y1) {remat.cost = 1.0e308} : (tensor<16xf32>) -> tensor<16xf32>
  %g1 = remat.kernel "gb"(%y2, %y1, %seed) : (tensor<16xf32>, tensor<16xf32>, f32) -> tensor<16xf32>
  return %g1 : tensor<16xf32>
}
