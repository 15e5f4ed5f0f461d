// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-pipeline="solver=chen-sqrtn budget=100" -o /dev/null
// RUN: not remat-opt %s --remat-pipeline="solver=no-such-solver" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not remat-opt %s --remat-pipeline="solver=chen-sqrtn budget=lots" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADBUDGET

// UNKNOWN: unknown solver 'no-such-solver'; available solvers: none, checkpoint-all, chen-sqrtn
// BADBUDGET: invalid budget 'lots': expected bytes (an integer or decimal number, optionally with B, KB, MB, GB, TB, KiB, MiB, GiB or TiB) or a percentage such as '60%'

#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>
// Checkpoint-all needs 324 bytes, chen-sqrtn 260 (see apply.mlir), rotor's
// least-memory plan 196: a budget of 100 bytes is below all of them. evict
// reaches 192, which peakLowerBound proves the least any plan can need.
// expected-error @+1 {{budget of 100 bytes is infeasible for solver 'chen-sqrtn' on 'chain', whose plan needs 260 bytes; the least feasible budget found is 192 bytes (solver 'evict'); no plan peaks below it (the nodes' footprints and the step outputs held at the end)}}
func.func @chain(%x: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %seed = arith.constant {remat.seed} 1.0 : f32
  %e1 = tensor.empty() : tensor<16xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%h1 : tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<16xf32>
  %e3 = tensor.empty() : tensor<16xf32>
  %h3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%h2 : tensor<16xf32>) outs(%e3 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<16xf32>
  %e4 = tensor.empty() : tensor<16xf32>
  %h4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%h3 : tensor<16xf32>) outs(%e4 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<16xf32>
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%h4 : tensor<16xf32>) outs(%fl : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %eg = tensor.empty() : tensor<16xf32>
  %g4 = linalg.fill ins(%seed : f32) outs(%eg : tensor<16xf32>) -> tensor<16xf32>
  %ge4 = tensor.empty() : tensor<16xf32>
  %g3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g4, %h3 : tensor<16xf32>, tensor<16xf32>) outs(%ge4 : tensor<16xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %t = arith.mulf %h, %two : f32
    %d = arith.mulf %g, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  %ge3 = tensor.empty() : tensor<16xf32>
  %g2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g3, %h2 : tensor<16xf32>, tensor<16xf32>) outs(%ge3 : tensor<16xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %t = arith.mulf %h, %two : f32
    %d = arith.mulf %g, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  %ge2 = tensor.empty() : tensor<16xf32>
  %g1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g2, %h1 : tensor<16xf32>, tensor<16xf32>) outs(%ge2 : tensor<16xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %t = arith.mulf %h, %two : f32
    %d = arith.mulf %g, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  %ge1 = tensor.empty() : tensor<16xf32>
  %g0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g1, %x : tensor<16xf32>, tensor<16xf32>) outs(%ge1 : tensor<16xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %t = arith.mulf %h, %two : f32
    %d = arith.mulf %g, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  return %loss, %g0 : tensor<f32>, tensor<16xf32>
}
