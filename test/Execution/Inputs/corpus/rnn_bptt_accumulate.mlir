// An Elman RNN unrolled over 8 time steps (backpropagation through time):
// the same weights at every step, the inputs x_t read as rank-reducing
// tensor.extract_slice views of one 8x128x32 argument, and the weight
// gradients ACCUMULATED across time in destination-passing style (each
// step's matmul writes into the previous step's partial gradient). Batch 128,
// input 32, hidden 64, output 16.
//
// Forward:  h_0 = 0; u_t = x_t W_x + b (matmul into the broadcast bias),
//           z_t = h_(t-1) W_h accumulated into u_t, h_t = tanh(z_t);
//           out = h_8 V.
// Loss:     (0.5 / B) sum (out - y)^2 marked `remat.loss`.
// Backward: scalar seed `arith.constant {remat.seed}` placed after the loss;
//           gout = seed/B (out - y); dV = h_8^T gout; gh_8 = gout V^T;
//           for t = 8..1: dz_t = gh_t (1 - h_t^2); dW_h += h_(t-1)^T dz_t,
//           dW_x += x_t^T dz_t (linalg.matmul with transposing indexing_maps
//           whose destination is the running sum), db += sum_b dz_t (a generic
//           reduction into the running sum); gh_(t-1) = dz_t W_h^T.
// Returns (loss, dW_x, dW_h, db, dV).
// Written with a throwaway Python loop over the time steps.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#scalar = affine_map<(d0, d1) -> ()>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#km = affine_map<(d0, d1, d2) -> (d2, d0)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>

