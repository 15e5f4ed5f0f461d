// A module with its own `main`: it builds the inputs with linalg.generic
// index formulas, runs TWO steps of SGD (calls the step, updates the weights
// with the gradients, calls it again) and prints with `vector.print`. The step
// is a 4-layer MLP with biases and softmax cross-entropy on INTEGER labels
// (tensor<128xi32>), the one-hot compare done with linalg.index inside the
// loss and its gradient. Batch 128, width 64, 16 classes. The seed constant
// is defined at the very top of the step, before the forward ops.
//
// Forward:  z_l = a_(l-1) W_l + b_l (matmul, then a generic adding the bias
//           through a (b, j) -> (j) map), a_l = max(z_l, 0) for l < 4,
//           logits = z_4 (128x16), a_0 = x.
//           lse_b = m_b + log sum_j exp(logits_bj - m_b), m_b = max_j logits_bj.
// Loss:     -(1/B) sum_b (logits_(b, label_b) - lse_b)  [select(j == label_b)].
// Backward: dlogits_bj = seed/B (exp(logits_bj - lse_b) - [j == label_b]);
//           dz_l = select(a_l > 0, g_l, 0) (mask from the output);
//           dW_l = a_(l-1)^T dz_l, g_(l-1) = dz_l W_l^T (linalg.matmul with
//           transposing indexing_maps), db_l = column sums of dz_l (generic).
// main:     x_ij = ((7i + 13j) mod 23 - 11) / 16, label_i = (5i + 3) mod 16,
//           (W_l)_ij = ((3i + 5j + l) mod 17 - 8) / 64, (b_l)_j = ((j + l) mod 5 - 2) / 8;
//           prints loss_1, then after W -= 0.5 dW, b -= 0.5 db: loss_2,
//           dW_1[3, 5], db_4[7] and sum(dW_3) of the second call.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#scalar = affine_map<(d0, d1) -> ()>
#v = affine_map<(d0) -> (d0)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#km = affine_map<(d0, d1, d2) -> (d2, d0)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>

