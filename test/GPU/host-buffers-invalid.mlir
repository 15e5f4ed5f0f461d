// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-host-buffers-to-gpu -o /dev/null

// Buffer contents touched on the host through a strided view: gpu.memcpy
// copies whole contiguous buffers only (contiguous ones are copied to the
// host and back: host-buffers.mlir).
func.func @host_store_strided() -> memref<4x4xf32> {
  %a = memref.alloc() : memref<4x4xf32>
  %v = memref.subview %a[0, 0] [2, 4] [1, 1] : memref<4x4xf32> to memref<2x4xf32, strided<[4, 1]>>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.store' reads or writes a device buffer of type 'memref<2x4xf32, strided<[4, 1]>>' on the host; only statically shaped identity-layout buffers can be copied to the host for it}}
  memref.store %zero, %v[%c0, %c0] : memref<2x4xf32, strided<[4, 1]>>
  return %a : memref<4x4xf32>
}

// -----

func.func @stack() {
  // expected-error @+1 {{a stack buffer on the host cannot be accessed by kernels}}
  %a = memref.alloca() : memref<4xf32>
  return
}

// -----

memref.global "private" constant @strided_weights : memref<2x2xf32, strided<[4, 1]>> = dense<1.0>
func.func @strided_constant() -> memref<2x2xf32, strided<[4, 1]>> {
  // expected-error @+1 {{only statically shaped identity-layout constants can}}
  %w = memref.get_global @strided_weights : memref<2x2xf32, strided<[4, 1]>>
  return %w : memref<2x2xf32, strided<[4, 1]>>
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
