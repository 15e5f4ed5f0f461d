// RUN: remat-opt %s --split-input-file --remat-instrument-step-calls=entry=step | FileCheck %s

// A test's own main: every call of the step, and only those, is bracketed by
// the runtime's measurement window; the calls inside the step are left
// alone.
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NEXT: call @remat_rt_step_begin() : () -> ()
// CHECK-NEXT: %[[L:.*]] = call @step(%[[X]]) : (tensor<4xf32>) -> tensor<f32>
// CHECK-NEXT: call @remat_rt_step_end() : () -> ()
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[L]][]
// CHECK-NEXT: vector.print %[[V]] : f32
// CHECK-NEXT: call @remat_rt_step_begin() : () -> ()
// CHECK-NEXT: call @step(%[[X]])
// CHECK-NEXT: call @remat_rt_step_end() : () -> ()
// CHECK-NEXT: call @helper
// CHECK-DAG: func.func private @remat_rt_step_begin()
// CHECK-DAG: func.func private @remat_rt_step_end()
func.func @helper(%x: tensor<4xf32>) {
  return
}
func.func @step(%x: tensor<4xf32>) -> (tensor<f32> {remat.loss}) {
  %e = tensor.empty() : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%x : tensor<4xf32>) outs(%f : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  call @helper(%x) : (tensor<4xf32>) -> ()
  return %s : tensor<f32>
}
func.func @main() {
  %x = arith.constant dense<1.0> : tensor<4xf32>
  %l = call @step(%x) : (tensor<4xf32>) -> tensor<f32>
  %v = tensor.extract %l[] : tensor<f32>
  vector.print %v : f32
  %l2 = call @step(%x) : (tensor<4xf32>) -> tensor<f32>
  call @helper(%x) : (tensor<4xf32>) -> ()
  return
}

// -----

// A slice passed to the step is copied before the window opens (bufferization
// would copy it into the argument's identity layout inside the window).
// CHECK-LABEL: func.func @main()
// CHECK: %[[S:.*]] = tensor.extract_slice
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[C:.*]] = linalg.copy ins(%[[S]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK-NEXT: call @remat_rt_step_begin() : () -> ()
// CHECK-NEXT: call @step(%[[C]])
// CHECK-NEXT: call @remat_rt_step_end() : () -> ()
func.func @step(%x: tensor<4xf32>) -> (tensor<f32> {remat.loss}) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func @main() {
  %x = arith.constant dense<1.0> : tensor<4x4xf32>
  %s = tensor.extract_slice %x[0, 1] [4, 1] [1, 1] : tensor<4x4xf32> to tensor<4xf32>
  %l = call @step(%s) : (tensor<4xf32>) -> tensor<f32>
  return
}
