// tensor.pad then an extract_slice that keeps part of the padding and part of
// the source.
// loss = sum(y * y + y) over the result y.
func.func @step(%x: tensor<3x3xf64>) -> (tensor<f64> {remat.loss}) {
  %z = arith.constant 0.0 : f64
  %p = tensor.pad %x low[2, 0] high[0, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f64
  } : tensor<3x3xf64> to tensor<5x6xf64>
  %y = tensor.extract_slice %p[1, 1] [3, 4] [1, 1] : tensor<5x6xf64> to tensor<3x4xf64>
  %zero_l = arith.constant 0.0 : f64
  %e_l = tensor.empty() : tensor<f64>
  %f_l = linalg.fill ins(%zero_l : f64) outs(%e_l : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%f_l : tensor<f64>) {
  ^bb0(%a_l: f64, %acc_l: f64):
    %sq_l = arith.mulf %a_l, %a_l : f64
    %h_l = arith.addf %sq_l, %a_l : f64
    %r_l = arith.addf %acc_l, %h_l : f64
    linalg.yield %r_l : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
