// linalg.conv_2d_nhwc_hwcf with strides [2, 1] and dilations [1, 2]:
// input 1x6x7x2, filter 2x2x2x3 -> 1x3x5x3, plus a bias broadcast over
// n, h, w; loss = sum(relu(y + b)^2), b and y distinct enough to keep
// relu off its kink.
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#bias = affine_map<(n, h, w, c) -> (c)>
#all = affine_map<(n, h, w, c) -> ()>
func.func @step(%x: tensor<1x6x7x2xf64>, %f: tensor<2x2x2x3xf64>, %b: tensor<3xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x3x5x3xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x3x5x3xf64>) -> tensor<1x3x5x3xf64>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
      ins(%x, %f : tensor<1x6x7x2xf64>, tensor<2x2x2x3xf64>) outs(%z : tensor<1x3x5x3xf64>) -> tensor<1x3x5x3xf64>
  %e1 = tensor.empty() : tensor<1x3x5x3xf64>
  %r = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %b : tensor<1x3x5x3xf64>, tensor<3xf64>) outs(%e1 : tensor<1x3x5x3xf64>) {
  ^bb0(%v: f64, %bv: f64, %o: f64):
    %s = arith.addf %v, %bv : f64
    %m = arith.maximumf %s, %zero : f64
    linalg.yield %m : f64
  } -> tensor<1x3x5x3xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%r : tensor<1x3x5x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%v: f64, %acc: f64):
    %sq = arith.mulf %v, %v : f64
    %s = arith.addf %acc, %sq : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
