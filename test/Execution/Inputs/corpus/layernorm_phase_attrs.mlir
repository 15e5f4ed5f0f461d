// Layer normalisation, whose statistics (mean, 1/std per row) are
// forward-auxiliary values that only the backward reads; phases given by
// explicit `remat.phase` attributes (as an exporter might tag ops) instead of
// a seed: the first backward op is tagged "backward", the statistics
// "forward", result #0 is the loss. 4 blocks of matmul, layer norm (no affine)
// and ReLU, then a linear output layer; batch 256, width 64.
//
// Forward:  z_l = a_(l-1) W_l; mu_l = mean_j z_l; r_l = rsqrt(mean_j (z_l - mu_l)^2 + 1e-5);
//           n_l = (z_l - mu_l) r_l; a_l = max(n_l, 0); out = a_4 W_o, a_0 = x.
// Loss:     (0.5 / B) sum (out - y)^2.
// Backward: gout = (out - y) / B; dW_o = a_4^T gout; g_4 = gout W_o^T;
//           gn_l = select(a_l > 0, g_l, 0); n_l recomputed from z_l, mu_l, r_l;
//           dz_l = r_l (gn_l - mean_j gn_l - n_l mean_j (gn_l n_l));
//           dW_l = a_(l-1)^T dz_l, g_(l-1) = dz_l W_l^T (linalg.matmul on
//           explicit linalg.transpose results).
// Returns (loss, dW_1, ..., dW_4, dW_o).
// Written with a throwaway Python loop over the blocks.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#scalar = affine_map<(d0, d1) -> ()>

