// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-instrument-step-calls=entry=step

// expected-error @below {{remat-instrument-step-calls: nothing in the module calls 'step', so no measured window would be the step's}}
func.func @step(%x: tensor<4xf32>) -> (tensor<f32> {remat.loss}) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// expected-error @below {{remat-instrument-step-calls: no function 'step'}}
module {
  func.func @main() {
    return
  }
}

// -----

// The runtime's names are reserved.
func.func @step(%x: tensor<4xf32>) -> (tensor<f32> {remat.loss}) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}
// expected-error @below {{remat-instrument-step-calls: symbol 'remat_rt_step_begin' exists but is not a function of type '() -> ()' (it is reserved for the runtime)}}
func.func @remat_rt_step_begin(%x: i32) {
  return
}
func.func @main() {
  %x = arith.constant dense<1.0> : tensor<4xf32>
  %l = call @step(%x) : (tensor<4xf32>) -> tensor<f32>
  return
}
