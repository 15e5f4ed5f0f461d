// RUN: remat-opt %S/../Transforms/apply.mlir --remat-lower-to-cpu="solver=chen-sqrtn" | FileCheck %s --check-prefix=ARENA
// RUN: remat-opt %S/../Transforms/apply.mlir --remat-lower-to-cpu="solver=chen-sqrtn dealloc=early" | FileCheck %s
// RUN: remat-opt %S/../Transforms/apply.mlir --remat-lower-to-cpu="solver=chen-sqrtn dealloc=upstream" | FileCheck %s --check-prefix=UPSTREAM
// RUN: remat-opt %s --split-input-file --verify-diagnostics --remat-lower-to-cpu="solver=checkpoint-all" -o /dev/null

// By default (dealloc=arena) every buffer of the step is a view of one arena
// at its planned offset: the step asks the runtime for its arena (260 bytes,
// the live peak: this plan places without a gap) and allocates nothing else.
// ARENA-LABEL: llvm.func @square_chain
// ARENA-SAME: remat.arena_bytes = 260
// ARENA-SAME: remat.live_peak_bytes = 260
// ARENA: llvm.call @remat_rt_arena(%{{.*}}, %{{.*}}) {remat.arena_bytes = 260 : i64}
// ARENA-NOT: llvm.call @_mlir_memref_to_llvm_alloc
// ARENA-NOT: llvm.call @_mlir_memref_to_llvm_free
// ARENA: llvm.return

// With dealloc=early the step is in the LLVM dialect; every buffer goes through the runtime's
// counting allocation functions. Under chen-sqrtn the chain allocates 12
// buffers (10 nodes + 2 recomputations) and frees all but the 2 outputs
// (the frees are counted in the execution tests).
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
// CHECK-LABEL: llvm.func @square_chain
// CHECK-COUNT-12: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK-NOT: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.return

// UPSTREAM-LABEL: llvm.func @square_chain
// UPSTREAM: llvm.call @_mlir_memref_to_llvm_free

// One chunk only: a chunk without a training step is an error under an
// explicit solver (remat-check-options).

func.func @opaque(%x: tensor<4xf32>) -> tensor<4xf32> {
  %seed = arith.constant {remat.seed} 1.0 : f32
  // expected-error @+1 {{cannot lower opaque kernel 'aten.neg'}}
  %y = remat.kernel "aten.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
