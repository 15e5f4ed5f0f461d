// The loss function calls a pure helper function twice (square(square(x))):
// differentiated after remat-inline-calls, as the remat pipelines run it
// (remat-autodiff alone rejects the call: autodiff-errors.mlir).
// loss = sum(x^4 * x).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @square(%x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %e = tensor.empty() : tensor<2x3xf64>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf64>) outs(%e : tensor<2x3xf64>) {
  ^bb0(%a: f64, %o: f64):
    %m = arith.mulf %a, %a : f64
    linalg.yield %m : f64
  } -> tensor<2x3xf64>
  return %y : tensor<2x3xf64>
}
func.func @step(%x: tensor<2x3xf64>) -> (tensor<f64> {remat.loss}) {
  %s = func.call @square(%x) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %s2 = func.call @square(%s) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%s2, %x : tensor<2x3xf64>, tensor<2x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %r = arith.addf %acc, %m : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
