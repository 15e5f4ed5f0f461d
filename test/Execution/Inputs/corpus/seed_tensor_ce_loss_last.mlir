// Seed as a rank-0 tensor constant `dense<1.0> : tensor<f32>` marked
// `remat.seed`; softmax cross-entropy; the loss scalar computed at the very
// END of the function, after every gradient. 4 hidden ReLU layers (batch 256,
// width 64, no biases) and a linear classifier to 32 classes.
//
// Forward:  z_l = a_(l-1) W_l, a_l = select(z_l > 0, z_l, 0) (arith.select of
//           arith.cmpf), a_0 = x; logits = a_4 W_c.
//           Log-sum-exp with max subtraction: m_b = max_j logits_bj
//           (linalg.reduce, maximumf from -inf), s_b = sum_j exp(logits_bj - m_b),
//           lse_b = m_b + log s_b.
// Loss:     -(1/B) sum_bj t_bj (logits_bj - lse_b), t = soft targets (an
//           argument; rows need not sum to one), marked `remat.loss`,
//           computed last.
// Backward: dlogits_bj = seed/B (softmax_bj * sum_k t_bk - t_bj), softmax from
//           exp(logits - lse). ReLU mask from the OUTPUT: dz_l = select(a_l > 0, g_l, 0).
//           Contractions are linalg.generic ops whose indexing maps do the
//           transpositions: dW = a^T dz over (i, j, b), g = dz W^T over (b, i, j).
// Returns (loss, dW_1, ..., dW_4, dW_c).
// Written with a throwaway Python loop over the layers.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#scalar = affine_map<(d0, d1) -> ()>
#v = affine_map<(d0) -> (d0)>
#dw_lhs = affine_map<(i, j, b) -> (b, i)>
#dw_rhs = affine_map<(i, j, b) -> (b, j)>
#dw_out = affine_map<(i, j, b) -> (i, j)>
#dg_lhs = affine_map<(b, i, j) -> (b, j)>
#dg_rhs = affine_map<(b, i, j) -> (i, j)>
#dg_out = affine_map<(b, i, j) -> (b, i)>

