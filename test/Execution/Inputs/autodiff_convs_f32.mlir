// A forward step in f32 whose convolutions remat-autodiff transposes into
// windowed-output backward data and weight gradients (test/Execution/
// autodiff-library-calls.test): a grouped stride-2 convolution written as a
// generic over a padded input (G=2, 2 input and 3 output channels per group,
// 3x3: its window reaches 9 of the 10 padded rows), a depthwise convolution
// with dilation 2 (named), and a 1x1 stride-2 convolution (named: it reaches
// 3 of 4 rows). loss = sum(a * a) + sum(b * b).
#x = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g * 2 + c, oh * 2 + kh, ow * 2 + kw)>
#w = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g * 3 + f, c, kh, kw)>
#y = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#all = affine_map<(n, c, h, w) -> ()>
func.func @step(%x: tensor<2x4x8x8xf32> {remat.param}, %w1: tensor<6x2x3x3xf32> {remat.param},
                %w2: tensor<6x2x2xf32> {remat.param}, %w3: tensor<5x6x1x1xf32> {remat.param})
    -> (tensor<f32> {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<2x4x8x8xf32> to tensor<2x4x10x10xf32>
  %e1 = tensor.empty() : tensor<2x2x3x4x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x2x3x4x4xf32>) -> tensor<2x2x3x4x4xf32>
  %g1 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%padded, %w1 : tensor<2x4x10x10xf32>, tensor<6x2x3x3xf32>) outs(%z1 : tensor<2x2x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x2x3x4x4xf32>
  %y1 = tensor.collapse_shape %g1 [[0], [1, 2], [3], [4]] : tensor<2x2x3x4x4xf32> into tensor<2x6x4x4xf32>
  %e2 = tensor.empty() : tensor<2x6x2x2xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x6x2x2xf32>) -> tensor<2x6x2x2xf32>
  %y2 = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y1, %w2 : tensor<2x6x4x4xf32>, tensor<6x2x2xf32>) outs(%z2 : tensor<2x6x2x2xf32>) -> tensor<2x6x2x2xf32>
  %e3 = tensor.empty() : tensor<2x5x2x2xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x5x2x2xf32>) -> tensor<2x5x2x2xf32>
  %y3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%y1, %w3 : tensor<2x6x4x4xf32>, tensor<5x6x1x1xf32>) outs(%z3 : tensor<2x5x2x2xf32>) -> tensor<2x5x2x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %s2 = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y2 : tensor<2x6x2x2xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y3 : tensor<2x5x2x2xf32>) outs(%s2 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
