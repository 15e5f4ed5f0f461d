// A forward function with ops of an out-of-tree dialect (toy.scaled_tanh,
// test/Integration/toy): two of them around a matrix product on the path
// from the parameters to the loss (the bias, read by both, accumulates its
// gradient), and a large one on data alone, first: no backward, but the
// step's peak is while it runs, its result and its workspace live together.
// gradcheck: range=-1,1
func.func @toy_loss(%x: tensor<4x8xf64> {remat.param},
                    %b: tensor<4x8xf64> {remat.param},
                    %w: tensor<8x8xf64> {remat.param},
                    %data: tensor<64x32xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %d = toy.scaled_tanh %data, %data {scale = 1.0 : f64} : tensor<64x32xf64>
  %d0 = tensor.empty() : tensor<f64>
  %d1 = linalg.fill ins(%zero : f64) outs(%d0 : tensor<f64>) -> tensor<f64>
  %dsum = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
      iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<64x32xf64>) outs(%d1 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.addf %acc, %a : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %h = toy.scaled_tanh %x, %b {scale = 2.0 : f64} : tensor<4x8xf64>
  %e = tensor.empty() : tensor<4x8xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<4x8xf64>) -> tensor<4x8xf64>
  %m = linalg.matmul ins(%h, %w : tensor<4x8xf64>, tensor<8x8xf64>)
                     outs(%z : tensor<4x8xf64>) -> tensor<4x8xf64>
  %h2 = toy.scaled_tanh %m, %b {scale = 0.5 : f64} : tensor<4x8xf64>
  // loss = sum(d) + sum(h2 * h2)
  %loss = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
      iterator_types = ["reduction", "reduction"]}
      ins(%h2 : tensor<4x8xf64>) outs(%dsum : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %sq = arith.mulf %a, %a : f64
    %s = arith.addf %acc, %sq : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
