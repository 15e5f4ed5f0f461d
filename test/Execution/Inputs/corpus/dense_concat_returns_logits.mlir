// DenseNet-style feature concatenation with tensor.concat (as torch.cat
// becomes in torch-mlir), the step also RETURNS a forward activation (the
// predictions) besides the loss and the gradients, and the backward splits
// the concatenated gradient with tensor.extract_slice views. Batch 256,
// input 32 features, growth 32 per layer, 16 outputs.
//
// Forward:  h_1 = relu(x W_1), c_1 = concat(x, h_1) (256x64);
//           h_2 = relu(c_1 W_2), c_2 = concat(c_1, h_2) (256x96);
//           h_3 = relu(c_2 W_3), c_3 = concat(c_2, h_3) (256x128); out = c_3 W_o.
// Loss:     (0.5 / B) sum (out - y)^2 marked `remat.loss`.
// Backward: scalar seed; gout = seed/B (out - y); dW_o = c_3^T gout;
//           gc_3 = gout W_o^T; for l = 3..1: gh_l = gc_l[:, last 32 columns] and
//           the rest gc_l[:, :C] are extract_slice views; dz_l = select(h_l > 0, gh_l, 0);
//           dW_l = c_(l-1)^T dz_l (c_0 = x); gc_(l-1) = rest + dz_l W_l^T (linalg.add).
// Returns (loss, out, dW_1, dW_2, dW_3, dW_o).
// Written with a throwaway Python loop over the layers.

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#dw_lhs = affine_map<(i, j, b) -> (b, i)>
#dw_rhs = affine_map<(i, j, b) -> (b, j)>
#dw_out = affine_map<(i, j, b) -> (i, j)>
#dg_lhs = affine_map<(b, i, j) -> (b, j)>
#dg_rhs = affine_map<(b, i, j) -> (i, j)>
#dg_out = affine_map<(b, i, j) -> (b, i)>

