// RUN: remat-opt %s --remat-report="solver=checkpoint-all" -o /dev/null | FileCheck %s

// --remat-report summarises the structure of each step's forward graph
// (docs/structure.md); keys in alphabetical order. One residual block:
// splitting vertices n0, n3, n4; articulation point n3.
// CHECK: "function": "residual"
// CHECK: "hierarchy": {
// CHECK-NEXT: "articulation_points": 1,
// CHECK-NEXT: "branched": 1,
// CHECK-NEXT: "depth": 3,
// CHECK-NEXT: "linear": 2,
// CHECK-NEXT: "non_branched": 0,
// CHECK-NEXT: "ops": 5,
// CHECK-NEXT: "split_members": 0,
// CHECK-NEXT: "splitting_vertices": 3
// CHECK-NEXT: },
func.func @residual(%x: tensor<8xf32>, %dy: tensor<8xf32> {remat.tangent}) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = remat.kernel "aten.stem"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %a = remat.kernel "aten.conv"(%s) : (tensor<8xf32>) -> tensor<8xf32>
  %b = remat.kernel "aten.conv"(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %o = remat.kernel "aten.add"(%b, %s) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = remat.kernel "aten.head"(%o) : (tensor<8xf32>) -> tensor<8xf32>
  %g = remat.kernel "aten.mul"(%dy, %a) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y, %g : tensor<8xf32>, tensor<8xf32>
}
