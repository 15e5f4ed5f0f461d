// A misplaced marker (test/Integration/plugin.test): the remat dialect,
// once loaded, rejects it; without it the attribute is not verified.
func.func @bad_cost(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = arith.negf %x {remat.cost = -1.0} : tensor<4xf32>
  return %y : tensor<4xf32>
}
