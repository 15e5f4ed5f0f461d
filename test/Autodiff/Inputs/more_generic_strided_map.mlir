// An input read through a strided map (o) -> (2 * o + 1): odd elements only,
// the others get a zero gradient.
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<9xf64>) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(o) -> (2 * o + 1)>, affine_map<(o) -> (o)>], iterator_types = ["parallel"]}
      ins(%x : tensor<9xf64>) outs(%e : tensor<4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %m = arith.mulf %a, %a : f64
    linalg.yield %m : f64
  } -> tensor<4xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%y : tensor<4xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
