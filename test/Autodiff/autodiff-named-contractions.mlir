// RUN: remat-opt %s --remat-autodiff --mlir-print-local-scope | FileCheck %s

// remat-autodiff on named contractions, differentiated through their
// generalized form: the adjoint of each operand is a generic over the same
// iteration space (matmul: d0 = m, d1 = n, d2 = k) that reads the result's
// adjoint and the other operand and writes the operand's map, the dimensions
// the operand does not index becoming reductions into a zero fill
// (dA = dC B^T reduces over n, dB = A^T dC over m). A matvec's matrix
// gradient, an outer product, has no reduction and no fill. (Gradients
// checked numerically in gradcheck-named-ops.test.)

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x5xf32>)
// CHECK-SAME: -> (tensor<f32> {remat.loss}, tensor<3x4xf32>, tensor<4x5xf32>)
// CHECK: linalg.matmul ins(%[[A]], %[[B]]
// CHECK: %[[DC:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x5xf32>)
// CHECK-DAG: %[[ZA:.*]] = linalg.fill {{.*}} -> tensor<3x4xf32>
// CHECK-DAG: %[[DA:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[B]], %[[DC]] : tensor<4x5xf32>, tensor<3x5xf32>) outs(%[[ZA]] : tensor<3x4xf32>)
// CHECK-DAG: %[[ZB:.*]] = linalg.fill {{.*}} -> tensor<4x5xf32>
// CHECK-DAG: %[[DB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[A]], %[[DC]] : tensor<3x4xf32>, tensor<3x5xf32>) outs(%[[ZB]] : tensor<4x5xf32>)
// CHECK: return %{{.*}}, %[[DA]], %[[DB]] : tensor<f32>, tensor<3x4xf32>, tensor<4x5xf32>

// batch_matmul: (d0 = batch, d1 = m, d2 = n, d3 = k); the batch stays
// parallel in both gradients.
// CHECK-LABEL: func.func @batch_matmul(
// CHECK-SAME: %[[A:.*]]: tensor<2x3x4xf32>, %[[B:.*]]: tensor<2x4x5xf32>)
// CHECK: %[[DC:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x5xf32>)
// CHECK-DAG: %[[DA:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[B]], %[[DC]] : {{.*}}) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK-DAG: %[[DB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%[[A]], %[[DC]] : {{.*}}) outs(%{{.*}} : tensor<2x4x5xf32>)
// CHECK: return %{{.*}}, %[[DA]], %[[DB]] : tensor<f32>, tensor<2x3x4xf32>, tensor<2x4x5xf32>

// matvec: (d0 = row, d1 = column). dA = dy x^T (all parallel, written
// without a fill), dx = A^T dy (a reduction over the rows).
// CHECK-LABEL: func.func @matvec(
// CHECK-SAME: %[[A:.*]]: tensor<3x4xf32>, %[[X:.*]]: tensor<4xf32>)
// CHECK: %[[DY:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xf32>)
// CHECK-DAG: %[[DA:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[DY]] : tensor<4xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK-DAG: %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[A]], %[[DY]] : tensor<3x4xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: return %{{.*}}, %[[DA]], %[[DX]] : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>

#id2 = affine_map<(i, j) -> (i, j)>
#all2 = affine_map<(i, j) -> ()>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#all3 = affine_map<(b, i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> (tensor<f32> {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %c = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%f : tensor<3x5xf32>) -> tensor<3x5xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%c : tensor<3x5xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @batch_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> (tensor<f32> {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%f : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id3, #all3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%c : tensor<2x3x5xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @matvec(%a: tensor<3x4xf32>, %x: tensor<4xf32>) -> (tensor<f32> {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %y = linalg.matvec ins(%a, %x : tensor<3x4xf32>, tensor<4xf32>) outs(%f : tensor<3xf32>) -> tensor<3xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%y : tensor<3xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
