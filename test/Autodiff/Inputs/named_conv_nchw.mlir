// linalg.conv_2d_nchw_fchw with strides 2 and dilations 2: input 1x2x7x7,
// filter 2x2x2x2 -> 1x2x3x3; loss = sum(y * y * k), k a fixed input.
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#all = affine_map<(n, c, h, w) -> ()>
func.func @step(%x: tensor<1x2x7x7xf64> {remat.param}, %f: tensor<2x2x2x2xf64> {remat.param},
                %k: tensor<1x2x3x3xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x2x3x3xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x2x3x3xf64>) -> tensor<1x2x3x3xf64>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %f : tensor<1x2x7x7xf64>, tensor<2x2x2x2xf64>) outs(%z : tensor<1x2x3x3xf64>) -> tensor<1x2x3x3xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y, %k : tensor<1x2x3x3xf64>, tensor<1x2x3x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%v: f64, %kv: f64, %acc: f64):
    %sq = arith.mulf %v, %v : f64
    %m = arith.mulf %sq, %kv : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
