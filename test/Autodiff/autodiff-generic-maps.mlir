// RUN: remat-opt %s --remat-autodiff --mlir-print-local-scope | FileCheck %s

// remat-autodiff on linalg.generic's access patterns: the adjoint of an
// input is a generic over the same iteration space whose output map is the
// input's map, so that a broadcast input (a map that drops dimensions) gets
// a reduction over the dropped dimensions, and a reduction's input gets the
// output's adjoint broadcast back. (Gradients checked numerically in
// gradcheck-generic.test.)

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#col = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
// y = x + b (b broadcast over rows, map (i, j) -> (j)), loss = sum(y).
// CHECK-LABEL: func.func @broadcast_in(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-SAME: -> (tensor<f32> {remat.loss}, tensor<3x4xf32>, tensor<4xf32>)
// The seed, broadcast through the sum (a full reduction) to dY: a parallel
// generic reading the rank-0 seed with the map that drops every dimension.
// CHECK: %[[SEED:.*]] = linalg.fill {{{.*}}remat.seed{{.*}}} {{.*}} -> tensor<f32>
// CHECK: %[[DY:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[SEED]] : tensor<f32>)
// dB: the broadcast dimension d0 becomes a reduction into a zero fill, the
// output map is b's map (d1).
// CHECK-DAG: %[[ZB:.*]] = linalg.fill {{.*}} -> tensor<4xf32>
// CHECK-DAG: %[[DB:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[DY]] : tensor<3x4xf32>) outs(%[[ZB]] : tensor<4xf32>)
// CHECK: return %{{.*}}, %{{.*}}, %[[DB]] : tensor<f32>, tensor<3x4xf32>, tensor<4xf32>
func.func @broadcast_in(%x: tensor<3x4xf32>, %b: tensor<4xf32>) -> (tensor<f32> {remat.loss}) {
  %e = tensor.empty() : tensor<3x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<3x4xf32>, tensor<4xf32>) outs(%e : tensor<3x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
// r = c + row sums of x*x (accumulated into the parameter c), loss =
// sum(r * r).
// CHECK-LABEL: func.func @reduce_into_param(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32>, %[[C:.*]]: tensor<3xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} outs(%[[C]] : tensor<3xf32>)
// dR = 2 r (the seed broadcast to r's shape inside the same generic).
// CHECK: %[[DR:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%[[R]], %{{.*}} : tensor<3xf32>, tensor<f32>)
// dX: the reduction dimension d1 becomes parallel and dR is read broadcast
// through the output's map (d0): dX = 2 x dR.
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[DR]] : tensor<3x4xf32>, tensor<3xf32>)
// CHECK-COUNT-2: arith.mulf
// CHECK-NEXT: arith.addf
// The init of an add reduction passes its adjoint through unchanged: dC = dR.
// CHECK: return %{{.*}}, %[[DX]], %[[DR]] : tensor<f32>, tensor<3x4xf32>, tensor<3xf32>
func.func @reduce_into_param(%x: tensor<3x4xf32>, %c: tensor<3xf32>) -> (tensor<f32> {remat.loss}) {
  %r = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf32>) outs(%c : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%r : tensor<3xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
// Row maxima into a -inf fill, loss = sum(m): the adjoint goes to the
// elements equal to their row's maximum (the argmax recomputed by comparing
// with the saved result).
// CHECK-LABEL: func.func @max_reduce(
// CHECK-SAME: %[[X:.*]]: tensor<3x4xf32>)
// CHECK: %[[M:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: %[[DM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[M]], %[[DM]] : tensor<3x4xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[XV:.*]]: f32, %[[MV:.*]]: f32, %[[GV:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[EQ:.*]] = arith.cmpf oeq, %[[XV]], %[[MV]] : f32
// CHECK: arith.select %[[EQ]], %[[GV]], %{{.*}} : f32
// CHECK: return %{{.*}}, %[[DX]] : tensor<f32>, tensor<3x4xf32>
func.func @max_reduce(%x: tensor<3x4xf32>) -> (tensor<f32> {remat.loss}) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<3xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %m = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf32>) outs(%f : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%m : tensor<3xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
