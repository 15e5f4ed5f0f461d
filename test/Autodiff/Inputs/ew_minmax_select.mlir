// maximumf (relu), minimumf, select on cmpf, absf in generic bodies; the
// arguments are distinct and away from the kinks (x != y, x != 0).
// u = max(x, 0) + min(x, y), v = (x > y ? x * 2 : y * 0.5) + |x - 0.1| * y,
// loss = sum(u * v + u * u).
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<3x4xf64>, %y: tensor<3x4xf64>) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<3x4xf64>
  %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<3x4xf64>, tensor<3x4xf64>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %zero = arith.constant 0.0 : f64
    %relu = arith.maximumf %a, %zero : f64
    %mn = arith.minimumf %a, %b : f64
    %s = arith.addf %relu, %mn : f64
    linalg.yield %s : f64
  } -> tensor<3x4xf64>
  %e2 = tensor.empty() : tensor<3x4xf64>
  %v = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<3x4xf64>, tensor<3x4xf64>) outs(%e2 : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %gt = arith.cmpf ogt, %a, %b : f64
    %two = arith.constant 2.0 : f64
    %half = arith.constant 0.5 : f64
    %a2 = arith.mulf %a, %two : f64
    %b2 = arith.mulf %b, %half : f64
    %sel = arith.select %gt, %a2, %b2 : f64
    %c = arith.constant 0.1 : f64
    %d = arith.subf %a, %c : f64
    %abs = math.absf %d : f64
    %ab = arith.mulf %abs, %b : f64
    %s = arith.addf %sel, %ab : f64
    linalg.yield %s : f64
  } -> tensor<3x4xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%u, %v : tensor<3x4xf64>, tensor<3x4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %ab = arith.mulf %a, %b : f64
    %aa = arith.mulf %a, %a : f64
    %w = arith.addf %ab, %aa : f64
    %s = arith.addf %acc, %w : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
