// RUN: remat-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(remat-fuse-parallel-loops))" | FileCheck %s
//
// Adjacent scf.parallel loops over the same iterations become one when each
// touches the other's buffers only at the same element, or buffers that
// cannot overlap (here: slices of one arena at disjoint byte offsets).

// A fill, a square and a copy of the squares (the copy reads what the square
// wrote, at the same element): one loop, the three bodies in program order.
// CHECK-LABEL: func.func @chain
// CHECK: scf.parallel
// CHECK-NEXT: memref.store %{{.*}}, %[[A:.*]][
// CHECK-NEXT: memref.load %{{.*}}[
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: memref.store %{{.*}}, %[[B:.*]][
// CHECK-NEXT: memref.load %[[B]][
// CHECK-NEXT: memref.store
// CHECK-NEXT: scf.reduce
// CHECK-NOT: scf.parallel
func.func @chain(%x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %arena = memref.alloc() : memref<1024xi8>
  %o0 = arith.constant 0 : index
  %o256 = arith.constant 256 : index
  %o512 = arith.constant 512 : index
  %a = memref.view %arena[%o0][] : memref<1024xi8> to memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %zero, %a[%i] : memref<64xf32>
    scf.reduce
  }
  %b = memref.view %arena[%o256][] : memref<1024xi8> to memref<64xf32>
  %c64b = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64b) step (%c1) {
    %v = memref.load %x[%i] : memref<64xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %b[%i] : memref<64xf32>
    scf.reduce
  }
  %c = memref.view %arena[%o512][] : memref<1024xi8> to memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %b[%i] : memref<64xf32>
    memref.store %v, %c[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// The second loop reads the element next to the one the first wrote: another
// iteration's. Not fused.
// CHECK-LABEL: func.func @shifted
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func @shifted(%x: memref<65xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %arena = memref.alloc() : memref<1024xi8>
  %o0 = arith.constant 0 : index
  %o512 = arith.constant 512 : index
  %a = memref.view %arena[%o0][] : memref<1024xi8> to memref<65xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %x[%i] : memref<65xf32>
    memref.store %v, %a[%i] : memref<65xf32>
    scf.reduce
  }
  %b = memref.view %arena[%o512][] : memref<1024xi8> to memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %j = arith.addi %i, %c1 : index
    %v = memref.load %a[%j] : memref<65xf32>
    memref.store %v, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// The second loop writes a slice that overlaps the one the first loop writes
// (the arena reuses dead bytes): not fused, whatever the indices.
// CHECK-LABEL: func.func @overlapping_slices
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func @overlapping_slices(%x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %arena = memref.alloc() : memref<1024xi8>
  %o0 = arith.constant 0 : index
  %o128 = arith.constant 128 : index
  %a = memref.view %arena[%o0][] : memref<1024xi8> to memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %x[%i] : memref<64xf32>
    memref.store %v, %a[%i] : memref<64xf32>
    scf.reduce
  }
  %b = memref.view %arena[%o128][] : memref<1024xi8> to memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %x[%i] : memref<64xf32>
    memref.store %v, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// An op with side effects between the loops (a call), and loops over
// different iterations: nothing fused.
// CHECK-LABEL: func.func @separated
// CHECK: scf.parallel
// CHECK: call @work
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func private @work()
func.func @separated(%x: memref<64xf32>, %y: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %zero, %a[%i] : memref<64xf32>
    scf.reduce
  }
  call @work() : () -> ()
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %zero, %x[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c32) step (%c1) {
    memref.store %zero, %y[%i] : memref<32xf32>
    scf.reduce
  }
  return
}

// -----

// The same element in every iteration (a scalar the first loop writes and
// the second reads): no two iterations may share it. Not fused.
// CHECK-LABEL: func.func @shared_element
// CHECK: scf.parallel
// CHECK: scf.parallel
func.func @shared_element(%x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %arena = memref.alloc() : memref<1024xi8>
  %o0 = arith.constant 0 : index
  %o512 = arith.constant 512 : index
  %s = memref.view %arena[%o0][] : memref<1024xi8> to memref<f32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %x[%i] : memref<64xf32>
    memref.store %v, %s[] : memref<f32>
    scf.reduce
  }
  %b = memref.view %arena[%o512][] : memref<1024xi8> to memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %s[] : memref<f32>
    memref.store %v, %b[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
