// linalg.pooling_nchw_max, 2x2 windows with stride 1 (overlapping: one input
// element is the maximum of several windows and accumulates their adjoints),
// and a second pooling with stride 2 and dilation 2 on the same input. The
// inputs are distinct, so every maximum is unique (argmax well defined).
// loss = sum(p1 * k1) + sum(p2 * p2).
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#all = affine_map<(n, c, h, w) -> ()>
func.func @step(%x: tensor<1x2x5x5xf64> {remat.param}, %k1: tensor<1x2x4x4xf64>) -> (tensor<f64> {remat.loss}) {
  %ninf = arith.constant -1.0e30 : f64
  %win = tensor.empty() : tensor<2x2xf64>
  %e1 = tensor.empty() : tensor<1x2x4x4xf64>
  %i1 = linalg.fill ins(%ninf : f64) outs(%e1 : tensor<1x2x4x4xf64>) -> tensor<1x2x4x4xf64>
  %p1 = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %win : tensor<1x2x5x5xf64>, tensor<2x2xf64>) outs(%i1 : tensor<1x2x4x4xf64>) -> tensor<1x2x4x4xf64>
  %e2 = tensor.empty() : tensor<1x2x2x2xf64>
  %i2 = linalg.fill ins(%ninf : f64) outs(%e2 : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %p2 = linalg.pooling_nchw_max {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x2x5x5xf64>, tensor<2x2xf64>) outs(%i2 : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%p1, %k1 : tensor<1x2x4x4xf64>, tensor<1x2x4x4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%v: f64, %kv: f64, %acc: f64):
    %m = arith.mulf %v, %kv : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%p2 : tensor<1x2x2x2xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%v: f64, %acc: f64):
    %m = arith.mulf %v, %v : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
