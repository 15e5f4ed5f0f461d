// Unusual program order and forward-auxiliary values: every weight transpose
// W_l^T is computed at the very TOP of the function (before the forward pass),
// and each ReLU's backward mask is computed EAGERLY in the forward pass as a
// boolean tensor (tensor<256x64xi1>, like PyTorch's `mask = z > 0`), which only
// the backward reads. 6-layer ReLU MLP, batch 256, width 64, no biases.
//
// Prologue: wt_l = linalg.transpose(W_l) for l = 2..6.
// Forward:  z_l = a_(l-1) W_l, a_l = max(z_l, 0) (arith.maximumf),
//           mask_l = (z_l > 0) : i1, a_0 = x.
// Loss:     sum(0.5 (a_6 - y)^2) marked `remat.loss`.
// Backward: seed `arith.constant {remat.seed} 1.0 : f32`, g_6 = seed (a_6 - y);
//           dz_l = select(mask_l, g_l, 0); dW_l = a_(l-1)^T dz_l (generic
//           contraction); g_(l-1) = dz_l wt_l (plain linalg.matmul on the
//           transposes computed in the prologue).
// Returns (loss, dW_1, ..., dW_6).
// Written with a throwaway Python loop over the layers.

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#dw_lhs = affine_map<(i, j, b) -> (b, i)>
#dw_rhs = affine_map<(i, j, b) -> (b, j)>
#dw_out = affine_map<(i, j, b) -> (i, j)>

