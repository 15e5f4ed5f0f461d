// RUN: remat-opt %s --split-input-file --remat-host-buffers-to-gpu | FileCheck %s
// RUN: remat-opt %s --split-input-file --remat-host-buffers-to-gpu --gpu-async-region | FileCheck %s --check-prefix=ASYNC

// Host allocations and frees become device allocations and frees at the same
// places; kernels in gpu.module are not touched.
// CHECK-LABEL: func.func @step
// CHECK: %[[A:.*]] = gpu.alloc () : memref<64xf32>
// CHECK-NEXT: gpu.launch_func @kernels::@fill {{.*}} args(%[[A]] : memref<64xf32>)
// CHECK-NEXT: %[[B:.*]] = gpu.alloc () : memref<64xf32>
// CHECK-NEXT: gpu.launch_func @kernels::@copy {{.*}} args(%[[A]] : memref<64xf32>, %[[B]] : memref<64xf32>)
// CHECK-NEXT: gpu.dealloc %[[A]] : memref<64xf32>
// CHECK-NEXT: return %[[B]]
// CHECK: gpu.module @kernels
// CHECK-NOT: gpu.alloc
//
// gpu-async-region then threads one token through them, in program order,
// and synchronizes before returning.
// ASYNC-LABEL: func.func @step
// ASYNC: %[[T0:.*]] = gpu.wait async
// ASYNC-NEXT: %[[A:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<64xf32>
// ASYNC-NEXT: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@fill
// ASYNC-NEXT: %[[B:.*]], %[[T3:.*]] = gpu.alloc async [%[[T2]]] () : memref<64xf32>
// ASYNC-NEXT: %[[T4:.*]] = gpu.launch_func async [%[[T3]]] @kernels::@copy
// ASYNC-NEXT: %[[T5:.*]] = gpu.dealloc async [%[[T4]]] %[[A]] : memref<64xf32>
// ASYNC-NEXT: gpu.wait [%[[T5]]]
// ASYNC-NEXT: return %[[B]]
module attributes {gpu.container_module} {
  func.func @step() -> memref<64xf32> {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %a = memref.alloc() : memref<64xf32>
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>)
    %b = memref.alloc() : memref<64xf32>
    gpu.launch_func @kernels::@copy blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%a : memref<64xf32>, %b : memref<64xf32>)
    memref.dealloc %a : memref<64xf32>
    return %b : memref<64xf32>
  }
  gpu.module @kernels {
    gpu.func @fill(%a: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%i] : memref<64xf32>
      gpu.return
    }
    gpu.func @copy(%a: memref<64xf32>, %b: memref<64xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %a[%i] : memref<64xf32>
      memref.store %v, %b[%i] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// A copy between identity-layout buffers is a device copy; a call passes
// descriptors on and stays.
// CHECK-LABEL: func.func @copy_and_print
// CHECK: %[[A:.*]] = gpu.alloc () : memref<4x4xf32>
// CHECK: %[[B:.*]] = gpu.alloc () : memref<4x4xf32>
// CHECK: gpu.memcpy %[[B]], %[[A]] : memref<4x4xf32>, memref<4x4xf32>
// CHECK: call @print(%[[B]])
// CHECK: gpu.dealloc %[[A]]
// CHECK: gpu.dealloc %[[B]]
func.func private @print(memref<4x4xf32>)
func.func @copy_and_print() {
  %a = memref.alloc() : memref<4x4xf32>
  %b = memref.alloc() : memref<4x4xf32>
  memref.copy %a, %b : memref<4x4xf32> to memref<4x4xf32>
  call @print(%b) : (memref<4x4xf32>) -> ()
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %b : memref<4x4xf32>
  return
}

// -----

// A main that reads the step's result on the host (the loss, extracted and
// printed) and writes one: each access works on a host copy made right before
// it (gpu.memcpy device -> host), written back after a store, and freed right
// after, so the device buffers stay where the simulator put them.
// CHECK-LABEL: func.func @main
// CHECK: %[[L:.*]] = call @step_result() : () -> memref<f32>
// CHECK-NEXT: %[[H:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT: gpu.memcpy  %[[H]], %[[L]] : memref<f32>, memref<f32>
// CHECK-NEXT: %[[V:.*]] = memref.load %[[H]][] : memref<f32>
// CHECK-NEXT: memref.dealloc %[[H]] : memref<f32>
// CHECK-NEXT: vector.print %[[V]] : f32
// CHECK-NEXT: %[[W:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT: gpu.memcpy  %[[W]], %[[L]] : memref<f32>, memref<f32>
// CHECK-NEXT: memref.store %[[V]], %[[W]][] : memref<f32>
// CHECK-NEXT: gpu.memcpy  %[[L]], %[[W]] : memref<f32>, memref<f32>
// CHECK-NEXT: memref.dealloc %[[W]] : memref<f32>
// CHECK-NEXT: gpu.dealloc %[[L]] : memref<f32>
module attributes {gpu.container_module} {
  func.func private @step_result() -> memref<f32>
  func.func @main() {
    %l = call @step_result() : () -> memref<f32>
    %v = memref.load %l[] : memref<f32>
    vector.print %v : f32
    memref.store %v, %l[] : memref<f32>
    memref.dealloc %l : memref<f32>
    return
  }
}

// -----

// A constant tensor read by a kernel is its device copy, made by the runtime
// at its first use and kept (remat_rt_device_constant), viewed with the
// global's type; a global whose address alone is read (a library call's
// descriptor) stays on the host.
// CHECK-LABEL: func.func @constants
// CHECK: %[[W:.*]] = memref.get_global @weights : memref<4xf32>
// CHECK-NEXT: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK-NEXT: %[[BYTES:.*]] = arith.constant 16 : i64
// CHECK-NEXT: %[[DEV:.*]] = call @remat_rt_device_constant(%[[ADDR]], %[[BYTES]]) : (index, i64) -> memref<?xi8>
// CHECK: %[[VIEW:.*]] = memref.view %[[DEV]][%{{.*}}][] : memref<?xi8> to memref<4xf32>
// CHECK: gpu.launch_func @kernels::@read {{.*}} args(%[[VIEW]] : memref<4xf32>)
// CHECK: %[[D:.*]] = memref.get_global @descriptor
// CHECK-NEXT: memref.extract_aligned_pointer_as_index %[[D]]
// CHECK-NOT: remat_rt_device_constant
// CHECK: func.func private @remat_rt_device_constant(index, i64) -> memref<?xi8> attributes {llvm.emit_c_interface}
module attributes {gpu.container_module} {
  memref.global "private" constant @weights : memref<4xf32> = dense<1.0>
  memref.global "private" constant @descriptor : memref<2xi64> = dense<[1, 2]>
  func.func @constants() -> index {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %w = memref.get_global @weights : memref<4xf32>
    gpu.launch_func @kernels::@read blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%w : memref<4xf32>)
    %d = memref.get_global @descriptor : memref<2xi64>
    %p = memref.extract_aligned_pointer_as_index %d : memref<2xi64> -> index
    return %p : index
  }
  gpu.module @kernels {
    gpu.func @read(%w: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
