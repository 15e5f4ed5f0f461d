// A realistic classifier loss with integer arguments: logits = x w + b
// (matmul, bias broadcast), softmax cross-entropy against labels (tensor of
// i64, compared with linalg.index in the bodies), with the row max
// subtracted (max reduction) before exp/log. Only w and b are parameters.
// gradcheck: arg=3 int-range=0,4
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#col = affine_map<(i, j) -> (i)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @step(%x: tensor<3x5xf64>, %w: tensor<5x4xf64> {remat.param}, %b: tensor<4xf64> {remat.param},
                %labels: tensor<3xi64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<3x4xf64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<3x4xf64>) -> tensor<3x4xf64>
  %xw = linalg.matmul ins(%x, %w : tensor<3x5xf64>, tensor<5x4xf64>) outs(%f0 : tensor<3x4xf64>) -> tensor<3x4xf64>
  %e1 = tensor.empty() : tensor<3x4xf64>
  %z = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b : tensor<3x4xf64>, tensor<4xf64>) outs(%e1 : tensor<3x4xf64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %s = arith.addf %u, %v : f64
    linalg.yield %s : f64
  } -> tensor<3x4xf64>
  %ninf = arith.constant -1.0e30 : f64
  %em = tensor.empty() : tensor<3xf64>
  %fm = linalg.fill ins(%ninf : f64) outs(%em : tensor<3xf64>) -> tensor<3xf64>
  %mx = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<3x4xf64>) outs(%fm : tensor<3xf64>) {
  ^bb0(%u: f64, %acc: f64):
    %m = arith.maximumf %u, %acc : f64
    linalg.yield %m : f64
  } -> tensor<3xf64>
  %es = tensor.empty() : tensor<3xf64>
  %fs = linalg.fill ins(%zero : f64) outs(%es : tensor<3xf64>) -> tensor<3xf64>
  %se = linalg.generic {indexing_maps = [#id, #col, #col], iterator_types = ["parallel", "reduction"]}
      ins(%z, %mx : tensor<3x4xf64>, tensor<3xf64>) outs(%fs : tensor<3xf64>) {
  ^bb0(%u: f64, %m: f64, %acc: f64):
    %d = arith.subf %u, %m : f64
    %ex = math.exp %d : f64
    %s = arith.addf %acc, %ex : f64
    linalg.yield %s : f64
  } -> tensor<3xf64>
  // picked_i = z[i, labels[i]] through a one-hot select on linalg.index.
  %ep = tensor.empty() : tensor<3xf64>
  %fp = linalg.fill ins(%zero : f64) outs(%ep : tensor<3xf64>) -> tensor<3xf64>
  %picked = linalg.generic {indexing_maps = [#id, #col, #col], iterator_types = ["parallel", "reduction"]}
      ins(%z, %labels : tensor<3x4xf64>, tensor<3xi64>) outs(%fp : tensor<3xf64>) {
  ^bb0(%u: f64, %l: i64, %acc: f64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %ji, %l : i64
    %v = arith.select %eq, %u, %zero : f64
    %s = arith.addf %acc, %v : f64
    linalg.yield %s : f64
  } -> tensor<3xf64>
  // loss = mean_i (log(se_i) + mx_i - picked_i)
  %e2 = tensor.empty() : tensor<f64>
  %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id1, #id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%se, %mx, %picked : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) outs(%f2 : tensor<f64>) {
  ^bb0(%s: f64, %m: f64, %p: f64, %acc: f64):
    %lg = math.log %s : f64
    %a = arith.addf %lg, %m : f64
    %d = arith.subf %a, %p : f64
    %third = arith.constant 0.33333333333333331 : f64
    %dm = arith.mulf %d, %third : f64
    %r = arith.addf %acc, %dm : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
