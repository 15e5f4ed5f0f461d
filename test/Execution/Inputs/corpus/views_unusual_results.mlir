// Views everywhere, results in an unusual order. Parameters arrive FLAT
// (W_l : tensor<4096xf32>, expanded with tensor.expand_shape; b_l : tensor<1x64xf32>,
// collapsed to tensor<64xf32>), the input as tensor<16x16x64xf32> collapsed to
// 256x64; the seed `dense<1.0> : tensor<f32>` is read through an
// expand_shape to tensor<1x1xf32>; the gradients are returned as views of the
// tensors computed (dW_l collapsed to 4096, db_l expanded to 1x64), in the order
// (dW_3, db_1, loss, dW_1, db_3, dW_2, db_2, dW_2 again unflattened).
// 3 layers with leaky ReLU (slope 1/100), batch 256, width 64.
//
// Forward:  z_l = a_(l-1) W_l + b_l (fill, matmul, then a bias generic in
//           place: its destination is the matmul's result), a_l = select(z_l > 0,
//           z_l, z_l / 100), a_0 = collapse(x); out = z_3 (no activation).
// Loss:     mean((out - y)^2) marked `remat.loss`.
// Backward: g_3 = seed 2/N (out - y); dz_l = select(z_l > 0, g_l, g_l / 100);
//           db_l = sum_b dz_l; dW_l = a_(l-1)^T dz_l, g_(l-1) = dz_l W_l^T
//           (generic contractions with transposing maps).
// Written with a throwaway Python loop over the layers.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#scalar = affine_map<(d0, d1) -> ()>
#corner = affine_map<(d0, d1) -> (0, 0)>
#dw_lhs = affine_map<(i, j, b) -> (b, i)>
#dw_rhs = affine_map<(i, j, b) -> (b, j)>
#dw_out = affine_map<(i, j, b) -> (i, j)>
#dg_lhs = affine_map<(b, i, j) -> (b, j)>
#dg_rhs = affine_map<(b, i, j) -> (i, j)>
#dg_out = affine_map<(b, i, j) -> (b, i)>

