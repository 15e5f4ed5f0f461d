// Mixed precision (AMP style): f32 master weights are cast to bf16 at the
// TOP of the step, activations are stored in bf16 (half the bytes of f32:
// the saved activations are tensor<256x64xbf16>), matmuls take bf16 operands
// and accumulate in f32 (linalg.matmul with mixed element types), and the
// loss is scaled by 1024 in the backward and unscaled in the weight
// gradients. The seed is the argument %dloss {remat.tangent}. 5 layers,
// batch 256, width 64.
//
// Prologue: wb_l = bf16(W_l); a_0 = bf16(x).
// Forward:  z_l = a_(l-1) wb_l (f32), a_l = bf16(max(z_l, 0)) for l < 5; out = z_5.
// Loss:     mean((out - y)^2) (f32).
// Backward: g_5 = dloss * 1024 * 2/N (out - y); dz_l = select(a_l > 0, g_l, 0);
//           dW_l = (a_(l-1)^T dz_l) / 1024 (a generic contraction reading the
//           bf16 activation, extf in the body); g_(l-1) = dz_l W_l^T with the
//           f32 master weights (linalg.matmul, transposing indexing_maps).
// Returns (loss, dW_1, ..., dW_5) in f32.
// Written with a throwaway Python loop over the layers.

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#dw_lhs = affine_map<(i, j, b) -> (b, i)>
#dw_rhs = affine_map<(i, j, b) -> (b, j)>
#dw_out = affine_map<(i, j, b) -> (i, j)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>

