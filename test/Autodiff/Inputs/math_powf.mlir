// math.powf with both the base and the exponent differentiated (base > 0),
// and with a constant exponent: t = x ** y + x ** 2.5, loss = sum(t * w),
// w a fixed input.
// gradcheck: arg=0 range=0.5,2.0
// gradcheck: arg=1 range=-1.5,1.5
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x3xf64> {remat.param}, %y: tensor<2x3xf64> {remat.param},
                %w: tensor<2x3xf64>) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<2x3xf64>
  %t = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<2x3xf64>, tensor<2x3xf64>) outs(%e : tensor<2x3xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %p = math.powf %a, %b : f64
    %c = arith.constant 2.5 : f64
    %q = math.powf %a, %c : f64
    %s = arith.addf %p, %q : f64
    linalg.yield %s : f64
  } -> tensor<2x3xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%t, %w : tensor<2x3xf64>, tensor<2x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