func.func @train_step(%x3: tensor<16x16x64xf32>, %y: tensor<256x64xf32>, %w1f: tensor<4096xf32>, %b1r: tensor<1x64xf32>, %w2f: tensor<4096xf32>, %b2r: tensor<1x64xf32>, %w3f: tensor<4096xf32>, %b3r: tensor<1x64xf32>)
    -> (tensor<4096xf32>, tensor<1x64xf32>, tensor<f32>, tensor<4096xf32>, tensor<1x64xf32>, tensor<4096xf32>, tensor<1x64xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %slope = arith.constant 0.00999999977 : f32
  %inv_n = arith.constant 6.103516e-05 : f32
  %two_over_n = arith.constant 1.220703e-04 : f32
  %x = tensor.collapse_shape %x3 [[0, 1], [2]] : tensor<16x16x64xf32> into tensor<256x64xf32>

  // layer 1
  %w1 = tensor.expand_shape %w1f [[0, 1]] output_shape [64, 64] : tensor<4096xf32> into tensor<64x64xf32>
  %b1 = tensor.collapse_shape %b1r [[0, 1]] : tensor<1x64xf32> into tensor<64xf32>
  %m1_e = tensor.empty() : tensor<256x64xf32>
  %m1_0 = linalg.fill ins(%zero : f32) outs(%m1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%m1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z1 = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]} ins(%b1 : tensor<64xf32>) outs(%m1 : tensor<256x64xf32>) {
  ^bb0(%b: f32, %m: f32):
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<256x64xf32>
  %a1_e = tensor.empty() : tensor<256x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<256x64xf32>) outs(%a1_e : tensor<256x64xf32>) {
  ^bb0(%z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %neg = arith.mulf %z, %slope : f32
    %r = arith.select %pos, %z, %neg : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 2
  %w2 = tensor.expand_shape %w2f [[0, 1]] output_shape [64, 64] : tensor<4096xf32> into tensor<64x64xf32>
  %b2 = tensor.collapse_shape %b2r [[0, 1]] : tensor<1x64xf32> into tensor<64xf32>
  %m2_e = tensor.empty() : tensor<256x64xf32>
  %m2_0 = linalg.fill ins(%zero : f32) outs(%m2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %m2 = linalg.matmul ins(%a1, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%m2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z2 = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]} ins(%b2 : tensor<64xf32>) outs(%m2 : tensor<256x64xf32>) {
  ^bb0(%b: f32, %m: f32):
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<256x64xf32>
  %a2_e = tensor.empty() : tensor<256x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<256x64xf32>) outs(%a2_e : tensor<256x64xf32>) {
  ^bb0(%z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %neg = arith.mulf %z, %slope : f32
    %r = arith.select %pos, %z, %neg : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 3
  %w3 = tensor.expand_shape %w3f [[0, 1]] output_shape [64, 64] : tensor<4096xf32> into tensor<64x64xf32>
  %b3 = tensor.collapse_shape %b3r [[0, 1]] : tensor<1x64xf32> into tensor<64xf32>
  %m3_e = tensor.empty() : tensor<256x64xf32>
  %m3_0 = linalg.fill ins(%zero : f32) outs(%m3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %m3 = linalg.matmul ins(%a2, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%m3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z3 = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]} ins(%b3 : tensor<64xf32>) outs(%m3 : tensor<256x64xf32>) {
  ^bb0(%b: f32, %m: f32):
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<256x64xf32>

  // loss = mean((out - y)^2)
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%z3, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%loss_0 : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %inv_n : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward; the seed is read through a view
  %seed = arith.constant {remat.seed} dense<1.000000e+00> : tensor<f32>
  %seed2 = tensor.expand_shape %seed [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
  %g3_e = tensor.empty() : tensor<256x64xf32>
  %g3 = linalg.generic {indexing_maps = [#id, #id, #corner, #id], iterator_types = ["parallel", "parallel"]} ins(%z3, %y, %seed2 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<1x1xf32>) outs(%g3_e : tensor<256x64xf32>) {
  ^bb0(%p: f32, %t: f32, %s: f32, %out: f32):
    %d = arith.subf %p, %t : f32
    %k = arith.mulf %d, %two_over_n : f32
    %g = arith.mulf %k, %s : f32
    linalg.yield %g : f32
  } -> tensor<256x64xf32>

  // layer 3
  %db3_e = tensor.empty() : tensor<64xf32>
  %db3_0 = linalg.fill ins(%zero : f32) outs(%db3_e : tensor<64xf32>) -> tensor<64xf32>
  %db3 = linalg.reduce ins(%g3 : tensor<256x64xf32>) outs(%db3_0 : tensor<64xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %db3r = tensor.expand_shape %db3 [[0, 1]] output_shape [1, 64] : tensor<64xf32> into tensor<1x64xf32>
  %dw3_e = tensor.empty() : tensor<64x64xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a2, %g3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw3_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %dw3f = tensor.collapse_shape %dw3 [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  %g2_e = tensor.empty() : tensor<256x64xf32>
  %g2_0 = linalg.fill ins(%zero : f32) outs(%g2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g2 = linalg.generic {indexing_maps = [#dg_lhs, #dg_rhs, #dg_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g3, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g2_0 : tensor<256x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x64xf32>

  // layer 2
  %dz2_e = tensor.empty() : tensor<256x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g2, %z2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz2_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %neg = arith.mulf %g, %slope : f32
    %r = arith.select %pos, %g, %neg : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %db2_e = tensor.empty() : tensor<64xf32>
  %db2_0 = linalg.fill ins(%zero : f32) outs(%db2_e : tensor<64xf32>) -> tensor<64xf32>
  %db2 = linalg.reduce ins(%dz2 : tensor<256x64xf32>) outs(%db2_0 : tensor<64xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %db2r = tensor.expand_shape %db2 [[0, 1]] output_shape [1, 64] : tensor<64xf32> into tensor<1x64xf32>
  %dw2_e = tensor.empty() : tensor<64x64xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a1, %dz2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw2_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %dw2f = tensor.collapse_shape %dw2 [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  %g1_e = tensor.empty() : tensor<256x64xf32>
  %g1_0 = linalg.fill ins(%zero : f32) outs(%g1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g1 = linalg.generic {indexing_maps = [#dg_lhs, #dg_rhs, #dg_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dz2, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g1_0 : tensor<256x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x64xf32>

  // layer 1
  %dz1_e = tensor.empty() : tensor<256x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g1, %z1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz1_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %neg = arith.mulf %g, %slope : f32
    %r = arith.select %pos, %g, %neg : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %db1_e = tensor.empty() : tensor<64xf32>
  %db1_0 = linalg.fill ins(%zero : f32) outs(%db1_e : tensor<64xf32>) -> tensor<64xf32>
  %db1 = linalg.reduce ins(%dz1 : tensor<256x64xf32>) outs(%db1_0 : tensor<64xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %db1r = tensor.expand_shape %db1 [[0, 1]] output_shape [1, 64] : tensor<64xf32> into tensor<1x64xf32>
  %dw1_e = tensor.empty() : tensor<64x64xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %dz1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw1_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %dw1f = tensor.collapse_shape %dw1 [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>

  return %dw3f, %db1r, %loss, %dw1f, %db3r, %dw2f, %db2r, %dw2 : tensor<4096xf32>, tensor<1x64xf32>, tensor<f32>, tensor<4096xf32>, tensor<1x64xf32>, tensor<4096xf32>, tensor<1x64xf32>, tensor<64x64xf32>
}
