//===- CudaRuntime.cpp - CUDA runtime that measures device bytes ----------===//
//
// See include/remat/Runtime/CudaRuntime.h for the contract. Written on the
// CUDA driver API only (no cudart, no MLIR): a program compiled by
// remat-run --target=gpu links this library and libcuda and nothing else.
// The entry points follow MLIR 22's lowering (gpu-to-llvm, SelectObjectAttr);
// the counters and the printing follow CpuRuntime.cpp.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/CudaRuntime.h"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

// The header declares the handles as pointers to the driver's structs; make
// sure they are the driver's types.
static_assert(std::is_same<CUstream, CUstream_st *>::value, "CUstream");
static_assert(std::is_same<CUevent, CUevent_st *>::value, "CUevent");
static_assert(std::is_same<CUmodule, CUmod_st *>::value, "CUmodule");
static_assert(std::is_same<CUfunction, CUfunc_st *>::value, "CUfunction");

namespace {

//===----------------------------------------------------------------------===//
// Errors and the context.
//===----------------------------------------------------------------------===//

/// Set when the program is about to exit on an error: the exit report would
/// only mislead.
bool failed = false;

[[noreturn]] void fatal(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "remat-cuda: error: %s\n", message.c_str());
  std::fflush(stderr);
  failed = true;
  std::exit(1);
}

std::string describe(CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = "unknown error";
  std::string s = name;
  if (cuGetErrorString(result, &text) == CUDA_SUCCESS && text)
    s += std::string(" (") + text + ")";
  return s + " [" + std::to_string(static_cast<int>(result)) + "]";
}

/// Every driver call goes through this: an error ends the program with the
/// call's text and the driver's message.
void check(CUresult result, const char *call) {
  if (result != CUDA_SUCCESS)
    fatal(std::string(call) + " failed: " + describe(result));
}
#define CHECK(call) check((call), #call)

int defaultDevice = 0;

struct Device {
  CUdevice device = 0;
  CUcontext context = nullptr;
  bool pools = false;
  std::string name;
  int major = 0, minor = 0;
};

/// The primary context of the chosen device, created on first use (the
/// kernel modules are loaded by global constructors, before main).
Device &device() {
  static Device *d = [] {
    // Load every kernel when its module is loaded, not at its first launch:
    // the step's time should not include loading (the user's choice wins).
    setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
    auto *dev = new Device();
    CHECK(cuInit(0));
    int ordinal = defaultDevice;
    if (const char *env = std::getenv("REMAT_CUDA_DEVICE"); env && *env)
      ordinal = std::atoi(env);
    CHECK(cuDeviceGet(&dev->device, ordinal));
    CHECK(cuDevicePrimaryCtxRetain(&dev->context, dev->device));
    char name[256] = {0};
    CHECK(cuDeviceGetName(name, sizeof(name) - 1, dev->device));
    dev->name = name;
    for (char &c : dev->name)
      if (c == ' ')
        c = '_';
    CHECK(cuDeviceGetAttribute(
        &dev->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev->device));
    CHECK(cuDeviceGetAttribute(
        &dev->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev->device));
    int pools = 0;
    CHECK(cuDeviceGetAttribute(
        &pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev->device));
    const char *sync = std::getenv("REMAT_CUDA_SYNC_ALLOC");
    dev->pools = pools && !(sync && *sync && std::strcmp(sync, "0") != 0);
    return dev;
  }();
  return *d;
}

/// Makes the primary context current on the calling thread (once).
void ensureContext() {
  thread_local bool current = false;
  if (current)
    return;
  CHECK(cuCtxSetCurrent(device().context));
  current = true;
}

//===----------------------------------------------------------------------===//
// Counters (the CPU runtime's, on device bytes).
//===----------------------------------------------------------------------===//

struct State {
  std::mutex mutex;
  std::unordered_map<void *, size_t> live;
  int64_t liveBytes = 0;
  int64_t totalPeak = 0;
  int64_t allocations = 0;
  bool everBegan = false;
  bool inStep = false;
  int64_t stepBase = 0;
  int64_t stepMax = 0;
  int64_t bestStepPeak = 0;
  std::chrono::steady_clock::time_point stepStart;
  int64_t lastStepNs = -1;
  bool hasPrediction = false;
  int64_t predicted = -1;
  int64_t fixed = -1;
};

