// A small CNN classifier end to end: conv_2d_nchw_fchw (+ bias broadcast,
// relu), pooling_nchw_max (2x2, stride 2), collapse_shape to 2x8, matmul
// (+ bias), softmax cross-entropy against integer labels (row max
// subtracted, log-sum-exp), mean over the batch. The image is an input; the
// four weights are parameters (47 elements).
// gradcheck: arg=5 int-range=0,3
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch4 = affine_map<(n, c, h, w) -> (c)>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#col = affine_map<(i, j) -> (i)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @step(%x: tensor<2x1x6x6xf64>, %f: tensor<2x1x3x3xf64> {remat.param}, %cb: tensor<2xf64> {remat.param},
                %w: tensor<8x3xf64> {remat.param}, %fb: tensor<3xf64> {remat.param}, %labels: tensor<2xi64>)
    -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %ninf = arith.constant -1.0e30 : f64
  %ec = tensor.empty() : tensor<2x2x4x4xf64>
  %zc = linalg.fill ins(%zero : f64) outs(%ec : tensor<2x2x4x4xf64>) -> tensor<2x2x4x4xf64>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %f : tensor<2x1x6x6xf64>, tensor<2x1x3x3xf64>) outs(%zc : tensor<2x2x4x4xf64>) -> tensor<2x2x4x4xf64>
  %er = tensor.empty() : tensor<2x2x4x4xf64>
  %r = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %cb : tensor<2x2x4x4xf64>, tensor<2xf64>) outs(%er : tensor<2x2x4x4xf64>) {
  ^bb0(%v: f64, %b: f64, %o: f64):
    %s = arith.addf %v, %b : f64
    %m = arith.maximumf %s, %zero : f64
    linalg.yield %m : f64
  } -> tensor<2x2x4x4xf64>
  %win = tensor.empty() : tensor<2x2xf64>
  %ep = tensor.empty() : tensor<2x2x2x2xf64>
  %ip = linalg.fill ins(%ninf : f64) outs(%ep : tensor<2x2x2x2xf64>) -> tensor<2x2x2x2xf64>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%r, %win : tensor<2x2x4x4xf64>, tensor<2x2xf64>) outs(%ip : tensor<2x2x2x2xf64>) -> tensor<2x2x2x2xf64>
  %flat = tensor.collapse_shape %p [[0], [1, 2, 3]] : tensor<2x2x2x2xf64> into tensor<2x8xf64>
  %el = tensor.empty() : tensor<2x3xf64>
  %zl = linalg.fill ins(%zero : f64) outs(%el : tensor<2x3xf64>) -> tensor<2x3xf64>
  %mm = linalg.matmul ins(%flat, %w : tensor<2x8xf64>, tensor<8x3xf64>) outs(%zl : tensor<2x3xf64>) -> tensor<2x3xf64>
  %ez = tensor.empty() : tensor<2x3xf64>
  %z = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %fb : tensor<2x3xf64>, tensor<3xf64>) outs(%ez : tensor<2x3xf64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %s = arith.addf %u, %v : f64
    linalg.yield %s : f64
  } -> tensor<2x3xf64>
  %em = tensor.empty() : tensor<2xf64>
  %fm = linalg.fill ins(%ninf : f64) outs(%em : tensor<2xf64>) -> tensor<2xf64>
  %mx = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<2x3xf64>) outs(%fm : tensor<2xf64>) {
  ^bb0(%u: f64, %acc: f64):
    %m = arith.maximumf %u, %acc : f64
    linalg.yield %m : f64
  } -> tensor<2xf64>
  %es = tensor.empty() : tensor<2xf64>
  %fs = linalg.fill ins(%zero : f64) outs(%es : tensor<2xf64>) -> tensor<2xf64>
  %se = linalg.generic {indexing_maps = [#id, #col, #col], iterator_types = ["parallel", "reduction"]}
      ins(%z, %mx : tensor<2x3xf64>, tensor<2xf64>) outs(%fs : tensor<2xf64>) {
  ^bb0(%u: f64, %m: f64, %acc: f64):
    %d = arith.subf %u, %m : f64
    %ex = math.exp %d : f64
    %s = arith.addf %acc, %ex : f64
    linalg.yield %s : f64
  } -> tensor<2xf64>
  %epk = tensor.empty() : tensor<2xf64>
  %fpk = linalg.fill ins(%zero : f64) outs(%epk : tensor<2xf64>) -> tensor<2xf64>
  %picked = linalg.generic {indexing_maps = [#id, #col, #col], iterator_types = ["parallel", "reduction"]}
      ins(%z, %labels : tensor<2x3xf64>, tensor<2xi64>) outs(%fpk : tensor<2xf64>) {
  ^bb0(%u: f64, %l: i64, %acc: f64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %ji, %l : i64
    %v = arith.select %eq, %u, %zero : f64
    %s = arith.addf %acc, %v : f64
    linalg.yield %s : f64
  } -> tensor<2xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id1, #id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%se, %mx, %picked : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%s: f64, %m: f64, %pk: f64, %acc: f64):
    %lg = math.log %s : f64
    %a = arith.addf %lg, %m : f64
    %d = arith.subf %a, %pk : f64
    %half = arith.constant 0.5 : f64
    %dm = arith.mulf %d, %half : f64
    %res = arith.addf %acc, %dm : f64
    linalg.yield %res : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
