// RUN: remat-opt %s --split-input-file --pass-pipeline="builtin.module(remat-lower-library-calls{target=gpu})" | FileCheck %s
//
// The exporter writes the backward data of a strided convolution as a
// stride-1 correlation with the flipped kernel over a zero-inserted copy of
// the gradient (a zero fill, then a copy into a strided subview).
// remat-lower-library-calls calls the strided backward data on the gradient
// itself: the fill and the copy go, the spread buffer stays allocated (the
// plan counted it). Here a 3x3 convolution with stride 2 and padding 1 of
// an 8x8 image: the gradient (4x4) lands at 1 + 2*o of a 10x10 buffer.

#x = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, c, h + kh, w + kw)>
#k = affine_map<(n, g, f, h, w, c, kh, kw) -> (c, f, 2 - kh, 2 - kw)>
#win = affine_map<(n, g, f, h, w, c, kh, kw) -> (kh, kw)>
#o = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, f, h, w)>

// The descriptor: backward data (3), f32, overwrite; 1 image, 2 input and 3
// output channels; the image 8x8, the kernel 3x3, the gradient 4x4, stride
// 2, dilation 1, padding 1 on both sides; the gradient's own strides
// (48, 16, 4, 1).
// CHECK: memref.global "private" constant @__remat_lib_desc : memref<60xi64> = dense<[{{[0-9]+}}, 1, 3, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 2, 3, 8, 8, 1, 3, 3, 1, 4, 4, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 64, 8, 1, 0, 0, 18, 9, 3, 1, 0, 48, 16, 4, 1, 0]>
// CHECK-LABEL: func.func @folded
// CHECK-SAME: (%[[GRAD:[^:]*]]: memref<1x3x4x4xf32>
// CHECK: %[[R:.*]] = memref.alloc() : memref<1x3x10x10xf32>
// CHECK-NOT: memref.expand_shape
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.fill
// CHECK: memref.extract_strided_metadata %[[GRAD]]
// CHECK: memref.extract_aligned_pointer_as_index %[[GRAD]]
// CHECK: call @remat_lib_contraction
// CHECK-NOT: linalg.generic
// CHECK: memref.dealloc %[[R]]
func.func @folded(%grad: memref<1x3x4x4xf32>, %w: memref<3x2x3x3xf32>, %window: memref<3x3xi8>, %dx: memref<1x1x2x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %r = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x3x10x10xf32>)
  %sv = memref.subview %r[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : memref<1x3x10x10xf32> to memref<1x3x4x4xf32, strided<[300, 100, 20, 2], offset: 11>>
  memref.copy %grad, %sv : memref<1x3x4x4xf32> to memref<1x3x4x4xf32, strided<[300, 100, 20, 2], offset: 11>>
  %xr = memref.expand_shape %r [[0], [1, 2], [3], [4]] output_shape [1, 1, 3, 10, 10] : memref<1x3x10x10xf32> into memref<1x1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<1x1x2x8x8xf32>)
  linalg.generic {indexing_maps = [#x, #k, #win, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xr, %w, %window : memref<1x1x3x10x10xf32>, memref<3x2x3x3xf32>, memref<3x3xi8>) outs(%dx : memref<1x1x2x8x8xf32>) attrs = {remat.library_call = "conv_bwd_data", remat.workspace_bytes = 0 : i64} {
  ^bb0(%a: f32, %b: f32, %unused: i8, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %r : memref<1x3x10x10xf32>
  return
}

// -----

// The gradient freed right after the copy (its last use in the plan): its
// memory may hold something else by the time the convolution runs, so the
// copy writes it densely into the spread buffer's first elements instead,
// and the same strided call as above (the same descriptor, so the same
// results whatever the plan) reads it there; the zero fill goes.
#x = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, c, h + kh, w + kw)>
#k = affine_map<(n, g, f, h, w, c, kh, kw) -> (c, f, 2 - kh, 2 - kw)>
#win = affine_map<(n, g, f, h, w, c, kh, kw) -> (kh, kw)>
#o = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, f, h, w)>

// CHECK: memref.global "private" constant @__remat_lib_desc : memref<60xi64> = dense<[{{[0-9]+}}, 1, 3, 1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 2, 3, 8, 8, 1, 3, 3, 1, 4, 4, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 64, 8, 1, 0, 0, 18, 9, 3, 1, 0, 48, 16, 4, 1, 0]>
// CHECK-LABEL: func.func @gradient_dead
// CHECK: %[[G:.*]] = memref.alloc() : memref<1x3x4x4xf32>
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: %[[R:.*]] = memref.alloc() : memref<1x3x10x10xf32>
// CHECK-NEXT: %[[PREFIX:.*]] = memref.reinterpret_cast %[[R]] to offset: [0], sizes: [1, 3, 4, 4], strides: [48, 16, 4, 1] : memref<1x3x10x10xf32> to memref<1x3x4x4xf32>
// CHECK-NEXT: memref.copy %[[G]], %[[PREFIX]]
// CHECK-NEXT: memref.dealloc %[[G]] : memref<1x3x4x4xf32>
// CHECK-NOT: linalg.fill
// CHECK: memref.extract_aligned_pointer_as_index %[[R]]
// CHECK: call @remat_lib_contraction
// CHECK-NOT: linalg.generic
func.func @gradient_dead(%w: memref<3x2x3x3xf32>, %window: memref<3x3xi8>, %dx: memref<1x1x2x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %grad = memref.alloc() : memref<1x3x4x4xf32>
  linalg.fill ins(%one : f32) outs(%grad : memref<1x3x4x4xf32>)
  %r = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x3x10x10xf32>)
  %sv = memref.subview %r[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : memref<1x3x10x10xf32> to memref<1x3x4x4xf32, strided<[300, 100, 20, 2], offset: 11>>
  memref.copy %grad, %sv : memref<1x3x4x4xf32> to memref<1x3x4x4xf32, strided<[300, 100, 20, 2], offset: 11>>
  memref.dealloc %grad : memref<1x3x4x4xf32>
  %xr = memref.expand_shape %r [[0], [1, 2], [3], [4]] output_shape [1, 1, 3, 10, 10] : memref<1x3x10x10xf32> into memref<1x1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<1x1x2x8x8xf32>)
  linalg.generic {indexing_maps = [#x, #k, #win, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xr, %w, %window : memref<1x1x3x10x10xf32>, memref<3x2x3x3xf32>, memref<3x3xi8>) outs(%dx : memref<1x1x2x8x8xf32>) attrs = {remat.library_call = "conv_bwd_data", remat.workspace_bytes = 0 : i64} {
  ^bb0(%a: f32, %b: f32, %unused: i8, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %r : memref<1x3x10x10xf32>
  return
}

// -----

// Something else written into the spread buffer after the copy: not the
// exporter's zero insertion, left alone.
#x = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, c, h + kh, w + kw)>
#k = affine_map<(n, g, f, h, w, c, kh, kw) -> (c, f, 2 - kh, 2 - kw)>
#win = affine_map<(n, g, f, h, w, c, kh, kw) -> (kh, kw)>
#o = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, f, h, w)>

// CHECK-LABEL: func.func @spread_written
// CHECK: memref.copy
// CHECK: memref.store
// CHECK: call @remat_lib_contraction
func.func @spread_written(%grad: memref<1x3x4x4xf32>, %w: memref<3x2x3x3xf32>, %window: memref<3x3xi8>, %dx: memref<1x1x2x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %r = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x3x10x10xf32>)
  %sv = memref.subview %r[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : memref<1x3x10x10xf32> to memref<1x3x4x4xf32, strided<[300, 100, 20, 2], offset: 11>>
  memref.copy %grad, %sv : memref<1x3x4x4xf32> to memref<1x3x4x4xf32, strided<[300, 100, 20, 2], offset: 11>>
  memref.store %zero, %r[%c0, %c0, %c0, %c0] : memref<1x3x10x10xf32>
  %xr = memref.expand_shape %r [[0], [1, 2], [3], [4]] output_shape [1, 1, 3, 10, 10] : memref<1x3x10x10xf32> into memref<1x1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<1x1x2x8x8xf32>)
  linalg.generic {indexing_maps = [#x, #k, #win, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xr, %w, %window : memref<1x1x3x10x10xf32>, memref<3x2x3x3xf32>, memref<3x3xi8>) outs(%dx : memref<1x1x2x8x8xf32>) attrs = {remat.library_call = "conv_bwd_data", remat.workspace_bytes = 0 : i64} {
  ^bb0(%a: f32, %b: f32, %unused: i8, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.dealloc %r : memref<1x3x10x10xf32>
  return
}

// -----

// The gradient overwritten between the copy and the convolution (and read
// after it): the call cannot read it, so it reads the dense prefix.
#x = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, c, h + kh, w + kw)>
#k = affine_map<(n, g, f, h, w, c, kh, kw) -> (c, f, 2 - kh, 2 - kw)>
#win = affine_map<(n, g, f, h, w, c, kh, kw) -> (kh, kw)>
#o = affine_map<(n, g, f, h, w, c, kh, kw) -> (n, g, f, h, w)>

// CHECK-LABEL: func.func @gradient_overwritten
// CHECK: %[[R:.*]] = memref.alloc() : memref<1x3x10x10xf32>
// CHECK-NEXT: %[[PREFIX:.*]] = memref.reinterpret_cast %[[R]]
// CHECK-NEXT: memref.copy %[[G:.*]], %[[PREFIX]]
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[G]]
// CHECK: memref.extract_aligned_pointer_as_index %[[R]]
// CHECK: call @remat_lib_contraction
// CHECK: memref.copy %[[G]]
func.func @gradient_overwritten(%grad: memref<1x3x4x4xf32>, %w: memref<3x2x3x3xf32>, %window: memref<3x3xi8>, %dx: memref<1x1x2x8x8xf32>, %after: memref<1x3x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %r = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%r : memref<1x3x10x10xf32>)
  %sv = memref.subview %r[0, 0, 1, 1] [1, 3, 4, 4] [1, 1, 2, 2] : memref<1x3x10x10xf32> to memref<1x3x4x4xf32, strided<[300, 100, 20, 2], offset: 11>>
  memref.copy %grad, %sv : memref<1x3x4x4xf32> to memref<1x3x4x4xf32, strided<[300, 100, 20, 2], offset: 11>>
  linalg.fill ins(%two : f32) outs(%grad : memref<1x3x4x4xf32>)
  %xr = memref.expand_shape %r [[0], [1, 2], [3], [4]] output_shape [1, 1, 3, 10, 10] : memref<1x3x10x10xf32> into memref<1x1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%dx : memref<1x1x2x8x8xf32>)
  linalg.generic {indexing_maps = [#x, #k, #win, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xr, %w, %window : memref<1x1x3x10x10xf32>, memref<3x2x3x3xf32>, memref<3x3xi8>) outs(%dx : memref<1x1x2x8x8xf32>) attrs = {remat.library_call = "conv_bwd_data", remat.workspace_bytes = 0 : i64} {
  ^bb0(%a: f32, %b: f32, %unused: i8, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  memref.copy %grad, %after : memref<1x3x4x4xf32> to memref<1x3x4x4xf32>
  memref.dealloc %r : memref<1x3x10x10xf32>
  return
}