func.func @train_step(%x: tensor<256x64xf32>, %y: tensor<256x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>, %w3: tensor<64x64xf32>, %w4: tensor<64x64xf32>, %wo: tensor<64x64xf32>)
    -> (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  %inv_d = arith.constant 1.562500e-02 : f32
  %inv_b = arith.constant 3.906250e-03 : f32
  %half_over_b = arith.constant 1.953125e-03 : f32

  // block 1
  %z1_e = tensor.empty() : tensor<256x64xf32>
  %z1_0 = linalg.fill ins(%zero : f32) outs(%z1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z1 = linalg.matmul ins(%x, %w1 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %mu1_e = tensor.empty() : tensor<256xf32>
  %mu1_0 = linalg.fill ins(%zero : f32) outs(%mu1_e : tensor<256xf32>) -> tensor<256xf32>
  %mu1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%z1 : tensor<256x64xf32>) outs(%mu1_0 : tensor<256xf32>) attrs = {remat.phase = "forward"} {
  ^bb0(%z: f32, %acc: f32):
    %k = arith.mulf %z, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %var1_e = tensor.empty() : tensor<256xf32>
  %var1_0 = linalg.fill ins(%zero : f32) outs(%var1_e : tensor<256xf32>) -> tensor<256xf32>
  %var1 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%z1, %mu1 : tensor<256x64xf32>, tensor<256xf32>) outs(%var1_0 : tensor<256xf32>) {
  ^bb0(%z: f32, %m: f32, %acc: f32):
    %d = arith.subf %z, %m : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %r1_e = tensor.empty() : tensor<256xf32>
  %r1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var1 : tensor<256xf32>) outs(%r1_e : tensor<256xf32>) attrs = {remat.phase = "forward"} {
  ^bb0(%v: f32, %out: f32):
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %a1_e = tensor.empty() : tensor<256x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%z1, %mu1, %r1 : tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>) outs(%a1_e : tensor<256x64xf32>) {
  ^bb0(%z: f32, %m: f32, %r: f32, %out: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %a = arith.maximumf %n, %zero : f32
    linalg.yield %a : f32
  } -> tensor<256x64xf32>

  // block 2
  %z2_e = tensor.empty() : tensor<256x64xf32>
  %z2_0 = linalg.fill ins(%zero : f32) outs(%z2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z2 = linalg.matmul ins(%a1, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %mu2_e = tensor.empty() : tensor<256xf32>
  %mu2_0 = linalg.fill ins(%zero : f32) outs(%mu2_e : tensor<256xf32>) -> tensor<256xf32>
  %mu2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%z2 : tensor<256x64xf32>) outs(%mu2_0 : tensor<256xf32>) attrs = {remat.phase = "forward"} {
  ^bb0(%z: f32, %acc: f32):
    %k = arith.mulf %z, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %var2_e = tensor.empty() : tensor<256xf32>
  %var2_0 = linalg.fill ins(%zero : f32) outs(%var2_e : tensor<256xf32>) -> tensor<256xf32>
  %var2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%z2, %mu2 : tensor<256x64xf32>, tensor<256xf32>) outs(%var2_0 : tensor<256xf32>) {
  ^bb0(%z: f32, %m: f32, %acc: f32):
    %d = arith.subf %z, %m : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %r2_e = tensor.empty() : tensor<256xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var2 : tensor<256xf32>) outs(%r2_e : tensor<256xf32>) attrs = {remat.phase = "forward"} {
  ^bb0(%v: f32, %out: f32):
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %a2_e = tensor.empty() : tensor<256x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%z2, %mu2, %r2 : tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>) outs(%a2_e : tensor<256x64xf32>) {
  ^bb0(%z: f32, %m: f32, %r: f32, %out: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %a = arith.maximumf %n, %zero : f32
    linalg.yield %a : f32
  } -> tensor<256x64xf32>

  // block 3
  %z3_e = tensor.empty() : tensor<256x64xf32>
  %z3_0 = linalg.fill ins(%zero : f32) outs(%z3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z3 = linalg.matmul ins(%a2, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %mu3_e = tensor.empty() : tensor<256xf32>
  %mu3_0 = linalg.fill ins(%zero : f32) outs(%mu3_e : tensor<256xf32>) -> tensor<256xf32>
  %mu3 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%z3 : tensor<256x64xf32>) outs(%mu3_0 : tensor<256xf32>) attrs = {remat.phase = "forward"} {
  ^bb0(%z: f32, %acc: f32):
    %k = arith.mulf %z, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %var3_e = tensor.empty() : tensor<256xf32>
  %var3_0 = linalg.fill ins(%zero : f32) outs(%var3_e : tensor<256xf32>) -> tensor<256xf32>
  %var3 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%z3, %mu3 : tensor<256x64xf32>, tensor<256xf32>) outs(%var3_0 : tensor<256xf32>) {
  ^bb0(%z: f32, %m: f32, %acc: f32):
    %d = arith.subf %z, %m : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %r3_e = tensor.empty() : tensor<256xf32>
  %r3 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var3 : tensor<256xf32>) outs(%r3_e : tensor<256xf32>) attrs = {remat.phase = "forward"} {
  ^bb0(%v: f32, %out: f32):
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %a3_e = tensor.empty() : tensor<256x64xf32>
  %a3 = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%z3, %mu3, %r3 : tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>) outs(%a3_e : tensor<256x64xf32>) {
  ^bb0(%z: f32, %m: f32, %r: f32, %out: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %a = arith.maximumf %n, %zero : f32
    linalg.yield %a : f32
  } -> tensor<256x64xf32>

  // block 4
  %z4_e = tensor.empty() : tensor<256x64xf32>
  %z4_0 = linalg.fill ins(%zero : f32) outs(%z4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z4 = linalg.matmul ins(%a3, %w4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %mu4_e = tensor.empty() : tensor<256xf32>
  %mu4_0 = linalg.fill ins(%zero : f32) outs(%mu4_e : tensor<256xf32>) -> tensor<256xf32>
  %mu4 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%z4 : tensor<256x64xf32>) outs(%mu4_0 : tensor<256xf32>) attrs = {remat.phase = "forward"} {
  ^bb0(%z: f32, %acc: f32):
    %k = arith.mulf %z, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %var4_e = tensor.empty() : tensor<256xf32>
  %var4_0 = linalg.fill ins(%zero : f32) outs(%var4_e : tensor<256xf32>) -> tensor<256xf32>
  %var4 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%z4, %mu4 : tensor<256x64xf32>, tensor<256xf32>) outs(%var4_0 : tensor<256xf32>) {
  ^bb0(%z: f32, %m: f32, %acc: f32):
    %d = arith.subf %z, %m : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %r4_e = tensor.empty() : tensor<256xf32>
  %r4 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%var4 : tensor<256xf32>) outs(%r4_e : tensor<256xf32>) attrs = {remat.phase = "forward"} {
  ^bb0(%v: f32, %out: f32):
    %ve = arith.addf %v, %eps : f32
    %r = math.rsqrt %ve : f32
    linalg.yield %r : f32
  } -> tensor<256xf32>
  %a4_e = tensor.empty() : tensor<256x64xf32>
  %a4 = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%z4, %mu4, %r4 : tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>) outs(%a4_e : tensor<256x64xf32>) {
  ^bb0(%z: f32, %m: f32, %r: f32, %out: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %a = arith.maximumf %n, %zero : f32
    linalg.yield %a : f32
  } -> tensor<256x64xf32>
  %pred_e = tensor.empty() : tensor<256x64xf32>
  %pred_0 = linalg.fill ins(%zero : f32) outs(%pred_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %pred = linalg.matmul ins(%a4, %wo : tensor<256x64xf32>, tensor<64x64xf32>) outs(%pred_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%pred, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%loss_0 : tensor<f32>) {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %half_over_b : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward: the first op is tagged, the rest follows from it
  %gout_e = tensor.empty() : tensor<256x64xf32>
  %gout = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%pred, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gout_e : tensor<256x64xf32>) attrs = {remat.phase = "backward"} {
  ^bb0(%p: f32, %t: f32, %o: f32):
    %d = arith.subf %p, %t : f32
    %g = arith.mulf %d, %inv_b : f32
    linalg.yield %g : f32
  } -> tensor<256x64xf32>
  %at5_e = tensor.empty() : tensor<64x256xf32>
  %at5 = linalg.transpose ins(%a4 : tensor<256x64xf32>) outs(%at5_e : tensor<64x256xf32>) permutation = [1, 0]
  %dwo_e = tensor.empty() : tensor<64x64xf32>
  %dwo_0 = linalg.fill ins(%zero : f32) outs(%dwo_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwo = linalg.matmul ins(%at5, %gout : tensor<64x256xf32>, tensor<256x64xf32>) outs(%dwo_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %wot_e = tensor.empty() : tensor<64x64xf32>
  %wot = linalg.transpose ins(%wo : tensor<64x64xf32>) outs(%wot_e : tensor<64x64xf32>) permutation = [1, 0]
  %g4_e = tensor.empty() : tensor<256x64xf32>
  %g4_0 = linalg.fill ins(%zero : f32) outs(%g4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g4 = linalg.matmul ins(%gout, %wot : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 4
  %gn4_e = tensor.empty() : tensor<256x64xf32>
  %gn4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g4, %a4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gn4_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mg4_e = tensor.empty() : tensor<256xf32>
  %mg4_0 = linalg.fill ins(%zero : f32) outs(%mg4_e : tensor<256xf32>) -> tensor<256xf32>
  %mg4 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%gn4 : tensor<256x64xf32>) outs(%mg4_0 : tensor<256xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %k = arith.mulf %g, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %mgn4_e = tensor.empty() : tensor<256xf32>
  %mgn4_0 = linalg.fill ins(%zero : f32) outs(%mgn4_e : tensor<256xf32>) -> tensor<256xf32>
  %mgn4 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%gn4, %z4, %mu4, %r4 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>) outs(%mgn4_0 : tensor<256xf32>) {
  ^bb0(%g: f32, %z: f32, %m: f32, %r: f32, %acc: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %gn = arith.mulf %g, %n : f32
    %k = arith.mulf %gn, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %dz4_e = tensor.empty() : tensor<256x64xf32>
  %dz4 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%gn4, %z4, %mu4, %r4, %mg4, %mgn4 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) outs(%dz4_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %m: f32, %r: f32, %mg: f32, %mgn: f32, %out: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %t1 = arith.subf %g, %mg : f32
    %t2 = arith.mulf %n, %mgn : f32
    %t3 = arith.subf %t1, %t2 : f32
    %dz = arith.mulf %t3, %r : f32
    linalg.yield %dz : f32
  } -> tensor<256x64xf32>
  %at4_e = tensor.empty() : tensor<64x256xf32>
  %at4 = linalg.transpose ins(%a3 : tensor<256x64xf32>) outs(%at4_e : tensor<64x256xf32>) permutation = [1, 0]
  %dw4_e = tensor.empty() : tensor<64x64xf32>
  %dw4_0 = linalg.fill ins(%zero : f32) outs(%dw4_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw4 = linalg.matmul ins(%at4, %dz4 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%dw4_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %wt4_e = tensor.empty() : tensor<64x64xf32>
  %wt4 = linalg.transpose ins(%w4 : tensor<64x64xf32>) outs(%wt4_e : tensor<64x64xf32>) permutation = [1, 0]
  %g3_e = tensor.empty() : tensor<256x64xf32>
  %g3_0 = linalg.fill ins(%zero : f32) outs(%g3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g3 = linalg.matmul ins(%dz4, %wt4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 3
  %gn3_e = tensor.empty() : tensor<256x64xf32>
  %gn3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g3, %a3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gn3_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mg3_e = tensor.empty() : tensor<256xf32>
  %mg3_0 = linalg.fill ins(%zero : f32) outs(%mg3_e : tensor<256xf32>) -> tensor<256xf32>
  %mg3 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%gn3 : tensor<256x64xf32>) outs(%mg3_0 : tensor<256xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %k = arith.mulf %g, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %mgn3_e = tensor.empty() : tensor<256xf32>
  %mgn3_0 = linalg.fill ins(%zero : f32) outs(%mgn3_e : tensor<256xf32>) -> tensor<256xf32>
  %mgn3 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%gn3, %z3, %mu3, %r3 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>) outs(%mgn3_0 : tensor<256xf32>) {
  ^bb0(%g: f32, %z: f32, %m: f32, %r: f32, %acc: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %gn = arith.mulf %g, %n : f32
    %k = arith.mulf %gn, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %dz3_e = tensor.empty() : tensor<256x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%gn3, %z3, %mu3, %r3, %mg3, %mgn3 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) outs(%dz3_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %m: f32, %r: f32, %mg: f32, %mgn: f32, %out: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %t1 = arith.subf %g, %mg : f32
    %t2 = arith.mulf %n, %mgn : f32
    %t3 = arith.subf %t1, %t2 : f32
    %dz = arith.mulf %t3, %r : f32
    linalg.yield %dz : f32
  } -> tensor<256x64xf32>
  %at3_e = tensor.empty() : tensor<64x256xf32>
  %at3 = linalg.transpose ins(%a2 : tensor<256x64xf32>) outs(%at3_e : tensor<64x256xf32>) permutation = [1, 0]
  %dw3_e = tensor.empty() : tensor<64x64xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3 = linalg.matmul ins(%at3, %dz3 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%dw3_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %wt3_e = tensor.empty() : tensor<64x64xf32>
  %wt3 = linalg.transpose ins(%w3 : tensor<64x64xf32>) outs(%wt3_e : tensor<64x64xf32>) permutation = [1, 0]
  %g2_e = tensor.empty() : tensor<256x64xf32>
  %g2_0 = linalg.fill ins(%zero : f32) outs(%g2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g2 = linalg.matmul ins(%dz3, %wt3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 2
  %gn2_e = tensor.empty() : tensor<256x64xf32>
  %gn2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g2, %a2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gn2_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mg2_e = tensor.empty() : tensor<256xf32>
  %mg2_0 = linalg.fill ins(%zero : f32) outs(%mg2_e : tensor<256xf32>) -> tensor<256xf32>
  %mg2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%gn2 : tensor<256x64xf32>) outs(%mg2_0 : tensor<256xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %k = arith.mulf %g, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %mgn2_e = tensor.empty() : tensor<256xf32>
  %mgn2_0 = linalg.fill ins(%zero : f32) outs(%mgn2_e : tensor<256xf32>) -> tensor<256xf32>
  %mgn2 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%gn2, %z2, %mu2, %r2 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>) outs(%mgn2_0 : tensor<256xf32>) {
  ^bb0(%g: f32, %z: f32, %m: f32, %r: f32, %acc: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %gn = arith.mulf %g, %n : f32
    %k = arith.mulf %gn, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %dz2_e = tensor.empty() : tensor<256x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%gn2, %z2, %mu2, %r2, %mg2, %mgn2 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) outs(%dz2_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %m: f32, %r: f32, %mg: f32, %mgn: f32, %out: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %t1 = arith.subf %g, %mg : f32
    %t2 = arith.mulf %n, %mgn : f32
    %t3 = arith.subf %t1, %t2 : f32
    %dz = arith.mulf %t3, %r : f32
    linalg.yield %dz : f32
  } -> tensor<256x64xf32>
  %at2_e = tensor.empty() : tensor<64x256xf32>
  %at2 = linalg.transpose ins(%a1 : tensor<256x64xf32>) outs(%at2_e : tensor<64x256xf32>) permutation = [1, 0]
  %dw2_e = tensor.empty() : tensor<64x64xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2 = linalg.matmul ins(%at2, %dz2 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%dw2_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %wt2_e = tensor.empty() : tensor<64x64xf32>
  %wt2 = linalg.transpose ins(%w2 : tensor<64x64xf32>) outs(%wt2_e : tensor<64x64xf32>) permutation = [1, 0]
  %g1_e = tensor.empty() : tensor<256x64xf32>
  %g1_0 = linalg.fill ins(%zero : f32) outs(%g1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g1 = linalg.matmul ins(%dz2, %wt2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 1
  %gn1_e = tensor.empty() : tensor<256x64xf32>
  %gn1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g1, %a1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gn1_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mg1_e = tensor.empty() : tensor<256xf32>
  %mg1_0 = linalg.fill ins(%zero : f32) outs(%mg1_e : tensor<256xf32>) -> tensor<256xf32>
  %mg1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%gn1 : tensor<256x64xf32>) outs(%mg1_0 : tensor<256xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %k = arith.mulf %g, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %mgn1_e = tensor.empty() : tensor<256xf32>
  %mgn1_0 = linalg.fill ins(%zero : f32) outs(%mgn1_e : tensor<256xf32>) -> tensor<256xf32>
  %mgn1 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%gn1, %z1, %mu1, %r1 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>) outs(%mgn1_0 : tensor<256xf32>) {
  ^bb0(%g: f32, %z: f32, %m: f32, %r: f32, %acc: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %gn = arith.mulf %g, %n : f32
    %k = arith.mulf %gn, %inv_d : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %dz1_e = tensor.empty() : tensor<256x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%gn1, %z1, %mu1, %r1, %mg1, %mgn1 : tensor<256x64xf32>, tensor<256x64xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) outs(%dz1_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %m: f32, %r: f32, %mg: f32, %mgn: f32, %out: f32):
    %d = arith.subf %z, %m : f32
    %n = arith.mulf %d, %r : f32
    %t1 = arith.subf %g, %mg : f32
    %t2 = arith.mulf %n, %mgn : f32
    %t3 = arith.subf %t1, %t2 : f32
    %dz = arith.mulf %t3, %r : f32
    linalg.yield %dz : f32
  } -> tensor<256x64xf32>
  %at1_e = tensor.empty() : tensor<64x256xf32>
  %at1 = linalg.transpose ins(%x : tensor<256x64xf32>) outs(%at1_e : tensor<64x256xf32>) permutation = [1, 0]
  %dw1_e = tensor.empty() : tensor<64x64xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1 = linalg.matmul ins(%at1, %dz1 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%dw1_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  return %loss, %dw1, %dw2, %dw3, %dw4, %dwo : tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
