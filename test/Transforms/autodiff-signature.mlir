// RUN: remat-opt %s --remat-autodiff | FileCheck %s
// RUN: remat-opt %s --remat-pipeline="autodiff=true solver=chen-sqrtn" | FileCheck %s --check-prefix=PIPE
// RUN: remat-opt %s --remat-autodiff=function=unmarked | FileCheck %s --check-prefix=NAMED

// The signature of the step remat-autodiff builds: the arguments stay; the
// results are the loss, the gradient of every remat.param argument in
// argument order (zeros for one the loss does not depend on), then the other
// original results. Callers get the new results; their old uses keep their
// meaning.

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>, %[[A:.*]]: tensor<4xf32> {remat.param}, %[[B:.*]]: tensor<4xf32> {remat.param}, %[[UNUSED:.*]]: tensor<2xf32> {remat.param})
// CHECK-SAME: -> (tensor<f32> {remat.loss}, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>)
// CHECK: linalg.fill {remat.phase = "backward", remat.seed} {{.*}} -> tensor<f32>
// The zero gradient of the unused parameter.
// CHECK: %[[ZERO:.*]] = linalg.fill {remat.phase = "backward"} {{.*}} -> tensor<2xf32>
// CHECK: return %[[LOSS:.*]], %[[GA:.*]], %[[GB:.*]], %[[ZERO]], %[[PROD:.*]] :
func.func @forward(%x: tensor<4xf32>, %a: tensor<4xf32> {remat.param}, %b: tensor<4xf32> {remat.param}, %unused: tensor<2xf32> {remat.param}) -> (tensor<f32> {remat.loss}, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]} ins(%x, %a, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%xi: f32, %ai: f32, %bi: f32, %o: f32):
    %m = arith.mulf %xi, %ai : f32
    %s = arith.addf %m, %bi : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%p : tensor<4xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%pi: f32, %o: f32):
    %q = arith.mulf %pi, %pi : f32
    %s = arith.addf %o, %q : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l, %p : tensor<f32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[R:.*]]:5 = call @forward(
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<4xf32>)
// CHECK: return %[[R]]#0, %[[R]]#4
func.func @main(%x: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>, %u: tensor<2xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %r:2 = func.call @forward(%x, %a, %b, %u) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<f32>, tensor<4xf32>
}

// Without a remat.param, every float tensor argument is a parameter; named
// with function=, the loss needs no marker.
// NAMED-LABEL: func.func @unmarked(
// NAMED-SAME: -> (tensor<f32> {remat.loss}, tensor<4xf32>)
// NAMED: remat.seed
func.func @unmarked(%w: tensor<4xf32>, %i: tensor<4xi32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<f32>
  %l0 = linalg.fill ins(%z : f32) outs(%le : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%w : tensor<4xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%wi: f32, %o: f32):
    %e = math.exp %wi : f32
    %s = arith.addf %o, %e : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// Through the whole pipeline the step is solved and applied like any other.
// PIPE-LABEL: func.func @forward(
// PIPE-SAME: remat.predicted_peak_bytes
// PIPE-SAME: remat.solver = "chen-sqrtn"