func.func @train_step(%x: tensor<256x32xf32>, %y: tensor<256x16xf32>, %w1: tensor<32x32xf32>, %w2: tensor<64x32xf32>, %w3: tensor<96x32xf32>, %wo: tensor<128x16xf32>)
    -> (tensor<f32>, tensor<256x16xf32>, tensor<32x32xf32>, tensor<64x32xf32>, tensor<96x32xf32>, tensor<128x16xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %half_over_b = arith.constant 1.953125e-03 : f32
  %inv_b = arith.constant 3.906250e-03 : f32

  // layer 1
  %m1_e = tensor.empty() : tensor<256x32xf32>
  %m1_0 = linalg.fill ins(%zero : f32) outs(%m1_e : tensor<256x32xf32>) -> tensor<256x32xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<256x32xf32>, tensor<32x32xf32>) outs(%m1_0 : tensor<256x32xf32>) -> tensor<256x32xf32>
  %h1_e = tensor.empty() : tensor<256x32xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m1 : tensor<256x32xf32>) outs(%h1_e : tensor<256x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x32xf32>
  %c1 = tensor.concat dim(1) %x, %h1 : (tensor<256x32xf32>, tensor<256x32xf32>) -> tensor<256x64xf32>

  // layer 2
  %m2_e = tensor.empty() : tensor<256x32xf32>
  %m2_0 = linalg.fill ins(%zero : f32) outs(%m2_e : tensor<256x32xf32>) -> tensor<256x32xf32>
  %m2 = linalg.matmul ins(%c1, %w2 : tensor<256x64xf32>, tensor<64x32xf32>) outs(%m2_0 : tensor<256x32xf32>) -> tensor<256x32xf32>
  %h2_e = tensor.empty() : tensor<256x32xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m2 : tensor<256x32xf32>) outs(%h2_e : tensor<256x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x32xf32>
  %c2 = tensor.concat dim(1) %c1, %h2 : (tensor<256x64xf32>, tensor<256x32xf32>) -> tensor<256x96xf32>

  // layer 3
  %m3_e = tensor.empty() : tensor<256x32xf32>
  %m3_0 = linalg.fill ins(%zero : f32) outs(%m3_e : tensor<256x32xf32>) -> tensor<256x32xf32>
  %m3 = linalg.matmul ins(%c2, %w3 : tensor<256x96xf32>, tensor<96x32xf32>) outs(%m3_0 : tensor<256x32xf32>) -> tensor<256x32xf32>
  %h3_e = tensor.empty() : tensor<256x32xf32>
  %h3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m3 : tensor<256x32xf32>) outs(%h3_e : tensor<256x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x32xf32>
  %c3 = tensor.concat dim(1) %c2, %h3 : (tensor<256x96xf32>, tensor<256x32xf32>) -> tensor<256x128xf32>

  // head and loss
  %out_e = tensor.empty() : tensor<256x16xf32>
  %out_0 = linalg.fill ins(%zero : f32) outs(%out_e : tensor<256x16xf32>) -> tensor<256x16xf32>
  %pred = linalg.matmul ins(%c3, %wo : tensor<256x128xf32>, tensor<128x16xf32>) outs(%out_0 : tensor<256x16xf32>) -> tensor<256x16xf32>
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%pred, %y : tensor<256x16xf32>, tensor<256x16xf32>) outs(%loss_0 : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %half_over_b : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward
  %seed = arith.constant {remat.seed} 1.000000e+00 : f32
  %gout_e = tensor.empty() : tensor<256x16xf32>
  %gout = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%pred, %y : tensor<256x16xf32>, tensor<256x16xf32>) outs(%gout_e : tensor<256x16xf32>) {
  ^bb0(%p: f32, %t: f32, %o: f32):
    %d = arith.subf %p, %t : f32
    %k = arith.mulf %d, %inv_b : f32
    %g = arith.mulf %k, %seed : f32
    linalg.yield %g : f32
  } -> tensor<256x16xf32>
  %dwo_e = tensor.empty() : tensor<128x16xf32>
  %dwo_0 = linalg.fill ins(%zero : f32) outs(%dwo_e : tensor<128x16xf32>) -> tensor<128x16xf32>
  %dwo = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%c3, %gout : tensor<256x128xf32>, tensor<256x16xf32>) outs(%dwo_0 : tensor<128x16xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<128x16xf32>
  %gc3_e = tensor.empty() : tensor<256x128xf32>
  %gc3_0 = linalg.fill ins(%zero : f32) outs(%gc3_e : tensor<256x128xf32>) -> tensor<256x128xf32>
  %gc3 = linalg.generic {indexing_maps = [#dg_lhs, #dg_rhs, #dg_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%gout, %wo : tensor<256x16xf32>, tensor<128x16xf32>) outs(%gc3_0 : tensor<256x128xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x128xf32>

  // layer 3
  %gh3 = tensor.extract_slice %gc3[0, 96] [256, 32] [1, 1] : tensor<256x128xf32> to tensor<256x32xf32>
  %rest3 = tensor.extract_slice %gc3[0, 0] [256, 96] [1, 1] : tensor<256x128xf32> to tensor<256x96xf32>
  %dz3_e = tensor.empty() : tensor<256x32xf32>
  %dz3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh3, %h3 : tensor<256x32xf32>, tensor<256x32xf32>) outs(%dz3_e : tensor<256x32xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %pos = arith.cmpf ogt, %h, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x32xf32>
  %dw3_e = tensor.empty() : tensor<96x32xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<96x32xf32>) -> tensor<96x32xf32>
  %dw3 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%c2, %dz3 : tensor<256x96xf32>, tensor<256x32xf32>) outs(%dw3_0 : tensor<96x32xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<96x32xf32>
  %t3_e = tensor.empty() : tensor<256x96xf32>
  %t3_0 = linalg.fill ins(%zero : f32) outs(%t3_e : tensor<256x96xf32>) -> tensor<256x96xf32>
  %t3 = linalg.generic {indexing_maps = [#dg_lhs, #dg_rhs, #dg_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dz3, %w3 : tensor<256x32xf32>, tensor<96x32xf32>) outs(%t3_0 : tensor<256x96xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x96xf32>
  %gc2_e = tensor.empty() : tensor<256x96xf32>
  %gc2 = linalg.add ins(%rest3, %t3 : tensor<256x96xf32>, tensor<256x96xf32>) outs(%gc2_e : tensor<256x96xf32>) -> tensor<256x96xf32>

  // layer 2
  %gh2 = tensor.extract_slice %gc2[0, 64] [256, 32] [1, 1] : tensor<256x96xf32> to tensor<256x32xf32>
  %rest2 = tensor.extract_slice %gc2[0, 0] [256, 64] [1, 1] : tensor<256x96xf32> to tensor<256x64xf32>
  %dz2_e = tensor.empty() : tensor<256x32xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh2, %h2 : tensor<256x32xf32>, tensor<256x32xf32>) outs(%dz2_e : tensor<256x32xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %pos = arith.cmpf ogt, %h, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x32xf32>
  %dw2_e = tensor.empty() : tensor<64x32xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %dw2 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%c1, %dz2 : tensor<256x64xf32>, tensor<256x32xf32>) outs(%dw2_0 : tensor<64x32xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %t2_e = tensor.empty() : tensor<256x64xf32>
  %t2_0 = linalg.fill ins(%zero : f32) outs(%t2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %t2 = linalg.generic {indexing_maps = [#dg_lhs, #dg_rhs, #dg_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dz2, %w2 : tensor<256x32xf32>, tensor<64x32xf32>) outs(%t2_0 : tensor<256x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<256x64xf32>
  %gc1_e = tensor.empty() : tensor<256x64xf32>
  %gc1 = linalg.add ins(%rest2, %t2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%gc1_e : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 1
  %gh1 = tensor.extract_slice %gc1[0, 32] [256, 32] [1, 1] : tensor<256x64xf32> to tensor<256x32xf32>
  %rest1 = tensor.extract_slice %gc1[0, 0] [256, 32] [1, 1] : tensor<256x64xf32> to tensor<256x32xf32>
  %dz1_e = tensor.empty() : tensor<256x32xf32>
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh1, %h1 : tensor<256x32xf32>, tensor<256x32xf32>) outs(%dz1_e : tensor<256x32xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %pos = arith.cmpf ogt, %h, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x32xf32>
  %dw1_e = tensor.empty() : tensor<32x32xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %dw1 = linalg.generic {indexing_maps = [#dw_lhs, #dw_rhs, #dw_out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %dz1 : tensor<256x32xf32>, tensor<256x32xf32>) outs(%dw1_0 : tensor<32x32xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<32x32xf32>

  return %loss, %pred, %dw1, %dw2, %dw3, %dwo : tensor<f32>, tensor<256x16xf32>, tensor<32x32xf32>, tensor<64x32xf32>, tensor<96x32xf32>, tensor<128x16xf32>
}
