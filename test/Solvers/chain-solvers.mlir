// RUN: remat-opt %s --remat-pipeline="solver=chen-greedy" | FileCheck %s --check-prefix=GREEDY
// RUN: remat-opt %s --remat-pipeline="solver=ap-sqrtn" | FileCheck %s --check-prefix=APSQRTN
// RUN: remat-opt %s --remat-pipeline="solver=ap-greedy" | FileCheck %s --check-prefix=APGREEDY
// RUN: remat-opt %s --remat-pipeline="solver=sequential" | FileCheck %s --check-prefix=SEQ
// RUN: remat-opt %s --remat-pipeline="solver=hong-cubic" | FileCheck %s --check-prefix=CUBIC
// RUN: remat-opt %s --remat-pipeline="solver=hong-quadratic" | FileCheck %s --check-prefix=QUAD
// RUN: remat-opt %s --remat-pipeline="solver=hong-linear" | FileCheck %s --check-prefix=LINEAR
// RUN: remat-opt %s --remat-pipeline="solver=hong-linear" -cse -canonicalize | FileCheck %s --check-prefix=LINEAR
// RUN: remat-opt %s --remat-pipeline="solver=feng-linear" | FileCheck %s --check-prefix=FENG
// RUN: remat-opt %s --remat-pipeline="solver=feng" | FileCheck %s --check-prefix=FENGARB
// RUN: remat-opt %s --remat-pipeline="solver=hong-linear budget=60%" | FileCheck %s --check-prefix=FITS
// RUN: remat-opt %s --remat-pipeline="solver=sequential budget=100%" | FileCheck %s --check-prefix=SEQALL
// RUN: not remat-opt %s --remat-pipeline="solver=hong-linear budget=50%" 2>&1 | FileCheck %s --check-prefix=TOOSMALL
// RUN: remat-opt %s --remat-report="solver=all" -o /dev/null | FileCheck %s --check-prefix=REPORT

// The chain solvers of issue 4 through remat-opt: a chain of eight squares
// h_i = h_{i-1}^2 of 64 bytes each, a sum loss and the hand-written backward
// (g_{i-1} = g_i * 2 h_{i-1}), so the backward reads h_0 = %x .. h_7. The
// linearized chain has nine stages (h_1 .. h_8 and the loss). Keeping
// everything (checkpoint-all) peaks at 580 bytes; every chain solver finds a
// plan of 324 bytes, recomputing the activations between its checkpoints
// right before their backward users (cloned, tagged remat.recompute).

// GREEDY-LABEL: func.func @square_chain8
// GREEDY-SAME: remat.predicted_peak_bytes = 324
// GREEDY-SAME: remat.recomputations = 5
// GREEDY-SAME: remat.solver = "chen-greedy"
// GREEDY-COUNT-5: linalg.generic {{.*}} attrs = {{.*}}remat.recompute

// On a chain every op but the first and the last is an articulation point.
// APSQRTN-LABEL: func.func @square_chain8
// APSQRTN-SAME: remat.predicted_peak_bytes = 324
// APSQRTN-SAME: remat.solver = "ap-sqrtn"
// APGREEDY-LABEL: func.func @square_chain8
// APGREEDY-SAME: remat.predicted_peak_bytes = 324
// APGREEDY-SAME: remat.solver = "ap-greedy"

// checkpoint_sequential with the least peak among 2..6 segments: fewer
// recomputations, since its last segment is not recomputed.
// SEQ-LABEL: func.func @square_chain8
// SEQ-SAME: remat.predicted_peak_bytes = 324
// SEQ-SAME: remat.recomputations = 4
// SEQ-SAME: remat.solver = "sequential"
// SEQ-COUNT-4: linalg.generic {{.*}} attrs = {{.*}}remat.recompute

// CUBIC-LABEL: func.func @square_chain8
// CUBIC-SAME: remat.predicted_peak_bytes = 324
// CUBIC-SAME: remat.recomputations = 5
// CUBIC-SAME: remat.solver = "hong-cubic"

// QUAD-LABEL: func.func @square_chain8
// QUAD-SAME: remat.predicted_peak_bytes = 324
// QUAD-SAME: remat.solver = "hong-quadratic"

// Algorithm 6 recomputes two segments: one value from a checkpoint in the
// middle of the chain, then two from a checkpoint earlier, then two from the
// input, each clone reading the previous recomputed value.
// LINEAR-LABEL: func.func @square_chain8
// LINEAR-SAME: remat.predicted_peak_bytes = 324
// LINEAR-SAME: remat.recomputations = 5
// LINEAR-SAME: remat.solver = "hong-linear"
// LINEAR: linalg.generic {{.*}} attrs = {{.*}}remat.loss
// LINEAR: %[[R0:.*]] = linalg.generic {{.*}} attrs = {{.*}}remat.recompute = 0 : i64}
// LINEAR: %[[R1:.*]] = linalg.generic {{.*}} attrs = {{.*}}remat.recompute = 1 : i64}
// LINEAR: linalg.generic {{.*}} ins(%[[R1]] {{.*}} attrs = {{.*}}remat.recompute = 2 : i64}
// LINEAR: %[[R3:.*]] = linalg.generic {{.*}} ins(%arg0 {{.*}} attrs = {{.*}}remat.recompute = 3 : i64}
// LINEAR: linalg.generic {{.*}} ins(%[[R3]] {{.*}} attrs = {{.*}}remat.recompute = 4 : i64}
// LINEAR: return

