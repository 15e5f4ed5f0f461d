// linalg.fill: a constant fill (0.25) as the init a matmul accumulates into,
// and a fill of a parameter's value (s, rank 0, read with tensor.extract),
// whose gradient is the sum of the fill's adjoint; the fill of s is the init
// of a second matmul. loss = sum(y1 * y1) + sum(y2 * y1).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%a: tensor<2x3xf64>, %b: tensor<3x2xf64>, %s: tensor<f64>) -> (tensor<f64> {remat.loss}) {
  %q = arith.constant 0.25 : f64
  %e1 = tensor.empty() : tensor<2x2xf64>
  %f1 = linalg.fill ins(%q : f64) outs(%e1 : tensor<2x2xf64>) -> tensor<2x2xf64>
  %y1 = linalg.matmul ins(%a, %b : tensor<2x3xf64>, tensor<3x2xf64>) outs(%f1 : tensor<2x2xf64>) -> tensor<2x2xf64>
  %sv = tensor.extract %s[] : tensor<f64>
  %e2 = tensor.empty() : tensor<2x2xf64>
  %f2 = linalg.fill ins(%sv : f64) outs(%e2 : tensor<2x2xf64>) -> tensor<2x2xf64>
  %y2 = linalg.matmul ins(%a, %b : tensor<2x3xf64>, tensor<3x2xf64>) outs(%f2 : tensor<2x2xf64>) -> tensor<2x2xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y1, %y2 : tensor<2x2xf64>, tensor<2x2xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%u: f64, %v: f64, %acc: f64):
    %uu = arith.mulf %u, %u : f64
    %vu = arith.mulf %v, %u : f64
    %w = arith.addf %uu, %vu : f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
