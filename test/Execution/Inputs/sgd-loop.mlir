// A training loop in the module's own main: three SGD iterations of the
// step of own-main.mlir, the weights carried in scf.for as tensors (each
// iteration yields new ones, which one-shot bufferization accepts only with
// allow-return-allocs-from-loops), the loss printed at every iteration. Every
// call of the step is measured on its own.
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<64x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x4xf32>)
    -> (tensor<f32> {remat.loss}, tensor<16x32xf32>, tensor<32x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<64x32xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<64x16xf32>, tensor<16x32xf32>) outs(%f0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e1 = tensor.empty() : tensor<64x32xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<64x32xf32>) outs(%e1 : tensor<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<64x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x4xf32>) -> tensor<64x4xf32>
  %o = linalg.matmul ins(%t, %w2 : tensor<64x32xf32>, tensor<32x4xf32>) outs(%f2 : tensor<64x4xf32>) -> tensor<64x4xf32>
  // loss = sum(o^2) / 2; seed 1.0 starts reverse mode.
  %e3 = tensor.empty() : tensor<f32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%o : tensor<64x4xf32>) outs(%f3 : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %half = arith.constant 0.5 : f32
    %h2 = arith.mulf %sq, %half : f32
    %s = arith.addf %acc, %h2 : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %seed = arith.constant {remat.seed} dense<1.0> : tensor<f32>
  %e4 = tensor.empty() : tensor<64x4xf32>
  %do = linalg.generic {indexing_maps = [#id, #all, #id], iterator_types = ["parallel", "parallel"]}
      ins(%o, %seed : tensor<64x4xf32>, tensor<f32>) outs(%e4 : tensor<64x4xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = arith.mulf %in, %s : f32
    linalg.yield %r : f32
  } -> tensor<64x4xf32>
  // dW2 = t^T do, dt = do W2^T, dh = dt * (1 - t^2), dW1 = x^T dh.
  %e5 = tensor.empty() : tensor<32x4xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<32x4xf32>) -> tensor<32x4xf32>
  %dw2 = linalg.generic {indexing_maps = [affine_map<(i, j, b) -> (b, i)>, affine_map<(i, j, b) -> (b, j)>, affine_map<(i, j, b) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%t, %do : tensor<64x32xf32>, tensor<64x4xf32>) outs(%f5 : tensor<32x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<32x4xf32>
  %e6 = tensor.empty() : tensor<64x32xf32>
  %f6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %dt = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, j)>, affine_map<(b, i, j) -> (i, j)>, affine_map<(b, i, j) -> (b, i)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%do, %w2 : tensor<64x4xf32>, tensor<32x4xf32>) outs(%f6 : tensor<64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  %e7 = tensor.empty() : tensor<64x32xf32>
  %dh = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dt, %t : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e7 : tensor<64x32xf32>) {
  ^bb0(%g: f32, %y: f32, %out: f32):
    %y2 = arith.mulf %y, %y : f32
    %d = arith.subf %one, %y2 : f32
    %r = arith.mulf %g, %d : f32
    linalg.yield %r : f32
  } -> tensor<64x32xf32>
  %e8 = tensor.empty() : tensor<16x32xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %dw1 = linalg.generic {indexing_maps = [affine_map<(i, j, b) -> (b, i)>, affine_map<(i, j, b) -> (b, j)>, affine_map<(i, j, b) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dh : tensor<64x16xf32>, tensor<64x32xf32>) outs(%f8 : tensor<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %loss, %dw1, %dw2 : tensor<f32>, tensor<16x32xf32>, tensor<32x4xf32>
}

func.func @main() {
  %ex = tensor.empty() : tensor<64x16xf32>
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%ex : tensor<64x16xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %i, %j : index
    %c7 = arith.constant 7 : index
    %m = arith.remui %k, %c7 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %c = arith.constant 0.125 : f32
    %v = arith.mulf %mf, %c : f32
    %o = arith.constant 0.375 : f32
    %r = arith.subf %v, %o : f32
    linalg.yield %r : f32
  } -> tensor<64x16xf32>
  %w1 = arith.constant dense<0.0625> : tensor<16x32xf32>
  %w2 = arith.constant dense<-0.125> : tensor<32x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %ws:2 = scf.for %it = %c0 to %c3 step %c1 iter_args(%a1 = %w1, %a2 = %w2)
      -> (tensor<16x32xf32>, tensor<32x4xf32>) {
    %r:3 = func.call @step(%x, %a1, %a2) : (tensor<64x16xf32>, tensor<16x32xf32>, tensor<32x4xf32>) -> (tensor<f32>, tensor<16x32xf32>, tensor<32x4xf32>)
    %loss = tensor.extract %r#0[] : tensor<f32>
    vector.print %loss : f32
    // w -= lr * dw, into a new tensor: the loop carries it.
    %e1 = tensor.empty() : tensor<16x32xf32>
    %n1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a1, %r#1 : tensor<16x32xf32>, tensor<16x32xf32>) outs(%e1 : tensor<16x32xf32>) {
    ^bb0(%wv: f32, %gv: f32, %out: f32):
      %lr = arith.constant 0.05 : f32
      %step = arith.mulf %gv, %lr : f32
      %new = arith.subf %wv, %step : f32
      linalg.yield %new : f32
    } -> tensor<16x32xf32>
    // w -= lr * dw, into a new tensor: the loop carries it.
    %e2 = tensor.empty() : tensor<32x4xf32>
    %n2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a2, %r#2 : tensor<32x4xf32>, tensor<32x4xf32>) outs(%e2 : tensor<32x4xf32>) {
    ^bb0(%wv: f32, %gv: f32, %out: f32):
      %lr = arith.constant 0.05 : f32
      %step = arith.mulf %gv, %lr : f32
      %new = arith.subf %wv, %step : f32
      linalg.yield %new : f32
    } -> tensor<32x4xf32>
    scf.yield %n1, %n2 : tensor<16x32xf32>, tensor<32x4xf32>
  }
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<f32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%ws#1 : tensor<32x4xf32>) outs(%fs : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %sv = tensor.extract %sum[] : tensor<f32>
  vector.print %sv : f32
  return
}
