//===- CpuRuntime.cpp - CPU runtime that measures live and peak bytes -----===//
//
// See include/remat/Runtime/CpuRuntime.h for the contract. Plain C++: the
// library must load into mlir-runner next to the JIT-compiled program without
// pulling in a second copy of MLIR or LLVM.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/CpuRuntime.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace {

/// All counters. Allocated once and never destroyed, so that allocations made
/// by other static destructors at exit (and the exit report itself) never
/// touch a destroyed map.
struct State {
  std::mutex mutex;
  std::unordered_map<void *, size_t> live;
  int64_t liveBytes = 0;
  int64_t totalPeak = 0;
  int64_t allocations = 0;
  // Measurement window: live bytes when it began, the peak inside it, and
  // the largest step peak of all closed windows (a program may run several
  // steps; the report keeps the worst).
  bool everBegan = false;
  bool inStep = false;
  int64_t stepBase = 0;
  int64_t stepMax = 0;
  int64_t bestStepPeak = 0;
  // REMAT_RT_TRACE set: every allocation and free, with the live bytes (of
  // the step window while one is open), on stderr.
  bool trace = std::getenv("REMAT_RT_TRACE") != nullptr;
};

State &state() {
  static State *s = new State();
  return *s;
}

/// Record `size` bytes at `ptr`; called with the mutex held.
void recordAlloc(State &s, void *ptr, size_t size) {
  if (!s.live.emplace(ptr, size).second) {
    std::fprintf(stderr,
                 "remat-runtime: error: allocator returned pointer %p that is "
                 "already live\n",
                 ptr);
    std::fflush(stderr);
    std::abort();
  }
  s.liveBytes += static_cast<int64_t>(size);
  ++s.allocations;
  if (s.trace)
    std::fprintf(stderr, "remat-runtime: trace alloc %zu live=%" PRId64 "\n",
                 size, s.liveBytes - (s.inStep ? s.stepBase : 0));
  s.totalPeak = std::max(s.totalPeak, s.liveBytes);
  if (s.inStep)
    s.stepMax = std::max(s.stepMax, s.liveBytes);
}

int64_t stepPeakLocked(const State &s) {
  if (!s.everBegan)
    return s.totalPeak;
  int64_t peak = s.bestStepPeak;
  if (s.inStep) // begun, never ended: the window runs to now
    peak = std::max(peak, s.stepMax - s.stepBase);
  return peak;
}

/// Prints the exit report exactly once.
void printReport() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::fflush(stdout);
  std::printf("remat-runtime: step_peak_bytes=%" PRId64
              " total_peak_bytes=%" PRId64 " live_bytes_at_exit=%" PRId64
              " allocations=%" PRId64 "\n",
              stepPeakLocked(s), s.totalPeak, s.liveBytes, s.allocations);
  std::fflush(stdout);
}

/// A static object whose destructor prints the report at exit. mlir-runner
/// loads the library permanently (never dlclose'd), so this runs when the
/// process exits normally, after the JIT-compiled `main` returned.
struct ExitReporter {
  ExitReporter() { (void)state(); }
  ~ExitReporter() { printReport(); }
} exitReporter;

//===----------------------------------------------------------------------===//
// Printing.
//===----------------------------------------------------------------------===//

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

void fnvBytes(uint64_t &h, const void *p, size_t n) {
  const unsigned char *b = static_cast<const unsigned char *>(p);
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= kFnvPrime;
  }
}

template <typename T> struct Traits;
template <> struct Traits<float> {
  using Sum = double;
  static void printSum(double v) { std::printf("%.9g", v); }
};
template <> struct Traits<double> {
  using Sum = double;
  static void printSum(double v) { std::printf("%.9g", v); }
};
template <> struct Traits<int32_t> {
  using Sum = int64_t;
  static void printSum(int64_t v) { std::printf("%" PRId64, v); }
};
template <> struct Traits<int64_t> {
  using Sum = int64_t;
  static void printSum(int64_t v) { std::printf("%" PRId64, v); }
};

/// Sums with wrap-around for integers (no UB on overflow).
template <typename S, typename T> S addTo(S acc, T v) {
  if constexpr (std::is_integral<S>::value)
    return static_cast<S>(static_cast<uint64_t>(acc) +
                          static_cast<uint64_t>(static_cast<S>(v)));
  else
    return acc + static_cast<S>(v);
}

template <typename T>
void printLine(const std::vector<int64_t> &sizes, uint64_t hash,
               typename Traits<T>::Sum sum) {
  std::printf("result: shape=[");
  for (size_t i = 0; i < sizes.size(); ++i)
    std::printf(i ? ",%" PRId64 : "%" PRId64, sizes[i]);
  std::printf("] fnv1a=0x%016" PRIx64 " sum=", hash);
  Traits<T>::printSum(sum);
  std::printf("\n");
  std::fflush(stdout);
}

