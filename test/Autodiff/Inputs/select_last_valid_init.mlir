// A select combiner on a condition of the inputs alone, over a tensor input
// and onto a parameter as the initial value: out[i] = x[i, j] at the last j
// where keep[i, j] > 0.5, else init[i]; the selected element is kept when the
// condition is false (select(cond, out, x): the last j where it is false).
// x[i, j] = v[j mod 2] repeats its values along a row, and row 2 never
// selects (its condition is forced false), so init[2] gets the adjoint and x
// none in that row.
// gradcheck: arg=1 range=0,1
#ij = affine_map<(i, j) -> (i, j)>
#jm = affine_map<(i, j) -> (j mod 2)>
#i = affine_map<(i, j) -> (i)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @step(%v: tensor<2xf64> {remat.param}, %keep: tensor<3x6xf64>,
                %init: tensor<3xf64> {remat.param})
    -> (tensor<f64> {remat.loss}) {
  %half = arith.constant 0.5 : f64
  %zero = arith.constant 0.0 : f64
  %pooled = linalg.generic {indexing_maps = [#jm, #ij, #i],
                            iterator_types = ["parallel", "reduction"]}
      ins(%v, %keep : tensor<2xf64>, tensor<3x6xf64>)
      outs(%init : tensor<3xf64>) {
  ^bb0(%x: f64, %k: f64, %out: f64):
    %i = linalg.index 0 : index
    %c2 = arith.constant 2 : index
    %last = arith.cmpi eq, %i, %c2 : index
    %kv = arith.select %last, %half, %k : f64
    %drop = arith.cmpf ole, %kv, %half : f64
    %r = arith.select %drop, %out, %x : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%pooled : tensor<3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%p: f64, %acc: f64):
    %sq = arith.mulf %p, %p : f64
    %s = arith.addf %acc, %sq : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
