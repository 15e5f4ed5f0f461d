// A stride-2 transposed convolution as the exporter writes it: relu(x) is
// spread into a zero fill (insert_slice with stride 2), viewed with a group
// dimension (expand_shape) and convolved. The weight gradient re-spreads
// relu(x) in the backward instead of keeping the spread copy.
// loss = sum(y^2)
#id = affine_map<(d0, d1) -> (d0, d1)>
#in = affine_map<(d0, d1, d2) -> (d0, 0, d1 + d2)>
#w = affine_map<(d0, d1, d2) -> (d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
#red = affine_map<(d0, d1) -> ()>
func.func @step(%x: tensor<2x4xf64> {remat.param}, %k: tensor<3xf64> {remat.param}) -> (tensor<f64> {remat.loss}) {
  %c0 = arith.constant 0.0 : f64
  %er = tensor.empty() : tensor<2x4xf64>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x4xf64>) outs(%er : tensor<2x4xf64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.maximumf %in, %c0 : f64
    linalg.yield %m : f64
  } -> tensor<2x4xf64>
  %es = tensor.empty() : tensor<2x9xf64>
  %zs = linalg.fill ins(%c0 : f64) outs(%es : tensor<2x9xf64>) -> tensor<2x9xf64>
  %s = tensor.insert_slice %r into %zs[0, 1] [2, 4] [1, 2] : tensor<2x4xf64> into tensor<2x9xf64>
  %sv = tensor.expand_shape %s [[0, 1], [2]] output_shape [2, 1, 9] : tensor<2x9xf64> into tensor<2x1x9xf64>
  %ey = tensor.empty() : tensor<2x7xf64>
  %zy = linalg.fill ins(%c0 : f64) outs(%ey : tensor<2x7xf64>) -> tensor<2x7xf64>
  %y = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sv, %k : tensor<2x1x9xf64>, tensor<3xf64>) outs(%zy : tensor<2x7xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %p = arith.mulf %a, %b : f64
    %q = arith.addf %o, %p : f64
    linalg.yield %q : f64
  } -> tensor<2x7xf64>
  %e = tensor.empty() : tensor<f64>
  %z = linalg.fill ins(%c0 : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<2x7xf64>) outs(%z : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.mulf %in, %in : f64
    %s2 = arith.addf %out, %m : f64
    linalg.yield %s2 : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
