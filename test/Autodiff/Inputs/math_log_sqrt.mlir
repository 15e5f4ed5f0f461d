// math.log, math.sqrt, math.rsqrt on positive arguments:
// t = log(x) * sqrt(y) + rsqrt(x + y), loss = sum(t * t + t).
// gradcheck: range=0.5,2.0
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<3x3xf64>, %y: tensor<3x3xf64>) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<3x3xf64>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<3x3xf64>, tensor<3x3xf64>) outs(%e : tensor<3x3xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %l = math.log %a : f64
    %s = math.sqrt %b : f64
    %p = arith.mulf %l, %s : f64
    %ab = arith.addf %a, %b : f64
    %r = math.rsqrt %ab : f64
    %v = arith.addf %p, %r : f64
    linalg.yield %v : f64
  } -> tensor<3x3xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<3x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %aa = arith.mulf %a, %a : f64
    %v = arith.addf %aa, %a : f64
    %s = arith.addf %acc, %v : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
