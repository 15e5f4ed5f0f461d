// An ensemble of 4 independent MLPs evaluated together with linalg.batch_matmul
// (group g has its own batch of 64 and its own weights), GELU activations in
// the sigmoid form written with math.exp, and the gradient seed a whole
// TENSOR of ones made by a `linalg.fill` marked `remat.seed` (PyTorch's
// `out.backward(torch.ones_like(out))` style). 4 layers, width 64.
//
// Forward:  z_l = batch_matmul(a_(l-1), W_l) (shapes 4x64x64 times 4x64x64),
//           a_l = gelu(z_l) = z_l s_l, s_l = 1 / (1 + exp(-1.702 z_l)) for l < 4;
//           out = z_4, a_0 = x.
// Loss:     sum(0.5 (out - y)^2) marked `remat.loss`.
// Backward: ones = fill(1.0) {remat.seed}; dz_4 = ones (out - y);
//           GELU backward from the PRE-activation: dz_l = g_l (s + 1.702 z s (1 - s));
//           dW_l = batch_matmul(transpose(a_(l-1), [0, 2, 1]), dz_l),
//           g_(l-1) = batch_matmul(dz_l, transpose(W_l, [0, 2, 1])).
// Returns (loss, dW_1, ..., dW_4).
// Written with a throwaway Python loop over the layers.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#scalar3 = affine_map<(d0, d1, d2) -> ()>