/// Walks a strided memref of any rank in row-major logical order.
template <typename T> void printMemRef(RematUnrankedMemRef *m) {
  std::fflush(stdout);
  if (!m || !m->descriptor || m->rank < 0) {
    std::fprintf(stderr, "remat-runtime: error: invalid memref descriptor\n");
    std::fflush(stderr);
    std::abort();
  }
  // { T *allocated; T *aligned; int64_t offset; int64_t sizes[rank];
  //   int64_t strides[rank]; }
  struct Header {
    T *allocated;
    T *aligned;
    int64_t offset;
  };
  const Header *hdr = static_cast<const Header *>(m->descriptor);
  const int64_t *sizesPtr = reinterpret_cast<const int64_t *>(hdr + 1);
  const int64_t rank = m->rank;
  std::vector<int64_t> sizes(sizesPtr, sizesPtr + rank);
  std::vector<int64_t> strides(sizesPtr + rank, sizesPtr + 2 * rank);

  uint64_t hash = kFnvOffset;
  typename Traits<T>::Sum sum = 0;
  bool empty = false;
  for (int64_t s : sizes)
    empty |= s <= 0;
  if (!empty) {
    std::vector<int64_t> idx(rank, 0);
    while (true) {
      int64_t linear = hdr->offset;
      for (int64_t d = 0; d < rank; ++d)
        linear += idx[d] * strides[d];
      T v;
      std::memcpy(&v, hdr->aligned + linear, sizeof(T));
      fnvBytes(hash, &v, sizeof(T));
      sum = addTo<typename Traits<T>::Sum>(sum, v);
      // Odometer increment, innermost dimension fastest.
      int64_t d = rank - 1;
      for (; d >= 0; --d) {
        if (++idx[d] < sizes[d])
          break;
        idx[d] = 0;
      }
      if (d < 0)
        break;
    }
  }
  printLine<T>(sizes, hash, sum);
}

template <typename T> void printScalar(T v) {
  std::fflush(stdout);
  uint64_t hash = kFnvOffset;
  fnvBytes(hash, &v, sizeof(T));
  printLine<T>({}, hash, addTo<typename Traits<T>::Sum>(0, v));
}

} // namespace

extern "C" {

void *_mlir_memref_to_llvm_alloc(size_t size) {
  // malloc(0) may return null or a pointer shared with nothing: ask for one
  // byte so every allocation has a distinct key, but count what was asked.
  void *ptr = std::malloc(size ? size : 1);
  if (!ptr) {
    std::fprintf(stderr, "remat-runtime: error: out of memory allocating %zu "
                         "bytes\n",
                 size);
    std::fflush(stderr);
    std::abort();
  }
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  recordAlloc(s, ptr, size);
  return ptr;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  // posix_memalign wants a power of two that is a multiple of sizeof(void *).
  size_t align = sizeof(void *);
  while (align < alignment)
    align <<= 1;
  void *ptr = nullptr;
  if (posix_memalign(&ptr, align, size ? size : 1) != 0 || !ptr) {
    std::fprintf(stderr,
                 "remat-runtime: error: out of memory allocating %zu bytes "
                 "aligned to %zu\n",
                 size, alignment);
    std::fflush(stderr);
    std::abort();
  }
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  recordAlloc(s, ptr, size);
  return ptr;
}

void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  State &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.live.find(ptr);
    if (it == s.live.end()) {
      std::fflush(stdout);
      std::fprintf(stderr,
                   "remat-runtime: error: free of pointer %p that was not "
                   "allocated by _mlir_memref_to_llvm_alloc (double free, or "
                   "a free of a view or a global)\n",
                   ptr);
      std::fflush(stderr);
      std::abort();
    }
    s.liveBytes -= static_cast<int64_t>(it->second);
    if (s.trace)
      std::fprintf(stderr, "remat-runtime: trace free %zu live=%" PRId64 "\n",
                   it->second, s.liveBytes - (s.inStep ? s.stepBase : 0));
    s.live.erase(it);
  }
  std::free(ptr);
}

void remat_rt_step_begin(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.inStep) // a nested begin restarts nothing: keep the outer window
    return;
  s.everBegan = true;
  s.inStep = true;
  s.stepBase = s.liveBytes;
  s.stepMax = s.liveBytes;
}

void remat_rt_step_end(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.inStep) {
    std::fprintf(stderr,
                 "remat-runtime: warning: remat_rt_step_end without begin\n");
    std::fflush(stderr);
    return;
  }
  s.inStep = false;
  s.bestStepPeak = std::max(s.bestStepPeak, s.stepMax - s.stepBase);
}

int64_t remat_rt_live_bytes(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.liveBytes;
}

int64_t remat_rt_total_peak_bytes(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.totalPeak;
}

int64_t remat_rt_step_peak_bytes(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return stepPeakLocked(s);
}

int64_t remat_rt_allocations(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.allocations;
}

void remat_rt_reset(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  // The pointers are forgotten, not freed: the caller may still hold them.
  s.live.clear();
  s.liveBytes = s.totalPeak = s.allocations = 0;
  s.everBegan = s.inStep = false;
  s.stepBase = s.stepMax = s.bestStepPeak = 0;
}

void _mlir_ciface_remat_rt_print_f32(RematUnrankedMemRef *m) {
  printMemRef<float>(m);
}
void _mlir_ciface_remat_rt_print_f64(RematUnrankedMemRef *m) {
  printMemRef<double>(m);
}
void _mlir_ciface_remat_rt_print_i32(RematUnrankedMemRef *m) {
  printMemRef<int32_t>(m);
}
void _mlir_ciface_remat_rt_print_i64(RematUnrankedMemRef *m) {
  printMemRef<int64_t>(m);
}

void remat_rt_print_scalar_f32(float v) { printScalar<float>(v); }
void remat_rt_print_scalar_f64(double v) { printScalar<double>(v); }
void remat_rt_print_scalar_i32(int32_t v) { printScalar<int32_t>(v); }
void remat_rt_print_scalar_i64(int64_t v) { printScalar<int64_t>(v); }

} // extern "C"
