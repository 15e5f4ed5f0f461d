// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-normalize-destinations))' | FileCheck %s

// A zero fill shared by two matmuls is cloned per user, so that each matmul
// accumulates into a buffer of its own.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill {{.*}} outs(%[[E1]]
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill {{.*}} outs(%[[E2]]
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[F2]]
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[F1]]
func.func @shared_fill(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%b, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %el = tensor.empty() : tensor<f32>
  %l = linalg.fill {remat.loss} ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  return %l, %m1, %m2 : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A destination whose payload is never read becomes a fresh tensor.empty; one
// that is read (an accumulation into an argument) is copied first, so that
// the argument is never written.
#id = affine_map<(i) -> (i)>
// CHECK-LABEL: func.func @foreign_destinations
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>, %[[ACC:.*]]: tensor<8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[N:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8xf32>) outs(%[[E]]
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[C:.*]] = linalg.copy ins(%[[ACC]] : tensor<8xf32>) outs(%[[E2]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[N]] : tensor<8xf32>) outs(%[[C]]
func.func @foreign_destinations(%x: tensor<8xf32>, %acc: tensor<8xf32>) -> (tensor<8xf32> {remat.loss}, tensor<8xf32>) {
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%x : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%neg : tensor<8xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %neg, %sum : tensor<8xf32>, tensor<8xf32>
}

// -----

// Functions without remat markers are not training steps: left alone.
// CHECK-LABEL: func.func @not_a_step
// CHECK: %[[F:.*]] = linalg.fill
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[F]]
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[F]]
func.func @not_a_step(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m1, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Chains left without users are erased, several in a row (the walk over the
// block must survive erasing the op it stands on).
// CHECK-LABEL: func.func @dead_chains
// CHECK-NOT: tensor.empty
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @dead_chains(%a: tensor<4xf32>) -> (tensor<4xf32> {remat.loss}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %g2 = linalg.fill ins(%zero : f32) outs(%f2 : tensor<4xf32>) -> tensor<4xf32>
  %e3 = tensor.empty() : tensor<4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

// A result that is a proper slice (the gradient of a padded input, cut out
// of the padded gradient) is copied into a buffer of its own before the
// return, so that the training graph holds that buffer: one-shot
// bufferization returns identity layouts only and would otherwise copy the
// strided view at the return, outside the plan. A whole-tensor slice and a
// reshape of a fresh buffer stay as they are.
// CHECK-LABEL: func.func @strided_results
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[0, 1] [4, 6] [1, 1]
// CHECK: %[[W:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 8] [1, 1]
// CHECK: %[[R:.*]] = tensor.collapse_shape
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x6xf32>
// CHECK-NEXT: %[[C:.*]] = linalg.copy ins(%[[S]] : tensor<4x6xf32>) outs(%[[E]] : tensor<4x6xf32>)
// CHECK-NEXT: return %{{.*}}, %[[C]], %[[W]], %[[R]] :
func.func @strided_results(%a: tensor<4x8xf32>) -> (tensor<f32>, tensor<4x6xf32>, tensor<4x8xf32>, tensor<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.exp ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = tensor.extract_slice %g[0, 1] [4, 6] [1, 1] : tensor<4x8xf32> to tensor<4x6xf32>
  %w = tensor.extract_slice %g[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> to tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %h = linalg.exp ins(%g : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tensor.collapse_shape %h [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %el = tensor.empty() : tensor<f32>
  %l = linalg.fill {remat.loss} ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  return %l, %s, %w, %r : tensor<f32>, tensor<4x6xf32>, tensor<4x8xf32>, tensor<32xf32>
}
