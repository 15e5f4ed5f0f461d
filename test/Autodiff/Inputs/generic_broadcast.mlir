// Broadcasts in linalg.generic: an input map that drops dimensions. b (a row
// vector, map (i, j) -> (j)), c (a column, (i, j) -> (i)) and s (rank 0,
// (i, j) -> ()) are broadcast over x; their gradients are reductions.
// y = (x + b) * s - c * x, loss = sum(y * y).
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#col = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<3x4xf64>, %b: tensor<4xf64>, %c: tensor<3xf64>, %s: tensor<f64>)
    -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [#id, #row, #col, #all, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b, %c, %s : tensor<3x4xf64>, tensor<4xf64>, tensor<3xf64>, tensor<f64>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%xv: f64, %bv: f64, %cv: f64, %sv: f64, %o: f64):
    %xb = arith.addf %xv, %bv : f64
    %m = arith.mulf %xb, %sv : f64
    %cx = arith.mulf %cv, %xv : f64
    %r = arith.subf %m, %cx : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %aa = arith.mulf %a, %a : f64
    %r = arith.addf %acc, %aa : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
