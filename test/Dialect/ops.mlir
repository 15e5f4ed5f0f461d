// RUN: remat-opt %s --split-input-file | remat-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @kernel_roundtrip
// CHECK: %[[Y:.*]] = remat.kernel "aten.relu"(%{{.*}}) {remat.cost = 1.024000e+03 : f64} : (tensor<4x256xf32>) -> tensor<4x256xf32>
// CHECK: remat.kernel "aten.split"(%[[Y]]) : (tensor<4x256xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>)
func.func @kernel_roundtrip(%x: tensor<4x256xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>) {
  %y = remat.kernel "aten.relu"(%x) {remat.cost = 1024.0} : (tensor<4x256xf32>) -> tensor<4x256xf32>
  %a, %b = remat.kernel "aten.split"(%y) : (tensor<4x256xf32>) -> (tensor<4x128xf32>, tensor<4x128xf32>)
  return %a, %b : tensor<4x128xf32>, tensor<4x128xf32>
}

// -----

// CHECK-LABEL: func.func @markers
// CHECK-SAME: %{{.*}}: tensor<4xf32> {remat.param}, %{{.*}}: tensor<4xf32> {remat.tangent}
// CHECK-SAME: -> (tensor<4xf32> {remat.loss})
// CHECK: arith.constant {remat.seed}
// CHECK: remat.phase = "backward"
// CHECK: remat.recompute = 3
func.func @markers(%x: tensor<4xf32> {remat.param}, %dy: tensor<4xf32> {remat.tangent}) -> (tensor<4xf32> {remat.loss}) {
  %s = arith.constant {remat.seed} 1.0 : f32
  %y = remat.kernel "aten.neg"(%x) {remat.phase = "backward"} : (tensor<4xf32>) -> tensor<4xf32>
  %z = remat.kernel "aten.neg"(%y) {remat.recompute = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}
