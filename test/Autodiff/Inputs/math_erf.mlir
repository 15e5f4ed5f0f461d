// math.erf (GELU-style): t = x * 0.5 * (1 + erf(x * 0.7071)), loss = sum(t * t).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x4xf64>) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<2x4xf64>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x4xf64>) outs(%e : tensor<2x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %c = arith.constant 0.70710678118654757 : f64
    %ac = arith.mulf %a, %c : f64
    %er = math.erf %ac : f64
    %one = arith.constant 1.0 : f64
    %p = arith.addf %er, %one : f64
    %half = arith.constant 0.5 : f64
    %ah = arith.mulf %a, %half : f64
    %r = arith.mulf %ah, %p : f64
    linalg.yield %r : f64
  } -> tensor<2x4xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<2x4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %aa = arith.mulf %a, %a : f64
    %s = arith.addf %acc, %aa : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
