// RUN: remat-opt %s --remat-autodiff --mlir-print-local-scope | FileCheck %s

// remat-autodiff on tensor ops: extract_slice's adjoint is inserted (same
// offsets, sizes, strides) into zeros of the source's shape; insert_slice's
// splits into the slice (extract_slice) and the destination with the slice
// zeroed; collapse_shape and expand_shape swap; pad's adjoint is the slice
// of the unpadded region; concat's are slices at each operand's offset;
// extract's is a tensor.insert into zeros, the adjoints of several extracts
// added up. (Gradients checked numerically in gradcheck-tensor-ops.test.)

// CHECK-LABEL: func.func @slices(
// CHECK-SAME: %[[X:.*]]: tensor<4x6xf32>, %[[Y:.*]]: tensor<3x3xf32>)
// CHECK: remat.seed
// CHECK: %[[DD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x3xf32>)
// CHECK-DAG: %[[DS:.*]] = tensor.extract_slice %[[DD]][1, 0] [2, 3] [1, 1] {remat.phase = "backward"} : tensor<3x3xf32> to tensor<2x3xf32>
// CHECK-DAG: %[[Z23:.*]] = linalg.fill {{.*}} -> tensor<2x3xf32>
// CHECK-DAG: %[[DY:.*]] = tensor.insert_slice %[[Z23]] into %[[DD]][1, 0] [2, 3] [1, 1] {remat.phase = "backward"}
// CHECK-DAG: %[[Z46:.*]] = linalg.fill {{.*}} -> tensor<4x6xf32>
// CHECK-DAG: %[[DX:.*]] = tensor.insert_slice %[[DS]] into %[[Z46]][1, 0] [2, 3] [1, 2] {remat.phase = "backward"}
// CHECK: return %{{.*}}, %[[DX]], %[[DY]] : tensor<f32>, tensor<4x6xf32>, tensor<3x3xf32>

// CHECK-LABEL: func.func @reshapes(
// CHECK: remat.seed
// CHECK: %[[DE:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x2x2xf32>)
// CHECK: %[[DC:.*]] = tensor.collapse_shape %[[DE]] {{\[}}[0, 1], [2]] {remat.phase = "backward"} : tensor<3x2x2xf32> into tensor<6x2xf32>
// CHECK: %[[DX:.*]] = tensor.expand_shape %[[DC]] {{\[}}[0, 1], [2]] output_shape [2, 3, 2] {remat.phase = "backward"} : tensor<6x2xf32> into tensor<2x3x2xf32>
// CHECK: return %{{.*}}, %[[DX]] : tensor<f32>, tensor<2x3x2xf32>

// CHECK-LABEL: func.func @pad_concat(
// CHECK: remat.seed
// CHECK: %[[DC:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x4xf32>)
// CHECK-DAG: %[[DP:.*]] = tensor.extract_slice %[[DC]][0, 0] [4, 3] [1, 1] {remat.phase = "backward"} : tensor<4x4xf32> to tensor<4x3xf32>
// CHECK-DAG: %[[DZ:.*]] = tensor.extract_slice %[[DC]][0, 3] [4, 1] [1, 1] {remat.phase = "backward"} : tensor<4x4xf32> to tensor<4x1xf32>
// CHECK-DAG: %[[DX:.*]] = tensor.extract_slice %[[DP]][1, 0] [2, 2] [1, 1] {remat.phase = "backward"} : tensor<4x3xf32> to tensor<2x2xf32>
// CHECK: return %{{.*}}, %[[DX]], %[[DZ]] : tensor<f32>, tensor<2x2xf32>, tensor<4x1xf32>

// CHECK-LABEL: func.func @extract(
// CHECK-SAME: -> (f32 {remat.loss}, tensor<2x3xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[A:.*]] = tensor.extract %{{.*}}[%[[C1]], %[[C2]]]
// CHECK-DAG: %[[B:.*]] = tensor.extract %{{.*}}[%[[C0]], %[[C0]]]
// CHECK: remat.seed
// CHECK-DAG: %[[DA:.*]] = arith.mulf %{{.*}}, %[[B]] {remat.phase = "backward"} : f32
// CHECK-DAG: %[[DB:.*]] = arith.mulf %{{.*}}, %[[A]] {remat.phase = "backward"} : f32
// CHECK-DAG: %[[IB:.*]] = tensor.insert %[[DB]] into %{{.*}}[%[[C0]], %[[C0]]]
// CHECK-DAG: %[[IA:.*]] = tensor.insert %[[DA]] into %{{.*}}[%[[C1]], %[[C2]]]
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} ins(%[[IA]] : tensor<2x3xf32>) outs(%[[IB]] : tensor<2x3xf32>)
// CHECK: return %{{.*}}, %[[DX]] : f32, tensor<2x3xf32>