func.func @train_step(%x: tensor<256x64xf32>, %y: tensor<256x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>, %w3: tensor<64x64xf32>, %w4: tensor<64x64xf32>, %w5: tensor<64x64xf32>, %dloss: tensor<f32> {remat.tangent})
    -> (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  // ---- prologue: bf16 copies of the weights
  %wb1_e = tensor.empty() : tensor<64x64xbf16>
  %wb1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w1 : tensor<64x64xf32>) outs(%wb1_e : tensor<64x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x64xbf16>
  %wb2_e = tensor.empty() : tensor<64x64xbf16>
  %wb2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w2 : tensor<64x64xf32>) outs(%wb2_e : tensor<64x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x64xbf16>
  %wb3_e = tensor.empty() : tensor<64x64xbf16>
  %wb3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w3 : tensor<64x64xf32>) outs(%wb3_e : tensor<64x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x64xbf16>
  %wb4_e = tensor.empty() : tensor<64x64xbf16>
  %wb4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w4 : tensor<64x64xf32>) outs(%wb4_e : tensor<64x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x64xbf16>
  %wb5_e = tensor.empty() : tensor<64x64xbf16>
  %wb5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w5 : tensor<64x64xf32>) outs(%wb5_e : tensor<64x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x64xbf16>
  %zero = arith.constant 0.000000e+00 : f32
  %inv_n = arith.constant 6.103516e-05 : f32
  %scaled_two_over_n = arith.constant 1.250000e-01 : f32
  %inv_scale = arith.constant 9.765625e-04 : f32
  %a0_e = tensor.empty() : tensor<256x64xbf16>
  %a0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<256x64xf32>) outs(%a0_e : tensor<256x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x64xbf16>

  // layer 1
  %z1_e = tensor.empty() : tensor<256x64xf32>
  %z1_0 = linalg.fill ins(%zero : f32) outs(%z1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z1 = linalg.matmul ins(%a0, %wb1 : tensor<256x64xbf16>, tensor<64x64xbf16>) outs(%z1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a1_e = tensor.empty() : tensor<256x64xbf16>
  %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<256x64xf32>) outs(%a1_e : tensor<256x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.maximumf %in, %zero : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x64xbf16>

  // layer 2
  %z2_e = tensor.empty() : tensor<256x64xf32>
  %z2_0 = linalg.fill ins(%zero : f32) outs(%z2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z2 = linalg.matmul ins(%a1, %wb2 : tensor<256x64xbf16>, tensor<64x64xbf16>) outs(%z2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a2_e = tensor.empty() : tensor<256x64xbf16>
  %a2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<256x64xf32>) outs(%a2_e : tensor<256x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.maximumf %in, %zero : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x64xbf16>

  // layer 3
  %z3_e = tensor.empty() : tensor<256x64xf32>
  %z3_0 = linalg.fill ins(%zero : f32) outs(%z3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z3 = linalg.matmul ins(%a2, %wb3 : tensor<256x64xbf16>, tensor<64x64xbf16>) outs(%z3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a3_e = tensor.empty() : tensor<256x64xbf16>
  %a3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z3 : tensor<256x64xf32>) outs(%a3_e : tensor<256x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.maximumf %in, %zero : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x64xbf16>

  // layer 4
  %z4_e = tensor.empty() : tensor<256x64xf32>
  %z4_0 = linalg.fill ins(%zero : f32) outs(%z4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z4 = linalg.matmul ins(%a3, %wb4 : tensor<256x64xbf16>, tensor<64x64xbf16>) outs(%z4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a4_e = tensor.empty() : tensor<256x64xbf16>
  %a4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z4 : tensor<256x64xf32>) outs(%a4_e : tensor<256x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.maximumf %in, %zero : f32
    %t = arith.truncf %r : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<256x64xbf16>

  // layer 5
  %z5_e = tensor.empty() : tensor<256x64xf32>
  %z5_0 = linalg.fill ins(%zero : f32) outs(%z5_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z5 = linalg.matmul ins(%a4, %wb5 : tensor<256x64xbf16>, tensor<64x64xbf16>) outs(%z5_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // loss = mean((out - y)^2)
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%z5, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%loss_0 : tensor<f32>) {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %inv_n : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward, loss-scaled
  %g5_e = tensor.empty() : tensor<256x64xf32>
  %g5 = linalg.generic {indexing_maps = [#id, #id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%z5, %y, %dloss : tensor<256x64xf32>, tensor<256x64xf32>, tensor<f32>) outs(%g5_e : tensor<256x64xf32>) {
  ^bb0(%p: f32, %t: f32, %s: f32, %out: f32):
    %d = arith.subf %p, %t : f32
    %k = arith.mulf %d, %scaled_two_over_n : f32
    %g = arith.mulf %k, %s : f32
    linalg.yield %g : f32
  } -> tensor<256x64xf32>

  // layer 5
  %dw5_e = tensor.empty() : tensor<64x64xf32>
  %dw5_0 = linalg.fill ins(%zero : f32) outs(%dw5_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw5 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a4, %g5 : tensor<256x64xbf16>, tensor<256x64xf32>) outs(%dw5_0 : tensor<64x64xf32>) {
  ^bb0(%a: bf16, %v: f32, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %m = arith.mulf %af, %v : f32
    %u = arith.mulf %m, %inv_scale : f32
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g4_e = tensor.empty() : tensor<256x64xf32>
  %g4_0 = linalg.fill ins(%zero : f32) outs(%g4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g4 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%g5, %w5 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 4
  %dz4_e = tensor.empty() : tensor<256x64xf32>
  %dz4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g4, %a4 : tensor<256x64xf32>, tensor<256x64xbf16>) outs(%dz4_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: bf16, %out: f32):
    %af = arith.extf %a : bf16 to f32
    %pos = arith.cmpf ogt, %af, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw4_e = tensor.empty() : tensor<64x64xf32>
  %dw4_0 = linalg.fill ins(%zero : f32) outs(%dw4_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw4 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a3, %dz4 : tensor<256x64xbf16>, tensor<256x64xf32>) outs(%dw4_0 : tensor<64x64xf32>) {
  ^bb0(%a: bf16, %v: f32, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %m = arith.mulf %af, %v : f32
    %u = arith.mulf %m, %inv_scale : f32
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g3_e = tensor.empty() : tensor<256x64xf32>
  %g3_0 = linalg.fill ins(%zero : f32) outs(%g3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g3 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz4, %w4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 3
  %dz3_e = tensor.empty() : tensor<256x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g3, %a3 : tensor<256x64xf32>, tensor<256x64xbf16>) outs(%dz3_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: bf16, %out: f32):
    %af = arith.extf %a : bf16 to f32
    %pos = arith.cmpf ogt, %af, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw3_e = tensor.empty() : tensor<64x64xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a2, %dz3 : tensor<256x64xbf16>, tensor<256x64xf32>) outs(%dw3_0 : tensor<64x64xf32>) {
  ^bb0(%a: bf16, %v: f32, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %m = arith.mulf %af, %v : f32
    %u = arith.mulf %m, %inv_scale : f32
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g2_e = tensor.empty() : tensor<256x64xf32>
  %g2_0 = linalg.fill ins(%zero : f32) outs(%g2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz3, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 2
  %dz2_e = tensor.empty() : tensor<256x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g2, %a2 : tensor<256x64xf32>, tensor<256x64xbf16>) outs(%dz2_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: bf16, %out: f32):
    %af = arith.extf %a : bf16 to f32
    %pos = arith.cmpf ogt, %af, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw2_e = tensor.empty() : tensor<64x64xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a1, %dz2 : tensor<256x64xbf16>, tensor<256x64xf32>) outs(%dw2_0 : tensor<64x64xf32>) {
  ^bb0(%a: bf16, %v: f32, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %m = arith.mulf %af, %v : f32
    %u = arith.mulf %m, %inv_scale : f32
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g1_e = tensor.empty() : tensor<256x64xf32>
  %g1_0 = linalg.fill ins(%zero : f32) outs(%g1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g1 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz2, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 1
  %dz1_e = tensor.empty() : tensor<256x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g1, %a1 : tensor<256x64xf32>, tensor<256x64xbf16>) outs(%dz1_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: bf16, %out: f32):
    %af = arith.extf %a : bf16 to f32
    %pos = arith.cmpf ogt, %af, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw1_e = tensor.empty() : tensor<64x64xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a0, %dz1 : tensor<256x64xbf16>, tensor<256x64xf32>) outs(%dw1_0 : tensor<64x64xf32>) {
  ^bb0(%a: bf16, %v: f32, %acc: f32):
    %af = arith.extf %a : bf16 to f32
    %m = arith.mulf %af, %v : f32
    %u = arith.mulf %m, %inv_scale : f32
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>

  return %loss, %dw1, %dw2, %dw3, %dw4, %dw5 : tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
