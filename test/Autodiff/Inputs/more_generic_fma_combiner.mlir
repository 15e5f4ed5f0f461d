// A reduction whose combiner is math.fma(a, b, acc), into a parameter init.
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<3x4xf64>, %w: tensor<4xf64>, %c: tensor<3xf64>) -> (tensor<f64> {remat.loss}) {
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<3x4xf64>, tensor<4xf64>) outs(%c : tensor<3xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %s = math.fma %a, %b, %acc : f64
    linalg.yield %s : f64
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
