// RUN: remat-opt %s --remat-autodiff --mlir-print-local-scope | FileCheck %s

// remat-autodiff on the structural named ops: transpose (the adjoint is
// written through the inverse permutation), broadcast (a reduction over the
// broadcast dimensions), reduce (the adjoint broadcast back over the reduced
// dimension), copy (the adjoint passed through), and fill of a scalar read
// from a parameter (the sum of the fill's adjoint, back through
// tensor.extract into a rank-0 gradient). (Gradients checked numerically in
// gradcheck-named-ops.test.)

// CHECK-LABEL: func.func @transpose_broadcast(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<2x4x3xf32>)
// CHECK: %[[BB:.*]] = linalg.broadcast ins(%[[B]] : tensor<3xf32>)
// CHECK: remat.seed
// CHECK: %[[DY:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x3x2xf32>)
// CHECK-DAG: %[[DT:.*]] = linalg.generic {{.*}} ins(%[[BB]], %[[DY]] : tensor<4x3x2xf32>, tensor<4x3x2xf32>)
// CHECK-DAG: %[[DBB:.*]] = linalg.generic {{.*}} ins(%[[T]], %[[DY]] : tensor<4x3x2xf32>, tensor<4x3x2xf32>)
// The broadcast's adjoint: a reduction over its dimensions 0 and 2.
// CHECK-DAG: %[[DB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]} ins(%[[DBB]] : tensor<4x3x2xf32>) outs(%{{.*}} : tensor<3xf32>)
// The transpose's adjoint: t[a, b, c] = x[c, a, b], so dx is written at (d2, d0, d1).
// CHECK-DAG: %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2, d0, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[DT]] : tensor<4x3x2xf32>) outs(%{{.*}} : tensor<2x4x3xf32>)
// CHECK: return %{{.*}}, %[[DX]], %[[DB]] : tensor<f32>, tensor<2x4x3xf32>, tensor<3xf32>

// CHECK-LABEL: func.func @reduce_copy_fill(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32>, %[[S:.*]]: tensor<f32>)
// CHECK: %[[C:.*]] = linalg.copy ins(%[[X]]
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[C]]
// CHECK: %[[SV:.*]] = tensor.extract %[[S]][]
// CHECK: %[[FS:.*]] = linalg.fill ins(%[[SV]] : f32)
// CHECK-DAG: %[[DR:.*]] = linalg.generic {{.*}} ins(%[[FS]], %{{.*}} : tensor<3xf32>, tensor<f32>)
// CHECK-DAG: %[[DFS:.*]] = linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<3xf32>, tensor<f32>)
// The fill's adjoint: the sum of dFS, a scalar, back into a rank-0 tensor.
// CHECK-DAG: %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%[[DFS]] : tensor<3xf32>)
// CHECK-DAG: %[[SUMV:.*]] = tensor.extract %[[SUM]][]
// CHECK-DAG: %[[DS:.*]] = tensor.insert %[[SUMV]] into %{{.*}}[]
// The reduce's adjoint: dR broadcast over the reduced dimension 1.
// CHECK-DAG: %[[DC:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[DR]] : tensor<3xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// The copy's adjoint: an identity generic of dC.
// CHECK-DAG: %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[DC]] : tensor<3x4xf32>)
// CHECK: return %{{.*}}, %[[DX]], %[[DS]] : tensor<f32>, tensor<3x4xf32>, tensor<f32>

#id3 = affine_map<(i, j, k) -> (i, j, k)>
#all3 = affine_map<(i, j, k) -> ()>
#id2 = affine_map<(i, j) -> (i, j)>
#all2 = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
// loss = sum(transpose(x) * broadcast(b))
func.func @transpose_broadcast(%x: tensor<2x4x3xf32>, %b: tensor<3xf32>) -> (tensor<f32> {remat.loss}) {
  %et = tensor.empty() : tensor<4x3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x4x3xf32>) outs(%et : tensor<4x3x2xf32>) permutation = [1, 2, 0]
  %eb = tensor.empty() : tensor<4x3x2xf32>
  %bb = linalg.broadcast ins(%b : tensor<3xf32>) outs(%eb : tensor<4x3x2xf32>) dimensions = [0, 2]
  %e = tensor.empty() : tensor<4x3x2xf32>
  %y = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t, %bb : tensor<4x3x2xf32>, tensor<4x3x2xf32>) outs(%e : tensor<4x3x2xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    linalg.yield %m : f32
  } -> tensor<4x3x2xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id3, #all3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<4x3x2xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%u: f32, %acc: f32):
    %r = arith.addf %acc, %u : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
// loss = sum(reduce_sum_dim1(copy(x)) * fill(s))
func.func @reduce_copy_fill(%x: tensor<3x4xf32>, %s: tensor<f32>) -> (tensor<f32> {remat.loss}) {
  %ec = tensor.empty() : tensor<3x4xf32>
  %c = linalg.copy ins(%x : tensor<3x4xf32>) outs(%ec : tensor<3x4xf32>) -> tensor<3x4xf32>
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<3xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.reduce ins(%c : tensor<3x4xf32>) outs(%fr : tensor<3xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %a = arith.addf %in, %init : f32
      linalg.yield %a : f32
    }
  %sv = tensor.extract %s[] : tensor<f32>
  %es = tensor.empty() : tensor<3xf32>
  %fs = linalg.fill ins(%sv : f32) outs(%es : tensor<3xf32>) -> tensor<3xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%r, %fs : tensor<3xf32>, tensor<3xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
