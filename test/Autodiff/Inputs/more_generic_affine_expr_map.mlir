// A 1-D convolution written as linalg.generic: the input map (o, k) -> (o + k)
// is an affine expression, not a projection.
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<7xf64>, %k: tensor<3xf64>) -> (tensor<f64> {remat.loss}) {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<5xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<5xf64>) -> tensor<5xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(o, k) -> (o + k)>, affine_map<(o, k) -> (k)>, affine_map<(o, k) -> (o)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %k : tensor<7xf64>, tensor<3xf64>) outs(%f : tensor<5xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<5xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%y : tensor<5xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
