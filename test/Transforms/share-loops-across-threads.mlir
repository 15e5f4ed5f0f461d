// RUN: remat-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(convert-linalg-to-parallel-loops),remat-share-loops-across-threads)" | FileCheck %s
// RUN: remat-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(convert-linalg-to-parallel-loops),remat-share-loops-across-threads{min-operations=1})" | FileCheck %s --check-prefix=ANY
//
// remat-share-loops-across-threads: after convert-linalg-to-parallel-loops,
// only the outermost parallel loop of a nest that executes enough
// operations (min-operations, 131072 by default) stays parallel and becomes
// one OpenMP work-sharing loop (upstream's convert-scf-to-openmp); every
// other scf.parallel becomes scf.for. The alloca scopes of the conversion
// are inlined (the bodies allocate nothing).

// A large elementwise op (512 x 1024 iterations of 3 operations): its rows
// are shared by the threads, each row a plain loop (the vectoriser's).
// CHECK-LABEL: func.func @large_elementwise
// CHECK: omp.parallel
// CHECK-NEXT: omp.wsloop
// CHECK-NEXT: omp.loop_nest (%{{.*}}) : index =
// CHECK-NEXT: scf.for
// CHECK-NOT: alloca_scope
// CHECK-NOT: omp.parallel
func.func @large_elementwise(%a: memref<512x1024xf32>, %b: memref<512x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<512x1024xf32>) outs(%b : memref<512x1024xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Leading dimensions are shared together until they give 64 iterations:
// 2 x 4 x 16 images x channels x rows here, the columns inside.
// CHECK-LABEL: func.func @leading_dimensions
// CHECK: omp.loop_nest (%{{.*}}, %{{.*}}, %{{.*}}) : index =
// CHECK-NEXT: scf.for
// CHECK-NOT: scf.for
func.func @leading_dimensions(%a: memref<2x4x16x1024xf32>, %b: memref<2x4x16x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : memref<2x4x16x1024xf32>) outs(%b : memref<2x4x16x1024xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A small one (8 x 16): sequential loops, no fork.
// CHECK-LABEL: func.func @small_elementwise
// CHECK-NOT: omp.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: omp.parallel
// ANY-LABEL: func.func @small_elementwise
// ANY: omp.parallel
func.func @small_elementwise(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<8x16xf32>) outs(%b : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A product in the order remat-prepare-loops-for-cpu gives it (m, k, n):
// the rows are shared, the columns after the reduction stay sequential
// (no nested parallel region).
// CHECK-LABEL: func.func @interchanged_product
// CHECK: omp.parallel
// CHECK: omp.loop_nest (%{{.*}}) : index =
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK-NOT: omp.parallel
// CHECK-NOT: scf.parallel
func.func @interchanged_product(%a: memref<256x128xf32>, %b: memref<128x256xf32>, %c: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, k, n) -> (m, k)>, affine_map<(m, k, n) -> (k, n)>, affine_map<(m, k, n) -> (m, n)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : memref<256x128xf32>, memref<128x256xf32>) outs(%c : memref<256x256xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Sizes known only at run time: the work cannot be judged, so no fork.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: omp.parallel
// ANY-LABEL: func.func @dynamic
// ANY-NOT: omp.parallel
func.func @dynamic(%a: memref<?x1024xf32>, %b: memref<?x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<?x1024xf32>) outs(%b : memref<?x1024xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// One iteration to share (a sum of one row): nothing for a second thread.
// CHECK-LABEL: func.func @one_row
// CHECK-NOT: omp.parallel
func.func @one_row(%a: memref<1x262144xf32>, %b: memref<1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<1x262144xf32>) outs(%b : memref<1xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}
