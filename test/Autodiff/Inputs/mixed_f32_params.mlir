// Mixed precision: an f32 parameter widened with arith.extf inside a body
// that computes in f64 (the f32 gradient is the f64 adjoint truncated), next
// to an f64 parameter. eps 1e-3 (an f32 perturbation), rtol 1e-4.
// gradcheck: eps=1e-3 rtol=1e-4
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%w: tensor<2x3xf32>, %x: tensor<2x3xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%w, %x : tensor<2x3xf32>, tensor<2x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f32, %b: f64, %acc: f64):
    %a64 = arith.extf %a : f32 to f64
    %m = arith.mulf %a64, %b : f64
    %t = math.tanh %m : f64
    %s = arith.addf %t, %a64 : f64
    %r = arith.addf %acc, %s : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
