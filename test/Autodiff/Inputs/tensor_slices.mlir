// tensor.extract_slice (strided, and rank-reducing) and tensor.insert_slice
// (of a computed slice into a computed destination: both get gradients; the
// overwritten part of the destination gets none). tensor.empty as an insert
// destination too.
// a = x[0:2, 1:4:1] (2x3), r = x[1, 0:5:2] (rank-reducing, stride 2, 3),
// d = insert (a * a) into (y * 2) at [1, 1], z = insert r into empty 3 at [0],
// loss = sum(d * d) + sum(z * r).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @step(%x: tensor<3x5xf64>, %y: tensor<4x4xf64>) -> (tensor<f64> {remat.loss}) {
  %a = tensor.extract_slice %x[0, 1] [2, 3] [1, 1] : tensor<3x5xf64> to tensor<2x3xf64>
  %r = tensor.extract_slice %x[1, 0] [1, 3] [1, 2] : tensor<3x5xf64> to tensor<3xf64>
  %ea = tensor.empty() : tensor<2x3xf64>
  %aa = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x3xf64>) outs(%ea : tensor<2x3xf64>) {
  ^bb0(%u: f64, %o: f64):
    %m = arith.mulf %u, %u : f64
    linalg.yield %m : f64
  } -> tensor<2x3xf64>
  %ey = tensor.empty() : tensor<4x4xf64>
  %y2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x4xf64>) outs(%ey : tensor<4x4xf64>) {
  ^bb0(%u: f64, %o: f64):
    %two = arith.constant 2.0 : f64
    %m = arith.mulf %u, %two : f64
    linalg.yield %m : f64
  } -> tensor<4x4xf64>
  %d = tensor.insert_slice %aa into %y2[1, 1] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<4x4xf64>
  %ez = tensor.empty() : tensor<3xf64>
  %z = tensor.insert_slice %r into %ez[0] [3] [1] : tensor<3xf64> into tensor<3xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<4x4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%u: f64, %acc: f64):
    %m = arith.mulf %u, %u : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%z, %r : tensor<3xf64>, tensor<3xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%u: f64, %v: f64, %acc: f64):
    %m = arith.mulf %u, %v : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
