// RUN: remat-opt %S/../Transforms/apply.mlir --remat-lower-to-gpu="solver=chen-sqrtn arena=false" -o %t.mlir
// RUN: FileCheck %s --implicit-check-not=@malloc < %t.mlir
// RUN: remat-opt %S/../Transforms/apply.mlir --remat-lower-to-gpu="solver=chen-sqrtn" | FileCheck %s --check-prefix=ARENA --implicit-check-not=@malloc
// RUN: %PYTHON %S/Inputs/extract_ptx.py %t.mlir --dump %t.ptx | FileCheck %s --check-prefix=COUNT
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: remat-opt %S/../Transforms/apply.mlir --remat-lower-to-gpu="solver=chen-sqrtn entry=square_chain" | FileCheck %s --check-prefix=MAIN
// RUN: remat-opt %S/../Transforms/apply.mlir --remat-lower-to-gpu="solver=none chip=sm_80 features=+ptx75" | FileCheck %s --check-prefix=SM80
// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-lower-to-gpu="solver=checkpoint-all" -o /dev/null

// By default every buffer of the step is a view of one device arena at its
// planned offset (remat_rt_arena, allocated once per program): no device
// allocation or free in the step.
// ARENA-LABEL: llvm.func @square_chain
// ARENA: llvm.call @remat_rt_arena(%{{.*}}, %{{.*}}) {remat.arena_bytes = 260 : i64}
// ARENA-NOT: @mgpuMemAlloc
// ARENA-NOT: @mgpuMemFree
// ARENA: llvm.return

// With arena=false the step is host code in the LLVM dialect that calls the project's CUDA
// runtime: under chen-sqrtn the chain allocates the 12 buffers of the CPU
// path (10 nodes + 2 recomputations) as device buffers, all on the stream of
// the step's one async token chain, and frees all but the 2 outputs; nothing
// is allocated on the host (no malloc). 13 linalg ops, 12 kernels: the zero
// fill of the sum and the sum run as one (remat-fuse-parallel-loops).
// CHECK-LABEL: llvm.func @square_chain
// CHECK: %[[S:.*]] = llvm.call @mgpuStreamCreate()
// CHECK-COUNT-12: llvm.call @mgpuMemAlloc(%{{.*}}, %[[S]], %{{.*}}) : (i64, !llvm.ptr, i8) -> !llvm.ptr
// CHECK-NOT: @mgpuMemAlloc
// CHECK: llvm.call @mgpuStreamSynchronize(%[[S]])
// CHECK-NEXT: llvm.call @mgpuStreamDestroy(%[[S]])
// CHECK: llvm.return
// CHECK-COUNT-12: gpu.binary @square_chain_kernel{{.*}} [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// CHECK-DAG: llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
// CHECK-DAG: llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
//
// COUNT: kernels: 12
//
// format=ptx: PTX text for sm_90, produced without ptxas. Multiplications
// and additions carry .rn, so ptxas cannot contract them into FMAs: the
// kernels round like the CPU code.
// PTX: .version 8.0
// PTX-NEXT: .target sm_90
// PTX: .visible .entry square_chain_kernel(
// PTX: ld.global
// PTX: mul.rn.f32
// PTX: st.global
// PTX-NOT: fma.rn.f32

// With entry=, the generated main calls the step between the runtime's
// window functions and prints the (device) results through its C interface.
// MAIN-LABEL: llvm.func @main()
// MAIN: llvm.call @remat_rt_step_begin()
// MAIN: llvm.call @square_chain(
// MAIN: llvm.call @remat_rt_step_end()
// MAIN: llvm.call @_mlir_ciface_remat_rt_print_f32(

// SM80: gpu.binary @square_chain_kernel {{.*}}#nvvm.target<chip = "sm_80", features = "+ptx75">
// SM80-SAME: .target sm_80

// One chunk only: a chunk without a training step is an error under an
// explicit solver (remat-check-options).

func.func @opaque(%x: tensor<4xf32>) -> tensor<4xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  // expected-error @+1 {{cannot lower opaque kernel 'aten.neg'}}
  %y = remat.kernel "aten.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
