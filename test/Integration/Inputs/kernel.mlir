// An op of the remat dialect (test/Integration/plugin.test): it parses only
// when the dialect is registered.
func.func @kernel(%x: tensor<4x256xf32>) -> tensor<4x256xf32> {
  %y = remat.kernel "aten.relu"(%x) {remat.cost = 1024.0} : (tensor<4x256xf32>) -> tensor<4x256xf32>
  return %y : tensor<4x256xf32>
}
