// A reduction whose combiner subtracts from the previous value,
// y_i = c_i - sum_j x_ij^2, accumulated into the parameter c; loss = sum(y),
// so dL/dc_i = 1 and dL/dx_ij = -2 x_ij.
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (i)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @step(%x: tensor<2x3xf64>, %c: tensor<2xf64>) -> (tensor<f64> {remat.loss}) {
  %y = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x3xf64>) outs(%c : tensor<2xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %m = arith.mulf %a, %a : f64
    %s = arith.subf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<2xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%y : tensor<2xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.addf %acc, %a : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
