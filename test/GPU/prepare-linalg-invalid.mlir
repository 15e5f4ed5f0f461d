// RUN: remat-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(remat-prepare-linalg-for-gpu))' -o /dev/null

// The pass runs on buffers: a tensor op means bufferization did not run.
func.func @tensors(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{expected an op on buffers (run after bufferization)}}
  %r = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
      iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
