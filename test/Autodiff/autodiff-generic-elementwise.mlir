// RUN: remat-opt %s --remat-autodiff --mlir-print-local-scope | FileCheck %s

// remat-autodiff on elementwise linalg.generic bodies: one adjoint generic
// per input, in reverse program order, whose body is the scalar rule of the
// forward body (tanh's from its saved result: 1 - t^2; mulf: the other
// factor; relu as maximumf against 0: a select on the saved output).
// (Gradients checked numerically in gradcheck-elementwise.test.)

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

// loss = sum(tanh(x) * y)
// CHECK-LABEL: func.func @tanh_mul(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x3xf32>)
// CHECK-SAME: -> (tensor<f32> {remat.loss}, tensor<2x3xf32>, tensor<2x3xf32>)
// The forward is kept as it was.
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.tanh
// CHECK: %[[SEED:.*]] = linalg.fill {remat.phase = "backward", remat.seed} {{.*}} -> tensor<f32>
// dP, the seed broadcast over the sum's reduction dimensions.
// CHECK: %[[DP:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[SEED]] : tensor<f32>) {{.*}} attrs = {remat.phase = "backward"}
// The product's two adjoints: dT = y dP and dY = t dP.
// CHECK-DAG: %[[DT:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[Y]], %[[DP]] : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-DAG: %[[DY:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[T]], %[[DP]] : tensor<2x3xf32>, tensor<2x3xf32>)
// dX = dT (1 - t^2), reading the saved tanh output, not x.
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[T]], %[[DT]] : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT: ^bb0(%[[TV:.*]]: f32, %[[GV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[TV]], %[[TV]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[ONE]], %[[SQ]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[GV]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %{{.*}}, %[[DX]], %[[DY]] : tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>
func.func @tanh_mul(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<f32> {remat.loss}) {
  %e = tensor.empty() : tensor<2x3xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %y : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%p : tensor<2x3xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// loss = sum(relu(x) / y): relu from its saved output (r > 0), the quotient
// rule for both operands of divf (x / y -> dx = g / y, dy = -g r / y).
// CHECK-LABEL: func.func @relu_div(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4xf32>)
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[R]], %[[Y]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-DAG: %[[DR:.*]] = linalg.generic {{.*}} ins(%[[Y]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK-DAG: %[[DY:.*]] = linalg.generic {{.*}} ins(%[[R]], %[[Y]], %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[R]], %[[DR]] : tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[RV:.*]]: f32, %[[GV:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %[[RV]], %{{.*}} : f32
// CHECK: arith.select %[[GT]], %[[GV]], %{{.*}} : f32
// CHECK: return %{{.*}}, %[[DX]], %[[DY]] : tensor<f32>, tensor<4xf32>, tensor<4xf32>
func.func @relu_div(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<f32> {remat.loss}) {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %q = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%r, %y : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%q : tensor<4xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
