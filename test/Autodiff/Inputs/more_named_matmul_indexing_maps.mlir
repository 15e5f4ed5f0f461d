// linalg.matmul with indexing_maps (A read transposed, B read transposed).
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<3x2xf64>, %w: tensor<4x3xf64>) -> (tensor<f64> {remat.loss}) {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<2x4xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<2x4xf64>) -> tensor<2x4xf64>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<3x2xf64>, tensor<4x3xf64>) outs(%f : tensor<2x4xf64>) -> tensor<2x4xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x4xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