// A concatenation written as a chain of insert_slices into tensor.empty
// (disjoint boxes): each piece's adjoint is a slice of the chain's adjoint;
// no zeroed copy of it is made per link.
// CHECK-LABEL: func.func @concat_chain(
// CHECK: remat.seed
// CHECK: %[[DC:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6xf32>)
// CHECK-NOT: tensor.insert_slice
// CHECK-DAG: %[[DX:.*]] = tensor.extract_slice %[[DC]][0, 0] [2, 3] [1, 1] {remat.phase = "backward"}
// CHECK-DAG: %[[DY:.*]] = tensor.extract_slice %[[DC]][0, 3] [2, 3] [1, 1] {remat.phase = "backward"}
// CHECK-NOT: tensor.insert_slice
// CHECK: return %{{.*}}, %[[DX]], %[[DY]]

// A padded copy read through a reshape (the exporter's group dimension over
// a spread input): the weight gradient pads and reshapes the source again
// instead of keeping the forward's padded copy.
// CHECK-LABEL: func.func @pad_reshaped(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>
// CHECK: %[[S:.*]] = tensor.insert_slice %[[X]] into %{{.*}}[0, 1] [2, 4] [1, 2] : tensor<2x4xf32> into tensor<2x9xf32>
// CHECK: %[[V:.*]] = tensor.expand_shape %[[S]]
// CHECK: remat.seed
// CHECK: %[[S2:.*]] = tensor.insert_slice %[[X]] into %{{.*}}[0, 1] [2, 4] [1, 2] {remat.phase = "backward"}
// CHECK: %[[V2:.*]] = tensor.expand_shape %[[S2]] {{.*}}remat.phase = "backward"
// CHECK: linalg.generic {{.*}} ins(%[[V2]], %{{.*}} : tensor<2x1x9xf32>, tensor<2x7xf32>) outs(%{{.*}} : tensor<3xf32>)

#id2 = affine_map<(i, j) -> (i, j)>
#all2 = affine_map<(i, j) -> ()>
#id3 = affine_map<(i, j, k) -> (i, j, k)>
#all3 = affine_map<(i, j, k) -> ()>
// loss = sum(insert_slice(extract_slice(x) into y)^2)
func.func @slices(%x: tensor<4x6xf32>, %y: tensor<3x3xf32>) -> (tensor<f32> {remat.loss}) {
  %s = tensor.extract_slice %x[1, 0] [2, 3] [1, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  %d = tensor.insert_slice %s into %y[1, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<3x3xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.mulf %u, %u : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
// loss = sum(expand(collapse(x))^2)
func.func @reshapes(%x: tensor<2x3x2xf32>) -> (tensor<f32> {remat.loss}) {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x2xf32> into tensor<6x2xf32>
  %e = tensor.expand_shape %c [[0, 1], [2]] output_shape [3, 2, 2] : tensor<6x2xf32> into tensor<3x2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id3, #all3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%e : tensor<3x2x2xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.mulf %u, %u : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
// loss = sum(concat(pad(x), z)^2)
func.func @pad_concat(%x: tensor<2x2xf32>, %z: tensor<4x1xf32>) -> (tensor<f32> {remat.loss}) {
  %pv = arith.constant 0.5 : f32
  %p = tensor.pad %x low[1, 0] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f32
  } : tensor<2x2xf32> to tensor<4x3xf32>
  %c = tensor.concat dim(1) %p, %z : (tensor<4x3xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%c : tensor<4x4xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.mulf %u, %u : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
// loss = x[1, 2] * x[0, 0] (an f32, no linalg at all)
func.func @extract(%x: tensor<2x3xf32>) -> (f32 {remat.loss}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = tensor.extract %x[%c1, %c2] : tensor<2x3xf32>
  %b = tensor.extract %x[%c0, %c0] : tensor<2x3xf32>
  %m = arith.mulf %a, %b : f32
  return %m : f32
}
// loss = sum(concat(x, y)^2), the concatenation as the exporter writes it
func.func @concat_chain(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> (tensor<f32> {remat.loss}) {
  %e = tensor.empty() : tensor<2x6xf32>
  %c0 = tensor.insert_slice %x into %e[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %c1 = tensor.insert_slice %y into %c0[0, 3] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%c1 : tensor<2x6xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.mulf %u, %u : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
// loss = sum(conv1d(spread(x), k)^2), spread = stride-2 insert into zeros,
// read through an expand_shape
func.func @pad_reshaped(%x: tensor<2x4xf32>, %k: tensor<3xf32> {remat.param}) -> (tensor<f32> {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<2x9xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x9xf32>) -> tensor<2x9xf32>
  %s = tensor.insert_slice %x into %zs[0, 1] [2, 4] [1, 2] : tensor<2x4xf32> into tensor<2x9xf32>
  %sv = tensor.expand_shape %s [[0, 1], [2]] output_shape [2, 1, 9] : tensor<2x9xf32> into tensor<2x1x9xf32>
  %ey = tensor.empty() : tensor<2x7xf32>
  %zy = linalg.fill ins(%zero : f32) outs(%ey : tensor<2x7xf32>) -> tensor<2x7xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, o, r) -> (n, 0, o + r)>, affine_map<(n, o, r) -> (r)>, affine_map<(n, o, r) -> (n, o)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%sv, %k : tensor<2x1x9xf32>, tensor<3xf32>) outs(%zy : tensor<2x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<2x7xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x7xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%u: f32, %acc: f32):
    %m = arith.mulf %u, %u : f32
    %a = arith.addf %acc, %m : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