State &state() {
  static State *s = new State();
  return *s;
}

int64_t stepPeakLocked(const State &s) {
  if (!s.everBegan)
    return s.totalPeak;
  int64_t peak = s.bestStepPeak;
  if (s.inStep)
    peak = std::max(peak, s.stepMax - s.stepBase);
  return peak;
}

std::string orNone(int64_t v) { return v < 0 ? "none" : std::to_string(v); }

void printReport() {
  if (failed)
    return;
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::fflush(stdout);
  int64_t stepPeak = stepPeakLocked(s);
  std::printf("remat-runtime: step_peak_bytes=%" PRId64
              " total_peak_bytes=%" PRId64 " live_bytes_at_exit=%" PRId64
              " allocations=%" PRId64 " step_time_ns=%" PRId64 "\n",
              stepPeak, s.totalPeak, s.liveBytes, s.allocations,
              s.lastStepNs);
  if (s.hasPrediction) {
    std::printf("remat-run: fixed_bytes=%s total_peak_bytes=%" PRId64 "\n",
                orNone(s.fixed).c_str(), s.totalPeak);
    std::printf("remat-run: measured_peak_bytes=%" PRId64
                " predicted_peak_bytes=%s\n",
                stepPeak, orNone(s.predicted).c_str());
  }
  std::fflush(stdout);
}

/// Whether the device was initialized (the device line is printed only
/// then, and without initializing it at exit).
bool deviceInitialized = false;

struct ExitReporter {
  ExitReporter() { (void)state(); }
  ~ExitReporter() {
    if (!failed && deviceInitialized) {
      Device &d = device();
      std::fflush(stdout);
      std::printf("remat-cuda: device=%s compute_capability=%d.%d "
                  "memory_pools=%d\n",
                  d.name.c_str(), d.major, d.minor, d.pools ? 1 : 0);
    }
    printReport();
  }
} exitReporter;

void markInitialized() {
  ensureContext();
  deviceInitialized = true;
}

/// Synchronizes the whole context (step window edges, printing).
void synchronizeDevice() {
  markInitialized();
  CHECK(cuCtxSynchronize());
}

//===----------------------------------------------------------------------===//
// Printing (CpuRuntime.cpp's format, from device buffers).
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

/// Whether `ptr` is device memory (else host memory the CPU can read).
bool isDevicePointer(const void *ptr) {
  unsigned int type = 0;
  CUresult result = cuPointerGetAttribute(
      &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
      reinterpret_cast<CUdeviceptr>(ptr));
  return result == CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE;
}

template <typename T> void printMemRef(RematUnrankedMemRef *m) {
  std::fflush(stdout);
  if (!m || !m->descriptor || m->rank < 0)
    fatal("invalid memref descriptor passed to remat_rt_print");
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
    // The elements lie in [offset + lowest, offset + highest]: bring that
    // range to the host in one copy.
    int64_t lowest = 0, highest = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t reach = (sizes[d] - 1) * strides[d];
      (reach < 0 ? lowest : highest) += reach;
    }
    const T *base = hdr->aligned + hdr->offset + lowest;
    size_t count = static_cast<size_t>(highest - lowest + 1);
    std::vector<T> host;
    const T *elements = base;
    synchronizeDevice();
    if (isDevicePointer(base)) {
      host.resize(count);
      CHECK(cuMemcpyDtoH(host.data(), reinterpret_cast<CUdeviceptr>(base),
                         count * sizeof(T)));
      elements = host.data();
    }
    std::vector<int64_t> idx(rank, 0);
    while (true) {
      int64_t linear = -lowest;
      for (int64_t d = 0; d < rank; ++d)
        linear += idx[d] * strides[d];
      T v;
      std::memcpy(&v, elements + linear, sizeof(T));
      fnvBytes(hash, &v, sizeof(T));
      sum = addTo<typename Traits<T>::Sum>(sum, v);
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

//===----------------------------------------------------------------------===//
// Modules and launches.
//===----------------------------------------------------------------------===//

CUmodule mgpuModuleLoad(void *data, size_t /*size*/) {
  markInitialized();
  CUmodule module = nullptr;
  CHECK(cuModuleLoadData(&module, data));
  return module;
}

CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  markInitialized();
  CUmodule module = nullptr;
  // The JIT's error log says which PTX line it rejects.
  char errorLog[8192] = {0};
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {
      reinterpret_cast<void *>(static_cast<intptr_t>(
          std::min(std::max(optLevel, 0), 4))),
      errorLog, reinterpret_cast<void *>(sizeof(errorLog) - 1)};
  CUresult result =
      cuModuleLoadDataEx(&module, data, 3, options, values);
  if (result != CUDA_SUCCESS)
    fatal("cuModuleLoadDataEx (PTX JIT) failed: " + describe(result) +
          (errorLog[0] ? std::string("\n") + errorLog : std::string()));
  return module;
}

