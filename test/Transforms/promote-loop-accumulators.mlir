// RUN: remat-opt %s --pass-pipeline="builtin.module(func.func(remat-promote-loop-accumulators))" | FileCheck %s

// The loops of a row sum as convert-linalg-to-loops writes them: the output
// element is loaded, added to and stored back in every iteration.

func.func private @remat_rt_arena(i64, i64) -> memref<?xi8>

// Views of the step's arena at disjoint bytes: the sum is carried in a
// register (iter_args), loaded once before the loop and stored once after.
// CHECK-LABEL: func.func @arena_views_disjoint
// CHECK:         scf.for %[[I:.*]] =
// CHECK:           %[[INIT:.*]] = memref.load %[[OUT:.*]][%[[I]]] : memref<8xf32>
// CHECK:           %[[SUM:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT:        %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<8x16xf32>
// CHECK-NEXT:        %[[NEW:.*]] = arith.addf %[[ACC]], %[[X]] fastmath<reassoc> : f32
// CHECK-NEXT:        scf.yield %[[NEW]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      memref.store %[[SUM]], %[[OUT]][%[[I]]] : memref<8xf32>
func.func @arena_views_disjoint() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c512 = arith.constant 512 : index
  %id = arith.constant 0 : i64
  %bytes = arith.constant 544 : i64
  %arena = func.call @remat_rt_arena(%id, %bytes) : (i64, i64) -> memref<?xi8>
  %in = memref.view %arena[%c0][] : memref<?xi8> to memref<8x16xf32>
  %out = memref.view %arena[%c512][] : memref<?xi8> to memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %in[%i, %j] : memref<8x16xf32>
      %acc = memref.load %out[%i] : memref<8xf32>
      %new = arith.addf %acc, %x fastmath<reassoc> : f32
      memref.store %new, %out[%i] : memref<8xf32>
    }
  }
  return
}

// The output overlaps the input's bytes: left alone.
// CHECK-LABEL: func.func @arena_views_overlapping
// CHECK-NOT:     iter_args
// CHECK:         return
func.func @arena_views_overlapping() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %id = arith.constant 1 : i64
  %bytes = arith.constant 512 : i64
  %arena = func.call @remat_rt_arena(%id, %bytes) : (i64, i64) -> memref<?xi8>
  %in = memref.view %arena[%c0][] : memref<?xi8> to memref<8x16xf32>
  %out = memref.view %arena[%c256][] : memref<?xi8> to memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %in[%i, %j] : memref<8x16xf32>
      %acc = memref.load %out[%i] : memref<8xf32>
      %new = arith.addf %acc, %x : f32
      memref.store %new, %out[%i] : memref<8xf32>
    }
  }
  return
}

// Two arguments may alias: left alone. A fresh allocation and an argument
// cannot: promoted, both sums of one loop.
// CHECK-LABEL: func.func @arguments
// CHECK-NOT:     iter_args
// CHECK:         memref.alloc
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f64, f64)
// CHECK:         return
func.func @arguments(%in: memref<16xf32>, %out: memref<f32>) -> (memref<f64>, memref<f64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %j = %c0 to %c16 step %c1 {
    %x = memref.load %in[%j] : memref<16xf32>
    %acc = memref.load %out[] : memref<f32>
    %new = arith.addf %acc, %x : f32
    memref.store %new, %out[] : memref<f32>
  }
  %s0 = memref.alloc() : memref<f64>
  %s1 = memref.alloc() : memref<f64>
  scf.for %j = %c0 to %c16 step %c1 {
    %x = memref.load %in[%j] : memref<16xf32>
    %xe = arith.extf %x : f32 to f64
    %a0 = memref.load %s0[] : memref<f64>
    %n0 = arith.addf %a0, %xe : f64
    %sq = arith.mulf %xe, %xe : f64
    %a1 = memref.load %s1[] : memref<f64>
    %n1 = arith.addf %a1, %sq : f64
    memref.store %n0, %s0[] : memref<f64>
    memref.store %n1, %s1[] : memref<f64>
  }
  return %s0, %s1 : memref<f64>, memref<f64>
}

