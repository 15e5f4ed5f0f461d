// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-map-parallel-loops-to-gpu))' | FileCheck %s
// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-map-parallel-loops-to-gpu{block-size=32}))' | FileCheck %s --check-prefix=SMALL
// RUN: not remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-map-parallel-loops-to-gpu{block-size=0}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-map-parallel-loops-to-gpu{block-size=2048}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE

// A block size out of range names the value (it printed as blank).
// ZERO: error: remat-map-parallel-loops-to-gpu: block-size 0 is not in [1, 1024]
// HUGE: error: remat-map-parallel-loops-to-gpu: block-size 2048 is not in [1, 1024]

// A 256x64 loop nest (one iteration per output element): blocks of 4x64
// threads, the innermost dimension on x for coalesced accesses; 64x4 blocks.
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to ({{.*}}) step (%[[C4:c4[_0-9]*]], %[[C64:c64[_0-9]*]])
// CHECK: scf.parallel (%[[TI:.*]], %[[TJ:.*]]) = ({{.*}}) to (%[[C4]], %[[C64]])
// CHECK: arith.addi %[[TI]], %[[I]]
// CHECK: memref.store
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_y, map = (d0) -> (d0), bound = (d0) -> (d0)>, #gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// With 32 threads per block, the innermost dimension takes them all.
// SMALL-LABEL: func.func @elementwise
// SMALL: scf.parallel {{.*}} step (%c1{{[_0-9]*}}, %c32{{[_0-9]*}})
func.func @elementwise(%a: memref<256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c64) step (%c1, %c1) {
    memref.store %cst, %a[%i, %j] : memref<256x64xf32>
    scf.reduce
  }
  return
}

// -----

// A trip count that the block size does not divide: the tile loop keeps the
// constant block size and checks the bound instead.
// CHECK-LABEL: func.func @ragged
// CHECK: scf.parallel (%[[I:.*]]) = ({{.*}}) to (%[[C1000:c1000]]) step (%[[C256:c256[_0-9]*]])
// CHECK: scf.parallel (%[[T:.*]]) = ({{.*}}) to (%[[C256]])
// CHECK: arith.cmpi ult, %{{.*}}, %[[C1000]]
// CHECK: scf.if
// CHECK-NEXT: memref.store
// CHECK: processor = thread_x
// CHECK: processor = block_x
func.func @ragged(%a: memref<1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1000 = arith.constant 1000 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c1000) step (%c1) {
    memref.store %cst, %a[%i] : memref<1000xf32>
    scf.reduce
  }
  return
}

// -----

// Four dimensions: the three innermost go to z, y, x; the outermost is a
// loop in every thread. Nested loops stay sequential inside the thread.
// CHECK-LABEL: func.func @rank4
// CHECK: scf.for
// CHECK: mapping = [#gpu.loop_dim_map<processor = sequential{{.*}}processor = thread_z{{.*}}processor = thread_y{{.*}}processor = thread_x
// CHECK: mapping = [#gpu.loop_dim_map<processor = sequential{{.*}}processor = block_z{{.*}}processor = block_y{{.*}}processor = block_x
func.func @rank4(%a: memref<2x3x4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %cst = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%c2, %c3, %c4, %c5) step (%c1, %c1, %c1, %c1) {
    scf.for %r = %c0 to %c2 step %c1 {
      memref.store %cst, %a[%i, %j, %k, %l] : memref<2x3x4x5xf32>
    }
    scf.reduce
  }
  return
}
