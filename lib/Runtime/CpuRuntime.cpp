//===- CpuRuntime.cpp - CPU runtime that measures live and peak bytes -----===//
//
// See include/remat/Runtime/CpuRuntime.h for the contract. Plain C++: the
// library must load into mlir-runner next to the JIT-compiled program without
// pulling in a second copy of MLIR or LLVM. The counters, the step window,
// the exit report and the printing of results are the runtime core's
// (RuntimeCore.h), shared with the CUDA runtime; this file is the host
// allocator they count.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/CpuRuntime.h"

#include "RuntimeCore.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace remat::rt;

//===----------------------------------------------------------------------===//
// What the core asks of a runtime (RuntimeCore.h).
//===----------------------------------------------------------------------===//

void remat::rt::fatal(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "remat-runtime: error: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

void remat::rt::beforeStepEdge() {}

const void *remat::rt::hostElements(const void *first, size_t /*bytes*/,
                                    std::vector<unsigned char> & /*buffer*/) {
  return first;
}

namespace {

/// A static object whose destructor prints the report at exit. mlir-runner
/// loads the library permanently (never dlclose'd), so this runs when the
/// process exits normally, after the JIT-compiled `main` returned.
struct ExitReporter {
  ExitReporter() { (void)counters(); }
  ~ExitReporter() { counters().printReport(/*withStepTime=*/false); }
} exitReporter;

/// Counts a new allocation of `size` bytes at `ptr`.
void *counted(void *ptr, size_t size) {
  if (!counters().recordAlloc(ptr, size))
    fatal("allocator returned pointer " + pointerText(ptr) +
          " that is already live");
  return ptr;
}

} // namespace

//===----------------------------------------------------------------------===//
// Allocation functions. The window, the readers and the printing functions
// of CpuRuntime.h are the core's (RuntimeCore.cpp).
//===----------------------------------------------------------------------===//

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t size) {
  // malloc(0) may return null or a pointer shared with nothing: ask for one
  // byte so every allocation has a distinct key, but count what was asked.
  void *ptr = std::malloc(size ? size : 1);
  if (!ptr)
    fatal("out of memory allocating " + std::to_string(size) + " bytes");
  return counted(ptr, size);
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  // posix_memalign wants a power of two that is a multiple of sizeof(void *).
  size_t align = sizeof(void *);
  while (align < alignment)
    align <<= 1;
  void *ptr = nullptr;
  if (posix_memalign(&ptr, align, size ? size : 1) != 0 || !ptr)
    fatal("out of memory allocating " + std::to_string(size) +
          " bytes aligned to " + std::to_string(alignment));
  return counted(ptr, size);
}

void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  if (!counters().recordFree(ptr))
    fatal("free of pointer " + pointerText(ptr) +
          " that was not allocated by _mlir_memref_to_llvm_alloc (double "
          "free, or a free of a view or a global)");
  std::free(ptr);
}

} // extern "C"
