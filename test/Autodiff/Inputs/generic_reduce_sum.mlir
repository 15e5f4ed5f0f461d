// Sum reductions through linalg.generic accumulating into the out argument:
// r_i = b_i + sum_j x_ij * w_j (the init is the parameter b itself, so its
// gradient flows through the out operand), then a column reduction
// q_j = sum_i x_ij^2 into a zero fill; loss = sum(r * r) + sum(q * v),
// the second sum accumulating into the first (its init is l1).
// (generic_captured_value.mlir has the variant with r[0] captured in a body.)
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#col = affine_map<(i, j) -> (i)>
#all1 = affine_map<(i) -> ()>
#id1 = affine_map<(i) -> (i)>
func.func @step(%x: tensor<3x4xf64> {remat.param}, %w: tensor<4xf64> {remat.param},
                %b: tensor<3xf64> {remat.param}, %v: tensor<4xf64>)
    -> (tensor<f64> {remat.loss}) {
  %r = linalg.generic {indexing_maps = [#id, #row, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<3x4xf64>, tensor<4xf64>) outs(%b : tensor<3xf64>) {
  ^bb0(%xv: f64, %wv: f64, %acc: f64):
    %m = arith.mulf %xv, %wv : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<3xf64>
  %zero = arith.constant 0.0 : f64
  %eq = tensor.empty() : tensor<4xf64>
  %fq = linalg.fill ins(%zero : f64) outs(%eq : tensor<4xf64>) -> tensor<4xf64>
  %q = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%fq : tensor<4xf64>) {
  ^bb0(%xv: f64, %acc: f64):
    %m = arith.mulf %xv, %xv : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<4xf64>
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%r : tensor<3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %aa = arith.mulf %a, %a : f64
    %s = arith.addf %acc, %aa : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%q, %v : tensor<4xf64>, tensor<4xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%a: f64, %vv: f64, %acc: f64):
    %m = arith.mulf %a, %vv : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
