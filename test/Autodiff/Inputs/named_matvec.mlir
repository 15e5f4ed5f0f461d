// linalg.matvec: y = A x (into a zero fill), loss = sum(y * y) + sum(y).
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @step(%a: tensor<3x4xf64>, %x: tensor<4xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<3xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<3xf64>) -> tensor<3xf64>
  %y = linalg.matvec ins(%a, %x : tensor<3x4xf64>, tensor<4xf64>) outs(%f : tensor<3xf64>) -> tensor<3xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%y : tensor<3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%v: f64, %acc: f64):
    %sq = arith.mulf %v, %v : f64
    %w = arith.addf %sq, %v : f64
    %s = arith.addf %acc, %w : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
