// RUN: remat-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(func.func(test-remat-contraction-match))" -o /dev/null
//
// ContractionMatch.h: which linalg ops a vendor library can run, by their
// indexing maps and bodies, whoever wrote them, and the descriptor each gets
// (LibraryCalls.h: sizes; strides of every operand in elements; operand
// numbers of in0, in1, out; element offsets).

// Named matrix products: row-major tensors, an empty batch class has stride 0.
func.func @matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-remark @below {{contraction: gemm f32 batch=1 M=4 N=5 K=3 accumulate a=[0, 3, 1] b=[0, 5, 1] c=[0, 5, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  %r = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
// -----
// A batched product in f64 (cuBLAS runs it; oneDNN has no f64 primitive).
func.func @batch(%a: tensor<2x4x3xf64>, %b: tensor<2x3x5xf64>, %c: tensor<2x4x5xf64>) -> tensor<2x4x5xf64> {
  // expected-remark @below {{contraction: gemm f64 batch=2 M=4 N=5 K=3 accumulate a=[12, 3, 1] b=[15, 5, 1] c=[20, 5, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x4x3xf64>, tensor<2x3x5xf64>) outs(%c : tensor<2x4x5xf64>) -> tensor<2x4x5xf64>
  return %r : tensor<2x4x5xf64>
}
// -----
// A linear layer written as a generic: the batch and row loops (b, s) merge
// into M = 8 since their strides nest; B is read transposed (strides 1, 8).
#x = affine_map<(b, s, e, d) -> (b, s, d)>
#w = affine_map<(b, s, e, d) -> (e, d)>
#o = affine_map<(b, s, e, d) -> (b, s, e)>
func.func @linear(%x: tensor<2x4x8xf32>, %w: tensor<6x8xf32>, %o: tensor<2x4x6xf32>) -> tensor<2x4x6xf32> {
  // expected-remark @below {{contraction: gemm f32 batch=1 M=8 N=6 K=8 accumulate a=[0, 8, 1] b=[0, 1, 8] c=[0, 6, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  %r = linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x4x8xf32>, tensor<6x8xf32>) outs(%o : tensor<2x4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x6xf32>
  return %r : tensor<2x4x6xf32>
}
// -----
// A named convolution with stride 2 and dilation 2: it reads rows 0..6 of 8,
// so the source extent is 7 with the buffer's strides.
func.func @conv_named(%i: tensor<2x3x8x8xf32>, %f: tensor<4x3x3x3xf32>, %o: tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32> {
  // expected-remark @below {{contraction: conv_fwd f32 N=2 G=1 IC=3 OC=4 [I=7 K=3 O=2 s=2 d=2 p=0,0] [I=7 K=3 O=2 s=2 d=2 p=0,0] accumulate src=[192, 64, 8, 1] weights=[0, 27, 9, 3, 1] dst=[16, 4, 2, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%i, %f : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%o : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32>
  return %r : tensor<2x4x2x2xf32>
}
// -----
// The exporter's grouped convolution: channels g*2 + c, output [N, G, F, H, W].
#in = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g * 2 + c, oh + kh, ow + kw)>
#wt = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g * 3 + f, c, kh, kw)>
#out = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>
func.func @grouped(%i: tensor<2x4x6x6xf32>, %w: tensor<6x2x3x3xf32>, %o: tensor<2x2x3x4x4xf32>) -> tensor<2x2x3x4x4xf32> {
  // expected-remark @below {{contraction: conv_fwd f32 N=2 G=2 IC=2 OC=3 [I=6 K=3 O=4 s=1 d=1 p=0,0] [I=6 K=3 O=4 s=1 d=1 p=0,0] accumulate src=[144, 36, 6, 1] weights=[54, 18, 9, 3, 1] dst=[96, 16, 4, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  %r = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%i, %w : tensor<2x4x6x6xf32>, tensor<6x2x3x3xf32>) outs(%o : tensor<2x2x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %v = math.fma %a, %b, %acc : f32
    linalg.yield %v : f32
  } -> tensor<2x2x3x4x4xf32>
  return %r : tensor<2x2x3x4x4xf32>
}
// -----
// Backward data as the exporter writes it: a stride-1 correlation of the
// spread gradient with the kernel flipped (2 - kh) and its channels swapped;
// the window operand only gives the loop ranges. The library's kernel tap 0
// is the op's tap 2: the constants cancel the flip (offset 0).
#dz = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, c, h + kh, w + kw)>
#wf = affine_map<(n, g, f, h, w, c, kh, kw) -> (g * 4 + c, f, -kh + 2, -kw + 2)>
#win = affine_map<(n, g, f, h, w, c, kh, kw) -> (kh, kw)>
#dx = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, f, h, w)>
func.func @bwd_data(%dz: tensor<2x1x4x6x6xf32>, %w: tensor<4x3x3x3xf32>, %win: tensor<3x3xi8>, %o: tensor<2x1x3x4x4xf32>) -> tensor<2x1x3x4x4xf32> {
  // expected-remark @below {{contraction: conv_bwd_data f32 N=2 G=1 IC=3 OC=4 [I=4 K=3 O=6 s=1 d=1 p=2,2] [I=4 K=3 O=6 s=1 d=1 p=2,2] accumulate src=[48, 16, 4, 1] weights=[0, 27, 9, 3, 1] dst=[144, 36, 6, 1] operands=(0, 1, 3) offsets=(0, 0, 0)}}
  %r = linalg.generic {indexing_maps = [#dz, #wf, #win, #dx], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%dz, %w, %win : tensor<2x1x4x6x6xf32>, tensor<4x3x3x3xf32>, tensor<3x3xi8>) outs(%o : tensor<2x1x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %z: i8, %acc: f32):
    %v = math.fma %a, %b, %acc : f32
    linalg.yield %v : f32
  } -> tensor<2x1x3x4x4xf32>
  return %r : tensor<2x1x3x4x4xf32>
}
// -----
// Weight gradient: the image's outermost loop (n) is reduced; stride 2 is the
// coefficient of the output position, the kernel tap is an output loop.
#dy = affine_map<(g, p, q, kh, kw, n, oh, ow) -> (n, g * 4 + p, oh, ow)>
#xp = affine_map<(g, p, q, kh, kw, n, oh, ow) -> (n, g * 3 + q, oh * 2 + kh, ow * 2 + kw)>
#dw = affine_map<(g, p, q, kh, kw, n, oh, ow) -> (g, p, q, kh, kw)>
func.func @bwd_weights(%dy: tensor<2x4x3x3xf32>, %x: tensor<2x3x7x7xf32>, %o: tensor<1x4x3x3x3xf32>) -> tensor<1x4x3x3x3xf32> {
  // expected-remark @below {{contraction: conv_bwd_weights f32 N=2 G=1 IC=3 OC=4 [I=7 K=3 O=3 s=2 d=1 p=0,0] [I=7 K=3 O=3 s=2 d=1 p=0,0] accumulate src=[147, 49, 7, 1] weights=[0, 27, 9, 3, 1] dst=[36, 9, 3, 1] operands=(1, 0, 2) offsets=(0, 0, 0)}}
  %r = linalg.generic {indexing_maps = [#dy, #xp, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%dy, %x : tensor<2x4x3x3xf32>, tensor<2x3x7x7xf32>) outs(%o : tensor<1x4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %v = math.fma %a, %b, %acc : f32
    linalg.yield %v : f32
  } -> tensor<1x4x3x3x3xf32>
  return %r : tensor<1x4x3x3x3xf32>
}
// -----
// Depthwise: one channel per group, the channel stride is the group's.
func.func @depthwise(%i: tensor<1x8x10x10xf32>, %f: tensor<8x3x3xf32>, %o: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  // expected-remark @below {{contraction: conv_fwd f32 N=1 G=8 IC=1 OC=1 [I=10 K=3 O=8 s=1 d=1 p=0,0] [I=10 K=3 O=8 s=1 d=1 p=0,0] accumulate src=[0, 100, 10, 1] weights=[9, 0, 0, 3, 1] dst=[0, 64, 8, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  %r = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%i, %f : tensor<1x8x10x10xf32>, tensor<8x3x3xf32>) outs(%o : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}
// -----
// A depthwise convolution's weight gradient as the exporter writes it
// (mobilenet_v2): one input and one output channel per group, the images
// reduced. No loop of range > 1 names the images among the output's loops,
// so the forward reading (one image, the images as input channels) comes
// first; its layouts do not fit x's strides, the weight-gradient one does.
#dyd = affine_map<(g, p, q, kh, kw, n, oh, ow) -> (n, g + p, oh, ow)>
#xpd = affine_map<(g, p, q, kh, kw, n, oh, ow) -> (n, g + q, oh * 2 + kh, ow * 2 + kw)>
#dwd = affine_map<(g, p, q, kh, kw, n, oh, ow) -> (g, p, q, kh, kw)>
func.func @depthwise_bwd_weights(%dy: tensor<2x8x3x3xf32>, %x: tensor<2x8x7x7xf32>, %o: tensor<8x1x1x3x3xf32>) -> tensor<8x1x1x3x3xf32> {
  // expected-remark @below {{contraction: conv_bwd_weights f32 N=2 G=8 IC=1 OC=1 [I=7 K=3 O=3 s=2 d=1 p=0,0] [I=7 K=3 O=3 s=2 d=1 p=0,0] accumulate src=[392, 49, 7, 1] weights=[9, 0, 0, 3, 1] dst=[72, 9, 3, 1] operands=(1, 0, 2) offsets=(0, 0, 0)}}
  %r = linalg.generic {indexing_maps = [#dyd, #xpd, #dwd], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%dy, %x : tensor<2x8x3x3xf32>, tensor<2x8x7x7xf32>) outs(%o : tensor<8x1x1x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %v = arith.addf %acc, %m : f32
    linalg.yield %v : f32
  } -> tensor<8x1x1x3x3xf32>
  return %r : tensor<8x1x1x3x3xf32>
}
// -----
// The same sum over one image reads as a forward correlation (both readings
// are valid; the forward one comes first).
#dyd = affine_map<(g, p, q, kh, kw, n, oh, ow) -> (n, g + p, oh, ow)>
#xpd = affine_map<(g, p, q, kh, kw, n, oh, ow) -> (n, g + q, oh * 2 + kh, ow * 2 + kw)>
#dwd = affine_map<(g, p, q, kh, kw, n, oh, ow) -> (g, p, q, kh, kw)>
func.func @depthwise_bwd_weights_one_image(%dy: tensor<1x8x3x3xf32>, %x: tensor<1x8x7x7xf32>, %o: tensor<8x1x1x3x3xf32>) -> tensor<8x1x1x3x3xf32> {
  // expected-remark @below {{contraction: conv_fwd}}
  %r = linalg.generic {indexing_maps = [#dyd, #xpd, #dwd], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%dy, %x : tensor<1x8x3x3xf32>, tensor<1x8x7x7xf32>) outs(%o : tensor<8x1x1x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %v = arith.addf %acc, %m : f32
    linalg.yield %v : f32
  } -> tensor<8x1x1x3x3xf32>
  return %r : tensor<8x1x1x3x3xf32>
}
// -----
// Not contractions: an elementwise op, a product followed by a ReLU.
#id = affine_map<(i, j) -> (i, j)>
func.func @add(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %o: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-remark @below {{not a contraction: its body is not out + a * b}}
  %r = linalg.add ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%o : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
// -----
func.func @relu_after(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-remark @below {{not a contraction: its body is not out + a * b}}
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %z : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
// -----
// On buffers, the layout's strides (the memref offset is added at the call).
func.func @strided_buffers(%a: memref<4x3xf32, strided<[6, 2], offset: 1>>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  // expected-remark @below {{contraction: gemm f32 batch=1 M=4 N=5 K=3 accumulate a=[0, 6, 2] b=[0, 5, 1] c=[0, 5, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  linalg.matmul ins(%a, %b : memref<4x3xf32, strided<[6, 2], offset: 1>>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}
// -----
// remat-autodiff's transpose of a grouped convolution with stride 2 (G=2,
// C=2, F=3, 3x3 kernel, a 7x7 padded input): the input gradient is written
// through the forward's window, dX[n, g*2 + c, oh*2 + kh, ow*2 + kw] +=
// dY[n, g, f, oh, ow] * W[g*3 + f, c, kh, kw], in the forward's loops, with
// every loop but the first declared a reduction. The roles come from the
// maps: the backward data of a stride-2 convolution whose diff_dst is dY
// (the factor that shares the images with the output); its window reaches
// all 7 rows and columns.
#dy = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>
#wt = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g * 3 + f, c, kh, kw)>
#dx = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g * 2 + c, oh * 2 + kh, ow * 2 + kw)>
func.func @backward_data_through_the_outputs_window(%dy: tensor<2x2x3x3x3xf32>, %w: tensor<6x2x3x3xf32>, %dx: tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32> {
  // expected-remark @below {{contraction: conv_bwd_data f32 N=2 G=2 IC=2 OC=3 [I=7 K=3 O=3 s=2 d=1 p=0,0] [I=7 K=3 O=3 s=2 d=1 p=0,0] accumulate src=[196, 49, 7, 1] weights=[54, 18, 9, 3, 1] dst=[54, 9, 3, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  %r = linalg.generic {indexing_maps = [#dy, #wt, #dx], iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "reduction", "reduction", "reduction"]} ins(%dy, %w : tensor<2x2x3x3x3xf32>, tensor<6x2x3x3xf32>) outs(%dx : tensor<2x4x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x7x7xf32>
  return %r : tensor<2x4x7x7xf32>
}
// -----
// The same with an 8x8 padded input: the window reaches rows and columns
// 0..6 only, so the library writes part of the output (the call must add
// into it; a zero fill before it stays).
#dy = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>
#wt = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g * 3 + f, c, kh, kw)>
#dx = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g * 2 + c, oh * 2 + kh, ow * 2 + kw)>
func.func @backward_data_reaching_part_of_the_output(%dy: tensor<2x2x3x3x3xf32>, %w: tensor<6x2x3x3xf32>, %dx: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  // expected-remark @below {{contraction: conv_bwd_data f32 N=2 G=2 IC=2 OC=3 [I=7 K=3 O=3 s=2 d=1 p=0,0] [I=7 K=3 O=3 s=2 d=1 p=0,0] accumulate src=[256, 64, 8, 1] weights=[54, 18, 9, 3, 1] dst=[54, 9, 3, 1] operands=(0, 1, 2) offsets=(0, 0, 0) part of the output}}
  %r = linalg.generic {indexing_maps = [#dy, #wt, #dx], iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "reduction", "reduction", "reduction"]} ins(%dy, %w : tensor<2x2x3x3x3xf32>, tensor<6x2x3x3xf32>) outs(%dx : tensor<2x4x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x8xf32>
  return %r : tensor<2x4x8x8xf32>
}
// -----
// remat-autodiff's weight gradient of the same convolution: the output
// index g*3 + f makes it declare g and f reductions, though the output
// indexes them; by the maps it is the weight gradient (taps kh, kw on the
// output, positions oh, ow reduced with stride 2).
#x = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g * 2 + c, oh * 2 + kh, ow * 2 + kw)>
#dy = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>
#dw = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g * 3 + f, c, kh, kw)>
func.func @weight_gradient_declared_reduction(%x: tensor<2x4x7x7xf32>, %dy: tensor<2x2x3x3x3xf32>, %dw: tensor<6x2x3x3xf32>) -> tensor<6x2x3x3xf32> {
  // expected-remark @below {{contraction: conv_bwd_weights f32 N=2 G=2 IC=2 OC=3 [I=7 K=3 O=3 s=2 d=1 p=0,0] [I=7 K=3 O=3 s=2 d=1 p=0,0] accumulate src=[196, 49, 7, 1] weights=[54, 18, 9, 3, 1] dst=[54, 9, 3, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  %r = linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["reduction", "reduction", "reduction", "reduction", "reduction", "parallel", "parallel", "parallel"]} ins(%x, %dy : tensor<2x4x7x7xf32>, tensor<2x2x3x3x3xf32>) outs(%dw : tensor<6x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<6x2x3x3xf32>
  return %r : tensor<6x2x3x3xf32>
}
// -----
// An output element that two library positions would write: out[b + n] +=
// A[b, k] * B[b, k, n] is a sum over k per (b, n), but (b, n) and
// (b + 1, n - 1) share an element; a matrix product writes each of its
// elements once, so this stays loops.
#a = affine_map<(b, n, k) -> (b, k)>
#bm = affine_map<(b, n, k) -> (b, k, n)>
#o = affine_map<(b, n, k) -> (b + n)>
func.func @output_written_twice(%a: tensor<4x3xf32>, %bm: tensor<4x3x5xf32>, %o: tensor<8xf32>) -> tensor<8xf32> {
  // expected-remark @below {{not a contraction: an output element written from two library positions}}
  %r = linalg.generic {indexing_maps = [#a, #bm, #o], iterator_types = ["reduction", "reduction", "reduction"]} ins(%a, %bm : tensor<4x3xf32>, tensor<4x3x5xf32>) outs(%o : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
// -----
// An attention gradient dK[b, k, j] += Q[b, i, k] * G[b, i, j] whose body
// multiplies G by Q: in the body's order the output would be column-major
// (M = j, N = k), which oneDNN runs on its reference code; the factors are
// taken the other way round, so that the output's rows are unit-stride.
#q = affine_map<(b, i, j, k) -> (b, i, k)>
#g = affine_map<(b, i, j, k) -> (b, i, j)>
#dk = affine_map<(b, i, j, k) -> (b, k, j)>
func.func @row_major_output(%q: tensor<2x3x4xf32>, %g: tensor<2x3x5xf32>, %dk: tensor<2x4x5xf32>) -> tensor<2x4x5xf32> {
  // expected-remark @below {{contraction: gemm f32 batch=2 M=4 N=5 K=3 accumulate a=[12, 1, 4] b=[15, 5, 1] c=[20, 5, 1] operands=(0, 1, 2) offsets=(0, 0, 0)}}
  %r = linalg.generic {indexing_maps = [#q, #g, #dk], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%q, %g : tensor<2x3x4xf32>, tensor<2x3x5xf32>) outs(%dk : tensor<2x4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %b, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x5xf32>
  return %r : tensor<2x4x5xf32>
}
// -----
// An elementwise multiply-add is a batch of 1x1x1 products to a library
// (oneDNN: its reference code, 1 ms for 32768 of them): it stays a loop.
#e = affine_map<(i) -> (i)>
func.func @elementwise_multiply_add(%a: tensor<64xf32>, %b: tensor<64xf32>, %o: tensor<64xf32>) -> tensor<64xf32> {
  // expected-remark @below {{not a contraction: a product with fewer than two matrix dimensions (an elementwise or broadcast multiply-add)}}
  %r = linalg.generic {indexing_maps = [#e, #e, #e], iterator_types = ["parallel"]} ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%o : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
