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
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

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

bool remat::rt::opTimerEdge(int64_t, bool) { return false; }

ResidentMemory remat::rt::residentMemory() {
  ResidentMemory m;
  // /proc/self/statm: size resident shared ... (pages).
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    long size = 0, resident = 0;
    if (std::fscanf(f, "%ld %ld", &size, &resident) == 2)
      m.current = static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
    std::fclose(f);
  }
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) == 0)
    m.peak = static_cast<int64_t>(usage.ru_maxrss) * 1024; // kilobytes
  return m;
}

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

void _mlir_ciface_remat_rt_arena(RematI8MemRef *result, int64_t key,
                                 int64_t bytes) {
  // One arena per step function, allocated at its first call and reused by
  // every later call: grown (never shrunk) when a call asks for more.
  static std::mutex mutex;
  static std::unordered_map<int64_t, std::pair<char *, int64_t>> arenas;
  if (bytes < 0)
    fatal("remat_rt_arena: negative size " + std::to_string(bytes));
  std::pair<char *, int64_t> arena;
  {
    std::lock_guard<std::mutex> lock(mutex);
    std::pair<char *, int64_t> &held = arenas[key];
    if (!held.first || bytes > held.second) {
      // Fresh anonymous pages (page-aligned, so every offset keeps the plan's
      // alignment), never memory malloc recycles: the pages the step touches
      // are the arena's own, so the resident-set growth around the step
      // shows the arena and not the heap the JIT compile left behind
      // (bench/bench_memory_plan.py), and the arena does not fragment the
      // heap of the program around it.
      if (held.first)
        munmap(held.first, static_cast<size_t>(held.second ? held.second : 1));
      void *ptr = mmap(nullptr, bytes ? static_cast<size_t>(bytes) : 1,
                       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
      if (ptr == MAP_FAILED)
        fatal("out of memory allocating an arena of " + std::to_string(bytes) +
              " bytes");
      held = {static_cast<char *>(ptr), bytes};
    }
    arena = held;
  }
  counters().useArena(key, arena.second);
  result->allocated = arena.first;
  result->aligned = arena.first;
  result->offset = 0;
  result->size = bytes;
  result->stride = 1;
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