void mgpuModuleUnload(CUmodule module) {
  // Called from a global destructor: the driver may already be shutting
  // down, which is not worth failing the program for.
  if (module && !failed)
    (void)cuModuleUnload(module);
}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  ensureContext();
  CUfunction function = nullptr;
  CUresult result = cuModuleGetFunction(&function, module, name);
  if (result != CUDA_SUCCESS)
    fatal(std::string("cuModuleGetFunction(\"") + name +
          "\") failed: " + describe(result));
  return function;
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, CUstream stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  ensureContext();
  // An empty iteration space (a zero-sized tensor) has nothing to run; the
  // driver would reject the launch.
  if (gridX <= 0 || gridY <= 0 || gridZ <= 0 || blockX <= 0 || blockY <= 0 ||
      blockZ <= 0)
    return;
  if (smem > 48 * 1024)
    CHECK(cuFuncSetAttribute(function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             smem));
  CHECK(cuLaunchKernel(function, static_cast<unsigned>(gridX),
                       static_cast<unsigned>(gridY),
                       static_cast<unsigned>(gridZ),
                       static_cast<unsigned>(blockX),
                       static_cast<unsigned>(blockY),
                       static_cast<unsigned>(blockZ),
                       static_cast<unsigned>(smem), stream, params, extra));
}

//===----------------------------------------------------------------------===//
// Streams and events.
//===----------------------------------------------------------------------===//

CUstream mgpuStreamCreate(void) {
  markInitialized();
  CUstream stream = nullptr;
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

void mgpuStreamDestroy(CUstream stream) {
  ensureContext();
  CHECK(cuStreamDestroy(stream));
}

void mgpuStreamSynchronize(CUstream stream) {
  ensureContext();
  CHECK(cuStreamSynchronize(stream));
}

void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  ensureContext();
  CHECK(cuStreamWaitEvent(stream, event, /*flags=*/0));
}

CUevent mgpuEventCreate(void) {
  ensureContext();
  CUevent event = nullptr;
  CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

void mgpuEventDestroy(CUevent event) {
  ensureContext();
  CHECK(cuEventDestroy(event));
}

void mgpuEventSynchronize(CUevent event) {
  ensureContext();
  CHECK(cuEventSynchronize(event));
}

void mgpuEventRecord(CUevent event, CUstream stream) {
  ensureContext();
  CHECK(cuEventRecord(event, stream));
}

//===----------------------------------------------------------------------===//
// Memory.
//===----------------------------------------------------------------------===//

void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream, bool isHostShared) {
  markInitialized();
  // Zero bytes: a real (one-byte) allocation so that every pointer is
  // distinct, counted as what was asked.
  size_t bytes = sizeBytes ? static_cast<size_t>(sizeBytes) : 1;
  CUdeviceptr ptr = 0;
  if (isHostShared)
    CHECK(cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL));
  else if (stream && device().pools)
    CHECK(cuMemAllocAsync(&ptr, bytes, stream));
  else
    CHECK(cuMemAlloc(&ptr, bytes));
  void *p = reinterpret_cast<void *>(ptr);
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.live.emplace(p, static_cast<size_t>(sizeBytes)).second)
    fatal("the driver returned a device pointer that is already live");
  s.liveBytes += static_cast<int64_t>(sizeBytes);
  ++s.allocations;
  s.totalPeak = std::max(s.totalPeak, s.liveBytes);
  if (s.inStep)
    s.stepMax = std::max(s.stepMax, s.liveBytes);
  return p;
}