// FENG-LABEL: func.func @square_chain8
// FENG-SAME: remat.predicted_peak_bytes = 324
// FENG-SAME: remat.solver = "feng-linear"

// The arbitrary-graph solver: on a chain the hierarchy is one linear level.
// FENGARB-LABEL: func.func @square_chain8
// FENGARB-SAME: remat.predicted_peak_bytes = 324
// FENGARB-SAME: remat.recomputations = 5
// FENGARB-SAME: remat.solver = "feng"

// With a budget the peak-minimising solvers still return their least-peak
// plan (min-memory mode); 60% of 580 is 348 bytes, which it meets.
// FITS-LABEL: func.func @square_chain8
// FITS-SAME: remat.predicted_peak_bytes = 324
// FITS-SAME: remat.solver = "hong-linear"

// With the whole checkpoint-all peak as budget, the sequential search picks
// its cheapest plan that fits: six segments of one stage each (9 // 6 = 1),
// which checkpoint every stage, so nothing is recomputed.
// SEQALL-LABEL: func.func @square_chain8
// SEQALL-SAME: remat.predicted_peak_bytes = 580
// SEQALL-SAME: remat.recomputations = 0
// SEQALL-SAME: remat.solver = "sequential"

// 50% of 580 is 290 bytes, below what hong-linear reaches; the message names
// the least budget any registered solver reaches.
// TOOSMALL: error: budget of 290 bytes is infeasible for solver 'hong-linear' on 'square_chain8', whose plan needs 324 bytes; the least feasible budget found is {{[0-9]+}} bytes

// REPORT: "checkpoint_all_peak_bytes": 580
// REPORT: "solver": "checkpoint-all"
// REPORT: "solver": "chen-sqrtn"
// REPORT: "peak_bytes": 324
// REPORT: "solver": "chen-greedy"
// REPORT: "peak_bytes": 324
// REPORT: "solver": "ap-sqrtn"
// REPORT: "peak_bytes": 324
// REPORT: "solver": "ap-greedy"
// REPORT: "peak_bytes": 324
// REPORT: "solver": "sequential"
// REPORT: "peak_bytes": 324
// REPORT: "solver": "hong-cubic"
// REPORT: "peak_bytes": 324
// REPORT: "solver": "hong-quadratic"
// REPORT: "peak_bytes": 324
// REPORT: "solver": "hong-linear"
// REPORT: "peak_bytes": 324
// REPORT: "solver": "feng-linear"
// REPORT: "peak_bytes": 324
// REPORT: "solver": "feng"

#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>

func.func @square_chain8(%x: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
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
  %e5 = tensor.empty() : tensor<16xf32>
  %h5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%h4 : tensor<16xf32>) outs(%e5 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<16xf32>
  %e6 = tensor.empty() : tensor<16xf32>
  %h6 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%h5 : tensor<16xf32>) outs(%e6 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<16xf32>
  %e7 = tensor.empty() : tensor<16xf32>
  %h7 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%h6 : tensor<16xf32>) outs(%e7 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<16xf32>
  %e8 = tensor.empty() : tensor<16xf32>
  %h8 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%h7 : tensor<16xf32>) outs(%e8 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<16xf32>
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%h8 : tensor<16xf32>) outs(%fl : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %eg = tensor.empty() : tensor<16xf32>
  %g8 = linalg.fill ins(%seed : f32) outs(%eg : tensor<16xf32>) -> tensor<16xf32>
  %ge8 = tensor.empty() : tensor<16xf32>
  %g7 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g8, %h7 : tensor<16xf32>, tensor<16xf32>) outs(%ge8 : tensor<16xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %t = arith.mulf %h, %two : f32
    %d = arith.mulf %g, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  %ge7 = tensor.empty() : tensor<16xf32>
  %g6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g7, %h6 : tensor<16xf32>, tensor<16xf32>) outs(%ge7 : tensor<16xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %t = arith.mulf %h, %two : f32
    %d = arith.mulf %g, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  %ge6 = tensor.empty() : tensor<16xf32>
  %g5 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g6, %h5 : tensor<16xf32>, tensor<16xf32>) outs(%ge6 : tensor<16xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %t = arith.mulf %h, %two : f32
    %d = arith.mulf %g, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  %ge5 = tensor.empty() : tensor<16xf32>
  %g4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g5, %h4 : tensor<16xf32>, tensor<16xf32>) outs(%ge5 : tensor<16xf32>) {
  ^bb0(%g: f32, %h: f32, %out: f32):
    %t = arith.mulf %h, %two : f32
    %d = arith.mulf %g, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
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
