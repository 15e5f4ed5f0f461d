// linalg.batch_matmul accumulating into a parameter-derived init (c + a b):
// loss = sum(y * y * k), k a fixed input.
#id = affine_map<(b, i, j) -> (b, i, j)>
#all = affine_map<(b, i, j) -> ()>
func.func @step(%a: tensor<2x2x3xf64> {remat.param}, %b: tensor<2x3x2xf64> {remat.param},
                %c: tensor<2x2x2xf64> {remat.param}, %k: tensor<2x2x2xf64>) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<2x2x2xf64>
  %c2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : tensor<2x2x2xf64>) outs(%e : tensor<2x2x2xf64>) {
  ^bb0(%v: f64, %o: f64):
    linalg.yield %v : f64
  } -> tensor<2x2x2xf64>
  %y = linalg.batch_matmul ins(%a, %b : tensor<2x2x3xf64>, tensor<2x3x2xf64>) outs(%c2 : tensor<2x2x2xf64>) -> tensor<2x2x2xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y, %k : tensor<2x2x2xf64>, tensor<2x2x2xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%v: f64, %kv: f64, %acc: f64):
    %sq = arith.mulf %v, %v : f64
    %m = arith.mulf %sq, %kv : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