void mgpuMemFree(void *ptr, CUstream stream) {
  if (!ptr)
    return;
  ensureContext();
  {
    State &s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.live.find(ptr);
    if (it == s.live.end()) {
      char text[64];
      std::snprintf(text, sizeof(text), "%p", ptr);
      fatal(std::string("free of device pointer ") + text +
            " that mgpuMemAlloc did not return (double free, or a free of a "
            "view)");
    }
    s.liveBytes -= static_cast<int64_t>(it->second);
    s.live.erase(it);
  }
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(ptr);
  if (stream && device().pools) {
    // Stream-ordered: freed after the kernels queued before it.
    CHECK(cuMemFreeAsync(p, stream));
    return;
  }
  // cuMemFree is not ordered with the stream: let the kernels that use the
  // buffer finish first.
  if (stream)
    CHECK(cuStreamSynchronize(stream));
  else
    CHECK(cuCtxSynchronize());
  CHECK(cuMemFree(p));
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, CUstream stream) {
  ensureContext();
  CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                      reinterpret_cast<CUdeviceptr>(src), sizeBytes, stream));
}

void mgpuMemset32(void *dst, unsigned int value, size_t count,
                  CUstream stream) {
  ensureContext();
  CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                         stream));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  CUstream stream) {
  ensureContext();
  CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                         stream));
}

void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  markInitialized();
  CHECK(cuMemHostRegister(ptr, static_cast<size_t>(sizeBytes), /*flags=*/0));
}

void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes) {
  // { char *allocated; char *aligned; int64_t offset; int64_t sizes[rank];
  //   int64_t strides[rank]; }
  struct Header {
    char *allocated;
    char *aligned;
    int64_t offset;
  };
  const Header *hdr = static_cast<const Header *>(descriptor);
  const int64_t *sizes = reinterpret_cast<const int64_t *>(hdr + 1);
  const int64_t *strides = sizes + rank;
  int64_t elements = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (strides[d] != elements && sizes[d] != 1)
      fatal("mgpuMemHostRegisterMemRef: only dense row-major memrefs can be "
            "registered");
    elements *= sizes[d];
  }
  if (elements == 0)
    return;
  mgpuMemHostRegister(hdr->aligned + hdr->offset * elementSizeBytes,
                      static_cast<uint64_t>(elements * elementSizeBytes));
}

void mgpuMemHostUnregister(void *ptr) {
  ensureContext();
  CHECK(cuMemHostUnregister(ptr));
}

void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSizeBytes) {
  struct Header {
    char *allocated;
    char *aligned;
    int64_t offset;
  };
  const Header *hdr = static_cast<const Header *>(descriptor);
  const int64_t *sizes = reinterpret_cast<const int64_t *>(hdr + 1);
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return; // nothing was registered
  mgpuMemHostUnregister(hdr->aligned + hdr->offset * elementSizeBytes);
}

void mgpuSetDefaultDevice(int32_t ordinal) { defaultDevice = ordinal; }

//===----------------------------------------------------------------------===//
// The CPU runtime's interface, on device bytes.
//===----------------------------------------------------------------------===//

void remat_rt_step_begin(void) {
  // Work queued before the window must not be timed with the step.
  synchronizeDevice();
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.inStep)
    return;
  s.everBegan = true;
  s.inStep = true;
  s.stepBase = s.liveBytes;
  s.stepMax = s.liveBytes;
  s.stepStart = std::chrono::steady_clock::now();
}

void remat_rt_step_end(void) {
  synchronizeDevice();
  auto now = std::chrono::steady_clock::now();
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
  s.lastStepNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     now - s.stepStart)
                     .count();
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
  s.live.clear();
  s.liveBytes = s.totalPeak = s.allocations = 0;
  s.everBegan = s.inStep = false;
  s.stepBase = s.stepMax = s.bestStepPeak = 0;
  s.lastStepNs = -1;
}

void remat_rt_set_prediction(int64_t predictedPeakBytes, int64_t fixedBytes) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.hasPrediction = true;
  s.predicted = predictedPeakBytes;
  s.fixed = fixedBytes;
}

int64_t remat_rt_step_time_ns(void) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.lastStepNs;
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
