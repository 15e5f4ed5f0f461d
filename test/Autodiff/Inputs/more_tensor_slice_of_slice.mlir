// tensor.extract_slice of an extract_slice (strides 2 and 3).
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<4x6xf64>) -> (tensor<f64> {remat.loss}) {
  %a = tensor.extract_slice %x[1, 0] [3, 6] [1, 1] : tensor<4x6xf64> to tensor<3x6xf64>
  %y = tensor.extract_slice %a[0, 1] [2, 2] [2, 3] : tensor<3x6xf64> to tensor<2x2xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x2xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
