// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(test-remat-training-graph))' -o /dev/null | FileCheck %s

// A two-layer step by hand: destination chains (tensor.empty -> fill ->
// matmul) are one node and one buffer; the seed constant makes its users
// backward; the transpose of the input depends on no seed, but the loss does
// not need it and the program computes it among the backward ops, so it is
// backward too (not a saved activation). Costs: the matmul is 4x8x8 points x 2 body
// ops + the 32-point fill.
// CHECK-LABEL: training-graph @step nodes=6 values=9 fixed_bytes=640 prelude_ops=2
// CHECK-NEXT: node n0 forward linalg.matmul cost=544 ops=[tensor.empty, linalg.fill, linalg.matmul] in=[arg0:128, arg1:256] out=[n0.0:128]
// CHECK-NEXT: node n1 forward linalg.generic cost=32 ops=[tensor.empty, linalg.generic] in=[n0.0:128] out=[n1.0:128]
// CHECK-NEXT: node n2 forward linalg.generic cost=65 ops=[tensor.empty, linalg.fill, linalg.generic] in=[n1.0:128] out=[n2.0:4]
// CHECK-NEXT: node n3 backward linalg.generic cost=32 ops=[tensor.empty, linalg.generic] in=[n1.0:128] out=[n3.0:128]
// CHECK-NEXT: node n4 backward linalg.transpose cost=32 ops=[tensor.empty, linalg.transpose] in=[arg0:128] out=[n4.0:128]
// CHECK-NEXT: node n5 backward linalg.matmul cost=576 ops=[tensor.empty, linalg.fill, linalg.matmul] in=[n3.0:128, n4.0:128] out=[n5.0:256]
// CHECK-NEXT: saved=[n1.0:128]
// CHECK-NEXT: outputs=[n2.0:4, n5.0:256]
#id = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>
func.func @step(%x: tensor<4x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>) -> (tensor<f32>, tensor<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %seed = arith.constant {remat.seed} 1.0 : f32
  %e1 = tensor.empty() : tensor<4x8xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %z1 = linalg.matmul ins(%x, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %a1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%z1 : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %e3 = tensor.empty() : tensor<f32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%a1 : tensor<4x8xf32>) outs(%f3 : tensor<f32>) attrs = {remat.loss} {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %e4 = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a1 : tensor<4x8xf32>) outs(%e4 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.mulf %in, %seed : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %e5 = tensor.empty() : tensor<8x8xf32>
  %f5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %xt = tensor.empty() : tensor<8x4xf32>
  %xtt = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%xt : tensor<8x4xf32>) permutation = [1, 0]
  %dw = linalg.matmul ins(%xtt, %g : tensor<8x4xf32>, tensor<4x8xf32>) outs(%f5 : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %loss, %dw : tensor<f32>, tensor<8x8xf32>
}

// -----

// Exported graphs: opaque kernels, a gradient argument marked remat.tangent,
// views that join their producer's node, a remat.cost override and a
// remat.phase override.
// CHECK-LABEL: training-graph @exported nodes=4 values=8 fixed_bytes=6144 prelude_ops=1
// CHECK-NEXT: node n0 forward aten.conv cost=1000 ops=[remat.kernel, tensor.expand_shape] in=[arg0:2048, arg1:2048] out=[n0.0:2048]
// CHECK-NEXT: node n1 forward aten.relu cost=512 ops=[remat.kernel] in=[n0.0:2048] out=[n1.0:2048]
// CHECK-NEXT: node n2 backward aten.relu_backward cost=512 ops=[remat.kernel] in=[arg2:2048, n0.0:2048] out=[n2.0:2048]
// CHECK-NEXT: node n3 backward aten.sum cost=7 ops=[remat.kernel] in=[n1.0:2048] out=[n3.0:4, n3.1:4]
// CHECK-NEXT: saved=[n0.0:2048, n1.0:2048]
// CHECK-NEXT: outputs=[n1.0:2048, n2.0:2048]
func.func @exported(%x: tensor<4x128xf32>, %w: tensor<4x128xf32>, %dy: tensor<4x128xf32> {remat.tangent}) -> (tensor<4x128xf32>, tensor<4x128xf32>) {
  %view_x = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 64] : tensor<4x128xf32> into tensor<4x2x64xf32>
  %c = remat.kernel "aten.conv"(%x, %w) {remat.cost = 1000.0} : (tensor<4x128xf32>, tensor<4x128xf32>) -> tensor<4x128xf32>
  %cv = tensor.expand_shape %c [[0], [1, 2]] output_shape [4, 2, 64] : tensor<4x128xf32> into tensor<4x2x64xf32>
  %r = remat.kernel "aten.relu"(%c) : (tensor<4x128xf32>) -> tensor<4x128xf32>
  %dx = remat.kernel "aten.relu_backward"(%dy, %cv) : (tensor<4x128xf32>, tensor<4x2x64xf32>) -> tensor<4x128xf32>
  %s:2 = remat.kernel "aten.sum"(%r) {remat.phase = "backward", remat.cost = 7.0} : (tensor<4x128xf32>) -> (tensor<f32>, tensor<f32>)
  return %r, %dx : tensor<4x128xf32>, tensor<4x128xf32>
}

