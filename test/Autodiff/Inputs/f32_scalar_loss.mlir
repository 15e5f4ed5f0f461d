// An f32 scalar loss (tensor.extract of a rank-0 f32 reduction): loss =
// sum(x * x); f32 finite differences, eps 1e-2, rtol 1e-3.
// gradcheck: eps=1e-2 rtol=1e-3
#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
func.func @step(%x: tensor<4xf32>) -> (f32 {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]}
      ins(%x : tensor<4xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %v = tensor.extract %s[] : tensor<f32>
  return %v : f32
}
