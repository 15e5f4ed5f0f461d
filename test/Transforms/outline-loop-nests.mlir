// RUN: remat-opt %s --split-input-file --remat-outline-loop-nests | FileCheck %s
//
// remat-outline-loop-nests: every outermost loop nest of a function with a
// body moves into a private function of its own (internal, noinline for
// LLVM), called where it stood. Constants are cloned in; buffers and
// computed values become arguments; the values a nest yields, results.

// Two nests of one step: two functions, in the order of the nests; the
// constants they read (bounds, 2.0) are theirs, the buffers arguments.
// CHECK-LABEL: func.func private @two_nests.loops0
// CHECK-SAME: (%[[A:.*]]: memref<64x64xf32>, %[[B:.*]]: memref<64x64xf32>)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C64]]
// CHECK: scf.for
// CHECK: memref.load %[[A]]
// CHECK: arith.mulf %{{.*}}, %[[TWO]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: return
// CHECK-LABEL: func.func private @two_nests.loops1
// CHECK-SAME: (%{{.*}}: memref<64x64xf32>) -> f32
// CHECK: %[[SUM:.*]] = scf.for
// CHECK: return %[[SUM]] : f32
// CHECK-LABEL: func.func @two_nests
// CHECK-SAME: (%[[X:.*]]: memref<64x64xf32>, %[[Y:.*]]: memref<64x64xf32>)
// CHECK-NOT: scf.for
// CHECK: call @two_nests.loops0(%[[X]], %[[Y]])
// CHECK-NEXT: %[[S:.*]] = call @two_nests.loops1(%[[Y]])
// CHECK-NEXT: return %[[S]] : f32
func.func @two_nests(%a: memref<64x64xf32>, %b: memref<64x64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %x = memref.load %a[%i, %j] : memref<64x64xf32>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %b[%i, %j] : memref<64x64xf32>
    }
  }
  %s = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %b[%i, %i] : memref<64x64xf32>
    %t = arith.addf %acc, %x : f32
    scf.yield %t : f32
  }
  return %s : f32
}

// -----

// A computed value (not a constant) and a view are arguments; a nest under
// an scf.if moves too, the if stays.
// CHECK-LABEL: func.func private @computed.loops0
// CHECK-SAME: (%{{.*}}: memref<8xf32, strided<[1], offset: 8>>, %{{.*}}: index)
// CHECK-LABEL: func.func @computed
// CHECK: %[[N:.*]] = arith.addi
// CHECK: %[[V:.*]] = memref.subview
// CHECK: scf.if
// CHECK-NEXT: call @computed.loops0(%[[V]], %[[N]])
func.func @computed(%a: memref<16xf32>, %n0: index, %flag: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %n = arith.addi %n0, %c1 : index
  %v = memref.subview %a[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  scf.if %flag {
    scf.for %i = %c0 to %n step %c1 {
      memref.store %one, %v[%i] : memref<8xf32, strided<[1], offset: 8>>
    }
  }
  return
}

// -----

// An OpenMP region (remat-share-loops-across-threads' output) moves whole;
// a function without a body and one without loops are left alone; a name
// already taken is skipped.
// CHECK-LABEL: func.func private @threads.loops0()
// CHECK-LABEL: func.func private @external
// CHECK-LABEL: func.func @no_loops
// CHECK-NEXT: call @external
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @threads.loops1
// CHECK-SAME: (%{{.*}}: memref<1024xf32>)
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK-LABEL: func.func @threads
// CHECK-NOT: omp.parallel
// CHECK: call @threads.loops1(%{{.*}})
// CHECK-NOT: omp.
func.func private @threads.loops0() {
  return
}
func.func private @external(memref<1024xf32>)
func.func @no_loops(%a: memref<1024xf32>) {
  call @external(%a) : (memref<1024xf32>) -> ()
  return
}
func.func @threads(%a: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c1024) step (%c1) {
        memref.store %one, %a[%i] : memref<1024xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
