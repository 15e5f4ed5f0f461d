// RUN: remat-opt %s --remat-inline-calls | FileCheck %s
// RUN: remat-opt %s --remat-pipeline="solver=chen-sqrtn" | FileCheck %s --check-prefix=SQRTN
// RUN: remat-opt %s --remat-report="solver=chen-sqrtn" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: remat-run %s --entry=square_chain_calls --solver=chen-sqrtn > %t.calls
// RUN: remat-run %S/apply.mlir --entry=square_chain --solver=chen-sqrtn > %t.plain
// RUN: FileCheck %s --check-prefix=EXEC < %t.calls
// RUN: FileCheck %s --check-prefix=EXEC < %t.plain
// RUN: grep '^result:' %t.calls > %t.calls.results
// RUN: grep '^result:' %t.plain > %t.plain.results
// RUN: diff %t.calls.results %t.plain.results

// apply.mlir's chain of four squares, written with calls of pure functions:
// each layer, each gradient and the loss is a call (one nested: @square_twice
// calls @square). remat-inline-calls, which the remat pipelines run first,
// replaces every call of a training step by the callee's ops, carrying the
// call's markers over, so that the graph and the plan are exactly those of
// apply.mlir: chen-sqrtn recomputes two inlined squares, and the compiled
// step computes the same numbers in the same, predicted, peak. A call was
// rejected as "side-effecting" before.

#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>

func.func private @square(%a: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    linalg.yield %sq : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

func.func private @square_twice(%a: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %b = func.call @square(%a) : (tensor<16xf32>) -> tensor<16xf32>
  %c = func.call @square(%b) : (tensor<16xf32>) -> tensor<16xf32>
  return %b, %c : tensor<16xf32>, tensor<16xf32>
}

func.func private @sum(%a: tensor<16xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%a : tensor<16xf32>) outs(%fl : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %t = arith.addf %acc, %in : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// d/dh (h^2) * g
func.func private @square_grad(%g: tensor<16xf32>, %h: tensor<16xf32>) -> tensor<16xf32> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%g, %h : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%gi: f32, %hi: f32, %out: f32):
    %t = arith.mulf %hi, %two : f32
    %d = arith.mulf %gi, %t : f32
    linalg.yield %d : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// Not a training step: its call stays.
// CHECK-LABEL: func.func @not_a_step
// CHECK: call @square
func.func @not_a_step(%x: tensor<16xf32>) -> tensor<16xf32> {
  %y = func.call @square(%x) : (tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// CHECK-LABEL: func.func @square_chain_calls
// CHECK-NOT: call
// CHECK: %[[H1:.*]] = linalg.generic {{.*}} ins(%arg0
// CHECK: %[[H2:.*]] = linalg.generic {{.*}} ins(%[[H1]]
// CHECK: %[[H3:.*]] = linalg.generic {{.*}} ins(%[[H2]]
// CHECK: %[[H4:.*]] = linalg.generic {{.*}} ins(%[[H3]]
// The loss marker moves from the call to the op that computes the loss.
// CHECK: linalg.generic {{.*}} ins(%[[H4]] {{.*}} attrs = {{.*}}remat.loss
// CHECK: %[[G3:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[H3]]
// CHECK-NOT: call
// CHECK: return

// SQRTN-LABEL: func.func @square_chain_calls
// SQRTN-SAME: remat.predicted_peak_bytes = 260
// SQRTN-SAME: remat.recomputations = 2
// SQRTN: linalg.generic {{.*}} ins(%arg0 {{.*}} attrs = {{.*}}remat.recompute = 0 : i64}
// SQRTN-NOT: call

// REPORT: "function": "square_chain_calls"
// REPORT: "peak_bytes": 260

// EXEC: result: shape=[] fnv1a=0x
// EXEC: result: shape=[16] fnv1a=0x
// EXEC: remat-run: measured_peak_bytes=260 predicted_peak_bytes=260
func.func @square_chain_calls(%x: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %seed = arith.constant {remat.seed} 1.0 : f32
  %h1 = func.call @square(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %h2, %h3 = func.call @square_twice(%h1) : (tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>)
  %h4 = func.call @square(%h3) : (tensor<16xf32>) -> tensor<16xf32>
  %loss = func.call @sum(%h4) {remat.loss} : (tensor<16xf32>) -> tensor<f32>
  %eg = tensor.empty() : tensor<16xf32>
  %g4 = linalg.fill ins(%seed : f32) outs(%eg : tensor<16xf32>) -> tensor<16xf32>
  %g3 = func.call @square_grad(%g4, %h3) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %g2 = func.call @square_grad(%g3, %h2) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %g1 = func.call @square_grad(%g2, %h1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %g0 = func.call @square_grad(%g1, %x) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %loss, %g0 : tensor<f32>, tensor<16xf32>
}
