// Two tensor.insert_slice into overlapping regions (the second strided):
// the first slice's overwritten elements get no gradient.
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<4x4xf64>, %p: tensor<2x2xf64>, %q: tensor<2x2xf64>) -> (tensor<f64> {remat.loss}) {
  %a = tensor.insert_slice %p into %x[1, 1] [2, 2] [1, 1] : tensor<2x2xf64> into tensor<4x4xf64>
  %y = tensor.insert_slice %q into %a[2, 1] [2, 2] [1, 2] : tensor<2x2xf64> into tensor<4x4xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<4x4xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
