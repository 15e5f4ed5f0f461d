// One generic computing two reductions (sum and sum of squares), combined
// into a variance-like value.
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<3x4xf64>) -> (tensor<f64> {remat.loss}) {
  %z = arith.constant 0.0 : f64
  %e1 = tensor.empty() : tensor<3xf64>
  %f1 = linalg.fill ins(%z : f64) outs(%e1 : tensor<3xf64>) -> tensor<3xf64>
  %e2 = tensor.empty() : tensor<3xf64>
  %f2 = linalg.fill ins(%z : f64) outs(%e2 : tensor<3xf64>) -> tensor<3xf64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%f1, %f2 : tensor<3xf64>, tensor<3xf64>) {
  ^bb0(%a: f64, %s1: f64, %s2: f64):
    %n1 = arith.addf %s1, %a : f64
    %aa = arith.mulf %a, %a : f64
    %n2 = arith.addf %s2, %aa : f64
    linalg.yield %n1, %n2 : f64, f64
  } -> (tensor<3xf64>, tensor<3xf64>)
  %e3 = tensor.empty() : tensor<3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%r#0, %r#1 : tensor<3xf64>, tensor<3xf64>) outs(%e3 : tensor<3xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %q = arith.constant 0.25 : f64
    %m = arith.mulf %a, %q : f64
    %mm = arith.mulf %m, %m : f64
    %v = arith.subf %b, %mm : f64
    linalg.yield %v : f64
  } -> tensor<3xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%y : tensor<3xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
