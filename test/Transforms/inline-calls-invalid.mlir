// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-inline-calls -o /dev/null
// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-pipeline -o /dev/null

// A call of a training step that cannot be inlined is an error at the call
// that says why: only calls of pure functions can be part of the training
// graph, as the ops they are inlined into (inline-calls.mlir).

func.func private @log_tensor(tensor<4xf32>) -> tensor<4xf32>

func.func @declared(%x: tensor<4xf32>) -> tensor<4xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  // expected-error @+1 {{call of '@log_tensor' cannot be a node of the training graph of 'declared': only calls of pure functions are supported (they are inlined into the step), and '@log_tensor' is only declared: its effects are unknown}}
  %y = func.call @log_tensor(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @stores(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  %m = memref.alloc() : memref<4xf32>
  memref.store %v, %m[%c0] : memref<4xf32>
  return %x : tensor<4xf32>
}

func.func @effects(%x: tensor<4xf32>) -> tensor<4xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  // expected-error @+1 {{call of '@stores' cannot be a node of the training graph of 'effects': only calls of pure functions are supported (they are inlined into the step), and '@stores' has an op with memory effects ('memref.alloc' at}}
  %y = func.call @stores(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @print(tensor<4xf32>)

func.func private @prints(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.call @print(%x) : (tensor<4xf32>) -> ()
  return %x : tensor<4xf32>
}

func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  // expected-error @+1 {{'@prints' calls '@print', which is only declared: its effects are unknown}}
  %y = func.call @prints(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @forever(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @forever(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

func.func @recursive(%x: tensor<4xf32>) -> tensor<4xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  // expected-error @+1 {{'@forever' calls '@forever', which is recursive}}
  %y = func.call @forever(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @branches(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^next
^next:
  return %x : tensor<4xf32>
}

func.func @blocks(%x: tensor<4xf32>) -> tensor<4xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  // expected-error @+1 {{'@branches' has 2 blocks}}
  %y = func.call @branches(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @inner_step(%x: tensor<4xf32>) -> (tensor<4xf32> {remat.loss}) {
  %y = remat.kernel "aten.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

func.func @outer_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  // expected-error @+1 {{'@inner_step' is a training step itself}}
  %y = func.call @inner_step(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = remat.kernel "aten.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

func.func @cost_on_call(%x: tensor<4xf32>) -> tensor<4xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  // expected-error @+1 {{'remat.cost' on a call of '@neg' cannot be honoured: calls of pure functions are inlined into the step, where the callee's ops have costs of their own; put 'remat.cost' on them}}
  %y = func.call @neg(%x) {remat.cost = 5.0} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func private @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

func.func @loss_is_an_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = remat.kernel "aten.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'remat.loss' on a call of '@identity' marks a value the callee does not compute (it returns its argument #0); mark the op that computes it}}
  %l = func.call @identity(%y) {remat.loss} : (tensor<4xf32>) -> tensor<4xf32>
  return %l : tensor<4xf32>
}
