// RUN: remat-opt %s --split-input-file --remat-instrument-step-calls=entry=step,other | FileCheck %s
// RUN: remat-opt %s --split-input-file --remat-instrument-step-calls=entry=step | FileCheck %s --check-prefix=ONE

// Several entries: the calls of entry k open a window tagged k, so that the
// runtime reports each step's peak apart (remat-run prints a line per step).
// A tensor that a loop carries into the call (an SGD loop's weights) would
// be given a fully dynamic layout by bufferization and copied into the
// step's identity layout at the call, inside the window: it is copied before
// the window opens.
// CHECK-LABEL: func.func @main()
// CHECK: scf.for {{.*}} iter_args(%[[W:.*]] = %{{.*}}) -> (tensor<4xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = linalg.copy ins(%[[W]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK-NEXT: %[[T0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @remat_rt_step_begin_tagged(%[[T0]]) : (i64) -> ()
// CHECK-NEXT: call @step(%[[C]])
// CHECK-NEXT: call @remat_rt_step_end() : () -> ()
// CHECK: %[[T1:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @remat_rt_step_begin_tagged(%[[T1]]) : (i64) -> ()
// CHECK-NEXT: call @other(
// CHECK-NEXT: call @remat_rt_step_end() : () -> ()
// CHECK-DAG: func.func private @remat_rt_step_begin_tagged(i64)
// CHECK-DAG: func.func private @remat_rt_step_end()
// One entry: the plain window, and the copy of the loop-carried tensor.
// ONE-LABEL: func.func @main()
// ONE: linalg.copy
// ONE-NEXT: call @remat_rt_step_begin() : () -> ()
// ONE-NEXT: call @step(
// ONE-NOT: remat_rt_step_begin
// ONE: call @other(
func.func @step(%x: tensor<4xf32>) -> (tensor<f32> {remat.loss}, tensor<4xf32>) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %x : tensor<f32>, tensor<4xf32>
}
func.func @other(%x: tensor<4xf32>) -> (tensor<f32> {remat.loss}) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func @main() {
  %x = arith.constant dense<1.0> : tensor<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %w = scf.for %i = %c0 to %c2 step %c1 iter_args(%wi = %x) -> (tensor<4xf32>) {
    %l, %g = func.call @step(%wi) : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
    scf.yield %g : tensor<4xf32>
  }
  %l2 = func.call @other(%x) : (tensor<4xf32>) -> tensor<f32>
  return
}