func.func @train_step(%x: tensor<4x64x64xf32>, %y: tensor<4x64x64xf32>, %w1: tensor<4x64x64xf32>, %w2: tensor<4x64x64xf32>, %w3: tensor<4x64x64xf32>, %w4: tensor<4x64x64xf32>)
    -> (tensor<f32>, tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %k = arith.constant 1.702000e+00 : f32
  %nk = arith.constant -1.702000e+00 : f32

  // layer 1
  %z1_e = tensor.empty() : tensor<4x64x64xf32>
  %z1_0 = linalg.fill ins(%zero : f32) outs(%z1_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %z1 = linalg.batch_matmul ins(%x, %w1 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%z1_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %a1_e = tensor.empty() : tensor<4x64x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%z1 : tensor<4x64x64xf32>) outs(%a1_e : tensor<4x64x64xf32>) {
  ^bb0(%z: f32, %out: f32):
    %m = arith.mulf %z, %nk : f32
    %e = math.exp %m : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    %r = arith.mulf %z, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x64x64xf32>

  // layer 2
  %z2_e = tensor.empty() : tensor<4x64x64xf32>
  %z2_0 = linalg.fill ins(%zero : f32) outs(%z2_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %z2 = linalg.batch_matmul ins(%a1, %w2 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%z2_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %a2_e = tensor.empty() : tensor<4x64x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%z2 : tensor<4x64x64xf32>) outs(%a2_e : tensor<4x64x64xf32>) {
  ^bb0(%z: f32, %out: f32):
    %m = arith.mulf %z, %nk : f32
    %e = math.exp %m : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    %r = arith.mulf %z, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x64x64xf32>

  // layer 3
  %z3_e = tensor.empty() : tensor<4x64x64xf32>
  %z3_0 = linalg.fill ins(%zero : f32) outs(%z3_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %z3 = linalg.batch_matmul ins(%a2, %w3 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%z3_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %a3_e = tensor.empty() : tensor<4x64x64xf32>
  %a3 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%z3 : tensor<4x64x64xf32>) outs(%a3_e : tensor<4x64x64xf32>) {
  ^bb0(%z: f32, %out: f32):
    %m = arith.mulf %z, %nk : f32
    %e = math.exp %m : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    %r = arith.mulf %z, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x64x64xf32>

  // layer 4
  %z4_e = tensor.empty() : tensor<4x64x64xf32>
  %z4_0 = linalg.fill ins(%zero : f32) outs(%z4_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %z4 = linalg.batch_matmul ins(%a3, %w4 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%z4_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>

  // loss = sum(0.5 (out - y)^2)
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id3, #id3, #scalar3], iterator_types = ["reduction", "reduction", "reduction"]} ins(%z4, %y : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%loss_0 : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %h = arith.mulf %sq, %half : f32
    %s = arith.addf %acc, %h : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward: a tensor of ones is the seed
  %ones_e = tensor.empty() : tensor<4x64x64xf32>
  %ones = linalg.fill {remat.seed} ins(%one : f32) outs(%ones_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %dz4_e = tensor.empty() : tensor<4x64x64xf32>
  %dz4 = linalg.generic {indexing_maps = [#id3, #id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ones, %z4, %y : tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%dz4_e : tensor<4x64x64xf32>) {
  ^bb0(%s: f32, %p: f32, %t: f32, %out: f32):
    %d = arith.subf %p, %t : f32
    %g = arith.mulf %s, %d : f32
    linalg.yield %g : f32
  } -> tensor<4x64x64xf32>

  // layer 4
  %at4_e = tensor.empty() : tensor<4x64x64xf32>
  %at4 = linalg.transpose ins(%a3 : tensor<4x64x64xf32>) outs(%at4_e : tensor<4x64x64xf32>) permutation = [0, 2, 1]
  %dw4_e = tensor.empty() : tensor<4x64x64xf32>
  %dw4_0 = linalg.fill ins(%zero : f32) outs(%dw4_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %dw4 = linalg.batch_matmul ins(%at4, %dz4 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%dw4_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %wt4_e = tensor.empty() : tensor<4x64x64xf32>
  %wt4 = linalg.transpose ins(%w4 : tensor<4x64x64xf32>) outs(%wt4_e : tensor<4x64x64xf32>) permutation = [0, 2, 1]
  %g3_e = tensor.empty() : tensor<4x64x64xf32>
  %g3_0 = linalg.fill ins(%zero : f32) outs(%g3_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %g3 = linalg.batch_matmul ins(%dz4, %wt4 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%g3_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>

  // layer 3
  %dz3_e = tensor.empty() : tensor<4x64x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g3, %z3 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%dz3_e : tensor<4x64x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %m = arith.mulf %z, %nk : f32
    %e = math.exp %m : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    %oms = arith.subf %one, %s : f32
    %kz = arith.mulf %k, %z : f32
    %t1 = arith.mulf %kz, %s : f32
    %t2 = arith.mulf %t1, %oms : f32
    %dg = arith.addf %s, %t2 : f32
    %r = arith.mulf %g, %dg : f32
    linalg.yield %r : f32
  } -> tensor<4x64x64xf32>
  %at3_e = tensor.empty() : tensor<4x64x64xf32>
  %at3 = linalg.transpose ins(%a2 : tensor<4x64x64xf32>) outs(%at3_e : tensor<4x64x64xf32>) permutation = [0, 2, 1]
  %dw3_e = tensor.empty() : tensor<4x64x64xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %dw3 = linalg.batch_matmul ins(%at3, %dz3 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%dw3_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %wt3_e = tensor.empty() : tensor<4x64x64xf32>
  %wt3 = linalg.transpose ins(%w3 : tensor<4x64x64xf32>) outs(%wt3_e : tensor<4x64x64xf32>) permutation = [0, 2, 1]
  %g2_e = tensor.empty() : tensor<4x64x64xf32>
  %g2_0 = linalg.fill ins(%zero : f32) outs(%g2_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %g2 = linalg.batch_matmul ins(%dz3, %wt3 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%g2_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>

  // layer 2
  %dz2_e = tensor.empty() : tensor<4x64x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g2, %z2 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%dz2_e : tensor<4x64x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %m = arith.mulf %z, %nk : f32
    %e = math.exp %m : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    %oms = arith.subf %one, %s : f32
    %kz = arith.mulf %k, %z : f32
    %t1 = arith.mulf %kz, %s : f32
    %t2 = arith.mulf %t1, %oms : f32
    %dg = arith.addf %s, %t2 : f32
    %r = arith.mulf %g, %dg : f32
    linalg.yield %r : f32
  } -> tensor<4x64x64xf32>
  %at2_e = tensor.empty() : tensor<4x64x64xf32>
  %at2 = linalg.transpose ins(%a1 : tensor<4x64x64xf32>) outs(%at2_e : tensor<4x64x64xf32>) permutation = [0, 2, 1]
  %dw2_e = tensor.empty() : tensor<4x64x64xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %dw2 = linalg.batch_matmul ins(%at2, %dz2 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%dw2_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %wt2_e = tensor.empty() : tensor<4x64x64xf32>
  %wt2 = linalg.transpose ins(%w2 : tensor<4x64x64xf32>) outs(%wt2_e : tensor<4x64x64xf32>) permutation = [0, 2, 1]
  %g1_e = tensor.empty() : tensor<4x64x64xf32>
  %g1_0 = linalg.fill ins(%zero : f32) outs(%g1_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %g1 = linalg.batch_matmul ins(%dz2, %wt2 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%g1_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>

  // layer 1
  %dz1_e = tensor.empty() : tensor<4x64x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g1, %z1 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%dz1_e : tensor<4x64x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %m = arith.mulf %z, %nk : f32
    %e = math.exp %m : f32
    %den = arith.addf %one, %e : f32
    %s = arith.divf %one, %den : f32
    %oms = arith.subf %one, %s : f32
    %kz = arith.mulf %k, %z : f32
    %t1 = arith.mulf %kz, %s : f32
    %t2 = arith.mulf %t1, %oms : f32
    %dg = arith.addf %s, %t2 : f32
    %r = arith.mulf %g, %dg : f32
    linalg.yield %r : f32
  } -> tensor<4x64x64xf32>
  %at1_e = tensor.empty() : tensor<4x64x64xf32>
  %at1 = linalg.transpose ins(%x : tensor<4x64x64xf32>) outs(%at1_e : tensor<4x64x64xf32>) permutation = [0, 2, 1]
  %dw1_e = tensor.empty() : tensor<4x64x64xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %dw1 = linalg.batch_matmul ins(%at1, %dz1 : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%dw1_0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>

  return %loss, %dw1, %dw2, %dw3, %dw4 : tensor<f32>, tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x64xf32>, tensor<4x64x64xf32>
}
