// RUN: remat-opt %s --remat-autodiff --mlir-print-local-scope | FileCheck %s

// remat-autodiff on convolutions and pooling, through their generalized
// form. The input gradient of a strided, dilated convolution is one generic
// over the forward's iteration space (d0 = n, d1 = f, d2 = oh, d3 = ow,
// d4 = c, d5 = kh, d6 = kw) that accumulates dY * W into the input through
// the input's own access pattern (ih = 2 oh + 2 kh, iw = 2 ow + 2 kw); only
// the dimensions the input's map names without arithmetic (n, c) stay
// parallel. The filter gradient reduces over n, oh, ow. Max pooling
// recomputes the argmax by comparing every window element with the saved
// maximum; sum pooling spreads the adjoint over each window. (Gradients
// checked numerically in gradcheck-conv-pool.test.)

// CHECK-LABEL: func.func @conv_nchw(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x7x7xf32>, %[[F:.*]]: tensor<3x2x2x2xf32>)
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: %[[DY:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x3x3x3xf32>)
// CHECK-DAG: %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5 * 2, d3 * 2 + d6 * 2)>], iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel", "reduction", "reduction"]} ins(%[[F]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<1x2x7x7xf32>)
// CHECK-DAG: %[[DF:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5 * 2, d3 * 2 + d6 * 2)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>], iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]} ins(%[[X]], %[[DY]] : {{.*}}) outs(%{{.*}} : tensor<3x2x2x2xf32>)
// CHECK: return %{{.*}}, %[[DX]], %[[DF]] : tensor<f32>, tensor<1x2x7x7xf32>, tensor<3x2x2x2xf32>

// CHECK-LABEL: func.func @maxpool_nchw(
// CHECK-SAME: %[[X:.*]]: tensor<1x2x5x5xf32>)
// CHECK: %[[P:.*]] = linalg.pooling_nchw_max
// CHECK: %[[DP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x2x2xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>, {{.*}}, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%[[X]], %{{.*}}, %[[P]], %[[DP]] : {{.*}}) outs(%{{.*}} : tensor<1x2x5x5xf32>)
// CHECK-NEXT: ^bb0(%[[XV:.*]]: f32, %{{.*}}: f32, %[[PV:.*]]: f32, %[[GV:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[EQ:.*]] = arith.cmpf oeq, %[[XV]], %[[PV]] : f32
// CHECK: %[[SEL:.*]] = arith.select %[[EQ]], %[[GV]], %{{.*}} : f32
// CHECK-NEXT: arith.addf %[[OUT]], %[[SEL]] : f32
// CHECK: return %{{.*}}, %[[DX]] : tensor<f32>, tensor<1x2x5x5xf32>

// CHECK-LABEL: func.func @sumpool_nhwc(
// CHECK: linalg.pooling_nhwc_sum
// CHECK: %[[DP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x2x2xf32>)
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>], iterator_types = ["parallel", "reduction", "reduction", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %[[DP]] : {{.*}}) outs(%{{.*}} : tensor<1x5x5x2xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[GV:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: arith.addf %[[OUT]], %[[GV]] : f32
// CHECK: return %{{.*}}, %[[DX]] : tensor<f32>, tensor<1x5x5x2xf32>

#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#all4 = affine_map<(n, c, h, w) -> ()>
func.func @conv_nchw(%x: tensor<1x2x7x7xf32>, %f: tensor<3x2x2x2xf32>) -> (tensor<f32> {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %f : tensor<1x2x7x7xf32>, tensor<3x2x2x2xf32>) outs(%z : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id4, #all4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x3x3x3xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @maxpool_nchw(%x: tensor<1x2x5x5xf32>) -> (tensor<f32> {remat.loss}) {
  %ninf = arith.constant 0xFF800000 : f32
  %win = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %i = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x2x5x5xf32>, tensor<2x2xf32>) outs(%i : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id4, #all4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%p : tensor<1x2x2x2xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @sumpool_nhwc(%x: tensor<1x5x5x2xf32>) -> (tensor<f32> {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %win = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %p = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x5x5x2xf32>, tensor<3x3xf32>) outs(%i : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id4, #all4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%p : tensor<1x2x2x2xf32>) outs(%f0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
