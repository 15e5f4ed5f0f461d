// RUN: remat-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(remat-plan-library-calls{target=gpu}))" | FileCheck %s --check-prefix=PLAN
// RUN: remat-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(remat-plan-library-calls{target=gpu gpu-workspace-limit=1000}))" | FileCheck %s --check-prefix=LIMIT
// RUN: remat-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(remat-plan-library-calls{target=cpu}))" | FileCheck %s --check-prefix=CPU
// RUN: remat-opt %s --split-input-file --pass-pipeline="builtin.module(remat-lower-library-calls{target=gpu})" | FileCheck %s --check-prefix=LOWER
//
// remat-plan-library-calls marks the contractions a library runs, with the
// workspace the plan must give them: on the GPU min(gpu-workspace-limit,
// bytes of the largest operand) (GpuLibrary.h), on the CPU oneDNN's own
// answer. remat-lower-library-calls then replaces them, on buffers, by
// remat_lib_contraction between the allocation and the free of exactly that
// workspace.

// PLAN-LABEL: func.func @plan
// PLAN: linalg.matmul {remat.library_call = "gemm", remat.workspace_bytes = 4096 : i64}
// PLAN: linalg.add
// PLAN-NOT: remat.library_call
// LIMIT-LABEL: func.func @plan
// LIMIT: linalg.matmul {remat.library_call = "gemm", remat.workspace_bytes = 1000 : i64}
// CPU-LABEL: func.func @plan
// CPU: linalg.matmul {remat.library_call = "gemm", remat.workspace_bytes = {{[0-9]+}} : i64}
func.func @plan(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  %1 = linalg.add ins(%0, %0 : tensor<32x32xf32>, tensor<32x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %1 : tensor<32x32xf32>
}

// -----

// cuDNN's filters have no strides: a kernel read transposed stays a loop on
// the GPU.
// PLAN-LABEL: func.func @unpacked_kernel
// PLAN-NOT: remat.library_call
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#wt = affine_map<(n, f, oh, ow, c, kh, kw) -> (c, f, kw, kh)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @unpacked_kernel(%i: tensor<1x2x5x5xf32>, %w: tensor<2x3x3x3xf32>, %o: tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %r = linalg.generic {indexing_maps = [#in, #wt, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%i, %w : tensor<1x2x5x5xf32>, tensor<2x3x3x3xf32>) outs(%o : tensor<1x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %v = math.fma %a, %b, %acc : f32
    linalg.yield %v : f32
  } -> tensor<1x3x3x3xf32>
  return %r : tensor<1x3x3x3xf32>
}

// -----

// On buffers: the descriptor is a private constant global, the operands'
// addresses are their aligned pointers plus offset, the zero fill of the
// output is gone (the call overwrites), and the workspace is allocated right
// before the call and freed right after it.
// LOWER: memref.global "private" constant @__remat_lib_desc : memref<60xi64> = dense<[{{[0-9]+}}, 1, 1, 1, 0, 1, 32, 32, 16,
// LOWER-LABEL: func.func @lower
// PLAN-LABEL: func.func @lower
// LOWER-NOT: linalg.fill
// LOWER: %[[WS:.*]] = memref.alloc() : memref<4096xi8>
// LOWER: %[[DESC:.*]] = memref.get_global @__remat_lib_desc
// LOWER: memref.extract_aligned_pointer_as_index %[[DESC]]
// LOWER: call @remat_lib_contraction({{.*}}) {remat.library_call = "gemm", remat.workspace_bytes = 4096 : i64} : (index, index, index, index, index, i64) -> ()
// LOWER-NEXT: memref.dealloc %[[WS]]
// LOWER-NOT: linalg.matmul
// LOWER: func.func private @remat_lib_contraction(index, index, index, index, index, i64)
func.func @lower(%a: memref<32x16xf32>, %b: memref<16x32xf32>, %c: memref<32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x32xf32>)
  linalg.matmul {remat.library_call = "gemm", remat.workspace_bytes = 4096 : i64} ins(%a, %b : memref<32x16xf32>, memref<16x32xf32>) outs(%c : memref<32x32xf32>)
  return
}

// -----

// A buffer layout cuBLAS cannot take (no unit stride): the op stays a loop
// nest, between the allocation and the free of the planned workspace, so
// that the program still holds the bytes the plan counted.
// LOWER-LABEL: func.func @fallback
// LOWER: %[[WS:.*]] = memref.alloc() : memref<512xi8>
// LOWER-NEXT: linalg.matmul {remat.workspace_bytes = 512 : i64}
// LOWER-NEXT: memref.dealloc %[[WS]]
func.func @fallback(%a: memref<4x3xf32, strided<[6, 2]>>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.matmul {remat.library_call = "gemm", remat.workspace_bytes = 512 : i64} ins(%a, %b : memref<4x3xf32, strided<[6, 2]>>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  return
}
// -----

// A backward data written through its output's window (remat-autodiff's
// transpose of a stride-2 convolution) that reaches 7 of the 8 rows and
// columns: the call writes only those, so the zero fill stays and the call
// adds into it (accumulate, the fifth word of the descriptor).
// LOWER: memref.global "private" constant @__remat_lib_desc{{.*}} : memref<60xi64> = dense<[{{[0-9]+}}, 1, 3, 1, 1,
// LOWER-LABEL: func.func @partial_output
// LOWER: linalg.fill
// LOWER: call @remat_lib_contraction({{.*}}) {remat.library_call = "conv_bwd_data", remat.workspace_bytes = 0 : i64}
// LOWER-NOT: linalg.generic
#dy = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>
#wt = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g * 3 + f, c, kh, kw)>
#dx = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g * 2 + c, oh * 2 + kh, ow * 2 + kw)>
func.func @partial_output(%dy: memref<2x2x3x3x3xf32>, %w: memref<6x2x3x3xf32>, %dx: memref<2x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x4x8x8xf32>)
  linalg.generic {indexing_maps = [#dy, #wt, #dx], iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "reduction", "reduction", "reduction"]} ins(%dy, %w : memref<2x2x3x3x3xf32>, memref<6x2x3x3xf32>) outs(%dx : memref<2x4x8x8xf32>) attrs = {remat.library_call = "conv_bwd_data", remat.workspace_bytes = 0 : i64} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
