// f32 throughout, the loss a tensor<f32>: loss = sum(tanh(x * w)). f32 finite
// differences: eps 1e-2, rtol 1e-3.
// gradcheck: eps=1e-2 rtol=1e-3
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> (tensor<f32> {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x, %w : tensor<2x3xf32>, tensor<2x3xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = math.tanh %m : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
