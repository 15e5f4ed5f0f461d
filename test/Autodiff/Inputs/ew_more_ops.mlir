// Scalar rules beyond the issue's list that remat-autodiff implements:
// math exp2, expm1, log2, log10, log1p, sin, cos, fma, copysign, arith
// maxnumf, minnumf, and maximumf with the constant first (relu as max(0, a)).
// x in [0.2, 1.2] keeps the logs defined; y in [-1, 1].
// gradcheck: arg=0 range=0.2,1.2
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x4xf64>, %y: tensor<2x4xf64>) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<2x4xf64>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<2x4xf64>, tensor<2x4xf64>) outs(%e : tensor<2x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %e2 = math.exp2 %b : f64
    %em1 = math.expm1 %b : f64
    %l2 = math.log2 %a : f64
    %l10 = math.log10 %a : f64
    %l1p = math.log1p %a : f64
    %sn = math.sin %b : f64
    %cs = math.cos %a : f64
    %f = math.fma %sn, %cs, %l2 : f64
    %cp = math.copysign %em1, %b : f64
    %mx = arith.maxnumf %l10, %sn : f64
    %mn = arith.minnumf %l1p, %e2 : f64
    %zero = arith.constant 0.0 : f64
    %relu = arith.maximumf %zero, %b : f64
    %s1 = arith.addf %f, %cp : f64
    %s2 = arith.addf %mx, %mn : f64
    %s3 = arith.mulf %s1, %s2 : f64
    %s4 = arith.addf %s3, %relu : f64
    linalg.yield %s4 : f64
  } -> tensor<2x4xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<2x4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %aa = arith.mulf %a, %a : f64
    %s = arith.addf %acc, %aa : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
