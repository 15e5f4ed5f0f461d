// Joint-graph style: the step takes the gradient of the loss as an argument
// marked `remat.tangent` (like a framework's joint forward/backward graph),
// so nothing inside is marked. 4-layer MLP with biases, batch 256, width 64.
//
// Forward:  z_l = a_(l-1) W_l + b_l  (the bias is broadcast with linalg.broadcast
//           into the matmul's destination, which then accumulates into it),
//           a_l = max(z_l, 0) (arith.maximumf) for l < 4, a_0 = x, out = z_4.
// Loss:     mean((out - y)^2) over all 256*64 elements: a reduction to
//           tensor<f32>, then a rank-0 generic that divides by the count.
// Backward: seeded by %dloss: g_4 = dloss * 2/N * (out - y);
//           ReLU mask from the PRE-activation: dz_l = select(z_l > 0, g_l, 0),
//           so the forward saves both z_l (mask) and a_l (weight gradient).
//           Textbook order, explicit transposes: dW_l = transpose(a_(l-1)) dz_l,
//           db_l = sum over the batch of dz_l (linalg.reduce),
//           g_(l-1) = dz_l transpose(W_l).
// Returns (loss, dW_1, db_1, ..., dW_4, db_4).
// Written with a throwaway Python loop over the layers (one block per layer).

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#r0 = affine_map<() -> ()>

