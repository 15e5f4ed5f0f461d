// Contractions and permutations as linalg.generic: z^T = (x w)^T written with
// a transposed output map (j, i) and a reduction dimension k in the middle
// of the iteration space, then u = z^T * t with t read transposed through
// (i, j) -> (j, i); loss = sum(u * u).
#xmap = affine_map<(i, k, j) -> (i, k)>
#wmap = affine_map<(i, k, j) -> (k, j)>
#zt = affine_map<(i, k, j) -> (j, i)>
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x3xf64>, %w: tensor<3x4xf64>, %t: tensor<2x4xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x2xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<4x2xf64>) -> tensor<4x2xf64>
  %z = linalg.generic {indexing_maps = [#xmap, #wmap, #zt], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<2x3xf64>, tensor<3x4xf64>) outs(%f : tensor<4x2xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<4x2xf64>
  %e2 = tensor.empty() : tensor<4x2xf64>
  %u = linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %t : tensor<4x2xf64>, tensor<2x4xf64>) outs(%e2 : tensor<4x2xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    linalg.yield %m : f64
  } -> tensor<4x2xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%u : tensor<4x2xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %aa = arith.mulf %a, %a : f64
    %s = arith.addf %acc, %aa : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
