// linalg.reduce (sum over dimension 1 into a parameter-valued init c, and a
// max over dimension 0 into a -1e30 fill) and linalg.copy (of x, whose copy
// is used next to x itself). loss = sum(s * s) + sum(m * v) + sum(cp * x).
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<3x4xf64> {remat.param}, %c: tensor<3xf64> {remat.param}, %v: tensor<4xf64>)
    -> (tensor<f64> {remat.loss}) {
  %s = linalg.reduce ins(%x : tensor<3x4xf64>) outs(%c : tensor<3xf64>) dimensions = [1]
    (%in: f64, %init: f64) {
      %a = arith.addf %in, %init : f64
      linalg.yield %a : f64
    }
  %ninf = arith.constant -1.0e30 : f64
  %em = tensor.empty() : tensor<4xf64>
  %fm = linalg.fill ins(%ninf : f64) outs(%em : tensor<4xf64>) -> tensor<4xf64>
  %m = linalg.reduce ins(%x : tensor<3x4xf64>) outs(%fm : tensor<4xf64>) dimensions = [0]
    (%in: f64, %init: f64) {
      %a = arith.maximumf %in, %init : f64
      linalg.yield %a : f64
    }
  %ec = tensor.empty() : tensor<3x4xf64>
  %cp = linalg.copy ins(%x : tensor<3x4xf64>) outs(%ec : tensor<3x4xf64>) -> tensor<3x4xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%s : tensor<3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%u: f64, %acc: f64):
    %uu = arith.mulf %u, %u : f64
    %r = arith.addf %acc, %uu : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  %l2 = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%m, %v : tensor<4xf64>, tensor<4xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%u: f64, %w: f64, %acc: f64):
    %uw = arith.mulf %u, %w : f64
    %r = arith.addf %acc, %uw : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%cp, %x : tensor<3x4xf64>, tensor<3x4xf64>) outs(%l2 : tensor<f64>) {
  ^bb0(%u: f64, %w: f64, %acc: f64):
    %uw = arith.mulf %u, %w : f64
    %r = arith.addf %acc, %uw : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
