// Residual blocks written with named linalg ops only: h_k = h_(k-1) + f_k(h_(k-1)),
// so every h_(k-1) receives its gradient from two paths (the skip and the
// block) that are summed with linalg.add. 4 blocks, batch 256, width 64.
//
// Forward:  z_k = h_(k-1) Wa_k (linalg.matmul), u_k = linalg.max(z_k, 0) where
//           0 is a splat `arith.constant dense<0.0>` tensor, v_k = u_k Wb_k,
//           h_k = linalg.add(h_(k-1), v_k), h_0 = x.
// Loss:     sum(0.5 (h_4 - y)^2) marked `remat.loss`.
// Backward: scalar seed `arith.constant {remat.seed} 1.0 : f32`; gh = seed (h_4 - y);
//           per block: dWb_k = u_k^T gh and gu = gh Wb_k^T are linalg.matmul
//           ops with an `indexing_maps` attribute that transposes an operand;
//           gz = select(u_k > 0, gu, 0) (mask from the output);
//           dWa_k = h_(k-1)^T gz, gx = gz Wa_k^T (again transposing matmuls);
//           gh_(k-1) = linalg.add(gh_k, gx).
// Returns (loss, dWa_1, dWb_1, ..., dWa_4, dWb_4).
// Written with a throwaway Python loop over the blocks.

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#km = affine_map<(d0, d1, d2) -> (d2, d0)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>

