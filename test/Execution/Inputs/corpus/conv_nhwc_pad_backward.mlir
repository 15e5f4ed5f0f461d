// A small convolutional net: three 3x3 "valid" convolutions written with
// linalg.conv_2d_nhwc_hwcf, ReLU, a global average pool and a dense layer;
// the convolutions' backward written by hand as linalg.generic ops, the input
// gradient as a full convolution of the zero-PADDED output gradient
// (tensor.pad) with the flipped filter (a named convolution again). Batch 8, NHWC, 18x18x4 input.
//
// Forward:  z_1 = conv(x, F_1) (8x16x16x8), a_1 = max(z_1, 0);
//           z_2 = conv(a_1, F_2) (8x14x14x8), a_2 = max(z_2, 0);
//           z_3 = conv(a_2, F_3) (8x12x12x8), a_3 = max(z_3, 0);
//           p_nc = mean_hw a_3 (8x8); pred = p W_d (8x10).
// Loss:     sum(0.5 (pred - y)^2).
// Backward: seeded by the argument %dloss {remat.tangent}; g_pred = dloss (pred - y);
//           dW_d = p^T g_pred; gp = g_pred W_d^T; ga_3 = gp / 144 broadcast;
//           dz_l = select(z_l > 0, ga_l, 0) (mask from the pre-activation);
//           dF_l[kh,kw,c,f] = sum_(n,oh,ow) a_(l-1)[n,oh+kh,ow+kw,c] dz_l[n,oh,ow,f];
//           ga_(l-1)[n,i,j,c] = sum_(kh,kw,f) pad(dz_l, 2)[n,i+kh,j+kw,f] F_l[2-kh,2-kw,c,f]
//           = conv_2d_nhwc_hwcf(pad(dz_l, 2), R_l), R_l[kh,kw,f,c] = F_l[2-kh,2-kw,c,f]
//           (a generic that flips and transposes the filter, in the backward).
// Returns (loss, dF_1, dF_2, dF_3, dW_d).

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar2 = affine_map<(d0, d1) -> ()>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pool_in = affine_map<(n, c, h, w) -> (n, h, w, c)>
#pool_out = affine_map<(n, c, h, w) -> (n, c)>
#bcast_in = affine_map<(n, h, w, c) -> (n, c)>
#dw_lhs = affine_map<(i, j, b) -> (b, i)>
#dw_rhs = affine_map<(i, j, b) -> (b, j)>
#dw_out = affine_map<(i, j, b) -> (i, j)>
#dg_lhs = affine_map<(b, i, j) -> (b, j)>
#dg_rhs = affine_map<(b, i, j) -> (i, j)>
#dg_pred = affine_map<(b, i, j) -> (b, i)>
// filter gradient over (kh, kw, c, f, n, oh, ow)
#df_in = affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh + kh, ow + kw, c)>
#df_dz = affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh, ow, f)>
#df_out = affine_map<(kh, kw, c, f, n, oh, ow) -> (kh, kw, c, f)>
// the flipped, channel-swapped filter: R[kh, kw, f, c] = F[2 - kh, 2 - kw, c, f]
#flip_in = affine_map<(kh, kw, f, c) -> (2 - kh, 2 - kw, c, f)>

