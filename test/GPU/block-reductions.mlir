// RUN: remat-opt %s --pass-pipeline='builtin.module(func.func(remat-gpu-block-reductions))' | FileCheck %s
// RUN: remat-opt %s --pass-pipeline='builtin.module(func.func(remat-gpu-block-reductions{few-outputs=64}))' | FileCheck %s --check-prefix=FEW
//
// Reductions that one thread per output element would leave the GPU idle for
// become one block per output element. Several outputs (a batch norm's two
// gradient sums, a loss and its maximum) are carried together through the
// threads' strided loop and each get their own gpu.all_reduce.

#x4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
#c4 = affine_map<(n, c, h, w) -> (c)>
#row = affine_map<(i, j) -> (i, j)>
#rowout = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>

func.func @batch_norm_sums(%x: memref<2x16x64x64xf32>, %s: memref<16xf64>, %q: memref<16xf64>) {
  linalg.generic {indexing_maps = [#x4, #c4, #c4], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x16x64x64xf32>) outs(%s, %q : memref<16xf64>, memref<16xf64>) {
  ^bb0(%in: f32, %acc0: f64, %acc1: f64):
    %e = arith.extf %in : f32 to f64
    %sq = arith.mulf %e, %e : f64
    %a = arith.addf %acc0, %e : f64
    %b = arith.addf %acc1, %sq : f64
    linalg.yield %a, %b : f64, f64
  }
  return
}

func.func @loss_and_max(%x: memref<128x512xf32>, %sum: memref<f32>, %max: memref<f32>) {
  linalg.generic {indexing_maps = [#row, #all, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<128x512xf32>) outs(%sum, %max : memref<f32>, memref<f32>) {
  ^bb0(%in: f32, %acc0: f32, %acc1: f32):
    %l = math.log %in : f32
    %a = arith.addf %l, %acc0 : f32
    %m = arith.maximumf %acc1, %in : f32
    linalg.yield %a, %m : f32, f32
  }
  return
}

func.func @few_rows(%x: memref<128x256xf32>, %out: memref<128xf32>) {
  linalg.generic {indexing_maps = [#row, #rowout], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<128x256xf32>) outs(%out : memref<128xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  return
}

func.func @many_rows(%x: memref<16384x256xf32>, %out: memref<16384xf32>) {
  linalg.generic {indexing_maps = [#row, #rowout], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<16384x256xf32>) outs(%out : memref<16384xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  return
}

func.func @chained_outputs(%x: memref<128x512xf32>, %s: memref<f32>, %t: memref<f32>) {
  linalg.generic {indexing_maps = [#row, #all, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<128x512xf32>) outs(%s, %t : memref<f32>, memref<f32>) {
  ^bb0(%in: f32, %acc0: f32, %acc1: f32):
    %a = arith.addf %acc0, %in : f32
    %b = arith.addf %acc1, %a : f32
    linalg.yield %a, %b : f32, f32
  }
  return
}

// CHECK-LABEL: func.func @batch_norm_sums
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: gpu.launch blocks(%[[B:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C16]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[T:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256:.*]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK: %[[PARTIAL:.*]]:2 = scf.for %{{.*}} = %[[T]] to %c8192 step %{{.*}} iter_args(%[[S:.*]] = %{{.*}}, %[[Q:.*]] = %{{.*}}) -> (f64, f64)
// CHECK: %[[X:.*]] = memref.load %arg0
// CHECK: %[[E:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK: %[[SQ:.*]] = arith.mulf %[[E]], %[[E]] : f64
// CHECK: %[[S2:.*]] = arith.addf %[[S]], %[[E]] : f64
// CHECK: %[[Q2:.*]] = arith.addf %[[Q]], %[[SQ]] : f64
// CHECK: scf.yield %[[S2]], %[[Q2]] : f64, f64
// CHECK: %[[TS:.*]] = gpu.all_reduce add %[[PARTIAL]]#0 uniform
// CHECK: %[[TQ:.*]] = gpu.all_reduce add %[[PARTIAL]]#1 uniform
// CHECK: scf.if
// CHECK: %[[OLDS:.*]] = memref.load %arg1
// CHECK: arith.addf %[[OLDS]], %[[TS]] : f64
// CHECK: memref.store
// CHECK: %[[OLDQ:.*]] = memref.load %arg2
// CHECK: arith.addf %[[OLDQ]], %[[TQ]] : f64
// CHECK: memref.store
// CHECK-NOT: linalg.generic
// CHECK: return

// A full reduction: one block; each output with its own combiner.
// CHECK-LABEL: func.func @loss_and_max
// CHECK: gpu.launch blocks
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK: math.log
// CHECK: gpu.all_reduce add
// CHECK: gpu.all_reduce maximumf
// CHECK-NOT: linalg.generic
// CHECK: return

// 256 terms each (below min-reduction) but only 128 outputs: blocks; with
// few-outputs=64 it keeps one thread per output.
// CHECK-LABEL: func.func @few_rows
// CHECK: gpu.launch
// CHECK: gpu.all_reduce add
// FEW-LABEL: func.func @few_rows
// FEW-NOT: gpu.launch
// FEW: linalg.generic

// 256 terms each for 16384 outputs: one thread per output is enough.
// CHECK-LABEL: func.func @many_rows
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic

// The second sum reads the first's running value: not two independent
// reductions, left alone.
// CHECK-LABEL: func.func @chained_outputs
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
