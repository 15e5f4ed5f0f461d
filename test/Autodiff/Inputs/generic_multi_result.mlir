// A linalg.generic with three results: p = x * y and q = x - y feed the loss,
// the third (exp(x)) reaches nothing and must get no backward. A second
// generic uses p twice and q once; x is used by both generics and the loss.
// loss = sum(p * q + p * p) + sum(x).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x3xf64>, %y: tensor<2x3xf64>) -> (tensor<f64> {remat.loss}) {
  %e1 = tensor.empty() : tensor<2x3xf64>
  %e2 = tensor.empty() : tensor<2x3xf64>
  %e3 = tensor.empty() : tensor<2x3xf64>
  %r:3 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<2x3xf64>, tensor<2x3xf64>) outs(%e1, %e2, %e3 : tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>) {
  ^bb0(%a: f64, %b: f64, %o1: f64, %o2: f64, %o3: f64):
    %p = arith.mulf %a, %b : f64
    %q = arith.subf %a, %b : f64
    %ex = math.exp %a : f64
    linalg.yield %p, %q, %ex : f64, f64, f64
  } -> (tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>)
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%r#0, %r#1 : tensor<2x3xf64>, tensor<2x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%p: f64, %q: f64, %acc: f64):
    %pq = arith.mulf %p, %q : f64
    %pp = arith.mulf %p, %p : f64
    %v = arith.addf %pq, %pp : f64
    %s = arith.addf %acc, %v : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<2x3xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.addf %acc, %a : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