func.func @train_step(%x: tensor<8x18x18x4xf32>, %y: tensor<8x10xf32>, %f1: tensor<3x3x4x8xf32>, %f2: tensor<3x3x8x8xf32>, %f3: tensor<3x3x8x8xf32>, %wd: tensor<8x10xf32>, %dloss: tensor<f32> {remat.tangent})
    -> (tensor<f32>, tensor<3x3x4x8xf32>, tensor<3x3x8x8xf32>, tensor<3x3x8x8xf32>, tensor<8x10xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %inv_hw = arith.constant 6.944444e-03 : f32

  // conv 1
  %z1_e = tensor.empty() : tensor<8x16x16x8xf32>
  %z1_0 = linalg.fill ins(%zero : f32) outs(%z1_e : tensor<8x16x16x8xf32>) -> tensor<8x16x16x8xf32>
  %z1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %f1 : tensor<8x18x18x4xf32>, tensor<3x3x4x8xf32>) outs(%z1_0 : tensor<8x16x16x8xf32>) -> tensor<8x16x16x8xf32>
  %a1_e = tensor.empty() : tensor<8x16x16x8xf32>
  %a1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%z1 : tensor<8x16x16x8xf32>) outs(%a1_e : tensor<8x16x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16x8xf32>

  // conv 2
  %z2_e = tensor.empty() : tensor<8x14x14x8xf32>
  %z2_0 = linalg.fill ins(%zero : f32) outs(%z2_e : tensor<8x14x14x8xf32>) -> tensor<8x14x14x8xf32>
  %z2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%a1, %f2 : tensor<8x16x16x8xf32>, tensor<3x3x8x8xf32>) outs(%z2_0 : tensor<8x14x14x8xf32>) -> tensor<8x14x14x8xf32>
  %a2_e = tensor.empty() : tensor<8x14x14x8xf32>
  %a2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%z2 : tensor<8x14x14x8xf32>) outs(%a2_e : tensor<8x14x14x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x14x14x8xf32>

  // conv 3
  %z3_e = tensor.empty() : tensor<8x12x12x8xf32>
  %z3_0 = linalg.fill ins(%zero : f32) outs(%z3_e : tensor<8x12x12x8xf32>) -> tensor<8x12x12x8xf32>
  %z3 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%a2, %f3 : tensor<8x14x14x8xf32>, tensor<3x3x8x8xf32>) outs(%z3_0 : tensor<8x12x12x8xf32>) -> tensor<8x12x12x8xf32>
  %a3_e = tensor.empty() : tensor<8x12x12x8xf32>
  %a3 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%z3 : tensor<8x12x12x8xf32>) outs(%a3_e : tensor<8x12x12x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x12x12x8xf32>

  // global average pool and dense layer
  %p_e = tensor.empty() : tensor<8x8xf32>
  %p_0 = linalg.fill ins(%zero : f32) outs(%p_e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p = linalg.generic {indexing_maps = [#pool_in, #pool_out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%a3 : tensor<8x12x12x8xf32>) outs(%p_0 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.mulf %in, %inv_hw : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %pred_e = tensor.empty() : tensor<8x10xf32>
  %pred_0 = linalg.fill ins(%zero : f32) outs(%pred_e : tensor<8x10xf32>) -> tensor<8x10xf32>
  %pred = linalg.matmul ins(%p, %wd : tensor<8x8xf32>, tensor<8x10xf32>) outs(%pred_0 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id2, #id2, #scalar2], iterator_types = ["reduction", "reduction"]} ins(%pred, %y : tensor<8x10xf32>, tensor<8x10xf32>) outs(%loss_0 : tensor<f32>) {
  ^bb0(%o: f32, %t: f32, %acc: f32):
    %d = arith.subf %o, %t : f32
    %sq = arith.mulf %d, %d : f32
    %h = arith.mulf %sq, %half : f32
    %s = arith.addf %acc, %h : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward
  %gout_e = tensor.empty() : tensor<8x10xf32>
  %gout = linalg.generic {indexing_maps = [#id2, #id2, #scalar2, #id2], iterator_types = ["parallel", "parallel"]} ins(%pred, %y, %dloss : tensor<8x10xf32>, tensor<8x10xf32>, tensor<f32>) outs(%gout_e : tensor<8x10xf32>) {
  ^bb0(%o: f32, %t: f32, %s: f32, %r: f32):
    %d = arith.subf %o, %t : f32
    %g = arith.mulf %d, %s : f32
    linalg.yield %g : f32
  } -> tensor<8x10xf32>
  %dwd_e = tensor.empty() : tensor<8x10xf32>
  %dwd_0 = linalg.fill ins(%zero : f32) outs(%dwd_e : tensor<8x10xf32>) -> tensor<8x10xf32>
  %dwd = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p, %gout : tensor<8x8xf32>, tensor<8x10xf32>) outs(%dwd_0 : tensor<8x10xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %gp_e = tensor.empty() : tensor<8x8xf32>
  %gp_0 = linalg.fill ins(%zero : f32) outs(%gp_e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %gp = linalg.generic {indexing_maps = [#dg_lhs, #dg_rhs, #dg_pred], iterator_types = ["parallel", "parallel", "reduction"]} ins(%gout, %wd : tensor<8x10xf32>, tensor<8x10xf32>) outs(%gp_0 : tensor<8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %ga3_e = tensor.empty() : tensor<8x12x12x8xf32>
  %ga3 = linalg.generic {indexing_maps = [#bcast_in, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%gp : tensor<8x8xf32>) outs(%ga3_e : tensor<8x12x12x8xf32>) {
  ^bb0(%g: f32, %out: f32):
    %r = arith.mulf %g, %inv_hw : f32
    linalg.yield %r : f32
  } -> tensor<8x12x12x8xf32>

  // conv 3 backward
  %dz3_e = tensor.empty() : tensor<8x12x12x8xf32>
  %dz3 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ga3, %z3 : tensor<8x12x12x8xf32>, tensor<8x12x12x8xf32>) outs(%dz3_e : tensor<8x12x12x8xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x12x12x8xf32>
  %df3_e = tensor.empty() : tensor<3x3x8x8xf32>
  %df3_0 = linalg.fill ins(%zero : f32) outs(%df3_e : tensor<3x3x8x8xf32>) -> tensor<3x3x8x8xf32>
  %df3 = linalg.generic {indexing_maps = [#df_in, #df_dz, #df_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%a2, %dz3 : tensor<8x14x14x8xf32>, tensor<8x12x12x8xf32>) outs(%df3_0 : tensor<3x3x8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x3x8x8xf32>
  %dzp3 = tensor.pad %dz3 low[0, 2, 2, 0] high[0, 2, 2, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<8x12x12x8xf32> to tensor<8x16x16x8xf32>
  %r3_e = tensor.empty() : tensor<3x3x8x8xf32>
  %r3 = linalg.generic {indexing_maps = [#flip_in, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%f3 : tensor<3x3x8x8xf32>) outs(%r3_e : tensor<3x3x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x3x8x8xf32>
  %ga2_e = tensor.empty() : tensor<8x14x14x8xf32>
  %ga2_0 = linalg.fill ins(%zero : f32) outs(%ga2_e : tensor<8x14x14x8xf32>) -> tensor<8x14x14x8xf32>
  %ga2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%dzp3, %r3 : tensor<8x16x16x8xf32>, tensor<3x3x8x8xf32>) outs(%ga2_0 : tensor<8x14x14x8xf32>) -> tensor<8x14x14x8xf32>

  // conv 2 backward
  %dz2_e = tensor.empty() : tensor<8x14x14x8xf32>
  %dz2 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ga2, %z2 : tensor<8x14x14x8xf32>, tensor<8x14x14x8xf32>) outs(%dz2_e : tensor<8x14x14x8xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x14x14x8xf32>
  %df2_e = tensor.empty() : tensor<3x3x8x8xf32>
  %df2_0 = linalg.fill ins(%zero : f32) outs(%df2_e : tensor<3x3x8x8xf32>) -> tensor<3x3x8x8xf32>
  %df2 = linalg.generic {indexing_maps = [#df_in, #df_dz, #df_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%a1, %dz2 : tensor<8x16x16x8xf32>, tensor<8x14x14x8xf32>) outs(%df2_0 : tensor<3x3x8x8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x3x8x8xf32>
  %dzp2 = tensor.pad %dz2 low[0, 2, 2, 0] high[0, 2, 2, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<8x14x14x8xf32> to tensor<8x18x18x8xf32>
  %r2_e = tensor.empty() : tensor<3x3x8x8xf32>
  %r2 = linalg.generic {indexing_maps = [#flip_in, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%f2 : tensor<3x3x8x8xf32>) outs(%r2_e : tensor<3x3x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x3x8x8xf32>
  %ga1_e = tensor.empty() : tensor<8x16x16x8xf32>
  %ga1_0 = linalg.fill ins(%zero : f32) outs(%ga1_e : tensor<8x16x16x8xf32>) -> tensor<8x16x16x8xf32>
  %ga1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%dzp2, %r2 : tensor<8x18x18x8xf32>, tensor<3x3x8x8xf32>) outs(%ga1_0 : tensor<8x16x16x8xf32>) -> tensor<8x16x16x8xf32>

  // conv 1 backward
  %dz1_e = tensor.empty() : tensor<8x16x16x8xf32>
  %dz1 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ga1, %z1 : tensor<8x16x16x8xf32>, tensor<8x16x16x8xf32>) outs(%dz1_e : tensor<8x16x16x8xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<8x16x16x8xf32>
  %df1_e = tensor.empty() : tensor<3x3x4x8xf32>
  %df1_0 = linalg.fill ins(%zero : f32) outs(%df1_e : tensor<3x3x4x8xf32>) -> tensor<3x3x4x8xf32>
  %df1 = linalg.generic {indexing_maps = [#df_in, #df_dz, #df_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %dz1 : tensor<8x18x18x4xf32>, tensor<8x16x16x8xf32>) outs(%df1_0 : tensor<3x3x4x8xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x3x4x8xf32>

  return %loss, %df1, %df2, %df3, %dwd : tensor<f32>, tensor<3x3x4x8xf32>, tensor<3x3x8x8xf32>, tensor<3x3x8x8xf32>, tensor<8x10xf32>
}
