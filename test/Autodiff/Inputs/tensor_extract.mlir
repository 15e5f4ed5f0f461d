// tensor.extract: the loss is an f64 (not a tensor), the tensor.extract of a
// rank-0 reduction, plus an element picked from a computed tensor
// (y[1, 2]) and one picked from a parameter directly (x[0, 1]); the picked
// values are used in scalar arith outside any linalg op.
// loss = sum(y * y) + y[1, 2] * x[0, 1] + exp(x[0, 1]).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x3xf64>, %w: tensor<2x3xf64>) -> (f64 {remat.loss}) {
  %e = tensor.empty() : tensor<2x3xf64>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<2x3xf64>, tensor<2x3xf64>) outs(%e : tensor<2x3xf64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %m = arith.mulf %u, %v : f64
    %s = arith.addf %m, %v : f64
    linalg.yield %s : f64
  } -> tensor<2x3xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %sum = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%u: f64, %acc: f64):
    %m = arith.mulf %u, %u : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %s0 = tensor.extract %sum[] : tensor<f64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %y12 = tensor.extract %y[%c1, %c2] : tensor<2x3xf64>
  %x01 = tensor.extract %x[%c0, %c1] : tensor<2x3xf64>
  %p = arith.mulf %y12, %x01 : f64
  %ex = math.exp %x01 : f64
  %l1 = arith.addf %s0, %p : f64
  %loss = arith.addf %l1, %ex : f64
  return %loss : f64
}