func.func @train_step(%x: tensor<256x64xf32>, %y: tensor<256x64xf32>, %w1: tensor<64x64xf32>, %b1: tensor<64xf32>, %w2: tensor<64x64xf32>, %b2: tensor<64xf32>, %w3: tensor<64x64xf32>, %b3: tensor<64xf32>, %w4: tensor<64x64xf32>, %b4: tensor<64xf32>, %dloss: tensor<f32> {remat.tangent})
    -> (tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %inv_n = arith.constant 6.103516e-05 : f32
  %two_over_n = arith.constant 1.220703e-04 : f32

  // layer 1
  %bb1_e = tensor.empty() : tensor<256x64xf32>
  %bb1 = linalg.broadcast ins(%b1 : tensor<64xf32>) outs(%bb1_e : tensor<256x64xf32>) dimensions = [0]
  %z1 = linalg.matmul ins(%x, %w1 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%bb1 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a1_e = tensor.empty() : tensor<256x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<256x64xf32>) outs(%a1_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 2
  %bb2_e = tensor.empty() : tensor<256x64xf32>
  %bb2 = linalg.broadcast ins(%b2 : tensor<64xf32>) outs(%bb2_e : tensor<256x64xf32>) dimensions = [0]
  %z2 = linalg.matmul ins(%a1, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%bb2 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a2_e = tensor.empty() : tensor<256x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<256x64xf32>) outs(%a2_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 3
  %bb3_e = tensor.empty() : tensor<256x64xf32>
  %bb3 = linalg.broadcast ins(%b3 : tensor<64xf32>) outs(%bb3_e : tensor<256x64xf32>) dimensions = [0]
  %z3 = linalg.matmul ins(%a2, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%bb3 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %a3_e = tensor.empty() : tensor<256x64xf32>
  %a3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z3 : tensor<256x64xf32>) outs(%a3_e : tensor<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>

  // layer 4
  %bb4_e = tensor.empty() : tensor<256x64xf32>
  %bb4 = linalg.broadcast ins(%b4 : tensor<64xf32>) outs(%bb4_e : tensor<256x64xf32>) dimensions = [0]
  %z4 = linalg.matmul ins(%a3, %w4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%bb4 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // loss = mean((out - y)^2)
  %sum_e = tensor.empty() : tensor<f32>
  %sum_0 = linalg.fill ins(%zero : f32) outs(%sum_e : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%z4, %y : tensor<256x64xf32>, tensor<256x64xf32>) outs(%sum_0 : tensor<f32>) {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %loss_e = tensor.empty() : tensor<f32>
  %loss = linalg.generic {indexing_maps = [#r0, #r0], iterator_types = []} ins(%sum : tensor<f32>) outs(%loss_e : tensor<f32>) {
  ^bb0(%s: f32, %out: f32):
    %m = arith.mulf %s, %inv_n : f32
    linalg.yield %m : f32
  } -> tensor<f32>

  // ---- backward, seeded by %dloss
  %g4_e = tensor.empty() : tensor<256x64xf32>
  %g4 = linalg.generic {indexing_maps = [#id, #id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%z4, %y, %dloss : tensor<256x64xf32>, tensor<256x64xf32>, tensor<f32>) outs(%g4_e : tensor<256x64xf32>) {
  ^bb0(%p: f32, %t: f32, %s: f32, %out: f32):
    %d = arith.subf %p, %t : f32
    %k = arith.mulf %d, %two_over_n : f32
    %g = arith.mulf %k, %s : f32
    linalg.yield %g : f32
  } -> tensor<256x64xf32>

  // layer 4
  %at4_e = tensor.empty() : tensor<64x256xf32>
  %at4 = linalg.transpose ins(%a3 : tensor<256x64xf32>) outs(%at4_e : tensor<64x256xf32>) permutation = [1, 0]
  %dw4_e = tensor.empty() : tensor<64x64xf32>
  %dw4_0 = linalg.fill ins(%zero : f32) outs(%dw4_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw4 = linalg.matmul ins(%at4, %g4 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%dw4_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %db4_e = tensor.empty() : tensor<64xf32>
  %db4_0 = linalg.fill ins(%zero : f32) outs(%db4_e : tensor<64xf32>) -> tensor<64xf32>
  %db4 = linalg.reduce ins(%g4 : tensor<256x64xf32>) outs(%db4_0 : tensor<64xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %wt4_e = tensor.empty() : tensor<64x64xf32>
  %wt4 = linalg.transpose ins(%w4 : tensor<64x64xf32>) outs(%wt4_e : tensor<64x64xf32>) permutation = [1, 0]
  %g3_e = tensor.empty() : tensor<256x64xf32>
  %g3_0 = linalg.fill ins(%zero : f32) outs(%g3_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g3 = linalg.matmul ins(%g4, %wt4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g3_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 3
  %dz3_e = tensor.empty() : tensor<256x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g3, %z3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz3_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %at3_e = tensor.empty() : tensor<64x256xf32>
  %at3 = linalg.transpose ins(%a2 : tensor<256x64xf32>) outs(%at3_e : tensor<64x256xf32>) permutation = [1, 0]
  %dw3_e = tensor.empty() : tensor<64x64xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3 = linalg.matmul ins(%at3, %dz3 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%dw3_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %db3_e = tensor.empty() : tensor<64xf32>
  %db3_0 = linalg.fill ins(%zero : f32) outs(%db3_e : tensor<64xf32>) -> tensor<64xf32>
  %db3 = linalg.reduce ins(%dz3 : tensor<256x64xf32>) outs(%db3_0 : tensor<64xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %wt3_e = tensor.empty() : tensor<64x64xf32>
  %wt3 = linalg.transpose ins(%w3 : tensor<64x64xf32>) outs(%wt3_e : tensor<64x64xf32>) permutation = [1, 0]
  %g2_e = tensor.empty() : tensor<256x64xf32>
  %g2_0 = linalg.fill ins(%zero : f32) outs(%g2_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g2 = linalg.matmul ins(%dz3, %wt3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g2_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 2
  %dz2_e = tensor.empty() : tensor<256x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g2, %z2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz2_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %at2_e = tensor.empty() : tensor<64x256xf32>
  %at2 = linalg.transpose ins(%a1 : tensor<256x64xf32>) outs(%at2_e : tensor<64x256xf32>) permutation = [1, 0]
  %dw2_e = tensor.empty() : tensor<64x64xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2 = linalg.matmul ins(%at2, %dz2 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%dw2_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %db2_e = tensor.empty() : tensor<64xf32>
  %db2_0 = linalg.fill ins(%zero : f32) outs(%db2_e : tensor<64xf32>) -> tensor<64xf32>
  %db2 = linalg.reduce ins(%dz2 : tensor<256x64xf32>) outs(%db2_0 : tensor<64xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %wt2_e = tensor.empty() : tensor<64x64xf32>
  %wt2 = linalg.transpose ins(%w2 : tensor<64x64xf32>) outs(%wt2_e : tensor<64x64xf32>) permutation = [1, 0]
  %g1_e = tensor.empty() : tensor<256x64xf32>
  %g1_0 = linalg.fill ins(%zero : f32) outs(%g1_e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g1 = linalg.matmul ins(%dz2, %wt2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%g1_0 : tensor<256x64xf32>) -> tensor<256x64xf32>

  // layer 1
  %dz1_e = tensor.empty() : tensor<256x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g1, %z1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%dz1_e : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %out: f32):
    %pos = arith.cmpf ogt, %z, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %at1_e = tensor.empty() : tensor<64x256xf32>
  %at1 = linalg.transpose ins(%x : tensor<256x64xf32>) outs(%at1_e : tensor<64x256xf32>) permutation = [1, 0]
  %dw1_e = tensor.empty() : tensor<64x64xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1 = linalg.matmul ins(%at1, %dz1 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%dw1_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %db1_e = tensor.empty() : tensor<64xf32>
  %db1_0 = linalg.fill ins(%zero : f32) outs(%db1_e : tensor<64xf32>) -> tensor<64xf32>
  %db1 = linalg.reduce ins(%dz1 : tensor<256x64xf32>) outs(%db1_0 : tensor<64xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }

  return %loss, %dw1, %db1, %dw2, %db2, %dw3, %db3, %dw4, %db4 : tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>
}
