// tensor.collapse_shape and tensor.expand_shape: x (2x3x2) collapsed to 6x2,
// multiplied by w (6x2), expanded to 3x2x2; loss = sum(e * e * k) with k read
// through an expand of a 12-vector input.
#id = affine_map<(i, j) -> (i, j)>
#id3 = affine_map<(i, j, k) -> (i, j, k)>
#all3 = affine_map<(i, j, k) -> ()>
func.func @step(%x: tensor<2x3x2xf64> {remat.param}, %w: tensor<6x2xf64> {remat.param}, %k: tensor<12xf64>)
    -> (tensor<f64> {remat.loss}) {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x2xf64> into tensor<6x2xf64>
  %em = tensor.empty() : tensor<6x2xf64>
  %m = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %w : tensor<6x2xf64>, tensor<6x2xf64>) outs(%em : tensor<6x2xf64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %p = arith.mulf %u, %v : f64
    linalg.yield %p : f64
  } -> tensor<6x2xf64>
  %e = tensor.expand_shape %m [[0, 1], [2]] output_shape [3, 2, 2] : tensor<6x2xf64> into tensor<3x2x2xf64>
  %kk = tensor.expand_shape %k [[0, 1, 2]] output_shape [3, 2, 2] : tensor<12xf64> into tensor<3x2x2xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id3, #id3, #all3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%e, %kk : tensor<3x2x2xf64>, tensor<3x2x2xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%u: f64, %v: f64, %acc: f64):
    %uu = arith.mulf %u, %u : f64
    %p = arith.mulf %uu, %v : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
