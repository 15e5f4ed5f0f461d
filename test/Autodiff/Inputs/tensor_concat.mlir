// tensor.concat along dimension 1 of three operands (one of them used twice)
// and along dimension 0; loss = sum(c * c * k) + sum(d).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%a: tensor<2x2xf64> {remat.param}, %b: tensor<2x3xf64> {remat.param}, %k: tensor<2x7xf64>)
    -> (tensor<f64> {remat.loss}) {
  %c = tensor.concat dim(1) %a, %b, %a : (tensor<2x2xf64>, tensor<2x3xf64>, tensor<2x2xf64>) -> tensor<2x7xf64>
  %d = tensor.concat dim(0) %a, %a : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<4x2xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%c, %k : tensor<2x7xf64>, tensor<2x7xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%u: f64, %v: f64, %acc: f64):
    %uu = arith.mulf %u, %u : f64
    %m = arith.mulf %uu, %v : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<4x2xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%u: f64, %acc: f64):
    %s = arith.addf %acc, %u : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
