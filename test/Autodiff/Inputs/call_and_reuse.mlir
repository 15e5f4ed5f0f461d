// The differentiated function is called by another function (@caller): the
// call must get the training step's result types. Inside, h is used by
// three ops (a diamond: h*h, exp(h), and h again in the loss), and d reaches
// nothing (dead: no backward for it).
// loss = sum(h * h * exp(h) + h), h = x * w + 0.1.
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<2x3xf64>, %w: tensor<2x3xf64> {remat.param}) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<2x3xf64>
  %h = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<2x3xf64>, tensor<2x3xf64>) outs(%e : tensor<2x3xf64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %m = arith.mulf %u, %v : f64
    %c = arith.constant 0.1 : f64
    %s = arith.addf %m, %c : f64
    linalg.yield %s : f64
  } -> tensor<2x3xf64>
  %e1 = tensor.empty() : tensor<2x3xf64>
  %sq = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %h : tensor<2x3xf64>, tensor<2x3xf64>) outs(%e1 : tensor<2x3xf64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %m = arith.mulf %u, %v : f64
    linalg.yield %m : f64
  } -> tensor<2x3xf64>
  %e2 = tensor.empty() : tensor<2x3xf64>
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<2x3xf64>) outs(%e2 : tensor<2x3xf64>) {
  ^bb0(%u: f64, %o: f64):
    %m = math.exp %u : f64
    linalg.yield %m : f64
  } -> tensor<2x3xf64>
  %e3 = tensor.empty() : tensor<2x3xf64>
  %d = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex : tensor<2x3xf64>) outs(%e3 : tensor<2x3xf64>) {
  ^bb0(%u: f64, %o: f64):
    %m = math.tanh %u : f64
    linalg.yield %m : f64
  } -> tensor<2x3xf64>
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id, #id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%sq, %ex, %h : tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %b: f64, %c: f64, %acc: f64):
    %m = arith.mulf %a, %b : f64
    %p = arith.addf %m, %c : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}

func.func @caller(%x: tensor<2x3xf64>, %w: tensor<2x3xf64>) -> f64 {
  %l = func.call @step(%x, %w) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<f64>
  %v = tensor.extract %l[] : tensor<f64>
  return %v : f64
}
