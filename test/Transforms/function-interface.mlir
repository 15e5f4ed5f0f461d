// The function-level passes are anchored on FunctionOpInterface, not on
// func.func: remat-early-free frees the buffers of a gpu.func exactly as
// those of a func.func, when nested under it.
// RUN: remat-opt %s --pass-pipeline='builtin.module(gpu.module(gpu.func(remat-early-free)),func.func(remat-early-free))' | FileCheck %s

// CHECK-LABEL: gpu.func @device_scratch
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: memref.copy %{{.*}}, %[[A]]
// CHECK-NEXT: memref.copy %[[A]], %{{.*}}
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: gpu.return
gpu.module @kernels {
  gpu.func @device_scratch(%in: memref<16xf32>, %out: memref<16xf32>) {
    %a = memref.alloc() : memref<16xf32>
    memref.copy %in, %a : memref<16xf32> to memref<16xf32>
    memref.copy %a, %out : memref<16xf32> to memref<16xf32>
    gpu.return
  }
}

// CHECK-LABEL: func.func @host_scratch
// CHECK: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: memref.copy %{{.*}}, %[[B]]
// CHECK-NEXT: memref.copy %[[B]], %{{.*}}
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @host_scratch(%in: memref<16xf32>, %out: memref<16xf32>) {
  %b = memref.alloc() : memref<16xf32>
  memref.copy %in, %b : memref<16xf32> to memref<16xf32>
  memref.copy %b, %out : memref<16xf32> to memref<16xf32>
  return
}
