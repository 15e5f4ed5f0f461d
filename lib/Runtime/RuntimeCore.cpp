//===- RuntimeCore.cpp - What the CPU and CUDA runtimes share -------------===//
//
// See RuntimeCore.h. The counters, the step window, the exit report and the
// `remat_rt_*` functions of include/remat/Runtime/CpuRuntime.h, once for
// both runtimes.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCore.h"

#include "remat/Runtime/CpuRuntime.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>
#include <type_traits>

using namespace remat::rt;

//===----------------------------------------------------------------------===//
// Counters.
//===----------------------------------------------------------------------===//

Counters::Counters() : trace(std::getenv("REMAT_RT_TRACE") != nullptr) {}

bool Counters::recordAlloc(void *ptr, size_t size) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!liveSizes.emplace(ptr, size).second)
    return false;
  liveTotal += static_cast<int64_t>(size);
  ++allocationCount;
  if (trace)
    std::fprintf(stderr, "remat-runtime: trace alloc %zu live=%" PRId64 "\n",
                 size, liveTotal - (inStep ? stepBase : 0));
  totalPeak = std::max(totalPeak, liveTotal);
  if (inStep)
    stepMax = std::max(stepMax, liveTotal - windowUnusedArenas);
  return true;
}

bool Counters::recordFree(void *ptr) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = liveSizes.find(ptr);
  if (it == liveSizes.end())
    return false;
  liveTotal -= static_cast<int64_t>(it->second);
  if (trace)
    std::fprintf(stderr, "remat-runtime: trace free %zu live=%" PRId64 "\n",
                 it->second, liveTotal - (inStep ? stepBase : 0));
  liveSizes.erase(it);
  return true;
}

void Counters::stepBegin(ResidentMemory resident, int64_t tag) {
  std::lock_guard<std::mutex> lock(mutex);
  if (inStep) // a nested begin restarts nothing: keep the outer window
    return;
  everBegan = true;
  inStep = true;
  currentTag = tag;
  // The arenas the window uses are the step's memory whenever they were
  // allocated: out of the base, back in at their first use (useArena).
  stepBase = liveTotal - arenaBytes;
  stepMax = stepBase;
  windowArenas.clear();
  windowUnusedArenas = arenaBytes;
  windowResident = resident;
  stepStart = std::chrono::steady_clock::now();
}

void Counters::useArena(int64_t key, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  int64_t &held = arenas[key];
  int64_t grown = std::max<int64_t>(bytes - held, 0);
  held += grown;
  liveTotal += grown;
  arenaBytes += grown;
  totalPeak = std::max(totalPeak, liveTotal);
  if (inStep) {
    // The step's memory from now on, however long it has been held.
    if (!windowArenas[key]) {
      windowArenas[key] = true;
      windowUnusedArenas -= held - grown;
    }
    stepMax = std::max(stepMax, liveTotal - windowUnusedArenas);
  }
  if (trace)
    std::fprintf(stderr, "remat-runtime: trace arena %" PRId64 " live=%" PRId64
                 "\n", held, liveTotal - (inStep ? stepBase : 0));
}

void Counters::stepEnd(ResidentMemory resident) {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex);
  if (!inStep) {
    std::fprintf(stderr,
                 "remat-runtime: warning: remat_rt_step_end without begin\n");
    std::fflush(stderr);
    return;
  }
  inStep = false;
  // Growth of the memory the OS sees: now, or the high-water mark when it
  // rose inside the window (buffers freed back before the end), over the
  // window's start.
  if (resident.current >= 0 && windowResident.current >= 0) {
    int64_t top = resident.current;
    if (resident.peak > windowResident.peak && resident.peak > top)
      top = resident.peak;
    residentGrowth = std::max(residentGrowth, top - windowResident.current);
  }
  bestStepPeak = std::max(bestStepPeak, stepMax - stepBase);
  if (currentTag >= 0) {
    TagFigures &figures = tags[currentTag];
    figures.stepPeak = std::max(figures.stepPeak, stepMax - stepBase);
    ++figures.windows;
  }
  lastStepNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - stepStart)
          .count();
  windowNs.push_back(lastStepNs);
  if (!windowOpNs.empty() || !closedOpNs.empty())
    closedOpNs.push_back(std::move(windowOpNs));
  windowOpNs.clear();
}

void Counters::opBegin(int64_t id, bool hostClock) {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex);
  timedOp = id;
  timedOnHost = hostClock;
  opStart = now;
}