func.func @train_step(%x: tensor<256x64xf32>, %y: tensor<256x64xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>, %w3: tensor<64x64xf32>, %w4: tensor<64x64xf32>, %w5: tensor<64x64xf32>, %w6: tensor<64x64xf32>)
    -> (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  // ---- prologue: the transposed weights the backward pass multiplies by
  %wt2_e = tensor.empty() : tensor<64x64xf32>
  %wt2 = linalg.transpose ins(%w2 : tensor<64x64xf32>) outs(%wt2_e : tensor<64x64xf32>) permutation = [1, 0]
  %wt3_e = tensor.empty() : tensor<64x64xf32>
  %wt3 = linalg.transpose ins(%w3 : tensor<64x64xf32>) outs(%wt3_e : tensor<64x64xf32>) permutation = [1, 0]
  %wt4_e = tensor.empty() : tensor<64x64xf32>
  %wt4 = linalg.transpose ins(%w4 : tensor<64x64xf32>) outs(%wt4_e : tensor<64x64xf32>) permutation = [1, 0]
  %wt5_e = tensor.empty() : tensor<64x64xf32>
  %wt5 = linalg.transpose ins(%w5 : tensor<64x64xf32>) outs(%wt5_e : tensor<64x64xf32>) permutation = [1, 0]
  %wt6_e = tensor.empty() : tensor<64x64xf32>
  %wt6 = linalg.transpose ins(%w6 : tensor<64x64xf32>) outs(%wt6_e : tensor<64x64xf32>) permutation = [1, 0]
  %zero = arith.constant 0.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32

  // layer 1
  %z1_e = tensor.empty() : tensor<256x64xf32>
  %z1_0 = linalg.fill ins(%zero : f32) outs(%z1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z1 = linalg.matmul ins(%x, %w1 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a1_e = tensor.empty() : tensor<256x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<256x64xf32>) outs(%a1_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mask1_e = tensor.empty() : tensor<256x64xi1>
  %mask1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<256x64xf32>) outs(%mask1_e : tensor<256x64xi1>) {
  ^bb0(%in: f32, %out: i1):
    %pos = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %pos : i1
  } -> tensor<256x64xi1>

  // layer 2
  %z2_e = tensor.empty() : tensor<256x64xf32>
  %z2_0 = linalg.fill ins(%zero : f32) outs(%z2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z2 = linalg.matmul ins(%a1, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a2_e = tensor.empty() : tensor<256x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<256x64xf32>) outs(%a2_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mask2_e = tensor.empty() : tensor<256x64xi1>
  %mask2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<256x64xf32>) outs(%mask2_e : tensor<256x64xi1>) {
  ^bb0(%in: f32, %out: i1):
    %pos = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %pos : i1
  } -> tensor<256x64xi1>

  // layer 3
  %z3_e = tensor.empty() : tensor<256x64xf32>
  %z3_0 = linalg.fill ins(%zero : f32) outs(%z3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z3 = linalg.matmul ins(%a2, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a3_e = tensor.empty() : tensor<256x64xf32>
  %a3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z3 : tensor<256x64xf32>) outs(%a3_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mask3_e = tensor.empty() : tensor<256x64xi1>
  %mask3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z3 : tensor<256x64xf32>) outs(%mask3_e : tensor<256x64xi1>) {
  ^bb0(%in: f32, %out: i1):
    %pos = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %pos : i1
  } -> tensor<256x64xi1>

  // layer 4
  %z4_e = tensor.empty() : tensor<256x64xf32>
  %z4_0 = linalg.fill ins(%zero : f32) outs(%z4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z4 = linalg.matmul ins(%a3, %w4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a4_e = tensor.empty() : tensor<256x64xf32>
  %a4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z4 : tensor<256x64xf32>) outs(%a4_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mask4_e = tensor.empty() : tensor<256x64xi1>
  %mask4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z4 : tensor<256x64xf32>) outs(%mask4_e : tensor<256x64xi1>) {
  ^bb0(%in: f32, %out: i1):
    %pos = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %pos : i1
  } -> tensor<256x64xi1>

  // layer 5
  %z5_e = tensor.empty() : tensor<256x64xf32>
  %z5_0 = linalg.fill ins(%zero : f32) outs(%z5_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z5 = linalg.matmul ins(%a4, %w5 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z5_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a5_e = tensor.empty() : tensor<256x64xf32>
  %a5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z5 : tensor<256x64xf32>) outs(%a5_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mask5_e = tensor.empty() : tensor<256x64xi1>
  %mask5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z5 : tensor<256x64xf32>) outs(%mask5_e : tensor<256x64xi1>) {
  ^bb0(%in: f32, %out: i1):
    %pos = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %pos : i1
  } -> tensor<256x64xi1>

  // layer 6
  %z6_e = tensor.empty() : tensor<256x64xf32>
  %z6_0 = linalg.fill ins(%zero : f32) outs(%z6_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z6 = linalg.matmul ins(%a5, %w6 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z6_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a6_e = tensor.empty() : tensor<256x64xf32>
  %a6 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z6 : tensor<256x64xf32>) outs(%a6_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %mask6_e = tensor.empty() : tensor<256x64xi1>
  %mask6 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z6 : tensor<256x64xf32>) outs(%mask6_e : tensor<256x64xi1>) {
  ^bb0(%in: f32, %out: i1):
    %pos = arith.cmpf ogt, %in, %zero : f32
    linalg.yield %pos : i1
  } -> tensor<256x64xi1>

  // loss = sum(0.5 (a - y)^2)
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%a6, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%loss_0 : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %h = arith.mulf %sq, %half : f32
    %s = arith.addf %acc, %h : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward
  %seed = arith.constant {remat.seed} 1.000000e+00 : f32
  %g6_e = tensor.empty() : tensor<256x64xf32>
  %g6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a6, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%g6_e : tensor<256x64xf32>) {
  ^bb0(%p: f32, %t: f32, %out: f32):
    %d = arith.subf %p, %t : f32
    %g = arith.mulf %seed, %d : f32
    linalg.yield %g : f32
  } -> tensor<256x64xf32>

  // layer 6
  %dz6_e = tensor.empty() : tensor<256x64xf32>
  %dz6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask6, %g6 : tensor<256x64xi1>, tensor<256x64xf32>) outs(%dz6_e : tensor<256x64xf32>) {
  ^bb0(%m: i1, %g: f32, %out: f32):
    %r = arith.select %m, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw6_e = tensor.empty() : tensor<64x64xf32>
  %dw6_0 = linalg.fill ins(%zero : f32) outs(%dw6_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw6 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a5, %dz6 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw6_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g5_e = tensor.empty() : tensor<256x64xf32>
  %g5_0 = linalg.fill ins(%zero : f32) outs(%g5_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g5 = linalg.matmul ins(%dz6, %wt6 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g5_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 5
  %dz5_e = tensor.empty() : tensor<256x64xf32>
  %dz5 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask5, %g5 : tensor<256x64xi1>, tensor<256x64xf32>) outs(%dz5_e : tensor<256x64xf32>) {
  ^bb0(%m: i1, %g: f32, %out: f32):
    %r = arith.select %m, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw5_e = tensor.empty() : tensor<64x64xf32>
  %dw5_0 = linalg.fill ins(%zero : f32) outs(%dw5_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw5 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a4, %dz5 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw5_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g4_e = tensor.empty() : tensor<256x64xf32>
  %g4_0 = linalg.fill ins(%zero : f32) outs(%g4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g4 = linalg.matmul ins(%dz5, %wt5 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 4
  %dz4_e = tensor.empty() : tensor<256x64xf32>
  %dz4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask4, %g4 : tensor<256x64xi1>, tensor<256x64xf32>) outs(%dz4_e : tensor<256x64xf32>) {
  ^bb0(%m: i1, %g: f32, %out: f32):
    %r = arith.select %m, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw4_e = tensor.empty() : tensor<64x64xf32>
  %dw4_0 = linalg.fill ins(%zero : f32) outs(%dw4_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw4 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a3, %dz4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw4_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g3_e = tensor.empty() : tensor<256x64xf32>
  %g3_0 = linalg.fill ins(%zero : f32) outs(%g3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g3 = linalg.matmul ins(%dz4, %wt4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 3
  %dz3_e = tensor.empty() : tensor<256x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask3, %g3 : tensor<256x64xi1>, tensor<256x64xf32>) outs(%dz3_e : tensor<256x64xf32>) {
  ^bb0(%m: i1, %g: f32, %out: f32):
    %r = arith.select %m, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw3_e = tensor.empty() : tensor<64x64xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a2, %dz3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw3_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g2_e = tensor.empty() : tensor<256x64xf32>
  %g2_0 = linalg.fill ins(%zero : f32) outs(%g2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g2 = linalg.matmul ins(%dz3, %wt3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 2
  %dz2_e = tensor.empty() : tensor<256x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask2, %g2 : tensor<256x64xi1>, tensor<256x64xf32>) outs(%dz2_e : tensor<256x64xf32>) {
  ^bb0(%m: i1, %g: f32, %out: f32):
    %r = arith.select %m, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw2_e = tensor.empty() : tensor<64x64xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a1, %dz2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw2_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %g1_e = tensor.empty() : tensor<256x64xf32>
  %g1_0 = linalg.fill ins(%zero : f32) outs(%g1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g1 = linalg.matmul ins(%dz2, %wt2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 1
  %dz1_e = tensor.empty() : tensor<256x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask1, %g1 : tensor<256x64xi1>, tensor<256x64xf32>) outs(%dz1_e : tensor<256x64xf32>) {
  ^bb0(%m: i1, %g: f32, %out: f32):
    %r = arith.select %m, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dw1_e = tensor.empty() : tensor<64x64xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %dz1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dw1_0 : tensor<64x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>

  return %loss, %dw1, %dw2, %dw3, %dw4, %dw5, %dw6 : tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
