// linalg.dot into a rank-0 fill, expanded to 1 element.
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<4xf64>, %w: tensor<4xf64>) -> (tensor<f64> {remat.loss}) {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<f64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<f64>) -> tensor<f64>
  %d = linalg.dot ins(%x, %w : tensor<4xf64>, tensor<4xf64>) outs(%f : tensor<f64>) -> tensor<f64>
  %y = tensor.expand_shape %d [] output_shape [1] : tensor<f64> into tensor<1xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%y : tensor<1xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
