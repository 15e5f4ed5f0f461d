// linalg.pooling_nchw_sum, 3x3 window, stride 1 (overlapping).
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<1x2x4x4xf64>) -> (tensor<f64> {remat.loss}) {
  %n = arith.constant 0.0 : f64
  %w = tensor.empty() : tensor<3x3xf64>
  %e = tensor.empty() : tensor<1x2x2x2xf64>
  %f = linalg.fill ins(%n : f64) outs(%e : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %y = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x4x4xf64>, tensor<3x3xf64>) outs(%f : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x2x2x2xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
