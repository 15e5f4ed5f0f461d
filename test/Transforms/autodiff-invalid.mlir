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

// -----

#bt = affine_map<(b, t) -> (b, t)>
#b = affine_map<(b, t) -> (b)>
// A select combiner whose condition reads the previous value without
// comparing it with the element: neither a max/min nor a last position, so
// which element the result comes from is unknown.
func.func @select_not_extremum(%x: tensor<2x5xf32> {remat.param}) -> (tensor<f32> {remat.loss}) {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<2xf32>
  // expected-error @+1 {{'linalg.generic' op cannot be differentiated: output #0 is a select of the element or its previous value whose condition reads the previous value but is not a comparison of the two (a max/min): remat-autodiff cannot tell which element the result comes from}}
  %p = linalg.generic {indexing_maps = [#bt, #b], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x5xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.cmpf olt, %o, %half : f32
    %r = arith.select %c, %a, %o : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  %c0 = arith.constant 0 : index
  %l = tensor.extract_slice %p[0] [1] [1] : tensor<2xf32> to tensor<f32>
  return %l : tensor<f32>
}

// -----

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
// Bits of the element changed between two bitcasts (an abs by masking the
// sign bit): no rule, and not the identity.
func.func @bitcast_mask(%w: tensor<4xf64> {remat.param}) -> (tensor<f64> {remat.loss}) {
  %e = tensor.empty() : tensor<f64>
  // expected-error @+1 {{'linalg.generic' op cannot be differentiated: its body computes 'arith.bitcast' from the bits of a value that depends on the differentiated operand (reinterpreted by 'arith.bitcast'), which has no derivative remat-autodiff knows}}
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%w : tensor<4xf64>) outs(%e : tensor<f64>) {
  ^bb0(%a: f64, %o: f64):
    %mask = arith.constant 9223372036854775807 : i64
    %bits = arith.bitcast %a : f64 to i64
    %abs = arith.andi %bits, %mask : i64
    %back = arith.bitcast %abs : i64 to f64
    %s = arith.addf %o, %back : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}

// -----

#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
// The same outside a body, on a scalar: located at the op that computes the
// float from the bits, with a note at the bitcast.
func.func @bitcast_mask_scalar(%w: tensor<f64> {remat.param}, %x: tensor<4xf64>) -> (tensor<f64> {remat.loss}) {
  %s = tensor.extract %w[] : tensor<f64>
  %mask = arith.constant 9223372036854775807 : i64
  // expected-note @+1 {{the value is made here}}
  %bits = arith.bitcast %s : f64 to i64
  %abs = arith.andi %bits, %mask : i64
  // expected-error @+1 {{'arith.bitcast' op cannot be differentiated: it reads a value that depends on a parameter through 'arith.bitcast' (as 'i64'), which carries no derivative remat-autodiff knows}}
  %back = arith.bitcast %abs : i64 to f64
  %e = tensor.empty() : tensor<f64>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction"]} ins(%x : tensor<4xf64>) outs(%e : tensor<f64>) {
  ^bb0(%a: f64, %o: f64):
    %m = arith.mulf %a, %back : f64
    %t = arith.addf %o, %m : f64
    linalg.yield %t : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}

// -----

// Two losses: only one is differentiated.
func.func @two_losses(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %x = tensor.extract_slice %w[0] [1] [1] : tensor<4xf32> to tensor<f32>
  // expected-error @+1 {{remat-autodiff: result #1 of 'two_losses' is marked `remat.loss` as well as result #0: remat-autodiff differentiates one loss; add the losses into result #0}}
  %y = tensor.extract_slice %w[1] [1] [1] {remat.loss} : tensor<4xf32> to tensor<f32>
  return %x, %y : tensor<f32>, tensor<f32>
}

// -----

// Two losses, both marked on the results.
// expected-error @+1 {{remat-autodiff: result #1 of 'two_result_losses' is marked `remat.loss` as well as result #0}}
func.func @two_result_losses(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}, tensor<f32> {remat.loss}) {
  %x = tensor.extract_slice %w[0] [1] [1] : tensor<4xf32> to tensor<f32>
  %y = tensor.extract_slice %w[1] [1] [1] : tensor<4xf32> to tensor<f32>
  return %x, %y : tensor<f32>, tensor<f32>
}

// -----

// A function marked as a training step.
// expected-error @+1 {{remat-autodiff: 'marked_step' is already a training step (it is marked `remat.step`)}}
func.func @marked_step(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}) attributes {remat.step} {
  %x = tensor.extract_slice %w[0] [1] [1] : tensor<4xf32> to tensor<f32>
  return %x : tensor<f32>
}

// -----

// A step whose backward ops are marked by phase.
// expected-error @+1 {{remat-autodiff: 'phased_step' is already a training step (it has ops in `remat.phase = "backward"`)}}
func.func @phased_step(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}, tensor<4xf32>) {
  %x = tensor.extract_slice %w[0] [1] [1] : tensor<4xf32> to tensor<f32>
  // expected-note @+1 {{a backward op}}
  %g = arith.negf %w {remat.phase = "backward"} : tensor<4xf32>
  return %x, %g : tensor<f32>, tensor<4xf32>
}

// -----

// Nothing could be a parameter: no marked argument, and no statically shaped
// float tensor argument.
// expected-error @+1 {{remat-autodiff: 'no_parameter' has no parameter to differentiate with respect to: mark its parameters `remat.param` (without marks, every statically shaped float tensor argument is one, and it has none)}}
func.func @no_parameter(%n: tensor<4xi32>) -> (tensor<f32> {remat.loss}) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// A loss that depends on no parameter: a warning, every gradient is zero.
// expected-warning @+1 {{remat-autodiff: the loss of 'constant_loss' depends on none of its 1 parameter(s): every gradient is zero}}
func.func @constant_loss(%w: tensor<4xf32> {remat.param}) -> (tensor<f32> {remat.loss}) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#all2 = affine_map<(d0, d1) -> ()>
// An activation of dynamic shape on the path to the loss.
func.func @dynamic_activation(%w: tensor<4x3xf32> {remat.param}, %n: index) -> (tensor<f32> {remat.loss}) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'tensor.extract_slice' op cannot be differentiated: its result #0 lies on the path from a parameter to the loss and has the dynamic shape 'tensor<?x3xf32>'; remat-autodiff needs static shapes}}
  %s = tensor.extract_slice %w[0, 0] [%n, 3] [1, 1] : tensor<4x3xf32> to tensor<?x3xf32>
  %e = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, #all2], iterator_types = ["reduction", "reduction"]} ins(%s : tensor<?x3xf32>) outs(%e : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %o, %a : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The loss marked on result #1 only: say where the marker is.
module {
  func.func @loss_second(%w: tensor<4xf32> {remat.param}) -> (tensor<4xf32>, tensor<f32>) {
    %x = tensor.extract_slice %w[0] [1] [1] : tensor<4xf32> to tensor<f32>
    // expected-error @+1 {{remat-autodiff: result #1 of 'loss_second' is marked `remat.loss`, but the loss must be result #0 of the forward function: return it first}}
    %y = arith.negf %x {remat.loss} : tensor<f32>
    return %w, %y : tensor<4xf32>, tensor<f32>
  }
}
