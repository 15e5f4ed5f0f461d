// RUN: remat-opt %s --remat-pipeline="solver=chen-sqrtn" | FileCheck %s --check-prefix=SQRTN
// RUN: remat-opt %s --remat-pipeline="solver=chen-sqrtn" -cse -canonicalize | FileCheck %s --check-prefix=SQRTN
// RUN: remat-opt %s --remat-pipeline="solver=checkpoint-all" | FileCheck %s --check-prefix=ALL
// RUN: remat-opt %s --remat-pipeline="solver=none" | FileCheck %s --check-prefix=NONE

// A chain of four squares, a sum loss and the hand-written backward. Under
// chen-sqrtn (5 forward nodes, segments of 3) h3 and the loss are
// checkpointed; the backward recomputes h1 and h2 from %x, cloned right
// before their first backward user and tagged with a distinct
// remat.recompute instance so that -cse / -canonicalize keep them.

#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>

// SQRTN-LABEL: func.func @square_chain
// SQRTN-SAME: remat.predicted_peak_bytes = 260
// SQRTN-SAME: remat.recomputations = 2
// SQRTN-SAME: remat.solver = "chen-sqrtn"
// SQRTN: %[[H1:.*]] = linalg.generic {{.*}} ins(%arg0
// SQRTN: %[[H2:.*]] = linalg.generic {{.*}} ins(%[[H1]]
// SQRTN: %[[H3:.*]] = linalg.generic {{.*}} ins(%[[H2]]
// SQRTN: linalg.generic {{.*}} ins(%[[H3]]
// SQRTN: remat.loss
// SQRTN: %[[G3:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[H3]]
// SQRTN: %[[E1:.*]] = tensor.empty() {remat.recompute = 0 : i64}
// SQRTN-NEXT: %[[R1:.*]] = linalg.generic {{.*}} ins(%arg0 {{.*}} outs(%[[E1]] {{.*}} attrs = {{.*}}remat.recompute = 0 : i64}
// SQRTN: %[[E2:.*]] = tensor.empty() {remat.recompute = 1 : i64}
// SQRTN-NEXT: %[[R2:.*]] = linalg.generic {{.*}} ins(%[[R1]] {{.*}} outs(%[[E2]] {{.*}} attrs = {{.*}}remat.recompute = 1 : i64}
// SQRTN: %[[G2:.*]] = linalg.generic {{.*}} ins(%[[G3]], %[[R2]]
// SQRTN: %[[G1:.*]] = linalg.generic {{.*}} ins(%[[G2]], %[[R1]]
// SQRTN: %[[G0:.*]] = linalg.generic {{.*}} ins(%[[G1]], %arg0
// SQRTN: return %{{.*}}, %[[G0]]

// ALL-LABEL: func.func @square_chain
// ALL-SAME: remat.predicted_peak_bytes = 324
// ALL-SAME: remat.recomputations = 0
// ALL-NOT: remat.recompute =

// NONE-LABEL: func.func @square_chain
// NONE-SAME: remat.solver = "none"
// NONE-NOT: remat.recompute =
func.func @square_chain(%x: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
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