// A store whose address moves with the loop is not an accumulator.
// CHECK-LABEL: func.func @elementwise
// CHECK-NOT:     iter_args
// CHECK:         return
func.func @elementwise(%in: memref<16xf32>) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %out = memref.alloc() : memref<16xf32>
  scf.for %j = %c0 to %c16 step %c1 {
    %x = memref.load %in[%j] : memref<16xf32>
    %acc = memref.load %out[%j] : memref<16xf32>
    %new = arith.addf %acc, %x : f32
    memref.store %new, %out[%j] : memref<16xf32>
  }
  return %out : memref<16xf32>
}

// Memory of unknown origin (here a call's result) may be the arena's:
// left alone.
// CHECK-LABEL: func.func @unknown_origin
// CHECK-NOT:     iter_args
// CHECK:         return
func.func private @some_buffer() -> memref<8x16xf32>
func.func @unknown_origin() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c512 = arith.constant 512 : index
  %id = arith.constant 2 : i64
  %bytes = arith.constant 544 : i64
  %arena = func.call @remat_rt_arena(%id, %bytes) : (i64, i64) -> memref<?xi8>
  %in = func.call @some_buffer() : () -> memref<8x16xf32>
  %out = memref.view %arena[%c512][] : memref<?xi8> to memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %in[%i, %j] : memref<8x16xf32>
      %acc = memref.load %out[%i] : memref<8xf32>
      %new = arith.addf %acc, %x : f32
      memref.store %new, %out[%i] : memref<8xf32>
    }
  }
  return
}

// A reinterpret_cast may reach past its source's shape: the byte ranges of
// the views below it are no bounds, so the two views of one arena may meet.
// CHECK-LABEL: func.func @reinterpreted
// CHECK-NOT:     iter_args
// CHECK:         return
func.func @reinterpreted() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c512 = arith.constant 512 : index
  %id = arith.constant 3 : i64
  %bytes = arith.constant 544 : i64
  %arena = func.call @remat_rt_arena(%id, %bytes) : (i64, i64) -> memref<?xi8>
  %small = memref.view %arena[%c0][] : memref<?xi8> to memref<16xf32>
  %in = memref.reinterpret_cast %small to offset: [0], sizes: [8, 16], strides: [16, 1] : memref<16xf32> to memref<8x16xf32>
  %out = memref.view %arena[%c512][] : memref<?xi8> to memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %in[%i, %j] : memref<8x16xf32>
      %acc = memref.load %out[%i] : memref<8xf32>
      %new = arith.addf %acc, %x : f32
      memref.store %new, %out[%i] : memref<8xf32>
    }
  }
  return
}

// A global and the arena: promoted.
// CHECK-LABEL: func.func @global_into_arena
// CHECK:         scf.for {{.*}} iter_args
// CHECK:         return
memref.global "private" constant @weights : memref<8x16xf32> = dense<1.0>
func.func @global_into_arena() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %id = arith.constant 4 : i64
  %bytes = arith.constant 32 : i64
  %arena = func.call @remat_rt_arena(%id, %bytes) : (i64, i64) -> memref<?xi8>
  %in = memref.get_global @weights : memref<8x16xf32>
  %out = memref.view %arena[%c0][] : memref<?xi8> to memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %in[%i, %j] : memref<8x16xf32>
      %acc = memref.load %out[%i] : memref<8xf32>
      %new = arith.addf %acc, %x : f32
      memref.store %new, %out[%i] : memref<8xf32>
    }
  }
  return
}

// A loop that may not run (bounds not constant) never touched the element:
// left alone.
// CHECK-LABEL: func.func @maybe_no_iteration
// CHECK-NOT:     iter_args
// CHECK:         return
func.func @maybe_no_iteration(%n: index) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %in = memref.alloc() : memref<16xf32>
  %out = memref.alloc() : memref<f32>
  scf.for %j = %c0 to %n step %c1 {
    %x = memref.load %in[%j] : memref<16xf32>
    %acc = memref.load %out[] : memref<f32>
    %new = arith.addf %acc, %x : f32
    memref.store %new, %out[] : memref<f32>
  }
  return %out : memref<f32>
}