func.func @train_step(%x: tensor<8x128x32xf32>, %y: tensor<128x16xf32>, %wx: tensor<32x64xf32>, %wh: tensor<64x64xf32>, %b: tensor<64xf32>, %v: tensor<64x16xf32>)
    -> (tensor<f32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x16xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %half_over_b = arith.constant 3.906250e-03 : f32
  %inv_b = arith.constant 7.812500e-03 : f32
  %h0_e = tensor.empty() : tensor<128x64xf32>
  %h0 = linalg.fill ins(%zero : f32) outs(%h0_e : tensor<128x64xf32>) -> tensor<128x64xf32>

  // t = 1
  %x1 = tensor.extract_slice %x[0, 0, 0] [1, 128, 32] [1, 1, 1] : tensor<8x128x32xf32> to tensor<128x32xf32>
  %bb1_e = tensor.empty() : tensor<128x64xf32>
  %bb1 = linalg.broadcast ins(%b : tensor<64xf32>) outs(%bb1_e : tensor<128x64xf32>) dimensions = [0]
  %u1 = linalg.matmul ins(%x1, %wx : tensor<128x32xf32>, tensor<32x64xf32>) outs(%bb1 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z1 = linalg.matmul ins(%h0, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%u1 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %h1_e = tensor.empty() : tensor<128x64xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<128x64xf32>) outs(%h1_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  // t = 2
  %x2 = tensor.extract_slice %x[1, 0, 0] [1, 128, 32] [1, 1, 1] : tensor<8x128x32xf32> to tensor<128x32xf32>
  %bb2_e = tensor.empty() : tensor<128x64xf32>
  %bb2 = linalg.broadcast ins(%b : tensor<64xf32>) outs(%bb2_e : tensor<128x64xf32>) dimensions = [0]
  %u2 = linalg.matmul ins(%x2, %wx : tensor<128x32xf32>, tensor<32x64xf32>) outs(%bb2 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z2 = linalg.matmul ins(%h1, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%u2 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %h2_e = tensor.empty() : tensor<128x64xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<128x64xf32>) outs(%h2_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  // t = 3
  %x3 = tensor.extract_slice %x[2, 0, 0] [1, 128, 32] [1, 1, 1] : tensor<8x128x32xf32> to tensor<128x32xf32>
  %bb3_e = tensor.empty() : tensor<128x64xf32>
  %bb3 = linalg.broadcast ins(%b : tensor<64xf32>) outs(%bb3_e : tensor<128x64xf32>) dimensions = [0]
  %u3 = linalg.matmul ins(%x3, %wx : tensor<128x32xf32>, tensor<32x64xf32>) outs(%bb3 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z3 = linalg.matmul ins(%h2, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%u3 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %h3_e = tensor.empty() : tensor<128x64xf32>
  %h3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z3 : tensor<128x64xf32>) outs(%h3_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  // t = 4
  %x4 = tensor.extract_slice %x[3, 0, 0] [1, 128, 32] [1, 1, 1] : tensor<8x128x32xf32> to tensor<128x32xf32>
  %bb4_e = tensor.empty() : tensor<128x64xf32>
  %bb4 = linalg.broadcast ins(%b : tensor<64xf32>) outs(%bb4_e : tensor<128x64xf32>) dimensions = [0]
  %u4 = linalg.matmul ins(%x4, %wx : tensor<128x32xf32>, tensor<32x64xf32>) outs(%bb4 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z4 = linalg.matmul ins(%h3, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%u4 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %h4_e = tensor.empty() : tensor<128x64xf32>
  %h4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z4 : tensor<128x64xf32>) outs(%h4_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  // t = 5
  %x5 = tensor.extract_slice %x[4, 0, 0] [1, 128, 32] [1, 1, 1] : tensor<8x128x32xf32> to tensor<128x32xf32>
  %bb5_e = tensor.empty() : tensor<128x64xf32>
  %bb5 = linalg.broadcast ins(%b : tensor<64xf32>) outs(%bb5_e : tensor<128x64xf32>) dimensions = [0]
  %u5 = linalg.matmul ins(%x5, %wx : tensor<128x32xf32>, tensor<32x64xf32>) outs(%bb5 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z5 = linalg.matmul ins(%h4, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%u5 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %h5_e = tensor.empty() : tensor<128x64xf32>
  %h5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z5 : tensor<128x64xf32>) outs(%h5_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  // t = 6
  %x6 = tensor.extract_slice %x[5, 0, 0] [1, 128, 32] [1, 1, 1] : tensor<8x128x32xf32> to tensor<128x32xf32>
  %bb6_e = tensor.empty() : tensor<128x64xf32>
  %bb6 = linalg.broadcast ins(%b : tensor<64xf32>) outs(%bb6_e : tensor<128x64xf32>) dimensions = [0]
  %u6 = linalg.matmul ins(%x6, %wx : tensor<128x32xf32>, tensor<32x64xf32>) outs(%bb6 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z6 = linalg.matmul ins(%h5, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%u6 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %h6_e = tensor.empty() : tensor<128x64xf32>
  %h6 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z6 : tensor<128x64xf32>) outs(%h6_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  // t = 7
  %x7 = tensor.extract_slice %x[6, 0, 0] [1, 128, 32] [1, 1, 1] : tensor<8x128x32xf32> to tensor<128x32xf32>
  %bb7_e = tensor.empty() : tensor<128x64xf32>
  %bb7 = linalg.broadcast ins(%b : tensor<64xf32>) outs(%bb7_e : tensor<128x64xf32>) dimensions = [0]
  %u7 = linalg.matmul ins(%x7, %wx : tensor<128x32xf32>, tensor<32x64xf32>) outs(%bb7 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z7 = linalg.matmul ins(%h6, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%u7 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %h7_e = tensor.empty() : tensor<128x64xf32>
  %h7 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z7 : tensor<128x64xf32>) outs(%h7_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  // t = 8
  %x8 = tensor.extract_slice %x[7, 0, 0] [1, 128, 32] [1, 1, 1] : tensor<8x128x32xf32> to tensor<128x32xf32>
  %bb8_e = tensor.empty() : tensor<128x64xf32>
  %bb8 = linalg.broadcast ins(%b : tensor<64xf32>) outs(%bb8_e : tensor<128x64xf32>) dimensions = [0]
  %u8 = linalg.matmul ins(%x8, %wx : tensor<128x32xf32>, tensor<32x64xf32>) outs(%bb8 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z8 = linalg.matmul ins(%h7, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%u8 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %h8_e = tensor.empty() : tensor<128x64xf32>
  %h8 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z8 : tensor<128x64xf32>) outs(%h8_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  // readout and loss
  %out_e = tensor.empty() : tensor<128x16xf32>
  %out_0 = linalg.fill ins(%zero : f32) outs(%out_e : tensor<128x16xf32>) -> tensor<128x16xf32>
  %pred = linalg.matmul ins(%h8, %v : tensor<128x64xf32>, tensor<64x16xf32>) outs(%out_0 : tensor<128x16xf32>) -> tensor<128x16xf32>
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%pred, %y : tensor<128x16xf32>, tensor<128x16xf32>) outs(%loss_0 : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%p: f32, %t: f32, %acc: f32):
    %d = arith.subf %p, %t : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %half_over_b : f32
    %s = arith.addf %acc, %k : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %seed = arith.constant {remat.seed} 1.000000e+00 : f32

  // ---- backward through time
  %gout_e = tensor.empty() : tensor<128x16xf32>
  %gout = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%pred, %y : tensor<128x16xf32>, tensor<128x16xf32>) outs(%gout_e : tensor<128x16xf32>) {
  ^bb0(%p: f32, %t: f32, %o: f32):
    %d = arith.subf %p, %t : f32
    %k = arith.mulf %d, %inv_b : f32
    %g = arith.mulf %k, %seed : f32
    linalg.yield %g : f32
  } -> tensor<128x16xf32>
  %dv_e = tensor.empty() : tensor<64x16xf32>
  %dv_0 = linalg.fill ins(%zero : f32) outs(%dv_e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %dv = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h8, %gout : tensor<128x64xf32>, tensor<128x16xf32>) outs(%dv_0 : tensor<64x16xf32>) -> tensor<64x16xf32>
  %gh8_e = tensor.empty() : tensor<128x64xf32>
  %gh8_0 = linalg.fill ins(%zero : f32) outs(%gh8_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gh8 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gout, %v : tensor<128x16xf32>, tensor<64x16xf32>) outs(%gh8_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %dwh9_e = tensor.empty() : tensor<64x64xf32>
  %dwh9 = linalg.fill ins(%zero : f32) outs(%dwh9_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwx9_e = tensor.empty() : tensor<32x64xf32>
  %dwx9 = linalg.fill ins(%zero : f32) outs(%dwx9_e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %db9_e = tensor.empty() : tensor<64xf32>
  %db9 = linalg.fill ins(%zero : f32) outs(%db9_e : tensor<64xf32>) -> tensor<64xf32>

  // t = 8
  %dz8_e = tensor.empty() : tensor<128x64xf32>
  %dz8 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh8, %h8 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz8_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dwh8 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h7, %dz8 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dwh9 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwx8 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x8, %dz8 : tensor<128x32xf32>, tensor<128x64xf32>) outs(%dwx9 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %db8 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz8 : tensor<128x64xf32>) outs(%db9 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %gh7_e = tensor.empty() : tensor<128x64xf32>
  %gh7_0 = linalg.fill ins(%zero : f32) outs(%gh7_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gh7 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz8, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%gh7_0 : tensor<128x64xf32>) -> tensor<128x64xf32>

  // t = 7
  %dz7_e = tensor.empty() : tensor<128x64xf32>
  %dz7 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh7, %h7 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz7_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dwh7 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h6, %dz7 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dwh8 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwx7 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x7, %dz7 : tensor<128x32xf32>, tensor<128x64xf32>) outs(%dwx8 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %db7 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz7 : tensor<128x64xf32>) outs(%db8 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %gh6_e = tensor.empty() : tensor<128x64xf32>
  %gh6_0 = linalg.fill ins(%zero : f32) outs(%gh6_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gh6 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz7, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%gh6_0 : tensor<128x64xf32>) -> tensor<128x64xf32>

  // t = 6
  %dz6_e = tensor.empty() : tensor<128x64xf32>
  %dz6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh6, %h6 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz6_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dwh6 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h5, %dz6 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dwh7 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwx6 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x6, %dz6 : tensor<128x32xf32>, tensor<128x64xf32>) outs(%dwx7 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %db6 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz6 : tensor<128x64xf32>) outs(%db7 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %gh5_e = tensor.empty() : tensor<128x64xf32>
  %gh5_0 = linalg.fill ins(%zero : f32) outs(%gh5_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gh5 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz6, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%gh5_0 : tensor<128x64xf32>) -> tensor<128x64xf32>

  // t = 5
  %dz5_e = tensor.empty() : tensor<128x64xf32>
  %dz5 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh5, %h5 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz5_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dwh5 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h4, %dz5 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dwh6 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwx5 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x5, %dz5 : tensor<128x32xf32>, tensor<128x64xf32>) outs(%dwx6 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %db5 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz5 : tensor<128x64xf32>) outs(%db6 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %gh4_e = tensor.empty() : tensor<128x64xf32>
  %gh4_0 = linalg.fill ins(%zero : f32) outs(%gh4_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gh4 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz5, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%gh4_0 : tensor<128x64xf32>) -> tensor<128x64xf32>

  // t = 4
  %dz4_e = tensor.empty() : tensor<128x64xf32>
  %dz4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh4, %h4 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz4_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dwh4 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h3, %dz4 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dwh5 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwx4 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x4, %dz4 : tensor<128x32xf32>, tensor<128x64xf32>) outs(%dwx5 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %db4 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz4 : tensor<128x64xf32>) outs(%db5 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %gh3_e = tensor.empty() : tensor<128x64xf32>
  %gh3_0 = linalg.fill ins(%zero : f32) outs(%gh3_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gh3 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz4, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%gh3_0 : tensor<128x64xf32>) -> tensor<128x64xf32>

  // t = 3
  %dz3_e = tensor.empty() : tensor<128x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh3, %h3 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz3_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dwh3 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h2, %dz3 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dwh4 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwx3 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x3, %dz3 : tensor<128x32xf32>, tensor<128x64xf32>) outs(%dwx4 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %db3 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz3 : tensor<128x64xf32>) outs(%db4 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %gh2_e = tensor.empty() : tensor<128x64xf32>
  %gh2_0 = linalg.fill ins(%zero : f32) outs(%gh2_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gh2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz3, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%gh2_0 : tensor<128x64xf32>) -> tensor<128x64xf32>

  // t = 2
  %dz2_e = tensor.empty() : tensor<128x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh2, %h2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz2_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dwh2 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h1, %dz2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dwh3 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwx2 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x2, %dz2 : tensor<128x32xf32>, tensor<128x64xf32>) outs(%dwx3 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %db2 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz2 : tensor<128x64xf32>) outs(%db3 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %gh1_e = tensor.empty() : tensor<128x64xf32>
  %gh1_0 = linalg.fill ins(%zero : f32) outs(%gh1_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gh1 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz2, %wh : tensor<128x64xf32>, tensor<64x64xf32>) outs(%gh1_0 : tensor<128x64xf32>) -> tensor<128x64xf32>

  // t = 1
  %dz1_e = tensor.empty() : tensor<128x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gh1, %h1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz1_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dwh1 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%h0, %dz1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dwh2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dwx1 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x1, %dz1 : tensor<128x32xf32>, tensor<128x64xf32>) outs(%dwx2 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %db1 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz1 : tensor<128x64xf32>) outs(%db2 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>

  return %loss, %dwx1, %dwh1, %db1, %dv : tensor<f32>, tensor<32x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x16xf32>
}