func.func @train_step(%x: tensor<256x64xf32>, %t: tensor<256x32xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>, %w3: tensor<64x64xf32>, %w4: tensor<64x64xf32>, %wc: tensor<64x32xf32>)
    -> (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x32xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_b = arith.constant 3.906250e-03 : f32
  %neg_inv_b = arith.constant -3.906250e-03 : f32

  // layer 1
  %z1_e = tensor.empty() : tensor<256x64xf32>
  %z1_0 = linalg.fill ins(%zero : f32) outs(%z1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z1 = linalg.matmul ins(%x, %w1 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a1_e = tensor.empty() : tensor<256x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<256x64xf32>) outs(%a1_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %pos = arith.cmpf ogt, %in, %zero : f32
    %r = arith.select %pos, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 2
  %z2_e = tensor.empty() : tensor<256x64xf32>
  %z2_0 = linalg.fill ins(%zero : f32) outs(%z2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z2 = linalg.matmul ins(%a1, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a2_e = tensor.empty() : tensor<256x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<256x64xf32>) outs(%a2_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %pos = arith.cmpf ogt, %in, %zero : f32
    %r = arith.select %pos, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 3
  %z3_e = tensor.empty() : tensor<256x64xf32>
  %z3_0 = linalg.fill ins(%zero : f32) outs(%z3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z3 = linalg.matmul ins(%a2, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a3_e = tensor.empty() : tensor<256x64xf32>
  %a3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z3 : tensor<256x64xf32>) outs(%a3_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %pos = arith.cmpf ogt, %in, %zero : f32
    %r = arith.select %pos, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 4
  %z4_e = tensor.empty() : tensor<256x64xf32>
  %z4_0 = linalg.fill ins(%zero : f32) outs(%z4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z4 = linalg.matmul ins(%a3, %w4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a4_e = tensor.empty() : tensor<256x64xf32>
  %a4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z4 : tensor<256x64xf32>) outs(%a4_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %pos = arith.cmpf ogt, %in, %zero : f32
    %r = arith.select %pos, %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // classifier and log-sum-exp
  %lg_e = tensor.empty() : tensor<256x32xf32>
  %lg_0 = linalg.fill ins(%zero : f32) outs(%lg_e : tensor<256x32xf32>) -> tensor<256x32xf32>
  %logits = linalg.matmul ins(%a4, %wc : tensor<256x64xf32>, tensor<64x32xf32>) outs(%lg_0 : tensor<256x32xf32>) -> tensor<256x32xf32>
  %mx_e = tensor.empty() : tensor<256xf32>
  %mx_0 = linalg.fill ins(%ninf : f32) outs(%mx_e : tensor<256xf32>) -> tensor<256xf32>
  %mx = linalg.reduce ins(%logits : tensor<256x32xf32>) outs(%mx_0 : tensor<256xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %se_e = tensor.empty() : tensor<256xf32>
  %se_0 = linalg.fill ins(%zero : f32) outs(%se_e : tensor<256xf32>) -> tensor<256xf32>
  %se = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%logits, %mx : tensor<256x32xf32>, tensor<256xf32>) outs(%se_0 : tensor<256xf32>) {
  ^bb0(%l: f32, %m: f32, %acc: f32):
    %d = arith.subf %l, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %lse_e = tensor.empty() : tensor<256xf32>
  %lse = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%mx, %se : tensor<256xf32>, tensor<256xf32>) outs(%lse_e : tensor<256xf32>) {
  ^bb0(%m: f32, %s: f32, %out: f32):
    %lg = math.log %s : f32
    %r = arith.addf %m, %lg : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>

  // ---- backward, from the seed
  %seed = arith.constant {remat.seed} dense<1.000000e+00> : tensor<f32>
  %ts_e = tensor.empty() : tensor<256xf32>
  %ts_0 = linalg.fill ins(%zero : f32) outs(%ts_e : tensor<256xf32>) -> tensor<256xf32>
  %ts = linalg.reduce ins(%t : tensor<256x32xf32>) outs(%ts_0 : tensor<256xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %gl_e = tensor.empty() : tensor<256x32xf32>
  %gl = linalg.generic {indexing_maps = [#id, #row, #id, #row, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%logits, %lse, %t, %ts, %seed : tensor<256x32xf32>, tensor<256xf32>, tensor<256x32xf32>, tensor<256xf32>, tensor<f32>) outs(%gl_e : tensor<256x32xf32>) {
  ^bb0(%l: f32, %ls: f32, %tt: f32, %tsum: f32, %s: f32, %out: f32):
    %d = arith.subf %l, %ls : f32
    %p = math.exp %d : f32
    %pt = arith.mulf %p, %tsum : f32
    %g = arith.subf %pt, %tt : f32
    %gb = arith.mulf %g, %inv_b : f32
    %r = arith.mulf %gb, %s : f32
    linalg.yield %r : f32
  } -> tensor<256x32xf32>
  %dwc_e = tensor.empty() : tensor<64x32xf32>
  %dwc_0 = linalg.fill ins(%zero : f32) outs(%dwc_e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %dwc = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a4, %gl : tensor<256x64xf32>, tensor<256x32xf32>) outs(%dwc_0 : tensor<64x32xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %g4_e = tensor.empty() : tensor<256x64xf32>
  %g4_0 = linalg.fill ins(%zero : f32) outs(%g4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g4 = linalg.generic {indexing_maps = [#dg_lhs, #dg_rhs, #dg_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%gl, %wc : tensor<256x32xf32>, tensor<64x32xf32>) outs(%g4_0 : tensor<256x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x64xf32>

  // layer 4
  %dz4_e = tensor.empty() : tensor<256x64xf32>
  %dz4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g4, %a4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz4_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw4_e = tensor.empty() : tensor<64x64xf32>
  %dw4_0 = linalg.fill ins(%zero : f32) outs(%dw4_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw4 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a3, %dz4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw4_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g3_e = tensor.empty() : tensor<256x64xf32>
  %g3_0 = linalg.fill ins(%zero : f32) outs(%g3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g3 = linalg.generic {indexing_maps = [#dg_lhs, #dg_rhs, #dg_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dz4, %w4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g3_0 : tensor<256x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x64xf32>

  // layer 3
  %dz3_e = tensor.empty() : tensor<256x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g3, %a3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz3_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw3_e = tensor.empty() : tensor<64x64xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a2, %dz3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw3_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g2_e = tensor.empty() : tensor<256x64xf32>
  %g2_0 = linalg.fill ins(%zero : f32) outs(%g2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g2 = linalg.generic {indexing_maps = [#dg_lhs, #dg_rhs, #dg_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dz3, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g2_0 : tensor<256x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x64xf32>

  // layer 2
  %dz2_e = tensor.empty() : tensor<256x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g2, %a2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz2_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw2_e = tensor.empty() : tensor<64x64xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a1, %dz2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw2_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
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
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g1, %a1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz1_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw1_e = tensor.empty() : tensor<64x64xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %dz1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw1_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>

  // ---- the loss, last: -(1/B) sum t * (logits - lse)
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #row, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%logits, %lse, %t : tensor<256x32xf32>, tensor<256xf32>, tensor<256x32xf32>) outs(%loss_0 : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%l: f32, %ls: f32, %tt: f32, %acc: f32):
    %lp = arith.subf %l, %ls : f32
    %m = arith.mulf %tt, %lp : f32
    %k = arith.mulf %m, %neg_inv_b : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  return %loss, %dw1, %dw2, %dw3, %dw4, %dwc : tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x32xf32>
}
