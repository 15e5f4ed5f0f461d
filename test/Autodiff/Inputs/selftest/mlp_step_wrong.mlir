// A wrong gradient for the self-test: dw's element [2, 1] is off by 1e-3 (the
// harness must report that element and nothing else).
func.func @step(%x: tensor<2x3xf64> {remat.param}, %w: tensor<3x2xf64> {remat.param},
                %b: tensor<2x2xf64>) -> (tensor<f64> {remat.loss}, tensor<2x3xf64>, tensor<3x2xf64>) {
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<2x2xf64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<2x2xf64>) -> tensor<2x2xf64>
  %xw = linalg.matmul ins(%x, %w : tensor<2x3xf64>, tensor<3x2xf64>) outs(%f0 : tensor<2x2xf64>) -> tensor<2x2xf64>
  %e1 = tensor.empty() : tensor<f64>
  %f1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                          iterator_types = ["reduction", "reduction"]}
      ins(%xw, %b : tensor<2x2xf64>, tensor<2x2xf64>) outs(%f1 : tensor<f64>) {
  ^bb0(%p: f64, %q: f64, %acc: f64):
    %y = arith.addf %p, %q : f64
    %sq = arith.mulf %y, %y : f64
    %half = arith.constant 0.5 : f64
    %h = arith.mulf %sq, %half : f64
    %s = arith.addf %acc, %h : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %seed = arith.constant {remat.seed} dense<1.0> : tensor<f64>
  %e2 = tensor.empty() : tensor<2x2xf64>
  %dy = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b, %seed : tensor<2x2xf64>, tensor<2x2xf64>, tensor<f64>) outs(%e2 : tensor<2x2xf64>) {
  ^bb0(%p: f64, %q: f64, %s: f64, %o: f64):
    %y = arith.addf %p, %q : f64
    %r = arith.mulf %y, %s : f64
    linalg.yield %r : f64
  } -> tensor<2x2xf64>
  %e3 = tensor.empty() : tensor<2x3xf64>
  %f3 = linalg.fill ins(%zero : f64) outs(%e3 : tensor<2x3xf64>) -> tensor<2x3xf64>
  %dx = linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, j)>, affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, k)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dy, %w : tensor<2x2xf64>, tensor<3x2xf64>) outs(%f3 : tensor<2x3xf64>) {
  ^bb0(%a: f64, %c: f64, %acc: f64):
    %m = arith.mulf %a, %c : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<2x3xf64>
  %e4 = tensor.empty() : tensor<3x2xf64>
  %f4 = linalg.fill ins(%zero : f64) outs(%e4 : tensor<3x2xf64>) -> tensor<3x2xf64>
  %dw = linalg.generic {indexing_maps = [affine_map<(k, j, i) -> (i, k)>, affine_map<(k, j, i) -> (i, j)>, affine_map<(k, j, i) -> (k, j)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : tensor<2x3xf64>, tensor<2x2xf64>) outs(%f4 : tensor<3x2xf64>) {
  ^bb0(%a: f64, %c: f64, %acc: f64):
    %m = arith.mulf %a, %c : f64
    %s = arith.addf %acc, %m : f64
    linalg.yield %s : f64
  } -> tensor<3x2xf64>
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %v = tensor.extract %dw[%c2, %c1] : tensor<3x2xf64>
  %off = arith.constant 1.0e-3 : f64
  %v2 = arith.addf %v, %off : f64
  %dw2 = tensor.insert %v2 into %dw[%c2, %c1] : tensor<3x2xf64>
  return %loss, %dx, %dw2 : tensor<f64>, tensor<2x3xf64>, tensor<3x2xf64>
}
