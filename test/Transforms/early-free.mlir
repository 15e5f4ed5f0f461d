// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-early-free))' | FileCheck %s

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

// A view keeps its source alive: the free follows the last use of the view.
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

// -----

// Aliases through arith.select and scf.if results keep both candidates alive
// until the last use of the selected value.
// CHECK-LABEL: func.func @select_and_if
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %[[A]], %[[B]]
// CHECK: %[[I:.*]] = scf.if
// CHECK: linalg.copy ins(%[[S]] {{.*}} outs(%{{.*}}
// CHECK-NEXT: linalg.copy ins(%[[I]] {{.*}} outs(%{{.*}}
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: return
func.func @select_and_if(%c: i1, %out: memref<8xf32>) {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<8xf32>)
  %b = memref.alloc() : memref<8xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<8xf32>)
  %s = arith.select %c, %a, %b : memref<8xf32>
  %i = scf.if %c -> memref<8xf32> {
    scf.yield %a : memref<8xf32>
  } else {
    scf.yield %b : memref<8xf32>
  }
  linalg.copy ins(%s : memref<8xf32>) outs(%out : memref<8xf32>)
  linalg.copy ins(%i : memref<8xf32>) outs(%out : memref<8xf32>)
  return
}

// -----

// An allocation inside a loop body is freed in that body; one yielded out of
// its block is left to its new owner.
// CHECK-LABEL: func.func @nested_alloc
// CHECK: scf.for
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: linalg.copy ins(%{{.*}} {{.*}} outs(%[[T]]
// CHECK-NEXT: linalg.copy ins(%[[T]] {{.*}} outs(%{{.*}}
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK: scf.if
// CHECK: %[[Y:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NOT: memref.dealloc %[[Y]]
// CHECK: scf.yield %[[Y]]
func.func @nested_alloc(%in: memref<8xf32>, %out: memref<8xf32>, %c: i1) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %t = memref.alloc() : memref<8xf32>
    linalg.copy ins(%in : memref<8xf32>) outs(%t : memref<8xf32>)
    linalg.copy ins(%t : memref<8xf32>) outs(%out : memref<8xf32>)
  }
  %r = scf.if %c -> memref<8xf32> {
    %y = memref.alloc() : memref<8xf32>
    scf.yield %y : memref<8xf32>
  } else {
    scf.yield %in : memref<8xf32>
  }
  return %r : memref<8xf32>
}
