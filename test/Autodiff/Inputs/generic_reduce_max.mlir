// Max reductions through linalg.generic with maximumf into an out argument
// filled with -1e30 (row maxima), and into a parameter-valued init (column
// maxima against m, whose gradient is where m wins); distinct values keep
// every maximum unique. loss = sum(rowmax * v) + sum(colmax^2).
// gradcheck: arg=2 range=0.2,0.9
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#col = affine_map<(i, j) -> (i)>
#all1 = affine_map<(i) -> ()>
#id1 = affine_map<(i) -> (i)>
func.func @step(%x: tensor<4x5xf64> {remat.param}, %v: tensor<4xf64>, %m: tensor<5xf64> {remat.param})
    -> (tensor<f64> {remat.loss}) {
  %ninf = arith.constant -1.0e30 : f64
  %e = tensor.empty() : tensor<4xf64>
  %f = linalg.fill ins(%ninf : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %rmax = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x5xf64>) outs(%f : tensor<4xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %mx = arith.maximumf %acc, %a : f64
    linalg.yield %mx : f64
  } -> tensor<4xf64>
  %cmax = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<4x5xf64>) outs(%m : tensor<5xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %mx = arith.maximumf %a, %acc : f64
    linalg.yield %mx : f64
  } -> tensor<5xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%rmax, %v : tensor<4xf64>, tensor<4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%cmax : tensor<5xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %p = arith.mulf %a, %a : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
