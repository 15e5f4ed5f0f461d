// The forward returns the loss and another result (y = tanh(x)); a caller
// reads both. The step returns the loss, the gradient, then y; the call of
// @step gets those types and the caller reads y at its new position.
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @step(%x: tensor<4xf64>) -> (tensor<f64> {remat.loss}, tensor<4xf64>) {
  %e = tensor.empty() : tensor<4xf64>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf64>) outs(%e : tensor<4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %t = math.tanh %a : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%y : tensor<4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %m = arith.mulf %a, %a : f64
    %r = arith.addf %acc, %m : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %s, %y : tensor<f64>, tensor<4xf64>
}
func.func @caller(%x: tensor<4xf64>) -> (f64, tensor<4xf64>) {
  %r:2 = func.call @step(%x) : (tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>)
  %v = tensor.extract %r#0[] : tensor<f64>
  return %v, %r#1 : f64, tensor<4xf64>
}
