// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-host-buffers-to-gpu -o /dev/null

// Buffer contents touched on the host (an op that was not put in a kernel).
func.func @host_store() -> memref<f32> {
  %a = memref.alloc() : memref<f32>
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'memref.store' would access a device buffer from the host}}
  memref.store %zero, %a[] : memref<f32>
  return %a : memref<f32>
}

// -----

func.func @stack() {
  // expected-error @+1 {{a stack buffer on the host cannot be accessed by kernels}}
  %a = memref.alloca() : memref<4xf32>
  return
}

// -----

memref.global "private" constant @weights : memref<4xf32> = dense<1.0>
func.func @constant() -> memref<4xf32> {
  // expected-error @+1 {{constant tensors are not supported on the GPU path}}
  %w = memref.get_global @weights : memref<4xf32>
  return %w : memref<4xf32>
}

// -----

func.func @strided_copy(%a: memref<4x4xf32>) {
  %b = memref.alloc() : memref<2x4xf32>
  %v = memref.subview %a[0, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  // expected-error @+1 {{only copies between statically shaped identity-layout buffers}}
  memref.copy %v, %b : memref<2x4xf32, strided<[4, 1]>> to memref<2x4xf32>
  memref.dealloc %b : memref<2x4xf32>
  return
}
