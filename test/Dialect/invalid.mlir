// RUN: remat-opt %s --split-input-file --verify-diagnostics

func.func @bad_phase(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.phase' must be "forward" or "backward"}}
  %y = remat.kernel "aten.neg"(%x) {remat.phase = "sideways"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @negative_cost(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.cost' must be a finite, non-negative float attribute, got -1.000000e+00 : f64}}
  %y = remat.kernel "aten.neg"(%x) {remat.cost = -1.0} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// An infinite cost passed the verifier and failed much later, as an
// "internal error: extracted training graph is inconsistent".
func.func @infinite_cost(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.cost' must be a finite, non-negative float attribute, got 0x7FF0000000000000 : f64}}
  %y = remat.kernel "aten.neg"(%x) {remat.cost = 0x7FF0000000000000 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @nan_cost(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.cost' must be a finite, non-negative float attribute, got 0x7FF8000000000000 : f64}}
  %y = remat.kernel "aten.neg"(%x) {remat.cost = 0x7FF8000000000000 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @integer_cost(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.cost' must be a finite, non-negative float attribute, got 3 : i64}}
  %y = remat.kernel "aten.neg"(%x) {remat.cost = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @tangent_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.tangent' is only valid on function arguments}}
  %y = remat.kernel "aten.neg"(%x) {remat.tangent} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @seed_not_unit(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.seed' must be a unit attribute}}
  %y = remat.kernel "aten.neg"(%x) {remat.seed = 1} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @negative_recompute(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.recompute' must be a non-negative integer attribute}}
  %y = remat.kernel "aten.neg"(%x) {remat.recompute = -2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @unknown_attribute(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown remat attribute 'remat.keep'}}
  %y = remat.kernel "aten.neg"(%x) {remat.keep} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'remat.loss' on argument #0 is not a valid argument attribute}}
func.func @loss_on_argument(%x: tensor<4xf32> {remat.loss}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{'remat.param' must be a unit attribute}}
func.func @param_with_value(%x: tensor<4xf32> {remat.param = 1 : i64}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

func.func @param_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'remat.param' is only valid on function arguments}}
  %y = remat.kernel "aten.neg"(%x) {remat.param} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'remat.tangent' on result #0 is not a valid result attribute}}
func.func @tangent_on_result(%x: tensor<4xf32>) -> (tensor<4xf32> {remat.tangent}) {
  return %x : tensor<4xf32>
}

// -----

func.func @empty_kernel_name(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs a non-empty kernel name}}
  %y = remat.kernel ""(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @kernel_without_results(%x: tensor<4xf32>) {
  // expected-error @+1 {{must produce at least one tensor}}
  remat.kernel "aten.print"(%x) : (tensor<4xf32>) -> ()
  return
}
