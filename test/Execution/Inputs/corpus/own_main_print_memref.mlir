// A Siamese pair with SHARED weights, in a module with its own `main` that
// builds every input from small `arith.constant dense` tiles and prints with
// printMemrefF32 (on a tensor.cast to tensor<*xf32>) and printF32 /
// printNewline (MLIR's C runner utilities). Nothing in the step is marked but
// the function (`remat.step`): the ops result #0 (the loss) depends on are
// forward, the rest backward. Batch 128, width 64.
//
// Tower (weights shared by both inputs): h1 = tanh(x W1), h2 = tanh(h1 W2),
//           h3 = h2 W3; applied to xa and xb.
// Head:     sim_b = sum_j s_j ha3_bj hb3_bj.
// Loss:     mean_b (sim_b - target_b)^2.
// Backward: gsim = 2/B (sim - target); ds_j = sum_b gsim_b ha3_bj hb3_bj;
//           gha3 = gsim s hb3, ghb3 = gsim s ha3; each tower backward with
//           tanh' = 1 - h^2 from the output; dW_l = dW_l(a) + dW_l(b) summed
//           with linalg.add (the two branches meet at the shared weights).
// Returns (loss, dW1, dW2, dW3, ds).
// main:     xa, xb tile 16x16 constants over 128x64 (map (i, j) -> (i mod 16, j mod 16)),
//           W_l tile 8x8 constants (plus 1/4 on the diagonal), target and s
//           tile 16- and 8-element constants. Prints the loss (printF32),
//           ds (printMemrefF32) and dW1[0:4, 0:4] (printMemrefF32 of a slice).
// The constant tiles were written with a throwaway Python script.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#scalar = affine_map<(d0, d1) -> ()>
#v = affine_map<(d0) -> (d0)>
#s0 = affine_map<(d0) -> ()>
#tile16 = affine_map<(d0, d1) -> (d0 mod 16, d1 mod 16)>
#tile8 = affine_map<(d0, d1) -> (d0 mod 8, d1 mod 8)>
#vtile16 = affine_map<(d0) -> (d0 mod 16)>
#vtile8 = affine_map<(d0) -> (d0 mod 8)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#km = affine_map<(d0, d1, d2) -> (d2, d0)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>

