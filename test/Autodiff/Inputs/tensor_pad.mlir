// tensor.pad with a constant padding value (low [1, 0], high [2, 1]) and with
// padding on every side, its result weighted by a fixed input; the padding
// itself gets no gradient. loss = sum(p * k) + sum(q * q).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x3xf64> {remat.param}, %k: tensor<5x4xf64>) -> (tensor<f64> {remat.loss}) {
  %pv = arith.constant 0.5 : f64
  %p = tensor.pad %x low[1, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %pv : f64
  } : tensor<2x3xf64> to tensor<5x4xf64>
  %zero = arith.constant 0.0 : f64
  %q = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f64
  } : tensor<2x3xf64> to tensor<4x5xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%p, %k : tensor<5x4xf64>, tensor<5x4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%u: f64, %v: f64, %acc: f64):
    %m = arith.mulf %u, %v : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%q : tensor<4x5xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%u: f64, %acc: f64):
    %m = arith.mulf %u, %u : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
