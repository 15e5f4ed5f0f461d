//===- CpuRuntime.h - CPU runtime that measures live and peak bytes -*- C++ -*-===//
//
// The functions that a program lowered by `remat-lower-to-cpu` calls. The
// library is plain C++ (no MLIR, no LLVM) and is loaded into `mlir-runner`
// with `-shared-libs=`.
//
// * Allocation: `finalize-memref-to-llvm{use-generic-functions=1}` lowers
//   `memref.alloc` / `memref.dealloc` to calls of `_mlir_memref_to_llvm_alloc`,
//   `_mlir_memref_to_llvm_aligned_alloc` and `_mlir_memref_to_llvm_free`
//   (names fixed by MLIR's FunctionCallUtils). The runtime keeps the exact
//   size requested for every live pointer and the running peak.
// * Measurement window: `remat_rt_step_begin` / `remat_rt_step_end` bracket
//   the training step. The step's measured peak is the largest number of live
//   bytes inside the window minus the live bytes at its beginning (the inputs,
//   which the simulator counts as fixed memory).
// * Printing: `remat_rt_print_<ty>` (called through `llvm.emit_c_interface`
//   on an unranked memref) prints one line per result:
//     result: shape=[64,64] fnv1a=0x0123456789abcdef sum=1.25
//   The hash is FNV-1a (64 bit) over the raw bytes of the elements in
//   row-major logical order, so two programs that compute the same bits print
//   the same line whatever their buffer layouts. The sum is accumulated in
//   double and printed with %.9g for floats, and accumulated in int64_t
//   (wrapping) and printed exactly for integers.
// * At exit, one line on stdout:
//     remat-runtime: step_peak_bytes=N total_peak_bytes=M live_bytes_at_exit=K
//     allocations=A
//   and one line per step of tagged windows (remat_rt_step_begin_tagged):
//     remat-runtime-step: tag=K step_peak_bytes=N windows=W
// * With REMAT_RT_TRACE set in the environment, every allocation and free on
//   stderr with the live bytes after it (relative to the window's start while
//   a window is open): `remat-runtime: trace alloc 4096 live=12288`. The
//   simulator's timeline (`--remat-report="... timeline=true"`) is the same
//   sequence of figures, so the first difference points at the op whose
//   memory the prediction gets wrong.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_CPURUNTIME_H
#define REMAT_RUNTIME_CPURUNTIME_H

#include <cstddef>
#include <cstdint>

#if defined(_WIN32)
#define REMAT_RT_EXPORT __declspec(dllexport)
#else
#define REMAT_RT_EXPORT __attribute__((visibility("default")))
#endif

/// The unranked memref descriptor that the C interface passes by pointer:
/// the rank and a pointer to a ranked descriptor
///   { T *allocated; T *aligned; int64_t offset; int64_t sizes[rank];
///     int64_t strides[rank]; }.
struct RematUnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

extern "C" {

//===----------------------------------------------------------------------===//
// Allocation functions (finalize-memref-to-llvm{use-generic-functions=1}).
//===----------------------------------------------------------------------===//

/// `memref.alloc` without `use-aligned-alloc`. Counts `size` bytes.
REMAT_RT_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size);
/// `memref.alloc` with `use-aligned-alloc=1`. Counts `size` bytes.
REMAT_RT_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                         size_t size);
/// `memref.dealloc`. A null pointer is a no-op; an unknown pointer aborts.
REMAT_RT_EXPORT void _mlir_memref_to_llvm_free(void *ptr);

/// The descriptor of a `memref<?xi8>` (the C interface of functions that
/// return one).
struct RematI8MemRef {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

/// The arena of step `key` (one per step function, remat-assign-arena:
/// every buffer of the step is a view of it at a planned offset), of at
/// least `bytes` bytes: allocated at the step's first call, reused by every
/// later call, grown when a call asks for more; counted as the step's memory
/// in every measured window that uses it (`arena_bytes=` in the exit
/// report).
REMAT_RT_EXPORT void _mlir_ciface_remat_rt_arena(RematI8MemRef *result,
                                                 int64_t key, int64_t bytes);

//===----------------------------------------------------------------------===//
// Measurement window.
//===----------------------------------------------------------------------===//

REMAT_RT_EXPORT void remat_rt_step_begin(void);
/// A window that also counts toward step `tag` (0 and up) alone: the exit
/// report adds `remat-runtime-step: tag=K step_peak_bytes=N windows=W` per
/// tag, so that a program running several steps gets each one's peak
/// (remat-instrument-step-calls with several entries).
REMAT_RT_EXPORT void remat_rt_step_begin_tagged(int64_t tag);
REMAT_RT_EXPORT void remat_rt_step_end(void);

/// Per-op timers (remat-instrument-op-timers, remat-run --profile-costs):
/// the wall time between them is op `id`'s in the open window (the device
/// synchronized at both ends on the CUDA runtime). At exit, one line per op
/// before the runtime's report:
///   remat-profile: op=<id> ns=<median over the windows after the first>
REMAT_RT_EXPORT void remat_rt_op_begin(int64_t id);
REMAT_RT_EXPORT void remat_rt_op_end(int64_t id);

/// Counters, for tests and embedders.
REMAT_RT_EXPORT int64_t remat_rt_live_bytes(void);
REMAT_RT_EXPORT int64_t remat_rt_total_peak_bytes(void);
/// The largest peak of any closed or open window; total peak if none began.
REMAT_RT_EXPORT int64_t remat_rt_step_peak_bytes(void);
REMAT_RT_EXPORT int64_t remat_rt_allocations(void);
/// Forgets every counter and live pointer (for tests that reuse a process).
REMAT_RT_EXPORT void remat_rt_reset(void);

//===----------------------------------------------------------------------===//
// Printing results (C interface of `llvm.emit_c_interface` functions taking
// `memref<*xT>`), and scalars (plain calls).
//===----------------------------------------------------------------------===//

REMAT_RT_EXPORT void _mlir_ciface_remat_rt_print_f32(RematUnrankedMemRef *m);
REMAT_RT_EXPORT void _mlir_ciface_remat_rt_print_f64(RematUnrankedMemRef *m);
REMAT_RT_EXPORT void _mlir_ciface_remat_rt_print_i32(RematUnrankedMemRef *m);
REMAT_RT_EXPORT void _mlir_ciface_remat_rt_print_i64(RematUnrankedMemRef *m);

/// Print a scalar result as a rank-0 tensor would be printed
/// (`result: shape=[] fnv1a=... sum=...`).
REMAT_RT_EXPORT void remat_rt_print_scalar_f32(float v);
REMAT_RT_EXPORT void remat_rt_print_scalar_f64(double v);
REMAT_RT_EXPORT void remat_rt_print_scalar_i32(int32_t v);
REMAT_RT_EXPORT void remat_rt_print_scalar_i64(int64_t v);

} // extern "C"

#endif // REMAT_RUNTIME_CPURUNTIME_H
