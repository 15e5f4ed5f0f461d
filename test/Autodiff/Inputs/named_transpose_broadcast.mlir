// linalg.transpose (permutation [1, 2, 0]) and linalg.broadcast (a 3-vector
// broadcast to 4x3x2 over dimensions [0, 2]): y = transpose(x) * broadcast(b),
// loss = sum(y * y + y).
#id = affine_map<(i, j, k) -> (i, j, k)>
#all = affine_map<(i, j, k) -> ()>
func.func @step(%x: tensor<2x4x3xf64>, %b: tensor<3xf64>) -> (tensor<f64> {remat.loss}) {
  %et = tensor.empty() : tensor<4x3x2xf64>
  %t = linalg.transpose ins(%x : tensor<2x4x3xf64>) outs(%et : tensor<4x3x2xf64>) permutation = [1, 2, 0]
  %eb = tensor.empty() : tensor<4x3x2xf64>
  %bb = linalg.broadcast ins(%b : tensor<3xf64>) outs(%eb : tensor<4x3x2xf64>) dimensions = [0, 2]
  %e = tensor.empty() : tensor<4x3x2xf64>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%t, %bb : tensor<4x3x2xf64>, tensor<4x3x2xf64>) outs(%e : tensor<4x3x2xf64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %m = arith.mulf %u, %v : f64
    linalg.yield %m : f64
  } -> tensor<4x3x2xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<4x3x2xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%u: f64, %acc: f64):
    %uu = arith.mulf %u, %u : f64
    %w = arith.addf %uu, %u : f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
