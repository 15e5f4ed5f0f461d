// RUN: remat-opt %s --split-input-file --remat-early-free | FileCheck %s

// Each buffer is freed right after its last use; the returned one never.
// CHECK-LABEL: func.func @straight_line
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[A]]
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: linalg.copy ins(%[[A]] {{.*}} outs(%[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[C:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: linalg.copy ins(%[[B]] {{.*}} outs(%[[C]]
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NOT: memref.dealloc
// CHECK: return %[[C]]
func.func @straight_line() -> memref<8xf32> {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<8xf32>)
  %b = memref.alloc() : memref<8xf32>
  linalg.copy ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  %c = memref.alloc() : memref<8xf32>
  linalg.copy ins(%b : memref<8xf32>) outs(%c : memref<8xf32>)
  return %c : memref<8xf32>
}

// -----

// A view keeps its source alive: the free follows the last use of the view,
// which upstream optimize-allocation-liveness does not follow.
// CHECK-LABEL: func.func @through_views
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK: %[[V:.*]] = memref.collapse_shape %[[A]]
// CHECK: %[[S:.*]] = memref.subview %[[V]]
// CHECK: linalg.copy ins(%[[S]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @through_views(%out: memref<8xf32>) {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4x4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4x4xf32>)
  %v = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  %s = memref.subview %v[4] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 4>>
  linalg.copy ins(%s : memref<8xf32, strided<[1], offset: 4>>) outs(%out : memref<8xf32>)
  return
}

// -----

// A buffer returned through a view is never freed; an unused one is freed
// right after its allocation.
// CHECK-LABEL: func.func @returned_view
// CHECK: %[[A:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK-NEXT: %[[U:.*]] = memref.alloc() : memref<3xf32>
// CHECK-NEXT: memref.dealloc %[[U]]
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @returned_view() -> memref<8xf32> {
  %a = memref.alloc() : memref<2x4xf32>
  %unused = memref.alloc() : memref<3xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  return %v : memref<8xf32>
}

// -----

// Nested uses count at their ancestor in the block.
// CHECK-LABEL: func.func @nested_use
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: scf.for
// CHECK: memref.load %[[A]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
func.func @nested_use(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %out[%i] : memref<8xf32>
  }
  return
}
