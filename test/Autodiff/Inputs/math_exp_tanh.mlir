// math.exp and math.tanh: t = tanh(x) * exp(y * 0.5) + exp(-x*x),
// loss = sum(t * t).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x4xf64>, %y: tensor<2x4xf64>) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<2x4xf64>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<2x4xf64>, tensor<2x4xf64>) outs(%e : tensor<2x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %th = math.tanh %a : f64
    %half = arith.constant 0.5 : f64
    %bh = arith.mulf %b, %half : f64
    %ex = math.exp %bh : f64
    %p = arith.mulf %th, %ex : f64
    %aa = arith.mulf %a, %a : f64
    %naa = arith.negf %aa : f64
    %g = math.exp %naa : f64
    %s = arith.addf %p, %g : f64
    linalg.yield %s : f64
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