func.func @sgd_loss_and_grads(%x: tensor<128x64xf32>, %labels: tensor<128xi32>,
    %w1: tensor<64x64xf32>, %b1: tensor<64xf32>, %w2: tensor<64x64xf32>, %b2: tensor<64xf32>,
    %w3: tensor<64x64xf32>, %b3: tensor<64xf32>, %w4: tensor<64x16xf32>, %b4: tensor<16xf32>)
    -> (tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>,
        tensor<64x64xf32>, tensor<64xf32>, tensor<64x16xf32>, tensor<16xf32>) {
  %seed = arith.constant {remat.seed} 1.000000e+00 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_b = arith.constant 7.812500e-03 : f32
  %neg_inv_b = arith.constant -7.812500e-03 : f32

  // ---- forward
  %m1_e = tensor.empty() : tensor<128x64xf32>
  %m1_0 = linalg.fill ins(%zero : f32) outs(%m1_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%m1_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z1_e = tensor.empty() : tensor<128x64xf32>
  %z1 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m1, %b1 : tensor<128x64xf32>, tensor<64xf32>) outs(%z1_e : tensor<128x64xf32>) {
  ^bb0(%m: f32, %b: f32, %out: f32):
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %a1_e = tensor.empty() : tensor<128x64xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<128x64xf32>) outs(%a1_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  %m2_e = tensor.empty() : tensor<128x64xf32>
  %m2_0 = linalg.fill ins(%zero : f32) outs(%m2_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %m2 = linalg.matmul ins(%a1, %w2 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%m2_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z2_e = tensor.empty() : tensor<128x64xf32>
  %z2 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m2, %b2 : tensor<128x64xf32>, tensor<64xf32>) outs(%z2_e : tensor<128x64xf32>) {
  ^bb0(%m: f32, %b: f32, %out: f32):
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %a2_e = tensor.empty() : tensor<128x64xf32>
  %a2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<128x64xf32>) outs(%a2_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  %m3_e = tensor.empty() : tensor<128x64xf32>
  %m3_0 = linalg.fill ins(%zero : f32) outs(%m3_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %m3 = linalg.matmul ins(%a2, %w3 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%m3_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  %z3_e = tensor.empty() : tensor<128x64xf32>
  %z3 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m3, %b3 : tensor<128x64xf32>, tensor<64xf32>) outs(%z3_e : tensor<128x64xf32>) {
  ^bb0(%m: f32, %b: f32, %out: f32):
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x64xf32>
  %a3_e = tensor.empty() : tensor<128x64xf32>
  %a3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z3 : tensor<128x64xf32>) outs(%a3_e : tensor<128x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>

  %m4_e = tensor.empty() : tensor<128x16xf32>
  %m4_0 = linalg.fill ins(%zero : f32) outs(%m4_e : tensor<128x16xf32>) -> tensor<128x16xf32>
  %m4 = linalg.matmul ins(%a3, %w4 : tensor<128x64xf32>, tensor<64x16xf32>) outs(%m4_0 : tensor<128x16xf32>) -> tensor<128x16xf32>
  %logits_e = tensor.empty() : tensor<128x16xf32>
  %logits = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m4, %b4 : tensor<128x16xf32>, tensor<16xf32>) outs(%logits_e : tensor<128x16xf32>) {
  ^bb0(%m: f32, %b: f32, %out: f32):
    %s = arith.addf %m, %b : f32
    linalg.yield %s : f32
  } -> tensor<128x16xf32>

  // log-sum-exp with max subtraction
  %mx_e = tensor.empty() : tensor<128xf32>
  %mx_0 = linalg.fill ins(%ninf : f32) outs(%mx_e : tensor<128xf32>) -> tensor<128xf32>
  %mx = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%logits : tensor<128x16xf32>) outs(%mx_0 : tensor<128xf32>) {
  ^bb0(%l: f32, %acc: f32):
    %r = arith.maximumf %l, %acc : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  %se_e = tensor.empty() : tensor<128xf32>
  %se_0 = linalg.fill ins(%zero : f32) outs(%se_e : tensor<128xf32>) -> tensor<128xf32>
  %se = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%logits, %mx : tensor<128x16xf32>, tensor<128xf32>) outs(%se_0 : tensor<128xf32>) {
  ^bb0(%l: f32, %m: f32, %acc: f32):
    %d = arith.subf %l, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  } -> tensor<128xf32>
  %lse_e = tensor.empty() : tensor<128xf32>
  %lse = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%mx, %se : tensor<128xf32>, tensor<128xf32>) outs(%lse_e : tensor<128xf32>) {
  ^bb0(%m: f32, %s: f32, %out: f32):
    %lg = math.log %s : f32
    %r = arith.addf %m, %lg : f32
    linalg.yield %r : f32
  } -> tensor<128xf32>
  // loss = -(1/B) sum_b (logits[b, label_b] - lse_b)
  %loss_e = tensor.empty() : tensor<f32>
  %loss_0 = linalg.fill ins(%zero : f32) outs(%loss_e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #row, #row, #scalar], iterator_types = ["reduction", "reduction"]} ins(%logits, %lse, %labels : tensor<128x16xf32>, tensor<128xf32>, tensor<128xi32>) outs(%loss_0 : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%l: f32, %ls: f32, %lab: i32, %acc: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %hit = arith.cmpi eq, %ji, %lab : i32
    %lp = arith.subf %l, %ls : f32
    %k = arith.mulf %lp, %neg_inv_b : f32
    %t = arith.select %hit, %k, %zero : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>

  // ---- backward
  %gl_e = tensor.empty() : tensor<128x16xf32>
  %gl = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%logits, %lse, %labels : tensor<128x16xf32>, tensor<128xf32>, tensor<128xi32>) outs(%gl_e : tensor<128x16xf32>) {
  ^bb0(%l: f32, %ls: f32, %lab: i32, %out: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %hit = arith.cmpi eq, %ji, %lab : i32
    %d = arith.subf %l, %ls : f32
    %p = math.exp %d : f32
    %pm1 = arith.subf %p, %one : f32
    %g = arith.select %hit, %pm1, %p : f32
    %gb = arith.mulf %g, %inv_b : f32
    %r = arith.mulf %gb, %seed : f32
    linalg.yield %r : f32
  } -> tensor<128x16xf32>
  // layer 4
  %db4_e = tensor.empty() : tensor<16xf32>
  %db4_0 = linalg.fill ins(%zero : f32) outs(%db4_e : tensor<16xf32>) -> tensor<16xf32>
  %db4 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%gl : tensor<128x16xf32>) outs(%db4_0 : tensor<16xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %dw4_e = tensor.empty() : tensor<64x16xf32>
  %dw4_0 = linalg.fill ins(%zero : f32) outs(%dw4_e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %dw4 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%a3, %gl : tensor<128x64xf32>, tensor<128x16xf32>) outs(%dw4_0 : tensor<64x16xf32>) -> tensor<64x16xf32>
  %g3_e = tensor.empty() : tensor<128x64xf32>
  %g3_0 = linalg.fill ins(%zero : f32) outs(%g3_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %g3 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%gl, %w4 : tensor<128x16xf32>, tensor<64x16xf32>) outs(%g3_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  // layer 3
  %dz3_e = tensor.empty() : tensor<128x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g3, %a3 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz3_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %db3_e = tensor.empty() : tensor<64xf32>
  %db3_0 = linalg.fill ins(%zero : f32) outs(%db3_e : tensor<64xf32>) -> tensor<64xf32>
  %db3 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz3 : tensor<128x64xf32>) outs(%db3_0 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %dw3_e = tensor.empty() : tensor<64x64xf32>
  %dw3_0 = linalg.fill ins(%zero : f32) outs(%dw3_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%a2, %dz3 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dw3_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %g2_e = tensor.empty() : tensor<128x64xf32>
  %g2_0 = linalg.fill ins(%zero : f32) outs(%g2_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %g2 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz3, %w3 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%g2_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  // layer 2
  %dz2_e = tensor.empty() : tensor<128x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g2, %a2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz2_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %db2_e = tensor.empty() : tensor<64xf32>
  %db2_0 = linalg.fill ins(%zero : f32) outs(%db2_e : tensor<64xf32>) -> tensor<64xf32>
  %db2 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz2 : tensor<128x64xf32>) outs(%db2_0 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %dw2_e = tensor.empty() : tensor<64x64xf32>
  %dw2_0 = linalg.fill ins(%zero : f32) outs(%dw2_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%a1, %dz2 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dw2_0 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %g1_e = tensor.empty() : tensor<128x64xf32>
  %g1_0 = linalg.fill ins(%zero : f32) outs(%g1_e : tensor<128x64xf32>) -> tensor<128x64xf32>
  %g1 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%dz2, %w2 : tensor<128x64xf32>, tensor<64x64xf32>) outs(%g1_0 : tensor<128x64xf32>) -> tensor<128x64xf32>
  // layer 1
  %dz1_e = tensor.empty() : tensor<128x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g1, %a1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dz1_e : tensor<128x64xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %db1_e = tensor.empty() : tensor<64xf32>
  %db1_0 = linalg.fill ins(%zero : f32) outs(%db1_e : tensor<64xf32>) -> tensor<64xf32>
  %db1 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%dz1 : tensor<128x64xf32>) outs(%db1_0 : tensor<64xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %dw1_e = tensor.empty() : tensor<64x64xf32>
  %dw1_0 = linalg.fill ins(%zero : f32) outs(%dw1_e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw1 = linalg.matmul indexing_maps = [#km, #kn, #mn] ins(%x, %dz1 : tensor<128x64xf32>, tensor<128x64xf32>) outs(%dw1_0 : tensor<64x64xf32>) -> tensor<64x64xf32>

  return %loss, %dw1, %db1, %dw2, %db2, %dw3, %db3, %dw4, %db4
      : tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>,
        tensor<64x64xf32>, tensor<64xf32>, tensor<64x16xf32>, tensor<16xf32>
}

// ---- inputs: formulas of the element index

func.func private @weights(%l: i32) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %w = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<64x64xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %c3 = arith.constant 3 : i32
    %c5 = arith.constant 5 : i32
    %c17 = arith.constant 17 : i32
    %c8 = arith.constant 8 : i32
    %a = arith.muli %ii, %c3 : i32
    %b = arith.muli %jj, %c5 : i32
    %s = arith.addi %a, %b : i32
    %s2 = arith.addi %s, %l : i32
    %m = arith.remsi %s2, %c17 : i32
    %d = arith.subi %m, %c8 : i32
    %f = arith.sitofp %d : i32 to f32
    %k = arith.constant 1.562500e-02 : f32
    %r = arith.mulf %f, %k : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  return %w : tensor<64x64xf32>
}

func.func private @bias(%l: i32) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %b = linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%e : tensor<64xf32>) {
  ^bb0(%out: f32):
    %j = linalg.index 0 : index
    %jj = arith.index_cast %j : index to i32
    %c5 = arith.constant 5 : i32
    %c2 = arith.constant 2 : i32
    %s = arith.addi %jj, %l : i32
    %m = arith.remsi %s, %c5 : i32
    %d = arith.subi %m, %c2 : i32
    %f = arith.sitofp %d : i32 to f32
    %k = arith.constant 1.250000e-01 : f32
    %r = arith.mulf %f, %k : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %b : tensor<64xf32>
}

// p - lr * g, elementwise
func.func private @sgd2(%p: tensor<64x64xf32>, %g: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %lr = arith.constant 5.000000e-01 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p, %g : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %b, %lr : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

func.func private @sgd1(%p: tensor<64xf32>, %g: tensor<64xf32>) -> tensor<64xf32> {
  %lr = arith.constant 5.000000e-01 : f32
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%p, %g : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %b, %lr : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %zero = arith.constant 0.000000e+00 : f32
  %lr = arith.constant 5.000000e-01 : f32

  %x_e = tensor.empty() : tensor<128x64xf32>
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%x_e : tensor<128x64xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k7 = arith.constant 7 : i32
    %k13 = arith.constant 13 : i32
    %k23 = arith.constant 23 : i32
    %k11 = arith.constant 11 : i32
    %a = arith.muli %ii, %k7 : i32
    %b = arith.muli %jj, %k13 : i32
    %s = arith.addi %a, %b : i32
    %m = arith.remsi %s, %k23 : i32
    %d = arith.subi %m, %k11 : i32
    %f = arith.sitofp %d : i32 to f32
    %q = arith.constant 6.250000e-02 : f32
    %r = arith.mulf %f, %q : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  %lab_e = tensor.empty() : tensor<128xi32>
  %labels = linalg.generic {indexing_maps = [#v], iterator_types = ["parallel"]} outs(%lab_e : tensor<128xi32>) {
  ^bb0(%out: i32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %k5 = arith.constant 5 : i32
    %k3 = arith.constant 3 : i32
    %k16 = arith.constant 16 : i32
    %a = arith.muli %ii, %k5 : i32
    %s = arith.addi %a, %k3 : i32
    %m = arith.remsi %s, %k16 : i32
    linalg.yield %m : i32
  } -> tensor<128xi32>
  %l1 = arith.constant 1 : i32
  %l2 = arith.constant 2 : i32
  %l3 = arith.constant 3 : i32
  %l4 = arith.constant 4 : i32
  %w1 = func.call @weights(%l1) : (i32) -> tensor<64x64xf32>
  %w2 = func.call @weights(%l2) : (i32) -> tensor<64x64xf32>
  %w3 = func.call @weights(%l3) : (i32) -> tensor<64x64xf32>
  %w4full = func.call @weights(%l4) : (i32) -> tensor<64x64xf32>
  %w4 = tensor.extract_slice %w4full[0, 0] [64, 16] [1, 1] : tensor<64x64xf32> to tensor<64x16xf32>
  %b1 = func.call @bias(%l1) : (i32) -> tensor<64xf32>
  %b2 = func.call @bias(%l2) : (i32) -> tensor<64xf32>
  %b3 = func.call @bias(%l3) : (i32) -> tensor<64xf32>
  %b4full = func.call @bias(%l4) : (i32) -> tensor<64xf32>
  %b4 = tensor.extract_slice %b4full[0] [16] [1] : tensor<64xf32> to tensor<16xf32>

  // step 1
  %r:9 = func.call @sgd_loss_and_grads(%x, %labels, %w1, %b1, %w2, %b2, %w3, %b3, %w4, %b4)
      : (tensor<128x64xf32>, tensor<128xi32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x16xf32>, tensor<16xf32>)
     -> (tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x16xf32>, tensor<16xf32>)
  %loss1 = tensor.extract %r#0[] : tensor<f32>
  vector.print str "loss_1 = "
  vector.print %loss1 : f32

  // SGD update
  %w1n = func.call @sgd2(%w1, %r#1) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b1n = func.call @sgd1(%b1, %r#2) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %w2n = func.call @sgd2(%w2, %r#3) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b2n = func.call @sgd1(%b2, %r#4) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %w3n = func.call @sgd2(%w3, %r#5) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %b3n = func.call @sgd1(%b3, %r#6) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %w4n_e = tensor.empty() : tensor<64x16xf32>
  %w4n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%w4, %r#7 : tensor<64x16xf32>, tensor<64x16xf32>) outs(%w4n_e : tensor<64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %b, %lr : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x16xf32>
  %b4n_e = tensor.empty() : tensor<16xf32>
  %b4n = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%b4, %r#8 : tensor<16xf32>, tensor<16xf32>) outs(%b4n_e : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %b, %lr : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>

  // step 2
  %q:9 = func.call @sgd_loss_and_grads(%x, %labels, %w1n, %b1n, %w2n, %b2n, %w3n, %b3n, %w4n, %b4n)
      : (tensor<128x64xf32>, tensor<128xi32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x16xf32>, tensor<16xf32>)
     -> (tensor<f32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x16xf32>, tensor<16xf32>)
  %loss2 = tensor.extract %q#0[] : tensor<f32>
  vector.print str "loss_2 = "
  vector.print %loss2 : f32
  %g135 = tensor.extract %q#1[%c3, %c5] : tensor<64x64xf32>
  vector.print str "dW_1[3, 5] = "
  vector.print %g135 : f32
  %gb47 = tensor.extract %q#8[%c7] : tensor<16xf32>
  vector.print str "db_4[7] = "
  vector.print %gb47 : f32
  %s_e = tensor.empty() : tensor<f32>
  %s_0 = linalg.fill ins(%zero : f32) outs(%s_e : tensor<f32>) -> tensor<f32>
  %s3 = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%q#5 : tensor<64x64xf32>) outs(%s_0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %sum3 = tensor.extract %s3[] : tensor<f32>
  vector.print str "sum(dW_3) = "
  vector.print %sum3 : f32
  return
}