// -----

// A step marked `remat.step` with nothing marked inside: the ops result #0 depends on are forward, the rest
// backward.
// CHECK-LABEL: training-graph @unmarked nodes=2 values=3 fixed_bytes=64 prelude_ops=0
// CHECK-NEXT: node n0 forward aten.exp
// CHECK-NEXT: node n1 backward aten.log
func.func @unmarked(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) attributes {remat.step} {
  %e = remat.kernel "aten.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %l = remat.kernel "aten.log"(%e) : (tensor<16xf32>) -> tensor<16xf32>
  return %e, %l : tensor<16xf32>, tensor<16xf32>
}

// -----

// Where the program computes what the loss does not need decides its phase
// when no seed is behind it: the mask of the pre-activation computed in the
// forward part (so that the pre-activation can be freed) stays forward, a
// saved activation like a pooling index; the transpose of the weight and the
// loss, computed after the backward began, do not change: the transpose is
// backward (only the backward reads it), the loss stays forward wherever the
// program puts it.
// CHECK-LABEL: training-graph @placement nodes=7 values=9 fixed_bytes=128 prelude_ops=1
// CHECK-NEXT: node n0 forward aten.mm
// CHECK-NEXT: node n1 forward aten.gt
// CHECK-NEXT: node n2 forward aten.relu
// CHECK-NEXT: node n3 backward aten.mul
// CHECK-NEXT: node n4 backward aten.t
// CHECK-NEXT: node n5 backward aten.mm
// CHECK-NEXT: node n6 forward aten.sum
// CHECK-NEXT: saved=[n1.0:16, n2.0:64]
func.func @placement(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<f32> {remat.loss}, tensor<4x4xf32>) {
  %seed = arith.constant {remat.seed} dense<1.0> : tensor<f32>
  %z = remat.kernel "aten.mm"(%x, %w) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %mask = remat.kernel "aten.gt"(%z) : (tensor<4x4xf32>) -> tensor<4x4xi8>
  %a = remat.kernel "aten.relu"(%z) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %g = remat.kernel "aten.mul"(%mask, %a, %seed) : (tensor<4x4xi8>, tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %wt = remat.kernel "aten.t"(%w) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %dx = remat.kernel "aten.mm"(%g, %wt) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %loss = remat.kernel "aten.sum"(%a) : (tensor<4x4xf32>) -> tensor<f32>
  return %loss, %dx : tensor<f32>, tensor<4x4xf32>
}

// -----

// Exporters mark every op, views included: a backward reader's view of a
// forward value joins the value's node for placement, but its marker does not
// make that node backward.
// CHECK-LABEL: training-graph @marked_view nodes=3
// CHECK-NEXT: node n0 forward aten.relu cost=16 ops=[remat.kernel, tensor.extract_slice]
// CHECK-NEXT: node n1 forward aten.sum
// CHECK-NEXT: node n2 backward aten.threshold_backward
func.func @marked_view(%x: tensor<16xf32>, %dy: tensor<8xf32> {remat.tangent}) -> (tensor<f32> {remat.loss}, tensor<8xf32>) {
  %r = remat.kernel "aten.relu"(%x) {remat.phase = "forward"} : (tensor<16xf32>) -> tensor<16xf32>
  %s = remat.kernel "aten.sum"(%r) {remat.phase = "forward"} : (tensor<16xf32>) -> tensor<f32>
  %v = tensor.extract_slice %r[0] [8] [1] {remat.phase = "backward"} : tensor<16xf32> to tensor<8xf32>
  %g = remat.kernel "aten.threshold_backward"(%dy, %v) {remat.phase = "backward"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %s, %g : tensor<f32>, tensor<8xf32>
}

// -----

// Buffers take whole bytes per element as the lowering stores them: a mask of
// i1 and a tensor of i4 take a byte per element, an i24 four, an index eight.
// CHECK-LABEL: training-graph @storage_bytes nodes=4
// CHECK-NEXT: node n0 forward aten.gt {{.*}} out=[n0.0:64]
// CHECK-NEXT: node n1 backward aten.pack {{.*}} out=[n1.0:64]
// CHECK-NEXT: node n2 backward aten.wide {{.*}} out=[n2.0:256]
// CHECK-NEXT: node n3 backward aten.idx {{.*}} out=[n3.0:512]
func.func @storage_bytes(%x: tensor<8x8xf32>) -> (tensor<8x8xi1> {remat.loss}, tensor<8x8xi4>, tensor<8x8xi24>, tensor<8x8xindex>) {
  %m = remat.kernel "aten.gt"(%x) : (tensor<8x8xf32>) -> tensor<8x8xi1>
  %p = remat.kernel "aten.pack"(%x) : (tensor<8x8xf32>) -> tensor<8x8xi4>
  %w = remat.kernel "aten.wide"(%x) : (tensor<8x8xf32>) -> tensor<8x8xi24>
  %i = remat.kernel "aten.idx"(%x) : (tensor<8x8xf32>) -> tensor<8x8xindex>
  return %m, %p, %w, %i : tensor<8x8xi1>, tensor<8x8xi4>, tensor<8x8xi24>, tensor<8x8xindex>
}

// -----

// A destination chain is one node only while it initialises: the fill joins
// the first matmul, but the second matmul accumulates into the first one's
// result (which reads computed values) at its own place, as a node that
// updates that buffer in place.
// CHECK-LABEL: training-graph @accumulate nodes=5
// CHECK-NEXT: node n0 forward linalg.generic {{.*}} out=[n0.0:64]
// CHECK-NEXT: node n1 forward linalg.fill
// CHECK-NEXT: node n2 forward linalg.matmul cost={{.*}} ops=[tensor.empty, linalg.fill, linalg.matmul] in=[arg0:64, n0.0:64] out=[n2.0:64]{{$}}
// CHECK-NEXT: node n3 backward linalg.generic
// CHECK-NEXT: node n4 backward linalg.matmul cost={{.*}} ops=[linalg.matmul] in=[arg0:64, n2.0:64, n3.0:64] out=[n4.0:64] reuses=[n2.0->n4.0]
#pw = affine_map<(i, j) -> (i, j)>
func.func @accumulate(%x: tensor<4x4xf32>) -> (tensor<f32> {remat.loss}, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %seed = arith.constant {remat.seed} 1.0 : f32
  %e0 = tensor.empty() : tensor<4x4xf32>
  %t = linalg.generic {indexing_maps = [#pw, #pw], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.tanh %in : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %el = tensor.empty() : tensor<f32>
  %loss = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %g1 = linalg.matmul ins(%x, %t : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x4xf32>
  %s = linalg.generic {indexing_maps = [#pw, #pw], iterator_types = ["parallel", "parallel"]} ins(%g1 : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %seed : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %g2 = linalg.matmul ins(%x, %s : tensor<4x4xf32>, tensor<4x4xf32>) outs(%g1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %loss, %g2 : tensor<f32>, tensor<4x4xf32>
}
