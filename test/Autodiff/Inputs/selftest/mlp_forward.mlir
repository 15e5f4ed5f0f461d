// Forward of the harness's self-test: loss = 0.5 * sum((x w + b)^2), with x
// and w parameters and b an input.
// gradcheck: arg=2 range=-0.5,0.5
func.func @step(%x: tensor<2x3xf64> {remat.param}, %w: tensor<3x2xf64> {remat.param},
                %b: tensor<2x2xf64>) -> (tensor<f64> {remat.loss}) {
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
  return %loss : tensor<f64>
}
