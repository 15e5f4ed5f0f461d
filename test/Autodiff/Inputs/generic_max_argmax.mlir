// Max and argmax in one reduction generic (the pattern of torch.max(dim)):
// the f64 output is a select of the element or the previous value, the i64
// output (the index, not differentiable) shares the comparison: the max gets
// the same adjoint as the select alone (Inputs/generic_reduce_select.mlir).
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (i)>
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @step(%x: tensor<3x4xf64>) -> (tensor<f64> {remat.loss}) {
  %ninf = arith.constant -1.0e30 : f64
  %e1 = tensor.empty() : tensor<3xf64>
  %f1 = linalg.fill ins(%ninf : f64) outs(%e1 : tensor<3xf64>) -> tensor<3xf64>
  %c0 = arith.constant 0 : i64
  %e2 = tensor.empty() : tensor<3xi64>
  %f2 = linalg.fill ins(%c0 : i64) outs(%e2 : tensor<3xi64>) -> tensor<3xi64>
  %r:2 = linalg.generic {indexing_maps = [#id, #col, #col], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%f1, %f2 : tensor<3xf64>, tensor<3xi64>) {
  ^bb0(%a: f64, %m: f64, %idx: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %a, %m : f64
    %nm = arith.select %gt, %a, %m : f64
    %ni = arith.select %gt, %ji, %idx : i64
    linalg.yield %nm, %ni : f64, i64
  } -> (tensor<3xf64>, tensor<3xi64>)
  %zero = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%r#0, %r#1 : tensor<3xf64>, tensor<3xi64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %b: i64, %acc: f64):
    %bf = arith.sitofp %b : i64 to f64
    %v = arith.mulf %a, %bf : f64
    %aa = arith.mulf %v, %a : f64
    %s = arith.addf %acc, %aa : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
