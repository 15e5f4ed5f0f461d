// linalg.matmul in a two-layer tanh network, every argument a parameter
// (none marked): h = tanh(x w1), o = h w2, loss = sum(o * o) / 2. Each
// matmul accumulates into a zero fill.
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<3x4xf64>, %w1: tensor<4x5xf64>, %w2: tensor<5x2xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<3x5xf64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<3x5xf64>) -> tensor<3x5xf64>
  %h0 = linalg.matmul ins(%x, %w1 : tensor<3x4xf64>, tensor<4x5xf64>) outs(%f0 : tensor<3x5xf64>) -> tensor<3x5xf64>
  %e1 = tensor.empty() : tensor<3x5xf64>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : tensor<3x5xf64>) outs(%e1 : tensor<3x5xf64>) {
  ^bb0(%a: f64, %o: f64):
    %t = math.tanh %a : f64
    linalg.yield %t : f64
  } -> tensor<3x5xf64>
  %e2 = tensor.empty() : tensor<3x2xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<3x2xf64>) -> tensor<3x2xf64>
  %o = linalg.matmul ins(%h, %w2 : tensor<3x5xf64>, tensor<5x2xf64>) outs(%f2 : tensor<3x2xf64>) -> tensor<3x2xf64>
  %e3 = tensor.empty() : tensor<f64>
  %f3 = linalg.fill ins(%zero : f64) outs(%e3 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%o : tensor<3x2xf64>) outs(%f3 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %sq = arith.mulf %a, %a : f64
    %half = arith.constant 0.5 : f64
    %h2 = arith.mulf %sq, %half : f64
    %s = arith.addf %acc, %h2 : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
