// An arith.bitcast round trip (f64 -> i64 -> f64) is the identity, in a body
// and on a scalar outside bodies: the derivative passes through it exactly
// (issue 23: it was treated as carrying no derivative, a zero gradient).
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @step(%x: tensor<4xf64> {remat.param}, %y: tensor<f64> {remat.param})
    -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %ys = tensor.extract %y[] : tensor<f64>
  %ybits = arith.bitcast %ys : f64 to i64
  %yback = arith.bitcast %ybits : i64 to f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%x : tensor<4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %bits = arith.bitcast %a : f64 to i64
    %back = arith.bitcast %bits : i64 to f64
    %sq = arith.mulf %back, %back : f64
    %t = arith.mulf %sq, %yback : f64
    %s = arith.addf %acc, %t : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
