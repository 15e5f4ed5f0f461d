// The plain 6-layer MLP training step of the real-models issue, written by
// hand: linalg.matmul + ReLU as arith.maximumf, an MSE loss reduced to
// tensor<f32>, the seed an arith.constant {remat.seed}, the backward in the
// textbook order, and its own @main that builds the inputs and prints with
// vector.print.
#map = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> ()>
func.func @train_step(%x: tensor<256x16xf32>, %y: tensor<256x8xf32>, %w1: tensor<16x64xf32>, %w2: tensor<64x64xf32>, %w3: tensor<64x64xf32>, %w4: tensor<64x64xf32>, %w5: tensor<64x64xf32>, %w6: tensor<64x8xf32>) -> (tensor<f32> {remat.loss}, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<256x64xf32>
  %f1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z1 = linalg.matmul ins(%x, %w1 : tensor<256x16xf32>, tensor<16x64xf32>) outs(%f1 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %ea1 = tensor.empty() : tensor<256x64xf32>
  %a1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<256x64xf32>) outs(%ea1 : tensor<256x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %e2 = tensor.empty() : tensor<256x64xf32>
  %f2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z2 = linalg.matmul ins(%a1, %w2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%f2 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %ea2 = tensor.empty() : tensor<256x64xf32>
  %a2 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%z2 : tensor<256x64xf32>) outs(%ea2 : tensor<256x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %e3 = tensor.empty() : tensor<256x64xf32>
  %f3 = linalg.fill ins(%c0 : f32) outs(%e3 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z3 = linalg.matmul ins(%a2, %w3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%f3 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %ea3 = tensor.empty() : tensor<256x64xf32>
  %a3 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%z3 : tensor<256x64xf32>) outs(%ea3 : tensor<256x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %e4 = tensor.empty() : tensor<256x64xf32>
  %f4 = linalg.fill ins(%c0 : f32) outs(%e4 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z4 = linalg.matmul ins(%a3, %w4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%f4 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %ea4 = tensor.empty() : tensor<256x64xf32>
  %a4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%z4 : tensor<256x64xf32>) outs(%ea4 : tensor<256x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %e5 = tensor.empty() : tensor<256x64xf32>
  %f5 = linalg.fill ins(%c0 : f32) outs(%e5 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %z5 = linalg.matmul ins(%a4, %w5 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%f5 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %ea5 = tensor.empty() : tensor<256x64xf32>
  %a5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%z5 : tensor<256x64xf32>) outs(%ea5 : tensor<256x64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.maximumf %i, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %e6 = tensor.empty() : tensor<256x8xf32>
  %f6 = linalg.fill ins(%c0 : f32) outs(%e6 : tensor<256x8xf32>) -> tensor<256x8xf32>
  %z6 = linalg.matmul ins(%a5, %w6 : tensor<256x64xf32>, tensor<64x8xf32>) outs(%f6 : tensor<256x8xf32>) -> tensor<256x8xf32>
  %ed = tensor.empty() : tensor<256x8xf32>
  %diff = linalg.sub ins(%z6, %y : tensor<256x8xf32>, tensor<256x8xf32>) outs(%ed : tensor<256x8xf32>) -> tensor<256x8xf32>
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%c0 : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %sse = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction", "reduction"]} ins(%diff : tensor<256x8xf32>) outs(%fl : tensor<f32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.mulf %i, %i : f32
    %r = arith.addf %o, %s : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %invn = arith.constant 4.882812e-04 : f32
  %el2 = tensor.empty() : tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%sse : tensor<f32>) outs(%el2 : tensor<f32>) {
  ^bb0(%i: f32, %o: f32):
    %r = arith.mulf %i, %invn : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %seed = arith.constant {remat.seed} 1.0 : f32
  %two = arith.constant 9.765625e-04 : f32
  %eg = tensor.empty() : tensor<256x8xf32>
  %g6 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%diff : tensor<256x8xf32>) outs(%eg : tensor<256x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = arith.mulf %i, %two : f32
    %r = arith.mulf %s, %seed : f32
    linalg.yield %r : f32
  } -> tensor<256x8xf32>
  %et6 = tensor.empty() : tensor<64x256xf32>
  %at6 = linalg.transpose ins(%a5 : tensor<256x64xf32>) outs(%et6 : tensor<64x256xf32>) permutation = [1, 0]
  %edw6 = tensor.empty() : tensor<64x8xf32>
  %fdw6 = linalg.fill ins(%c0 : f32) outs(%edw6 : tensor<64x8xf32>) -> tensor<64x8xf32>
  %dw6 = linalg.matmul ins(%at6, %g6 : tensor<64x256xf32>, tensor<256x8xf32>) outs(%fdw6 : tensor<64x8xf32>) -> tensor<64x8xf32>
  %ewt6 = tensor.empty() : tensor<8x64xf32>
  %wt6 = linalg.transpose ins(%w6 : tensor<64x8xf32>) outs(%ewt6 : tensor<8x64xf32>) permutation = [1, 0]
  %edg6 = tensor.empty() : tensor<256x64xf32>
  %fdg6 = linalg.fill ins(%c0 : f32) outs(%edg6 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g5 = linalg.matmul ins(%g6, %wt6 : tensor<256x8xf32>, tensor<8x64xf32>) outs(%fdg6 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %edz5 = tensor.empty() : tensor<256x64xf32>
  %dz5 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%g5, %z5 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%edz5 : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %c0 : f32
    %r = arith.select %pos, %g, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %et5 = tensor.empty() : tensor<64x256xf32>
  %at5 = linalg.transpose ins(%a4 : tensor<256x64xf32>) outs(%et5 : tensor<64x256xf32>) permutation = [1, 0]
  %edw5 = tensor.empty() : tensor<64x64xf32>
  %fdw5 = linalg.fill ins(%c0 : f32) outs(%edw5 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw5 = linalg.matmul ins(%at5, %dz5 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%fdw5 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ewt5 = tensor.empty() : tensor<64x64xf32>
  %wt5 = linalg.transpose ins(%w5 : tensor<64x64xf32>) outs(%ewt5 : tensor<64x64xf32>) permutation = [1, 0]
  %edg5 = tensor.empty() : tensor<256x64xf32>
  %fdg5 = linalg.fill ins(%c0 : f32) outs(%edg5 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g4 = linalg.matmul ins(%dz5, %wt5 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%fdg5 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %edz4 = tensor.empty() : tensor<256x64xf32>
  %dz4 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%g4, %z4 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%edz4 : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %c0 : f32
    %r = arith.select %pos, %g, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %et4 = tensor.empty() : tensor<64x256xf32>
  %at4 = linalg.transpose ins(%a3 : tensor<256x64xf32>) outs(%et4 : tensor<64x256xf32>) permutation = [1, 0]
  %edw4 = tensor.empty() : tensor<64x64xf32>
  %fdw4 = linalg.fill ins(%c0 : f32) outs(%edw4 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw4 = linalg.matmul ins(%at4, %dz4 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%fdw4 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ewt4 = tensor.empty() : tensor<64x64xf32>
  %wt4 = linalg.transpose ins(%w4 : tensor<64x64xf32>) outs(%ewt4 : tensor<64x64xf32>) permutation = [1, 0]
  %edg4 = tensor.empty() : tensor<256x64xf32>
  %fdg4 = linalg.fill ins(%c0 : f32) outs(%edg4 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g3 = linalg.matmul ins(%dz4, %wt4 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%fdg4 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %edz3 = tensor.empty() : tensor<256x64xf32>
  %dz3 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%g3, %z3 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%edz3 : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %c0 : f32
    %r = arith.select %pos, %g, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %et3 = tensor.empty() : tensor<64x256xf32>
  %at3 = linalg.transpose ins(%a2 : tensor<256x64xf32>) outs(%et3 : tensor<64x256xf32>) permutation = [1, 0]
  %edw3 = tensor.empty() : tensor<64x64xf32>
  %fdw3 = linalg.fill ins(%c0 : f32) outs(%edw3 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw3 = linalg.matmul ins(%at3, %dz3 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%fdw3 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ewt3 = tensor.empty() : tensor<64x64xf32>
  %wt3 = linalg.transpose ins(%w3 : tensor<64x64xf32>) outs(%ewt3 : tensor<64x64xf32>) permutation = [1, 0]
  %edg3 = tensor.empty() : tensor<256x64xf32>
  %fdg3 = linalg.fill ins(%c0 : f32) outs(%edg3 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g2 = linalg.matmul ins(%dz3, %wt3 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%fdg3 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %edz2 = tensor.empty() : tensor<256x64xf32>
  %dz2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%g2, %z2 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%edz2 : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %c0 : f32
    %r = arith.select %pos, %g, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %et2 = tensor.empty() : tensor<64x256xf32>
  %at2 = linalg.transpose ins(%a1 : tensor<256x64xf32>) outs(%et2 : tensor<64x256xf32>) permutation = [1, 0]
  %edw2 = tensor.empty() : tensor<64x64xf32>
  %fdw2 = linalg.fill ins(%c0 : f32) outs(%edw2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %dw2 = linalg.matmul ins(%at2, %dz2 : tensor<64x256xf32>, tensor<256x64xf32>) outs(%fdw2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ewt2 = tensor.empty() : tensor<64x64xf32>
  %wt2 = linalg.transpose ins(%w2 : tensor<64x64xf32>) outs(%ewt2 : tensor<64x64xf32>) permutation = [1, 0]
  %edg2 = tensor.empty() : tensor<256x64xf32>
  %fdg2 = linalg.fill ins(%c0 : f32) outs(%edg2 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %g1 = linalg.matmul ins(%dz2, %wt2 : tensor<256x64xf32>, tensor<64x64xf32>) outs(%fdg2 : tensor<256x64xf32>) -> tensor<256x64xf32>
  %edz1 = tensor.empty() : tensor<256x64xf32>
  %dz1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%g1, %z1 : tensor<256x64xf32>, tensor<256x64xf32>) outs(%edz1 : tensor<256x64xf32>) {
  ^bb0(%g: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %z, %c0 : f32
    %r = arith.select %pos, %g, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<256x64xf32>
  %et1 = tensor.empty() : tensor<16x256xf32>
  %at1 = linalg.transpose ins(%x : tensor<256x16xf32>) outs(%et1 : tensor<16x256xf32>) permutation = [1, 0]
  %edw1 = tensor.empty() : tensor<16x64xf32>
  %fdw1 = linalg.fill ins(%c0 : f32) outs(%edw1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %dw1 = linalg.matmul ins(%at1, %dz1 : tensor<16x256xf32>, tensor<256x64xf32>) outs(%fdw1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %loss, %dw1, %dw2, %dw3, %dw4, %dw5, %dw6 : tensor<f32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x8xf32>
}
func.func @main() {
  %xe = tensor.empty() : tensor<256x16xf32>
  %x = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%xe : tensor<256x16xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k7 = arith.constant 7 : i32
    %k13 = arith.constant 13 : i32
    %k17 = arith.constant 17 : i32
    %k8 = arith.constant 8 : i32
    %t1 = arith.muli %ii, %k7 : i32
    %t2 = arith.muli %jj, %k13 : i32
    %t3 = arith.addi %t1, %t2 : i32
    %t4 = arith.remsi %t3, %k17 : i32
    %t5 = arith.subi %t4, %k8 : i32
    %f = arith.sitofp %t5 : i32 to f32
    %sc = arith.constant 6.250000e-02 : f32
    %v = arith.mulf %f, %sc : f32
    linalg.yield %v : f32
  } -> tensor<256x16xf32>
  %ye = tensor.empty() : tensor<256x8xf32>
  %y = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%ye : tensor<256x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k7 = arith.constant 7 : i32
    %k13 = arith.constant 13 : i32
    %k17 = arith.constant 17 : i32
    %k8 = arith.constant 8 : i32
    %t1 = arith.muli %ii, %k7 : i32
    %t2 = arith.muli %jj, %k13 : i32
    %t3 = arith.addi %t1, %t2 : i32
    %t4 = arith.remsi %t3, %k17 : i32
    %t5 = arith.subi %t4, %k8 : i32
    %f = arith.sitofp %t5 : i32 to f32
    %sc = arith.constant 3.125000e-02 : f32
    %v = arith.mulf %f, %sc : f32
    linalg.yield %v : f32
  } -> tensor<256x8xf32>
  %w1e = tensor.empty() : tensor<16x64xf32>
  %w1 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%w1e : tensor<16x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k7 = arith.constant 7 : i32
    %k13 = arith.constant 13 : i32
    %k17 = arith.constant 17 : i32
    %k8 = arith.constant 8 : i32
    %t1 = arith.muli %ii, %k7 : i32
    %t2 = arith.muli %jj, %k13 : i32
    %t3 = arith.addi %t1, %t2 : i32
    %t4 = arith.remsi %t3, %k17 : i32
    %t5 = arith.subi %t4, %k8 : i32
    %f = arith.sitofp %t5 : i32 to f32
    %sc = arith.constant 1.562500e-02 : f32
    %v = arith.mulf %f, %sc : f32
    linalg.yield %v : f32
  } -> tensor<16x64xf32>
  %w2e = tensor.empty() : tensor<64x64xf32>
  %w2 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%w2e : tensor<64x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k7 = arith.constant 7 : i32
    %k13 = arith.constant 13 : i32
    %k17 = arith.constant 17 : i32
    %k8 = arith.constant 8 : i32
    %t1 = arith.muli %ii, %k7 : i32
    %t2 = arith.muli %jj, %k13 : i32
    %t3 = arith.addi %t1, %t2 : i32
    %t4 = arith.remsi %t3, %k17 : i32
    %t5 = arith.subi %t4, %k8 : i32
    %f = arith.sitofp %t5 : i32 to f32
    %sc = arith.constant 1.562500e-02 : f32
    %v = arith.mulf %f, %sc : f32
    linalg.yield %v : f32
  } -> tensor<64x64xf32>
  %w3e = tensor.empty() : tensor<64x64xf32>
  %w3 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%w3e : tensor<64x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k7 = arith.constant 7 : i32
    %k13 = arith.constant 13 : i32
    %k17 = arith.constant 17 : i32
    %k8 = arith.constant 8 : i32
    %t1 = arith.muli %ii, %k7 : i32
    %t2 = arith.muli %jj, %k13 : i32
    %t3 = arith.addi %t1, %t2 : i32
    %t4 = arith.remsi %t3, %k17 : i32
    %t5 = arith.subi %t4, %k8 : i32
    %f = arith.sitofp %t5 : i32 to f32
    %sc = arith.constant 1.562500e-02 : f32
    %v = arith.mulf %f, %sc : f32
    linalg.yield %v : f32
  } -> tensor<64x64xf32>
  %w4e = tensor.empty() : tensor<64x64xf32>
  %w4 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%w4e : tensor<64x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k7 = arith.constant 7 : i32
    %k13 = arith.constant 13 : i32
    %k17 = arith.constant 17 : i32
    %k8 = arith.constant 8 : i32
    %t1 = arith.muli %ii, %k7 : i32
    %t2 = arith.muli %jj, %k13 : i32
    %t3 = arith.addi %t1, %t2 : i32
    %t4 = arith.remsi %t3, %k17 : i32
    %t5 = arith.subi %t4, %k8 : i32
    %f = arith.sitofp %t5 : i32 to f32
    %sc = arith.constant 1.562500e-02 : f32
    %v = arith.mulf %f, %sc : f32
    linalg.yield %v : f32
  } -> tensor<64x64xf32>
  %w5e = tensor.empty() : tensor<64x64xf32>
  %w5 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%w5e : tensor<64x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k7 = arith.constant 7 : i32
    %k13 = arith.constant 13 : i32
    %k17 = arith.constant 17 : i32
    %k8 = arith.constant 8 : i32
    %t1 = arith.muli %ii, %k7 : i32
    %t2 = arith.muli %jj, %k13 : i32
    %t3 = arith.addi %t1, %t2 : i32
    %t4 = arith.remsi %t3, %k17 : i32
    %t5 = arith.subi %t4, %k8 : i32
    %f = arith.sitofp %t5 : i32 to f32
    %sc = arith.constant 1.562500e-02 : f32
    %v = arith.mulf %f, %sc : f32
    linalg.yield %v : f32
  } -> tensor<64x64xf32>
  %w6e = tensor.empty() : tensor<64x8xf32>
  %w6 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel", "parallel"]} outs(%w6e : tensor<64x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %k7 = arith.constant 7 : i32
    %k13 = arith.constant 13 : i32
    %k17 = arith.constant 17 : i32
    %k8 = arith.constant 8 : i32
    %t1 = arith.muli %ii, %k7 : i32
    %t2 = arith.muli %jj, %k13 : i32
    %t3 = arith.addi %t1, %t2 : i32
    %t4 = arith.remsi %t3, %k17 : i32
    %t5 = arith.subi %t4, %k8 : i32
    %f = arith.sitofp %t5 : i32 to f32
    %sc = arith.constant 1.562500e-02 : f32
    %v = arith.mulf %f, %sc : f32
    linalg.yield %v : f32
  } -> tensor<64x8xf32>
  %res:7 = call @train_step(%x, %y, %w1, %w2, %w3, %w4, %w5, %w6) : (tensor<256x16xf32>, tensor<256x8xf32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x8xf32>) -> (tensor<f32>, tensor<16x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x8xf32>)
  %l = tensor.extract %res#0[] : tensor<f32>
  vector.print %l : f32
  %z0 = arith.constant 0.0 : f32
  %se1 = tensor.empty() : tensor<f32>
  %sf1 = linalg.fill ins(%z0 : f32) outs(%se1 : tensor<f32>) -> tensor<f32>
  %s1 = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction", "reduction"]} ins(%res#1 : tensor<16x64xf32>) outs(%sf1 : tensor<f32>) {
  ^bb0(%i: f32, %o: f32):
    %q = arith.addf %i, %o : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  %sv1 = tensor.extract %s1[] : tensor<f32>
  vector.print %sv1 : f32
  %se2 = tensor.empty() : tensor<f32>
  %sf2 = linalg.fill ins(%z0 : f32) outs(%se2 : tensor<f32>) -> tensor<f32>
  %s2 = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction", "reduction"]} ins(%res#2 : tensor<64x64xf32>) outs(%sf2 : tensor<f32>) {
  ^bb0(%i: f32, %o: f32):
    %q = arith.addf %i, %o : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  %sv2 = tensor.extract %s2[] : tensor<f32>
  vector.print %sv2 : f32
  %se3 = tensor.empty() : tensor<f32>
  %sf3 = linalg.fill ins(%z0 : f32) outs(%se3 : tensor<f32>) -> tensor<f32>
  %s3 = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction", "reduction"]} ins(%res#3 : tensor<64x64xf32>) outs(%sf3 : tensor<f32>) {
  ^bb0(%i: f32, %o: f32):
    %q = arith.addf %i, %o : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  %sv3 = tensor.extract %s3[] : tensor<f32>
  vector.print %sv3 : f32
  %se4 = tensor.empty() : tensor<f32>
  %sf4 = linalg.fill ins(%z0 : f32) outs(%se4 : tensor<f32>) -> tensor<f32>
  %s4 = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction", "reduction"]} ins(%res#4 : tensor<64x64xf32>) outs(%sf4 : tensor<f32>) {
  ^bb0(%i: f32, %o: f32):
    %q = arith.addf %i, %o : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  %sv4 = tensor.extract %s4[] : tensor<f32>
  vector.print %sv4 : f32
  %se5 = tensor.empty() : tensor<f32>
  %sf5 = linalg.fill ins(%z0 : f32) outs(%se5 : tensor<f32>) -> tensor<f32>
  %s5 = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction", "reduction"]} ins(%res#5 : tensor<64x64xf32>) outs(%sf5 : tensor<f32>) {
  ^bb0(%i: f32, %o: f32):
    %q = arith.addf %i, %o : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  %sv5 = tensor.extract %s5[] : tensor<f32>
  vector.print %sv5 : f32
  %se6 = tensor.empty() : tensor<f32>
  %sf6 = linalg.fill ins(%z0 : f32) outs(%se6 : tensor<f32>) -> tensor<f32>
  %s6 = linalg.generic {indexing_maps = [#map, #red], iterator_types = ["reduction", "reduction"]} ins(%res#6 : tensor<64x8xf32>) outs(%sf6 : tensor<f32>) {
  ^bb0(%i: f32, %o: f32):
    %q = arith.addf %i, %o : f32
    linalg.yield %q : f32
  } -> tensor<f32>
  %sv6 = tensor.extract %s6[] : tensor<f32>
  vector.print %sv6 : f32
  return
}
