// "Last valid position" pooling over embedding rows: out[b, d] is
// emb[tok[b, t], d] at the last t where mask[b, t] > 0.5 (0 where none is),
// written as select(mask > 0.5, row, out): a select combiner whose condition
// does not compare the element with the previous value, so it is not a
// max/min. Tokens are drawn from {0, 1} over 5 positions, so rows repeat: the
// gradient must go to the selected position only, not to every position
// whose row equals the result (issue 23: 2x the gradient for a token seen
// twice).
// gradcheck: arg=1 int-range=0,2
// gradcheck: arg=2 range=0,1
#bt = affine_map<(b, t, d) -> (b, t)>
#bd = affine_map<(b, t, d) -> (b, d)>
#id = affine_map<(b, d) -> (b, d)>
#all = affine_map<(b, d) -> ()>
func.func @step(%emb: tensor<3x4xf64> {remat.param}, %tok: tensor<2x5xi64>,
                %mask: tensor<2x5xf64>, %w: tensor<2x4xf64> {remat.param})
    -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %e = tensor.empty() : tensor<2x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<2x4xf64>) -> tensor<2x4xf64>
  %pooled = linalg.generic {indexing_maps = [#bt, #bt, #bd],
                            iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%tok, %mask : tensor<2x5xi64>, tensor<2x5xf64>) outs(%z : tensor<2x4xf64>) {
  ^bb0(%t: i64, %m: f64, %out: f64):
    %row = arith.index_cast %t : i64 to index
    %d = linalg.index 2 : index
    %h = tensor.extract %emb[%row, %d] : tensor<3x4xf64>
    %valid = arith.cmpf ogt, %m, %half : f64
    %r = arith.select %valid, %h, %out : f64
    linalg.yield %r : f64
  } -> tensor<2x4xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%pooled, %w : tensor<2x4xf64>, tensor<2x4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%p: f64, %ww: f64, %acc: f64):
    %pw = arith.mulf %p, %ww : f64
    %sq = arith.mulf %pw, %p : f64
    %s = arith.addf %acc, %sq : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
