// math_erf.mlir differentiated by hand, for the upstream runner's self-test
// (math.erf through libm): t = x/2 (1 + erf(c x)), dL/dx = 2 t dt/dx,
// dt/dx = (1 + erf(c x))/2 + x/2 * 2/sqrt(pi) * c * exp(-(c x)^2).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x4xf64>) -> (tensor<f64> {remat.loss}, tensor<2x4xf64>) {
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
  %seed = arith.constant {remat.seed} dense<1.0> : tensor<f64>
  %e1 = tensor.empty() : tensor<2x4xf64>
  %g = linalg.generic {indexing_maps = [#id, #id, #all, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %t, %seed : tensor<2x4xf64>, tensor<2x4xf64>, tensor<f64>) outs(%e1 : tensor<2x4xf64>) {
  ^bb0(%a: f64, %tv: f64, %s: f64, %o: f64):
    %c = arith.constant 0.70710678118654757 : f64
    %ac = arith.mulf %a, %c : f64
    %er = math.erf %ac : f64
    %one = arith.constant 1.0 : f64
    %p = arith.addf %er, %one : f64
    %half = arith.constant 0.5 : f64
    %d1 = arith.mulf %p, %half : f64
    %ac2 = arith.mulf %ac, %ac : f64
    %nac2 = arith.negf %ac2 : f64
    %ex = math.exp %nac2 : f64
    %k = arith.constant 0.56418958354775628 : f64
    %kc = arith.mulf %k, %c : f64
    %d2a = arith.mulf %a, %kc : f64
    %d2 = arith.mulf %d2a, %ex : f64
    %d = arith.addf %d1, %d2 : f64
    %two = arith.constant 2.0 : f64
    %t2 = arith.mulf %tv, %two : f64
    %gd = arith.mulf %t2, %d : f64
    %r = arith.mulf %gd, %s : f64
    linalg.yield %r : f64
  } -> tensor<2x4xf64>
  return %loss, %g : tensor<f64>, tensor<2x4xf64>
}
