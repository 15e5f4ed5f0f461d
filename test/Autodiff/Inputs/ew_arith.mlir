// Elementwise arith in linalg.generic bodies: addf, subf, mulf, divf, negf,
// constants; x and y are each used by several ops and several times in one
// body. loss = sum(t * t + t * x), t = (x*y - x) / (y + 2) + (-x) * 0.3.
// gradcheck: arg=1 range=0.5,1.5
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x3xf64>, %y: tensor<2x3xf64>) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<2x3xf64>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<2x3xf64>, tensor<2x3xf64>) outs(%e : tensor<2x3xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %ab = arith.mulf %a, %b : f64
    %num = arith.subf %ab, %a : f64
    %two = arith.constant 2.0 : f64
    %den = arith.addf %b, %two : f64
    %q = arith.divf %num, %den : f64
    %na = arith.negf %a : f64
    %c = arith.constant 0.3 : f64
    %r = arith.mulf %na, %c : f64
    %s = arith.addf %q, %r : f64
    linalg.yield %s : f64
  } -> tensor<2x3xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t, %x : tensor<2x3xf64>, tensor<2x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %aa = arith.mulf %a, %a : f64
    %ab = arith.mulf %a, %b : f64
    %v = arith.addf %aa, %ab : f64
    %s = arith.addf %acc, %v : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
