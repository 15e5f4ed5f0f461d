// linalg.elementwise with kind mul and exp.
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<2x3xf64>, %w: tensor<2x3xf64>) -> (tensor<f64> {remat.loss}) {
  %e1 = tensor.empty() : tensor<2x3xf64>
  %a = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%x, %w : tensor<2x3xf64>, tensor<2x3xf64>) outs(%e1 : tensor<2x3xf64>) -> tensor<2x3xf64>
  %e2 = tensor.empty() : tensor<2x3xf64>
  %y = linalg.elementwise kind=#linalg.elementwise_kind<exp> ins(%a : tensor<2x3xf64>) outs(%e2 : tensor<2x3xf64>) -> tensor<2x3xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x3xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