func.func @train_step(%x: tensor<256x64xf32>, %y: tensor<256x64xf32>, %wa1: tensor<64x64xf32>, %wb1: tensor<64x64xf32>, %wa2: tensor<64x64xf32>, %wb2: tensor<64x64xf32>, %wa3: tensor<64x64xf32>, %wb3: tensor<64x64xf32>, %wa4: tensor<64x64xf32>, %wb4: tensor<64x64xf32>)
    -> (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %zeros = arith.constant dense<0.000000e+00> : tensor<256x64xf32>

  // block 1
  %z1_e = tensor.empty() : tensor<256x64xf32>
  %z1_0 = linalg.fill ins(%zero : f32) outs(%z1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z1 = linalg.matmul ins(%x, %wa1 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %u1_e = tensor.empty() : tensor<256x64xf32>
  %u1 = linalg.max ins(%z1, %zeros : tensor<256x64xf32>, tensor<256x64xf32>) outs(%u1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %v1_e = tensor.empty() : tensor<256x64xf32>
  %v1_0 = linalg.fill ins(%zero : f32) outs(%v1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %v1 = linalg.matmul ins(%u1, %wb1 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%v1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %h1_e = tensor.empty() : tensor<256x64xf32>
  %h1 = linalg.add ins(%x, %v1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%h1_e : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 2
  %z2_e = tensor.empty() : tensor<256x64xf32>
  %z2_0 = linalg.fill ins(%zero : f32) outs(%z2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z2 = linalg.matmul ins(%h1, %wa2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %u2_e = tensor.empty() : tensor<256x64xf32>
  %u2 = linalg.max ins(%z2, %zeros : tensor<256x64xf32>, tensor<256x64xf32>) outs(%u2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %v2_e = tensor.empty() : tensor<256x64xf32>
  %v2_0 = linalg.fill ins(%zero : f32) outs(%v2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %v2 = linalg.matmul ins(%u2, %wb2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%v2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %h2_e = tensor.empty() : tensor<256x64xf32>
  %h2 = linalg.add ins(%h1, %v2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%h2_e : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 3
  %z3_e = tensor.empty() : tensor<256x64xf32>
  %z3_0 = linalg.fill ins(%zero : f32) outs(%z3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z3 = linalg.matmul ins(%h2, %wa3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %u3_e = tensor.empty() : tensor<256x64xf32>
  %u3 = linalg.max ins(%z3, %zeros : tensor<256x64xf32>, tensor<256x64xf32>) outs(%u3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %v3_e = tensor.empty() : tensor<256x64xf32>
  %v3_0 = linalg.fill ins(%zero : f32) outs(%v3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %v3 = linalg.matmul ins(%u3, %wb3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%v3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %h3_e = tensor.empty() : tensor<256x64xf32>
  %h3 = linalg.add ins(%h2, %v3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%h3_e : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 4
  %z4_e = tensor.empty() : tensor<256x64xf32>
  %z4_0 = linalg.fill ins(%zero : f32) outs(%z4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z4 = linalg.matmul ins(%h3, %wa4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%z4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %u4_e = tensor.empty() : tensor<256x64xf32>
  %u4 = linalg.max ins(%z4, %zeros : tensor<256x64xf32>, tensor<256x64xf32>) outs(%u4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %v4_e = tensor.empty() : tensor<256x64xf32>
  %v4_0 = linalg.fill ins(%zero : f32) outs(%v4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %v4 = linalg.matmul ins(%u4, %wb4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%v4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %h4_e = tensor.empty() : tensor<256x64xf32>
  %h4 = linalg.add ins(%h3, %v4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%h4_e : tensor<256x64xf32>) -> tensor<256x64xf32>

  // loss = sum(0.5 (h - y)^2)
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%h4, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%loss_0 : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %h = arith.mulf %sq, %half : f32
    %s = arith.addf %acc, %h : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward
  %seed = arith.constant {remat.seed} 1.000000e+00 : f32
  %gh4_e = tensor.empty() : tensor<256x64xf32>
  %gh4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%h4, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gh4_e : tensor<256x64xf32>) {
  ^bb0(%p: f32, %t: f32, %out: f32):
    %d = arith.subf %p, %t : f32
    %g = arith.mulf %seed, %d : f32
    linalg.yield %g : f32
  } -> tensor<256x64xf32>

  // block 4
  %dwb4_e = tensor.empty() : tensor<64x64xf32>
  %dwb4_0 = linalg.fill ins(%zero : f32) outs(%dwb4_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwb4 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%u4, %gh4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dwb4_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gu4_e = tensor.empty() : tensor<256x64xf32>
  %gu4_0 = linalg.fill ins(%zero : f32) outs(%gu4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gu4 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gh4, %wb4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%gu4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gz4_e = tensor.empty() : tensor<256x64xf32>
  %gz4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gu4, %u4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gz4_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %u: f32, %out: f32):
    %pos = arith.cmpf ogt, %u, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dwa4_e = tensor.empty() : tensor<64x64xf32>
  %dwa4_0 = linalg.fill ins(%zero : f32) outs(%dwa4_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwa4 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h3, %gz4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dwa4_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gx4_e = tensor.empty() : tensor<256x64xf32>
  %gx4_0 = linalg.fill ins(%zero : f32) outs(%gx4_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gx4 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gz4, %wa4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%gx4_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gh3_e = tensor.empty() : tensor<256x64xf32>
  %gh3 = linalg.add ins(%gh4, %gx4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gh3_e : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 3
  %dwb3_e = tensor.empty() : tensor<64x64xf32>
  %dwb3_0 = linalg.fill ins(%zero : f32) outs(%dwb3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwb3 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%u3, %gh3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dwb3_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gu3_e = tensor.empty() : tensor<256x64xf32>
  %gu3_0 = linalg.fill ins(%zero : f32) outs(%gu3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gu3 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gh3, %wb3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%gu3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gz3_e = tensor.empty() : tensor<256x64xf32>
  %gz3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gu3, %u3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gz3_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %u: f32, %out: f32):
    %pos = arith.cmpf ogt, %u, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dwa3_e = tensor.empty() : tensor<64x64xf32>
  %dwa3_0 = linalg.fill ins(%zero : f32) outs(%dwa3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwa3 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h2, %gz3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dwa3_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gx3_e = tensor.empty() : tensor<256x64xf32>
  %gx3_0 = linalg.fill ins(%zero : f32) outs(%gx3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gx3 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gz3, %wa3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%gx3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gh2_e = tensor.empty() : tensor<256x64xf32>
  %gh2 = linalg.add ins(%gh3, %gx3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gh2_e : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 2
  %dwb2_e = tensor.empty() : tensor<64x64xf32>
  %dwb2_0 = linalg.fill ins(%zero : f32) outs(%dwb2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwb2 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%u2, %gh2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dwb2_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gu2_e = tensor.empty() : tensor<256x64xf32>
  %gu2_0 = linalg.fill ins(%zero : f32) outs(%gu2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gu2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gh2, %wb2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%gu2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gz2_e = tensor.empty() : tensor<256x64xf32>
  %gz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gu2, %u2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gz2_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %u: f32, %out: f32):
    %pos = arith.cmpf ogt, %u, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dwa2_e = tensor.empty() : tensor<64x64xf32>
  %dwa2_0 = linalg.fill ins(%zero : f32) outs(%dwa2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwa2 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h1, %gz2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dwa2_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gx2_e = tensor.empty() : tensor<256x64xf32>
  %gx2_0 = linalg.fill ins(%zero : f32) outs(%gx2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gx2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gz2, %wa2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%gx2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gh1_e = tensor.empty() : tensor<256x64xf32>
  %gh1 = linalg.add ins(%gh2, %gx2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gh1_e : tensor<256x64xf32>) -> tensor<256x64xf32>

  // block 1
  %dwb1_e = tensor.empty() : tensor<64x64xf32>
  %dwb1_0 = linalg.fill ins(%zero : f32) outs(%dwb1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwb1 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%u1, %gh1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dwb1_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gu1_e = tensor.empty() : tensor<256x64xf32>
  %gu1_0 = linalg.fill ins(%zero : f32) outs(%gu1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gu1 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gh1, %wb1 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%gu1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %gz1_e = tensor.empty() : tensor<256x64xf32>
  %gz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gu1, %u1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gz1_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %u: f32, %out: f32):
    %pos = arith.cmpf ogt, %u, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %dwa1_e = tensor.empty() : tensor<64x64xf32>
  %dwa1_0 = linalg.fill ins(%zero : f32) outs(%dwa1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwa1 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x, %gz1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dwa1_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  return %loss, %dwa1, %dwb1, %dwa2, %dwb2, %dwa3, %dwb3, %dwa4, %dwb4 : tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}