func.func @siamese_step(%xa: tensor<128x64xf32>, %xb: tensor<128x64xf32>, %target: tensor<128xf32>, %w1: tensor<64x64xf32>, %w2: tensor<64x64xf32>, %w3: tensor<64x64xf32>, %s: tensor<64xf32>)
    -> (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>) attributes {remat.step} {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %inv_b = arith.constant 7.812500e-03 : f32
  %two_over_b = arith.constant 1.562500e-02 : f32

  // tower on xa
  %za1_e = tensor.empty() : tensor<128x64xf32>
  %za1_0 = linalg.fill ins(%zero : f32) outs(%za1_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %za1 = linalg.matmul ins(%xa, %w1 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%za1_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %ha1_e = tensor.empty() : tensor<128x64xf32>
  %ha1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%za1 : tensor<128x64xf32>) outs(%ha1_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %za2_e = tensor.empty() : tensor<128x64xf32>
  %za2_0 = linalg.fill ins(%zero : f32) outs(%za2_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %za2 = linalg.matmul ins(%ha1, %w2 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%za2_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %ha2_e = tensor.empty() : tensor<128x64xf32>
  %ha2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%za2 : tensor<128x64xf32>) outs(%ha2_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %ha3_e = tensor.empty() : tensor<128x64xf32>
  %ha3_0 = linalg.fill ins(%zero : f32) outs(%ha3_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %ha3 = linalg.matmul ins(%ha2, %w3 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%ha3_0 : tensor<128x64xf32>) -> tensor<128x64xf32>

  // tower on xb
  %zb1_e = tensor.empty() : tensor<128x64xf32>
  %zb1_0 = linalg.fill ins(%zero : f32) outs(%zb1_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %zb1 = linalg.matmul ins(%xb, %w1 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%zb1_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %hb1_e = tensor.empty() : tensor<128x64xf32>
  %hb1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%zb1 : tensor<128x64xf32>) outs(%hb1_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %zb2_e = tensor.empty() : tensor<128x64xf32>
  %zb2_0 = linalg.fill ins(%zero : f32) outs(%zb2_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %zb2 = linalg.matmul ins(%hb1, %w2 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%zb2_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %hb2_e = tensor.empty() : tensor<128x64xf32>
  %hb2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%zb2 : tensor<128x64xf32>) outs(%hb2_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %hb3_e = tensor.empty() : tensor<128x64xf32>
  %hb3_0 = linalg.fill ins(%zero : f32) outs(%hb3_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %hb3 = linalg.matmul ins(%hb2, %w3 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%hb3_0 : tensor<128x64xf32>) -> tensor<128x64xf32>

  // head and loss
  %sim_e = tensor.empty() : tensor<128xf32>
  %sim_0 = linalg.fill ins(%zero : f32) outs(%sim_e : tensor<128xf32>) -> tensor<128xf32>
  %sim = linalg.generic {indexing_maps = [#id, #id, #col, #row], iterator_types = ["parallel", "reduction"]} ins(%ha3, %hb3, %s : tensor<128x64xf32>, tensor<128x64xf32>, tensor<64xf32>) outs(%sim_0 : tensor<128xf32>) {
  ^bb0(%a: f32, %b: f32, %sc: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %m = arith.mulf %ab, %sc : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#v, #v, #s0], iterator_types = ["reduction"]} ins(%sim, %target : tensor<128xf32>, tensor<128xf32>) outs(%loss_0 : tensor<f32>) {
  ^bb0(%a: f32, %t: f32, %acc: f32):
    %d = arith.subf %a, %t : f32
    %sq = arith.mulf %d, %d : f32
    %k = arith.mulf %sq, %inv_b : f32
    %r = arith.addf %acc, %k : f32
    linalg.yield %r : f32
  } -> tensor<f32>

  // ---- backward (what the loss does not depend on)
  %gsim_e = tensor.empty() : tensor<128xf32>
  %gsim = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%sim, %target : tensor<128xf32>, tensor<128xf32>) outs(%gsim_e : tensor<128xf32>) {
  ^bb0(%a: f32, %t: f32, %out: f32):
    %d = arith.subf %a, %t : f32
    %r = arith.mulf %d, %two_over_b : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  %ds_e = tensor.empty() : tensor<64xf32>
  %ds_0 = linalg.fill ins(%zero : f32) outs(%ds_e : tensor<64xf32>) -> tensor<64xf32>
  %ds = linalg.generic {indexing_maps = [#row, #id, #id, #col], iterator_types = ["reduction", "parallel"]} ins(%gsim, %ha3, %hb3 : tensor<128xf32>, tensor<128x64xf32>, tensor<128x64xf32>) outs(%ds_0 : tensor<64xf32>) {
  ^bb0(%g: f32, %a: f32, %b: f32, %acc: f32):
    %ab = arith.mulf %a, %b : f32
    %m = arith.mulf %ab, %g : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %gha3_e = tensor.empty() : tensor<128x64xf32>
  %gha3 = linalg.generic {indexing_maps = [#row, #col, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gsim, %s, %hb3 : tensor<128xf32>, tensor<64xf32>, tensor<128x64xf32>) outs(%gha3_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %sc: f32, %h: f32, %out: f32):
    %gs = arith.mulf %g, %sc : f32
    %r = arith.mulf %gs, %h : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %ghb3_e = tensor.empty() : tensor<128x64xf32>
  %ghb3 = linalg.generic {indexing_maps = [#row, #col, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gsim, %s, %ha3 : tensor<128xf32>, tensor<64xf32>, tensor<128x64xf32>) outs(%ghb3_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %sc: f32, %h: f32, %out: f32):
    %gs = arith.mulf %g, %sc : f32
    %r = arith.mulf %gs, %h : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  // tower a backward
  %dw3a_e = tensor.empty() : tensor<64x64xf32>
  %dw3a_0 = linalg.fill ins(%zero : f32) outs(%dw3a_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3a = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%ha2, %gha3 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dw3a_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gha2_e = tensor.empty() : tensor<128x64xf32>
  %gha2_0 = linalg.fill ins(%zero : f32) outs(%gha2_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gha2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gha3, %w3 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%gha2_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %dza2_e = tensor.empty() : tensor<128x64xf32>
  %dza2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gha2, %ha2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dza2_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dw2a_e = tensor.empty() : tensor<64x64xf32>
  %dw2a_0 = linalg.fill ins(%zero : f32) outs(%dw2a_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2a = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%ha1, %dza2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dw2a_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %gha1_e = tensor.empty() : tensor<128x64xf32>
  %gha1_0 = linalg.fill ins(%zero : f32) outs(%gha1_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %gha1 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dza2, %w2 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%gha1_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %dza1_e = tensor.empty() : tensor<128x64xf32>
  %dza1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gha1, %ha1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dza1_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dw1a_e = tensor.empty() : tensor<64x64xf32>
  %dw1a_0 = linalg.fill ins(%zero : f32) outs(%dw1a_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1a = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%xa, %dza1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dw1a_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  // tower b backward
  %dw3b_e = tensor.empty() : tensor<64x64xf32>
  %dw3b_0 = linalg.fill ins(%zero : f32) outs(%dw3b_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3b = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%hb2, %ghb3 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dw3b_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ghb2_e = tensor.empty() : tensor<128x64xf32>
  %ghb2_0 = linalg.fill ins(%zero : f32) outs(%ghb2_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %ghb2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%ghb3, %w3 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%ghb2_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %dzb2_e = tensor.empty() : tensor<128x64xf32>
  %dzb2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%ghb2, %hb2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dzb2_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dw2b_e = tensor.empty() : tensor<64x64xf32>
  %dw2b_0 = linalg.fill ins(%zero : f32) outs(%dw2b_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2b = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%hb1, %dzb2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dw2b_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ghb1_e = tensor.empty() : tensor<128x64xf32>
  %ghb1_0 = linalg.fill ins(%zero : f32) outs(%ghb1_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %ghb1 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dzb2, %w2 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%ghb1_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %dzb1_e = tensor.empty() : tensor<128x64xf32>
  %dzb1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%ghb1, %hb1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dzb1_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %hh = arith.mulf %h, %h : f32
    %d = arith.subf %one, %hh : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %dw1b_e = tensor.empty() : tensor<64x64xf32>
  %dw1b_0 = linalg.fill ins(%zero : f32) outs(%dw1b_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1b = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%xb, %dzb1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dw1b_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  // the shared weights' gradients: both branches
  %dw1_e = tensor.empty() : tensor<64x64xf32>
  %dw1 = linalg.add ins(%dw1a, %dw1b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%dw1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2_e = tensor.empty() : tensor<64x64xf32>
  %dw2 = linalg.add ins(%dw2a, %dw2b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%dw2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3_e = tensor.empty() : tensor<64x64xf32>
  %dw3 = linalg.add ins(%dw3a, %dw3b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%dw3_e : tensor<64x64xf32>) -> tensor<64x64xf32>

  return %loss, %dw1, %dw2, %dw3, %ds : tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>
}

func.func private @printMemrefF32(tensor<*xf32>) attributes {llvm.emit_c_interface}
func.func private @printF32(f32)
func.func private @printNewline()

func.func @main() {
  %ta = arith.constant dense<[[-0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125, -1.0, 0.5, -0.375, 1.125, 0.25, -0.625, 0.875], [0.0, -0.875, 0.625, -0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125, -1.0, 0.5, -0.375, 1.125], [0.25, -0.625, 0.875, 0.0, -0.875, 0.625, -0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125, -1.0], [0.5, -0.375, 1.125, 0.25, -0.625, 0.875, 0.0, -0.875, 0.625, -0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75], [0.75, -0.125, -1.0, 0.5, -0.375, 1.125, 0.25, -0.625, 0.875, 0.0, -0.875, 0.625, -0.25, -1.125, 0.375, -0.5], [1.0, 0.125, -0.75, 0.75, -0.125, -1.0, 0.5, -0.375, 1.125, 0.25, -0.625, 0.875, 0.0, -0.875, 0.625, -0.25], [-1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125, -1.0, 0.5, -0.375, 1.125, 0.25, -0.625, 0.875, 0.0], [-0.875, 0.625, -0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125, -1.0, 0.5, -0.375, 1.125, 0.25], [-0.625, 0.875, 0.0, -0.875, 0.625, -0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125, -1.0, 0.5], [-0.375, 1.125, 0.25, -0.625, 0.875, 0.0, -0.875, 0.625, -0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75], [-0.125, -1.0, 0.5, -0.375, 1.125, 0.25, -0.625, 0.875, 0.0, -0.875, 0.625, -0.25, -1.125, 0.375, -0.5, 1.0], [0.125, -0.75, 0.75, -0.125, -1.0, 0.5, -0.375, 1.125, 0.25, -0.625, 0.875, 0.0, -0.875, 0.625, -0.25, -1.125], [0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125, -1.0, 0.5, -0.375, 1.125, 0.25, -0.625, 0.875, 0.0, -0.875], [0.625, -0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125, -1.0, 0.5, -0.375, 1.125, 0.25, -0.625], [0.875, 0.0, -0.875, 0.625, -0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125, -1.0, 0.5, -0.375], [1.125, 0.25, -0.625, 0.875, 0.0, -0.875, 0.625, -0.25, -1.125, 0.375, -0.5, 1.0, 0.125, -0.75, 0.75, -0.125]]> : tensor<16x16xf32>
  %tb = arith.constant dense<[[0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375, -0.25, -0.875, 0.875, 0.25, -0.375, -1.0, 0.75], [0.125, -0.5, -1.125, 0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375, -0.25, -0.875, 0.875, 0.25], [-0.375, -1.0, 0.75, 0.125, -0.5, -1.125, 0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375, -0.25], [-0.875, 0.875, 0.25, -0.375, -1.0, 0.75, 0.125, -0.5, -1.125, 0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75], [1.0, 0.375, -0.25, -0.875, 0.875, 0.25, -0.375, -1.0, 0.75, 0.125, -0.5, -1.125, 0.625, 0.0, -0.625, 1.125], [0.5, -0.125, -0.75, 1.0, 0.375, -0.25, -0.875, 0.875, 0.25, -0.375, -1.0, 0.75, 0.125, -0.5, -1.125, 0.625], [0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375, -0.25, -0.875, 0.875, 0.25, -0.375, -1.0, 0.75, 0.125], [-0.5, -1.125, 0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375, -0.25, -0.875, 0.875, 0.25, -0.375], [-1.0, 0.75, 0.125, -0.5, -1.125, 0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375, -0.25, -0.875], [0.875, 0.25, -0.375, -1.0, 0.75, 0.125, -0.5, -1.125, 0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0], [0.375, -0.25, -0.875, 0.875, 0.25, -0.375, -1.0, 0.75, 0.125, -0.5, -1.125, 0.625, 0.0, -0.625, 1.125, 0.5], [-0.125, -0.75, 1.0, 0.375, -0.25, -0.875, 0.875, 0.25, -0.375, -1.0, 0.75, 0.125, -0.5, -1.125, 0.625, 0.0], [-0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375, -0.25, -0.875, 0.875, 0.25, -0.375, -1.0, 0.75, 0.125, -0.5], [-1.125, 0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375, -0.25, -0.875, 0.875, 0.25, -0.375, -1.0], [0.75, 0.125, -0.5, -1.125, 0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375, -0.25, -0.875, 0.875], [0.25, -0.375, -1.0, 0.75, 0.125, -0.5, -1.125, 0.625, 0.0, -0.625, 1.125, 0.5, -0.125, -0.75, 1.0, 0.375]]> : tensor<16x16xf32>
  %t1 = arith.constant dense<[[-0.21875, 0.28125, 0.1875, 0.09375, 0.0, -0.09375, -0.1875, -0.28125], [0.21875, 0.125, 0.03125, -0.0625, -0.15625, -0.25, 0.25, 0.15625], [0.0625, -0.03125, -0.125, -0.21875, 0.28125, 0.1875, 0.09375, 0.0], [-0.09375, -0.1875, -0.28125, 0.21875, 0.125, 0.03125, -0.0625, -0.15625], [-0.25, 0.25, 0.15625, 0.0625, -0.03125, -0.125, -0.21875, 0.28125], [0.1875, 0.09375, 0.0, -0.09375, -0.1875, -0.28125, 0.21875, 0.125], [0.03125, -0.0625, -0.15625, -0.25, 0.25, 0.15625, 0.0625, -0.03125], [-0.125, -0.21875, 0.28125, 0.1875, 0.09375, 0.0, -0.09375, -0.1875]]> : tensor<8x8xf32>
  %t2 = arith.constant dense<[[0.0, -0.03125, -0.0625, -0.09375, -0.125, -0.15625, -0.1875, -0.21875], [-0.25, -0.28125, 0.28125, 0.25, 0.21875, 0.1875, 0.15625, 0.125], [0.09375, 0.0625, 0.03125, 0.0, -0.03125, -0.0625, -0.09375, -0.125], [-0.15625, -0.1875, -0.21875, -0.25, -0.28125, 0.28125, 0.25, 0.21875], [0.1875, 0.15625, 0.125, 0.09375, 0.0625, 0.03125, 0.0, -0.03125], [-0.0625, -0.09375, -0.125, -0.15625, -0.1875, -0.21875, -0.25, -0.28125], [0.28125, 0.25, 0.21875, 0.1875, 0.15625, 0.125, 0.09375, 0.0625], [0.03125, 0.0, -0.03125, -0.0625, -0.09375, -0.125, -0.15625, -0.1875]]> : tensor<8x8xf32>
  %t3 = arith.constant dense<[[0.21875, 0.25, 0.28125, -0.28125, -0.25, -0.21875, -0.1875, -0.15625], [-0.125, -0.09375, -0.0625, -0.03125, 0.0, 0.03125, 0.0625, 0.09375], [0.125, 0.15625, 0.1875, 0.21875, 0.25, 0.28125, -0.28125, -0.25], [-0.21875, -0.1875, -0.15625, -0.125, -0.09375, -0.0625, -0.03125, 0.0], [0.03125, 0.0625, 0.09375, 0.125, 0.15625, 0.1875, 0.21875, 0.25], [0.28125, -0.28125, -0.25, -0.21875, -0.1875, -0.15625, -0.125, -0.09375], [-0.0625, -0.03125, 0.0, 0.03125, 0.0625, 0.09375, 0.125, 0.15625], [0.1875, 0.21875, 0.25, 0.28125, -0.28125, -0.25, -0.21875, -0.1875]]> : tensor<8x8xf32>
  %tt = arith.constant dense<[-1.25, -0.5, 0.25, 1.0, 1.75, -2.25, -1.5, -0.75, 0.0, 0.75, 1.5, 2.25, -1.75, -1.0, -0.25, 0.5]> : tensor<16xf32>
  %ts = arith.constant dense<[0.5, 1.75, -1.75, -0.5, 0.75, 2.0, -1.5, -0.25]> : tensor<8xf32>
  %quarter = arith.constant 2.500000e-01 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %xa_e = tensor.empty() : tensor<128x64xf32>
  %xa = linalg.generic {indexing_maps = [#tile16, #id], iterator_types = ["parallel", "parallel"]} ins(%ta : tensor<16x16xf32>) outs(%xa_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<128x64xf32>
  %xb_e = tensor.empty() : tensor<128x64xf32>
  %xb = linalg.generic {indexing_maps = [#tile16, #id], iterator_types = ["parallel", "parallel"]} ins(%tb : tensor<16x16xf32>) outs(%xb_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<128x64xf32>
  %w1_e = tensor.empty() : tensor<64x64xf32>
  %w1 = linalg.generic {indexing_maps = [#tile8, #id], iterator_types = ["parallel", "parallel"]} ins(%t1 : tensor<8x8xf32>) outs(%w1_e : tensor<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %diag = arith.cmpi eq, %i, %j : index
    %d = arith.select %diag, %quarter, %zero : f32
    %r = arith.addf %in, %d : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %w2_e = tensor.empty() : tensor<64x64xf32>
  %w2 = linalg.generic {indexing_maps = [#tile8, #id], iterator_types = ["parallel", "parallel"]} ins(%t2 : tensor<8x8xf32>) outs(%w2_e : tensor<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %diag = arith.cmpi eq, %i, %j : index
    %d = arith.select %diag, %quarter, %zero : f32
    %r = arith.addf %in, %d : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %w3_e = tensor.empty() : tensor<64x64xf32>
  %w3 = linalg.generic {indexing_maps = [#tile8, #id], iterator_types = ["parallel", "parallel"]} ins(%t3 : tensor<8x8xf32>) outs(%w3_e : tensor<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %diag = arith.cmpi eq, %i, %j : index
    %d = arith.select %diag, %quarter, %zero : f32
    %r = arith.addf %in, %d : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %target_e = tensor.empty() : tensor<128xf32>
  %target = linalg.generic {indexing_maps = [#vtile16, #v], iterator_types = ["parallel"]} ins(%tt : tensor<16xf32>) outs(%target_e : tensor<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<128xf32>
  %s_e = tensor.empty() : tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#vtile8, #v], iterator_types = ["parallel"]} ins(%ts : tensor<8xf32>) outs(%s_e : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<64xf32>

  %r:5 = func.call @siamese_step(%xa, %xb, %target, %w1, %w2, %w3, %s)
      : (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> (tensor<f32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>)
  %loss = tensor.extract %r#0[] : tensor<f32>
  func.call @printF32(%loss) : (f32) -> ()
  func.call @printNewline() : () -> ()
  %ds = tensor.cast %r#4 : tensor<64xf32> to tensor<*xf32>
  func.call @printMemrefF32(%ds) : (tensor<*xf32>) -> ()
  %corner = tensor.extract_slice %r#1[0, 0] [4, 4] [1, 1] : tensor<64x64xf32> to tensor<4x4xf32>
  %corner_u = tensor.cast %corner : tensor<4x4xf32> to tensor<*xf32>
  func.call @printMemrefF32(%corner_u) : (tensor<*xf32>) -> ()
  return
}
