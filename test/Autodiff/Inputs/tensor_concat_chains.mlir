// Concatenations written as destination chains of tensor.insert_slice (the
// exporter's torch.cat). Chain A (into tensor.empty, disjoint boxes) passes
// the chain's adjoint down without zeroed copies; the other chains must
// still zero the overwritten box: B's middle link (on a zero fill) is also
// read directly, C is built on a parameter, D's boxes overlap (the later
// piece wins); E's strided boxes interleave (disjoint, but their bounding
// boxes are not, so it is zeroed too).
// loss = sum(A^3) + sum(B*B) + sum(b1*b1*b1) + sum(C^3) + sum(D^3) + sum(E^3)
#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> ()>
func.func @step(%x0: tensor<2x3xf64>, %x1: tensor<2x3xf64>, %x2: tensor<2x3xf64>, %w: tensor<2x8xf64>) -> (tensor<f64> {remat.loss}) {
  %zero = arith.constant 0.0 : f64
  %ea = tensor.empty() : tensor<2x9xf64>
  %a0 = tensor.insert_slice %x0 into %ea[0, 0] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x9xf64>
  %a1 = tensor.insert_slice %x1 into %a0[0, 3] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x9xf64>
  %a2 = tensor.insert_slice %x2 into %a1[0, 6] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x9xf64>
  %eb = tensor.empty() : tensor<2x9xf64>
  %fb = linalg.fill ins(%zero : f64) outs(%eb : tensor<2x9xf64>) -> tensor<2x9xf64>
  %b0 = tensor.insert_slice %x2 into %fb[0, 6] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x9xf64>
  %b1 = tensor.insert_slice %x0 into %b0[0, 0] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x9xf64>
  %b2 = tensor.insert_slice %x1 into %b1[0, 3] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x9xf64>
  %c0 = tensor.insert_slice %x0 into %w[0, 0] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x8xf64>
  %c1 = tensor.insert_slice %x1 into %c0[0, 4] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x8xf64>
  %ed = tensor.empty() : tensor<2x5xf64>
  %fd = linalg.fill ins(%zero : f64) outs(%ed : tensor<2x5xf64>) -> tensor<2x5xf64>
  %d0 = tensor.insert_slice %x0 into %fd[0, 0] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x5xf64>
  %d1 = tensor.insert_slice %x1 into %d0[0, 2] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<2x5xf64>
  %ee = tensor.empty() : tensor<2x6xf64>
  %e0 = tensor.insert_slice %x1 into %ee[0, 0] [2, 3] [1, 2] : tensor<2x3xf64> into tensor<2x6xf64>
  %e1 = tensor.insert_slice %x2 into %e0[0, 1] [2, 3] [1, 2] : tensor<2x3xf64> into tensor<2x6xf64>
  %el = tensor.empty() : tensor<f64>
  %l0 = linalg.fill ins(%zero : f64) outs(%el : tensor<f64>) -> tensor<f64>
  %la = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]} ins(%a2 : tensor<2x9xf64>) outs(%l0 : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.mulf %in, %in : f64
    %c = arith.mulf %m, %in : f64
    %s = arith.addf %out, %c : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %lb = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]} ins(%b2 : tensor<2x9xf64>) outs(%la : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.mulf %in, %in : f64
    %s = arith.addf %out, %m : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %lb1 = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]} ins(%b1 : tensor<2x9xf64>) outs(%lb : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.mulf %in, %in : f64
    %c = arith.mulf %m, %in : f64
    %s = arith.addf %out, %c : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %lc = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]} ins(%c1 : tensor<2x8xf64>) outs(%lb1 : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.mulf %in, %in : f64
    %c = arith.mulf %m, %in : f64
    %s = arith.addf %out, %c : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %ld = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]} ins(%d1 : tensor<2x5xf64>) outs(%lc : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.mulf %in, %in : f64
    %c = arith.mulf %m, %in : f64
    %s = arith.addf %out, %c : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  %le = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]} ins(%e1 : tensor<2x6xf64>) outs(%ld : tensor<f64>) {
  ^bb0(%in: f64, %out: f64):
    %m = arith.mulf %in, %in : f64
    %c = arith.mulf %m, %in : f64
    %s = arith.addf %out, %c : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %le : tensor<f64>
}