void Counters::addOpTime(int64_t id, int64_t ns) {
  std::lock_guard<std::mutex> lock(mutex);
  if (inStep)
    windowOpNs[id] += ns;
}

int64_t Counters::timedOpId() {
  std::lock_guard<std::mutex> lock(mutex);
  return timedOp;
}

void Counters::opEnd(int64_t id) {
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mutex);
  if (timedOp != id || !inStep || !timedOnHost) {
    timedOp = -1;
    return;
  }
  windowOpNs[id] +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - opStart)
          .count();
  timedOp = -1;
}

Counters::Figures Counters::figuresLocked() const {
  int64_t stepPeak = totalPeak;
  if (everBegan) {
    stepPeak = bestStepPeak;
    if (inStep) // begun, never ended: the window runs to now
      stepPeak = std::max(stepPeak, stepMax - stepBase);
  }
  return {liveTotal,  totalPeak,  stepPeak,      allocationCount,
          lastStepNs, arenaBytes, residentGrowth};
}

Counters::Figures Counters::figures() {
  std::lock_guard<std::mutex> lock(mutex);
  return figuresLocked();
}

void Counters::reset() {
  std::lock_guard<std::mutex> lock(mutex);
  liveSizes.clear();
  liveTotal = totalPeak = allocationCount = 0;
  everBegan = inStep = false;
  stepBase = stepMax = bestStepPeak = 0;
  arenaBytes = 0;
  arenas.clear();
  windowArenas.clear();
  windowUnusedArenas = 0;
  residentGrowth = -1;
  currentTag = -1;
  tags.clear();
  lastStepNs = -1;
  windowNs.clear();
  windowOpNs.clear();
  closedOpNs.clear();
}

void Counters::setPrediction(int64_t predictedPeakBytes, int64_t fixedBytes) {
  std::lock_guard<std::mutex> lock(mutex);
  hasPrediction = true;
  predicted = predictedPeakBytes;
  fixed = fixedBytes;
}

static std::string orNone(int64_t v) {
  return v < 0 ? "none" : std::to_string(v);
}

void Counters::printReport(bool withStepTime) {
  std::lock_guard<std::mutex> lock(mutex);
  std::fflush(stdout);
  Figures f = figuresLocked();
  // Per-op times: the median over the windows after the first (a warm-up)
  // when there are several, ops missing from a window counting 0 there.
  if (!closedOpNs.empty()) {
    size_t first = closedOpNs.size() > 1 ? 1 : 0;
    std::vector<int64_t> ids;
    for (size_t w = first; w < closedOpNs.size(); ++w)
      for (auto &[id, ns] : closedOpNs[w])
        ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (int64_t id : ids) {
      std::vector<int64_t> times;
      for (size_t w = first; w < closedOpNs.size(); ++w) {
        auto it = closedOpNs[w].find(id);
        times.push_back(it == closedOpNs[w].end() ? 0 : it->second);
      }
      std::sort(times.begin(), times.end());
      size_t n = times.size();
      int64_t median = n % 2 ? times[n / 2]
                             : (times[n / 2 - 1] + times[n / 2]) / 2;
      std::printf("remat-profile: op=%" PRId64 " ns=%" PRId64 "\n", id,
                  median);
    }
  }
  std::printf("remat-runtime: step_peak_bytes=%" PRId64
              " total_peak_bytes=%" PRId64 " live_bytes_at_exit=%" PRId64
              " allocations=%" PRId64,
              f.stepPeakBytes, f.totalPeakBytes, f.liveBytes, f.allocations);
  if (withStepTime)
    std::printf(" step_time_ns=%" PRId64, f.stepTimeNs);
  std::printf(" arena_bytes=%" PRId64, f.arenaBytes);
  if (f.residentGrowth >= 0)
    std::printf(" resident_growth_bytes=%" PRId64, f.residentGrowth);
  for (size_t i = 0; i < windowNs.size(); ++i)
    std::printf(i ? ",%" PRId64 : " window_times_ns=%" PRId64, windowNs[i]);
  std::printf("\n");
  for (const auto &[tag, figures] : tags)
    std::printf("remat-runtime-step: tag=%" PRId64 " step_peak_bytes=%" PRId64
                " windows=%" PRId64 "\n",
                tag, figures.stepPeak, figures.windows);
  if (hasPrediction) {
    std::printf("remat-run: fixed_bytes=%s total_peak_bytes=%" PRId64 "\n",
                orNone(fixed).c_str(), f.totalPeakBytes);
    std::printf("remat-run: measured_peak_bytes=%" PRId64
                " predicted_peak_bytes=%s\n",
                f.stepPeakBytes, orNone(predicted).c_str());
  }
  std::fflush(stdout);
}

