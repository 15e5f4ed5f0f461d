// linalg.pooling_nhwc_sum with a 2x3 window, strides [1, 2], dilations
// [2, 1] (6x7 -> 4x3), into a zero fill, and an average pool as the sum
// times 1/6; loss = sum(avg * avg * k).
#id = affine_map<(n, h, w, c) -> (n, h, w, c)>
#all = affine_map<(n, h, w, c) -> ()>
func.func @step(%x: tensor<1x6x7x2xf64> {remat.param}, %k: tensor<1x4x3x2xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %win = tensor.empty() : tensor<2x3xf64>
  %e = tensor.empty() : tensor<1x4x3x2xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x4x3x2xf64>) -> tensor<1x4x3x2xf64>
  %s = linalg.pooling_nhwc_sum {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>}
      ins(%x, %win : tensor<1x6x7x2xf64>, tensor<2x3xf64>) outs(%z : tensor<1x4x3x2xf64>) -> tensor<1x4x3x2xf64>
  %e1 = tensor.empty() : tensor<1x4x3x2xf64>
  %avg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x4x3x2xf64>) outs(%e1 : tensor<1x4x3x2xf64>) {
  ^bb0(%v: f64, %o: f64):
    %c = arith.constant 0.16666666666666666 : f64
    %m = arith.mulf %v, %c : f64
    linalg.yield %m : f64
  } -> tensor<1x4x3x2xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%avg, %k : tensor<1x4x3x2xf64>, tensor<1x4x3x2xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%v: f64, %kv: f64, %acc: f64):
    %sq = arith.mulf %v, %v : f64
    %m = arith.mulf %sq, %kv : f64
    %r = arith.addf %acc, %m : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
