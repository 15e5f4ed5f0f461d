// RUN: remat-opt %s -split-input-file -verify-diagnostics --remat-autodiff -o /dev/null

// Every error of remat-autodiff is located and names what it cannot do.

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
// A body op without a reverse-mode rule, on the path from the parameter.
func.func @no_rule(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}) {
  %e = tensor.empty() : tensor<f32>
  // expected-error @+1 {{'linalg.generic' op cannot be differentiated: its body computes 'math.atan', which remat-autodiff has no rule for}}
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%w : tensor<4xf32>) outs(%e : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.atan %a : f32
    %s = arith.addf %o, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
// A product reduction: the combiner of the output is not one it knows.
func.func @product(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}) {
  %e = tensor.empty() : tensor<f32>
  // expected-error @+1 {{'linalg.generic' op cannot be differentiated: output #0 combines the element with its previous value in a way remat-autodiff does not know}}
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%w : tensor<4xf32>) outs(%e : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func private @opaque(tensor<4xf32>) -> tensor<f32>

// A call on the path: calls are inlined first by the pipelines.
func.func @calls(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}) {
  // expected-error @+1 {{'func.call' op cannot be differentiated: calls must be inlined first}}
  %l = func.call @opaque(%w) : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// An op of another dialect on the path.
func.func @other_op(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}) {
  %c0 = arith.constant 0 : index
  %x = tensor.extract %w[%c0] : tensor<4xf32>
  // expected-error @+1 {{'tensor.from_elements' op cannot be differentiated: remat-autodiff has no rule for 'tensor.from_elements'}}
  %t = tensor.from_elements %x : tensor<f32>
  return %t : tensor<f32>
}

// -----

// Already a training step.
// expected-error @+1 {{remat-autodiff: 'step' is already a training step (it has an op marked `remat.seed`)}}
func.func @step(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}) {
  %s = arith.constant {remat.seed} dense<1.0> : tensor<f32>
  return %s : tensor<f32>
}

// -----

// The loss must be a scalar.
// expected-error @+1 {{remat-autodiff: result #0 of 'vector_loss' must be a scalar loss (a float or a rank-0 float tensor), not 'tensor<4xf32>'}}
func.func @vector_loss(%w: tensor<4xf32> {remat.param}) -> (tensor<4xf32> {remat.loss}) {
  return %w : tensor<4xf32>
}

// -----

// A parameter must be a float tensor of static shape.
// expected-error @+1 {{remat-autodiff: argument #0 is a `remat.param` but not a statically shaped float tensor}}
func.func @int_param(%w: tensor<4xi32> {remat.param}) -> (tensor<f32> {remat.loss}) {
  %e = arith.constant dense<0.0> : tensor<f32>
  return %e : tensor<f32>
}

// -----

// Nothing to differentiate.
// expected-error @+1 {{remat-autodiff: no function to differentiate: mark the loss (result #0) of the forward function with `remat.loss`, or name the function with function=NAME}}
module {
  func.func @f(%w: tensor<4xf32>) -> tensor<f32> {
    %e = arith.constant dense<0.0> : tensor<f32>
    return %e : tensor<f32>
  }
}
