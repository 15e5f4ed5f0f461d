// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(test-remat-structure))' -o /dev/null | FileCheck %s

// Two residual blocks with identity shortcuts: the block inputs and outputs
// split the forward graph (Feng Def. 3); each block body is a branched close
// set (the shortcut is the edge entry -> exit) whose one branch is a chain.
// The backward ops (they read the tangent) are not part of the forward graph.
// CHECK-LABEL: structure @resnet ops=10 edges=11
// CHECK-NEXT:   articulation-points: [n4, n8]
// CHECK-NEXT:   splitting-vertices: [n0, n4, n8, n9]
// CHECK-NEXT:   hierarchy: linear=3 branched=2 non-branched=0 ops=10 depth=3 split-members=0
// CHECK-NEXT:   linear source -> sink hides=10 bytes=2560
// CHECK-NEXT:     op n0 aten.conv
// CHECK-NEXT:     branched n0 -> n4 +edge hides=3 bytes=768
// CHECK-NEXT:       linear n0 -> n4 hides=3
// CHECK-NEXT:         op n1 aten.conv
// CHECK-NEXT:         op n2 aten.relu
// CHECK-NEXT:         op n3 aten.conv
// CHECK-NEXT:     op n4 aten.add
// CHECK-NEXT:     branched n4 -> n8 +edge hides=3
// CHECK-NEXT:       linear n4 -> n8 hides=3
// CHECK-NEXT:         op n5 aten.conv
// CHECK-NEXT:         op n6 aten.relu
// CHECK-NEXT:         op n7 aten.conv
// CHECK-NEXT:     op n8 aten.add
// CHECK-NEXT:     op n9 aten.linear
func.func @resnet(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>, %dy: tensor<4x16xf32> {remat.tangent}) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %s = remat.kernel "aten.conv"(%x, %w) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %a1 = remat.kernel "aten.conv"(%s, %w) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %r1 = remat.kernel "aten.relu"(%a1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %b1 = remat.kernel "aten.conv"(%r1, %w) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %o1 = remat.kernel "aten.add"(%b1, %s) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %a2 = remat.kernel "aten.conv"(%o1, %w) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %r2 = remat.kernel "aten.relu"(%a2) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %b2 = remat.kernel "aten.conv"(%r2, %w) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %o2 = remat.kernel "aten.add"(%b2, %o1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = remat.kernel "aten.linear"(%o2, %w) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %g = remat.kernel "aten.relu_backward"(%dy, %r2) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %g2 = remat.kernel "aten.relu_backward"(%g, %r1) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %g2 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// A U-Net: every skip connection nests a branched close set inside the
// previous one; few articulation points (Checkmate §6.1), but the hierarchy
// still exposes a chain at every level.
// CHECK-LABEL: structure @unet ops=8 edges=10
// CHECK-NEXT:   articulation-points: [n6]
// CHECK-NEXT:   splitting-vertices: [n0, n6, n7]
// CHECK-NEXT:   hierarchy: linear=3 branched=3 non-branched=0 ops=8 depth=6 split-members=0
// CHECK-NEXT:   linear source -> sink hides=8
// CHECK-NEXT:     op n0 aten.down
// CHECK-NEXT:     branched n0 -> n6 +edge hides=5
// CHECK-NEXT:       linear n0 -> n6 hides=5
// CHECK-NEXT:         op n1 aten.down
// CHECK-NEXT:         branched n1 -> n5 +edge hides=3
// CHECK-NEXT:           linear n1 -> n5 hides=3
// CHECK-NEXT:             op n2 aten.down
// CHECK-NEXT:             branched n2 -> n4 +edge hides=1
// CHECK-NEXT:               op n3 aten.mid
// CHECK-NEXT:             op n4 aten.up
// CHECK-NEXT:         op n5 aten.up
// CHECK-NEXT:     op n6 aten.up
// CHECK-NEXT:     op n7 aten.head
func.func @unet(%x: tensor<8xf32>, %dy: tensor<8xf32> {remat.tangent}) -> (tensor<8xf32>, tensor<8xf32>) {
  %e1 = remat.kernel "aten.down"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %e2 = remat.kernel "aten.down"(%e1) : (tensor<8xf32>) -> tensor<8xf32>
  %e3 = remat.kernel "aten.down"(%e2) : (tensor<8xf32>) -> tensor<8xf32>
  %m = remat.kernel "aten.mid"(%e3) : (tensor<8xf32>) -> tensor<8xf32>
  %d3 = remat.kernel "aten.up"(%m, %e3) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %d2 = remat.kernel "aten.up"(%d3, %e2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %d1 = remat.kernel "aten.up"(%d2, %e1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %y = remat.kernel "aten.head"(%d1) : (tensor<8xf32>) -> tensor<8xf32>
  %g = remat.kernel "aten.mul"(%dy, %d2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %y, %g : tensor<8xf32>, tensor<8xf32>
}

// -----

// Two branches of different lengths that join: a branched close set between
// the fork and the join, no edge between them, two non-branched branches
// (Feng Def. 7).
// CHECK-LABEL: structure @two_branch_join ops=6 edges=6
// CHECK-NEXT:   articulation-points: [n4]
// CHECK-NEXT:   splitting-vertices: [n0, n4, n5]
// CHECK-NEXT:   hierarchy: linear=2 branched=1 non-branched=0 ops=6 depth=3 split-members=0
// CHECK-NEXT:   linear source -> sink hides=6
// CHECK-NEXT:     op n0 aten.stem
// CHECK-NEXT:     branched n0 -> n4 hides=3
// CHECK-NEXT:       linear n0 -> n4 hides=2
// CHECK-NEXT:         op n1 aten.conv
// CHECK-NEXT:         op n2 aten.conv
// CHECK-NEXT:       op n3 aten.pool
// CHECK-NEXT:     op n4 aten.cat
// CHECK-NEXT:     op n5 aten.loss
func.func @two_branch_join(%x: tensor<8xf32>) -> tensor<f32> {
  %s = remat.kernel "aten.stem"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %a = remat.kernel "aten.conv"(%s) : (tensor<8xf32>) -> tensor<8xf32>
  %b = remat.kernel "aten.conv"(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %p = remat.kernel "aten.pool"(%s) : (tensor<8xf32>) -> tensor<8xf32>
  %c = remat.kernel "aten.cat"(%b, %p) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %l = remat.kernel "aten.loss"(%c) {remat.loss} : (tensor<8xf32>) -> tensor<f32>
  %seed = arith.constant {remat.seed} 1.0 : f32
  %g = remat.kernel "aten.loss_backward"(%c, %seed) : (tensor<8xf32>, f32) -> tensor<8xf32>
  return %l : tensor<f32>
}

// -----

// A dense block (DenseNet): every concatenation reads the block input and
// every earlier layer's output, so no vertex splits the block and it is not
// branched: a non-branched close set. Its maximal split (Feng Def. 6) has a
// member per layer that hides the layer's norm and relu (s_{n0,n3},
// s_{n4,n7}; the last layer's output feeds only n12: s_{n8,n12}), and the
// concatenation edges that no member holds.
// CHECK-LABEL: structure @dense_block ops=14 edges=19
// CHECK-NEXT:   articulation-points: [n12]
// CHECK-NEXT:   splitting-vertices: [n0, n12, n13]
// CHECK-NEXT:   hierarchy: linear=4 branched=1 non-branched=1 ops=14 depth=4 split-members=10
// CHECK-NEXT:   linear source -> sink hides=14
// CHECK-NEXT:     op n0 aten.stem
// CHECK-NEXT:     branched n0 -> n12 +edge hides=11
// CHECK-NEXT:       non-branched n0 -> n12 hides=11 split=10
// CHECK-NEXT:         linear n0 -> n3 hides=2
// CHECK-NEXT:           op n1 aten.norm
// CHECK-NEXT:           op n2 aten.relu
// CHECK-NEXT:         op n3 aten.conv
// CHECK-NEXT:         op n4 aten.cat
// CHECK-NEXT:         linear n4 -> n7 hides=2
// CHECK-NEXT:           op n5 aten.norm
// CHECK-NEXT:           op n6 aten.relu
// CHECK-NEXT:         op n7 aten.conv
// CHECK-NEXT:         op n8 aten.cat
// CHECK-NEXT:         linear n8 -> n12 hides=3
// CHECK-NEXT:           op n9 aten.norm
// CHECK-NEXT:           op n10 aten.relu
// CHECK-NEXT:           op n11 aten.conv
// CHECK-NEXT:     op n12 aten.cat
// CHECK-NEXT:     op n13 aten.pool
func.func @dense_block(%x: tensor<8xf32>, %dy: tensor<8xf32> {remat.tangent}) -> (tensor<8xf32>, tensor<8xf32>) {
  %x0 = remat.kernel "aten.stem"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  %n1 = remat.kernel "aten.norm"(%x0) : (tensor<8xf32>) -> tensor<8xf32>
  %r1 = remat.kernel "aten.relu"(%n1) : (tensor<8xf32>) -> tensor<8xf32>
  %y1 = remat.kernel "aten.conv"(%r1) : (tensor<8xf32>) -> tensor<8xf32>
  %c1 = remat.kernel "aten.cat"(%x0, %y1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %n2 = remat.kernel "aten.norm"(%c1) : (tensor<8xf32>) -> tensor<8xf32>
  %r2 = remat.kernel "aten.relu"(%n2) : (tensor<8xf32>) -> tensor<8xf32>
  %y2 = remat.kernel "aten.conv"(%r2) : (tensor<8xf32>) -> tensor<8xf32>
  %c2 = remat.kernel "aten.cat"(%x0, %y1, %y2) : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %n3 = remat.kernel "aten.norm"(%c2) : (tensor<8xf32>) -> tensor<8xf32>
  %r3 = remat.kernel "aten.relu"(%n3) : (tensor<8xf32>) -> tensor<8xf32>
  %y3 = remat.kernel "aten.conv"(%r3) : (tensor<8xf32>) -> tensor<8xf32>
  %c3 = remat.kernel "aten.cat"(%x0, %y1, %y2, %y3) : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %o = remat.kernel "aten.pool"(%c3) : (tensor<8xf32>) -> tensor<8xf32>
  %g = remat.kernel "aten.mul"(%dy, %c2) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %o, %g : tensor<8xf32>, tensor<8xf32>
}
