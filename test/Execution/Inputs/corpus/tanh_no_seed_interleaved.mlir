// No seed at all: only the loss RESULT is marked (`{remat.loss}` on the
// function's result #0), so the ops the loss depends on are forward and the
// rest backward. tanh activations (math.tanh), the last layer linear; the
// weight gradients are computed INTERLEAVED with the backward chain, two
// layers late (dW_(l+2) right after dz_l), so dz's live longer.
// 6 layers, batch 256, width 64, no biases.
//
// Forward:  z_l = a_(l-1) W_l, a_l = tanh(z_l) for l < 6, out = z_6, a_0 = x.
// Loss:     mean((out - y)^2).
// Backward: dz_6 = 2/N (out - y); dz_l = g_l (1 - a_l^2) (from the output);
//           g_(l-1) = dz_l W_l^T and dW_l = a_(l-1)^T dz_l are linalg.matmul
//           ops whose `indexing_maps` attribute transposes an operand.
//           Order: dz_l, g_(l-1), then dW_(l+2).
// Returns (loss, dW_1, ..., dW_6).
// Written with a throwaway Python loop over the layers.

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#km = affine_map<(d0, d1, d2) -> (d2, d0)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>

func.func @train_step(%x: tensor<256x64xf32>, %y: tensor<256x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>, %w3: tensor<64x64xf32>, %w4: tensor<64x64xf32>, %w5: tensor<64x64xf32>, %w6: tensor<64x64xf32>)
    -> (tensor<f32> {remat.loss}, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %inv_n = arith.constant 6.103516e-05 : f32
  %two_over_n = arith.constant 1.220703e-04 : f32

  // layer 1
  %z1_e = tensor.empty() : tensor<256x64xf32>
  %z1_0 = linalg.fill ins(%zero : f32) outs(%z1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z1 = linalg.matmul ins(%x, %w1 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a1_e = tensor.empty() : tensor<256x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<256x64xf32>) outs(%a1_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 2
  %z2_e = tensor.empty() : tensor<256x64xf32>
  %z2_0 = linalg.fill ins(%zero : f32) outs(%z2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z2 = linalg.matmul ins(%a1, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a2_e = tensor.empty() : tensor<256x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<256x64xf32>) outs(%a2_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 3
  %z3_e = tensor.empty() : tensor<256x64xf32>
  %z3_0 = linalg.fill ins(%zero : f32) outs(%z3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z3 = linalg.matmul ins(%a2, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a3_e = tensor.empty() : tensor<256x64xf32>
  %a3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z3 : tensor<256x64xf32>) outs(%a3_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 4
  %z4_e = tensor.empty() : tensor<256x64xf32>
  %z4_0 = linalg.fill ins(%zero : f32) outs(%z4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z4 = linalg.matmul ins(%a3, %w4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a4_e = tensor.empty() : tensor<256x64xf32>
  %a4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z4 : tensor<256x64xf32>) outs(%a4_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 5
  %z5_e = tensor.empty() : tensor<256x64xf32>
  %z5_0 = linalg.fill ins(%zero : f32) outs(%z5_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z5 = linalg.matmul ins(%a4, %w5 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z5_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a5_e = tensor.empty() : tensor<256x64xf32>
  %a5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z5 : tensor<256x64xf32>) outs(%a5_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 6
  %z6_e = tensor.empty() : tensor<256x64xf32>
  %z6_0 = linalg.fill ins(%zero : f32) outs(%z6_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z6 = linalg.matmul ins(%a5, %w6 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z6_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // loss = mean((out - y)^2), all N = 16384 elements in one generic
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%z6, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%loss_0 : tensor<f32>) {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %inv_n : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward (no seed: everything the loss does not depend on)
  %dz6_e = tensor.empty() : tensor<256x64xf32>
  %dz6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%z6, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz6_e : tensor<256x64xf32>) {
  ^bb0(%p: f32, %t: f32, %out: f32):
    %d = arith.subf %p, %t : f32
    %g = arith.mulf %d, %two_over_n : f32
    linalg.yield %g : f32
  } -> tensor<256x64xf32>

  // layer 6
  %g5_e = tensor.empty() : tensor<256x64xf32>
  %g5_0 = linalg.fill ins(%zero : f32) outs(%g5_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g5 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz6, %w6 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g5_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 5
  %dz5_e = tensor.empty() : tensor<256x64xf32>
  %dz5 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g5, %a5 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz5_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %asq = arith.mulf %a, %a : f32
    %d = arith.subf %one, %asq : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %g4_e = tensor.empty() : tensor<256x64xf32>
  %g4_0 = linalg.fill ins(%zero : f32) outs(%g4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g4 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz5, %w5 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 4
  %dz4_e = tensor.empty() : tensor<256x64xf32>
  %dz4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g4, %a4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz4_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %asq = arith.mulf %a, %a : f32
    %d = arith.subf %one, %asq : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %g3_e = tensor.empty() : tensor<256x64xf32>
  %g3_0 = linalg.fill ins(%zero : f32) outs(%g3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g3 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz4, %w4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  // (two layers late)
  %dw6_e = tensor.empty() : tensor<64x64xf32>
  %dw6_0 = linalg.fill ins(%zero : f32) outs(%dw6_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw6 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%a5, %dz6 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw6_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  // layer 3
  %dz3_e = tensor.empty() : tensor<256x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g3, %a3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz3_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %asq = arith.mulf %a, %a : f32
    %d = arith.subf %one, %asq : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %g2_e = tensor.empty() : tensor<256x64xf32>
  %g2_0 = linalg.fill ins(%zero : f32) outs(%g2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz3, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  // (two layers late)
  %dw5_e = tensor.empty() : tensor<64x64xf32>
  %dw5_0 = linalg.fill ins(%zero : f32) outs(%dw5_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw5 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%a4, %dz5 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw5_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  // layer 2
  %dz2_e = tensor.empty() : tensor<256x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g2, %a2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz2_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %asq = arith.mulf %a, %a : f32
    %d = arith.subf %one, %asq : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %g1_e = tensor.empty() : tensor<256x64xf32>
  %g1_0 = linalg.fill ins(%zero : f32) outs(%g1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g1 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz2, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  // (two layers late)
  %dw4_e = tensor.empty() : tensor<64x64xf32>
  %dw4_0 = linalg.fill ins(%zero : f32) outs(%dw4_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw4 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%a3, %dz4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw4_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  // layer 1
  %dz1_e = tensor.empty() : tensor<256x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g1, %a1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz1_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %asq = arith.mulf %a, %a : f32
    %d = arith.subf %one, %asq : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  // (two layers late)
  %dw3_e = tensor.empty() : tensor<64x64xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%a2, %dz3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw3_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  // the remaining weight gradients
  %dw2_e = tensor.empty() : tensor<64x64xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%a1, %dz2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw2_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1_e = tensor.empty() : tensor<64x64xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x, %dz1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw1_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  return %loss, %dw1, %dw2, %dw3, %dw4, %dw5, %dw6 : tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
