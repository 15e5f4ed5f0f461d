// RUN: remat-opt %s --remat-gpu-async-library-calls | FileCheck %s
//
// gpu-async-region puts a host synchronization (a blocking gpu.wait) before
// every host call. Before a library call it goes: the project's CUDA runtime
// queues the call's work on the program's one stream, behind the kernels.
// So before a profile's op timers (they record events on that stream, or
// synchronize themselves). Before any other call, and before the return, it
// stays.

module attributes {gpu.container_module} {

gpu.module @kernels {
  gpu.func @k(%a: memref<4xf32>) kernel {
    gpu.return
  }
}

func.func private @remat_lib_contraction(index, index, index, index, index, i64)
func.func private @remat_rt_print_scalar_f64(f64)
func.func private @remat_rt_op_begin(i64)
func.func private @remat_rt_op_end(i64)

// CHECK-LABEL: func.func @step
func.func @step(%a: memref<4xf32>, %x: f64) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %z = arith.constant 0 : i64
  // CHECK: %[[T0:.*]] = gpu.wait async
  // CHECK-NEXT: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @kernels::@k
  %t0 = gpu.wait async
  %t1 = gpu.launch_func async [%t0] @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
  // CHECK-NOT: gpu.wait [%[[T1]]]
  // CHECK: memref.extract_aligned_pointer_as_index
  // CHECK-NEXT: call @remat_lib_contraction
  gpu.wait [%t1]
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  call @remat_lib_contraction(%p, %p, %p, %p, %c0, %z) : (index, index, index, index, index, i64) -> ()
  // CHECK: %[[T2:.*]] = gpu.wait async
  // CHECK-NEXT: %[[T3:.*]] = gpu.launch_func async [%[[T2]]] @kernels::@k
  // CHECK-NEXT: gpu.wait [%[[T3]]]
  // CHECK-NEXT: call @remat_rt_print_scalar_f64
  %t2 = gpu.wait async
  %t3 = gpu.launch_func async [%t2] @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
  gpu.wait [%t3]
  call @remat_rt_print_scalar_f64(%x) : (f64) -> ()
  // CHECK-NOT: gpu.wait [
  // CHECK: call @remat_rt_op_begin
  // CHECK-NEXT: %[[T6:.*]] = gpu.wait async
  // CHECK-NEXT: %[[T7:.*]] = gpu.launch_func async [%[[T6]]] @kernels::@k
  // CHECK-NOT: gpu.wait [%[[T7]]]
  // CHECK: call @remat_rt_op_end
  %t6w = gpu.wait async
  gpu.wait [%t6w]
  call @remat_rt_op_begin(%z) : (i64) -> ()
  %t6 = gpu.wait async
  %t7 = gpu.launch_func async [%t6] @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
  gpu.wait [%t7]
  call @remat_rt_op_end(%z) : (i64) -> ()
  // CHECK: %[[T4:.*]] = gpu.wait async
  // CHECK-NEXT: %[[T5:.*]] = gpu.launch_func async [%[[T4]]] @kernels::@k
  // CHECK-NEXT: gpu.wait [%[[T5]]]
  // CHECK-NEXT: return
  %t4 = gpu.wait async
  %t5 = gpu.launch_func async [%t4] @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
  gpu.wait [%t5]
  return
}

}
