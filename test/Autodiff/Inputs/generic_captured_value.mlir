// Values defined outside a linalg.generic and used inside its body (not
// operands): r0 = r[0] (a tensor.extract of a computed tensor) and s (an f64
// computed from a parameter with scalar arith) scale the terms of the loss
// reduction. Their adjoints are sums over the body's iterations (before
// 449a54e they were silently 0).
// r = x w (matvec), loss = sum_j (y_j * r0 + s * y_j^2), s = exp(x[1, 1]).
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @step(%x: tensor<3x4xf64>, %w: tensor<4xf64>, %y: tensor<4xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %er = tensor.empty() : tensor<3xf64>
  %fr = linalg.fill ins(%zero : f64) outs(%er : tensor<3xf64>) -> tensor<3xf64>
  %r = linalg.matvec ins(%x, %w : tensor<3x4xf64>, tensor<4xf64>) outs(%fr : tensor<3xf64>) -> tensor<3xf64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r0 = tensor.extract %r[%c0] : tensor<3xf64>
  %x11 = tensor.extract %x[%c1, %c1] : tensor<3x4xf64>
  %s = math.exp %x11 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%y : tensor<4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %m = arith.mulf %a, %r0 : f64
    %aa = arith.mulf %a, %a : f64
    %sa = arith.mulf %s, %aa : f64
    %t = arith.addf %m, %sa : f64
    %u = arith.addf %acc, %t : f64
    linalg.yield %u : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
