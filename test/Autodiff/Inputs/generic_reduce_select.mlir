// A max reduction written with cmpf ogt + select of the element or the
// previous value (instead of maximumf): loss = sum(rowmax(x)^2).
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (i)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @step(%x: tensor<3x4xf64>) -> (tensor<f64> {remat.loss}) {
  %ninf = arith.constant -1.0e30 : f64
  %e = tensor.empty() : tensor<3xf64>
  %f = linalg.fill ins(%ninf : f64) outs(%e : tensor<3xf64>) -> tensor<3xf64>
  %m = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%f : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %gt = arith.cmpf ogt, %a, %acc : f64
    %r = arith.select %gt, %a, %acc : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%m : tensor<3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %sq = arith.mulf %a, %a : f64
    %r = arith.addf %acc, %sq : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