Counters &remat::rt::counters() {
  static Counters *c = new Counters();
  return *c;
}

void remat::rt::traceLibraryCall(const std::string &call) {
  static const bool enabled = [] {
    const char *env = std::getenv("REMAT_LIB_TRACE");
    return env && *env && std::strcmp(env, "0") != 0;
  }();
  if (!enabled)
    return;
  int64_t op = counters().timedOpId();
  static std::mutex mutex;
  static std::set<std::pair<int64_t, std::string>> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (!said.emplace(op, call).second)
    return;
  std::fprintf(stderr, "remat-library: op=%" PRId64 " %s\n", op,
               call.c_str());
  std::fflush(stderr);
}

std::string remat::rt::pointerText(const void *ptr) {
  char text[64];
  std::snprintf(text, sizeof(text), "%p", ptr);
  return text;
}

//===----------------------------------------------------------------------===//
// Printing results.
//===----------------------------------------------------------------------===//

namespace {

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

/// Walks a strided memref of any rank in row-major logical order, hashing
/// the bits of every element and summing them.
template <typename T> void printMemRef(RematUnrankedMemRef *m) {
  std::fflush(stdout);
  if (!m || !m->descriptor || m->rank < 0)
    fatal("invalid memref descriptor passed to remat_rt_print");
  const DescriptorHead *head =
      static_cast<const DescriptorHead *>(m->descriptor);
  const int64_t *sizesPtr = descriptorSizes(m->descriptor);
  const int64_t rank = m->rank;
  std::vector<int64_t> sizes(sizesPtr, sizesPtr + rank);
  std::vector<int64_t> strides(sizesPtr + rank, sizesPtr + 2 * rank);

  uint64_t hash = kFnvOffset;
  typename Traits<T>::Sum sum = 0;
  bool empty = false;
  for (int64_t s : sizes)
    empty |= s <= 0;
  if (!empty) {
    // The elements lie in [offset + lowest, offset + highest]: the runtime
    // makes that range readable by the host (the CUDA runtime copies device
    // buffers in one copy).
    int64_t lowest = 0, highest = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t reach = (sizes[d] - 1) * strides[d];
      (reach < 0 ? lowest : highest) += reach;
    }
    const int64_t elementBytes = static_cast<int64_t>(sizeof(T));
    const char *first = head->aligned + (head->offset + lowest) * elementBytes;
    size_t count = static_cast<size_t>(highest - lowest + 1);
    std::vector<unsigned char> buffer;
    const unsigned char *elements = static_cast<const unsigned char *>(
        hostElements(first, count * sizeof(T), buffer));
    std::vector<int64_t> idx(rank, 0);
    while (true) {
      int64_t linear = -lowest;
      for (int64_t d = 0; d < rank; ++d)
        linear += idx[d] * strides[d];
      T v;
      std::memcpy(&v, elements + linear * elementBytes, sizeof(T));
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

//===----------------------------------------------------------------------===//
// The C interface of CpuRuntime.h, for both runtimes.
//===----------------------------------------------------------------------===//

extern "C" {

void remat_rt_step_begin(void) {
  beforeStepEdge();
  counters().stepBegin(residentMemory());
}

void remat_rt_step_begin_tagged(int64_t tag) {
  beforeStepEdge();
  counters().stepBegin(residentMemory(), tag < 0 ? -1 : tag);
}

void remat_rt_step_end(void) {
  beforeStepEdge();
  counters().stepEnd(residentMemory());
}

void remat_rt_op_begin(int64_t id) {
  bool timedByRuntime = opTimerEdge(id, /*begin=*/true);
  counters().opBegin(id, /*hostClock=*/!timedByRuntime);
}

void remat_rt_op_end(int64_t id) {
  opTimerEdge(id, /*begin=*/false);
  counters().opEnd(id);
}

int64_t remat_rt_live_bytes(void) { return counters().figures().liveBytes; }
int64_t remat_rt_total_peak_bytes(void) {
  return counters().figures().totalPeakBytes;
}
int64_t remat_rt_step_peak_bytes(void) {
  return counters().figures().stepPeakBytes;
}
int64_t remat_rt_allocations(void) {
  return counters().figures().allocations;
}
void remat_rt_reset(void) { counters().reset(); }

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
