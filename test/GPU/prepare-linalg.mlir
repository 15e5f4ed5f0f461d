// RUN: remat-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(remat-prepare-linalg-for-gpu))' | FileCheck %s

// Parallel dimensions that are not outermost are interchanged to the front,
// reductions keep their relative order (bit-identical accumulation).
// CHECK: affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @column_sums
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
func.func @column_sums(%a: memref<8x16xf32>, %out: memref<16xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
      iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<8x16xf32>) outs(%out : memref<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Already parallel-first (matmul: parallel, parallel, reduction): unchanged,
// still a named op.
// CHECK-LABEL: func.func @matmul
// CHECK-NOT: scf.parallel
// CHECK: linalg.matmul
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x2xf32>) outs(%c : memref<4x2xf32>)
  return
}

// -----

// No parallel dimension at all (a full reduction, a rank-0 fill): one
// iteration of an scf.parallel, i.e. a one-thread kernel later.
// CHECK-LABEL: func.func @loss
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]])
// CHECK-NEXT: linalg.fill
// CHECK: scf.parallel
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "reduction"]
func.func @loss(%a: memref<8x16xf32>, %out: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<f32>)
  linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
      iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<8x16xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named op with a reduction first is generalized, then interchanged; its
// index ops follow the permutation.
// CHECK-LABEL: func.func @reduce_rows
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: linalg.reduce
func.func @reduce_rows(%a: memref<8x16xf32>, %out: memref<16xf32>) {
  linalg.reduce ins(%a : memref<8x16xf32>) outs(%out : memref<16xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %acc, %x : f32
      linalg.yield %s : f32
    }
  return
}
