// linalg.conv_1d_nwc_wcf with stride 2.
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<1x8x2xf64>, %k: tensor<3x2x2xf64>) -> (tensor<f64> {remat.loss}) {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x3x2xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<1x3x2xf64>) -> tensor<1x3x2xf64>
  %y = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
      ins(%x, %k : tensor<1x8x2xf64>, tensor<3x2x2xf64>) outs(%f : tensor<1x3x2xf64>) -> tensor<1x3x2xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x3x2xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
