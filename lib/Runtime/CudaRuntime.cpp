//===- CudaRuntime.cpp - CUDA runtime that measures device bytes ----------===//
//
// See include/remat/Runtime/CudaRuntime.h for the contract. Written on the
// CUDA driver API only (no cudart, no MLIR): a program compiled by
// remat-run --target=gpu links this library and libcuda and nothing else.
// The entry points follow MLIR 22's lowering (gpu-to-llvm, SelectObjectAttr).
// The counters, the step window, the exit report and the printing of results
// are the runtime core's (RuntimeCore.h), shared with the CPU runtime; this
// file counts device allocations with them, synchronizes the device at the
// window's edges and copies device buffers to the host for printing.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/CudaRuntime.h"

#include "RuntimeCore.h"

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <type_traits>
#include <vector>

// The header declares the handles as pointers to the driver's structs; make
// sure they are the driver's types.
static_assert(std::is_same<CUstream, CUstream_st *>::value, "CUstream");
static_assert(std::is_same<CUevent, CUevent_st *>::value, "CUevent");
static_assert(std::is_same<CUmodule, CUmod_st *>::value, "CUmodule");
static_assert(std::is_same<CUfunction, CUfunc_st *>::value, "CUfunction");

using namespace remat::rt;

namespace {

//===----------------------------------------------------------------------===//
// Errors and the context.
//===----------------------------------------------------------------------===//

/// Set when the program is about to exit on an error: the exit report would
/// only mislead.
bool failed = false;

} // namespace

void remat::rt::fatal(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "remat-cuda: error: %s\n", message.c_str());
  std::fflush(stderr);
  failed = true;
  std::exit(1);
}

namespace {

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
    if (dev->pools) {
      // Nothing freed into the pool goes back to the driver between steps:
      // the memory the process holds is the step's peak, not a sawtooth of
      // allocations and releases.
      CUmemoryPool pool = nullptr;
      CHECK(cuCtxSetCurrent(dev->context));
      CHECK(cuDeviceGetDefaultMemPool(&pool, dev->device));
      cuuint64_t threshold = ~cuuint64_t(0);
      CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                                  &threshold));
    }
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
// The exit report (the core's counters, on device bytes).
//===----------------------------------------------------------------------===//

/// Whether the device was initialized (the device line is printed only
/// then, and without initializing it at exit).
bool deviceInitialized = false;

struct ExitReporter {
  ExitReporter() { (void)counters(); }
  ~ExitReporter() {
    if (failed)
      return;
    if (deviceInitialized) {
      Device &d = device();
      std::fflush(stdout);
      std::printf("remat-cuda: device=%s compute_capability=%d.%d "
                  "memory_pools=%d\n",
                  d.name.c_str(), d.major, d.minor, d.pools ? 1 : 0);
    }
    if (int64_t bytes = remat_rt_constant_bytes())
      std::printf("remat-cuda: constant_bytes=%lld\n",
                  static_cast<long long>(bytes));
    counters().printReport(/*withStepTime=*/true);
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
// Printing: the core walks and prints results; device buffers are copied to
// the host first.
//===----------------------------------------------------------------------===//

/// Whether `ptr` is device memory (else host memory the CPU can read).
bool isDevicePointer(const void *ptr) {
  unsigned int type = 0;
  CUresult result = cuPointerGetAttribute(
      &type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
      reinterpret_cast<CUdeviceptr>(ptr));
  return result == CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE;
}

/// Constant tensors copied to the device, by host address: copied once, at
/// their first use, kept for the program and counted apart from the step
/// (constant_bytes in the exit report), like the arguments.
std::mutex constantsMutex;
std::unordered_map<const void *, CUdeviceptr> deviceConstants;
int64_t constantBytes = 0;

} // namespace

CUstream rematProgramStream() {
  static CUstream stream = [] {
    markInitialized();
    CUstream s = nullptr;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    return s;
  }();
  ensureContext();
  return stream;
}

//===----------------------------------------------------------------------===//
// Per-op timers (remat-run --profile-costs): REMAT_CUDA_OP_TIMING.
//===----------------------------------------------------------------------===//

namespace {

/// `stream` (the default): a timing event is recorded on the program's
/// stream at each edge of a timed op and nothing waits, so the step runs as
/// it does untimed - kernels queued ahead, the host's launches overlapping
/// the device's work - and an op's time is what it adds to that pipelined
/// step: its device time, or the device's wait for the host to queue it when
/// launching is the slower side. The events are read when the window closes.
/// `sync`: the device is synchronized at each edge and the op timed on the
/// host clock - each op alone, its launch latency included (what a library
/// call costs called by itself).
enum class OpTiming { Stream, Sync };

OpTiming opTiming() {
  static const OpTiming timing = [] {
    const char *env = std::getenv("REMAT_CUDA_OP_TIMING");
    if (!env || !*env || std::strcmp(env, "stream") == 0)
      return OpTiming::Stream;
    if (std::strcmp(env, "sync") == 0)
      return OpTiming::Sync;
    fatal(std::string("REMAT_CUDA_OP_TIMING must be 'stream' or 'sync', "
                      "not '") +
          env + "'");
  }();
  return timing;
}

/// The stream timing's events: a pool reused from window to window (created
/// in the first, which the profile does not count), and the ops timed in the
/// open window as pairs of pool indices.
struct StreamOpTimers {
  std::mutex mutex;
  std::vector<CUevent> pool;
  size_t used = 0;
  struct Timed {
    int64_t id;
    size_t begin, end;
  };
  std::vector<Timed> timed;
  int64_t openId = -1;
  size_t openBegin = 0;

  /// Records the next event of the pool on the program's stream.
  size_t record(CUstream stream) {
    if (used == pool.size()) {
      CUevent event = nullptr;
      CHECK(cuEventCreate(&event, CU_EVENT_DEFAULT));
      pool.push_back(event);
    }
    CHECK(cuEventRecord(pool[used], stream));
    return used++;
  }

  /// After the device synchronized: every op's time to the counters.
  void resolve() {
    std::lock_guard<std::mutex> lock(mutex);
    for (const Timed &t : timed) {
      float ms = 0;
      CHECK(cuEventElapsedTime(&ms, pool[t.begin], pool[t.end]));
      counters().addOpTime(t.id, static_cast<int64_t>(
                                     static_cast<double>(ms) * 1e6 + 0.5));
    }
    timed.clear();
    used = 0;
    openId = -1;
  }
};

StreamOpTimers &streamOpTimers() {
  static StreamOpTimers *timers = new StreamOpTimers();
  return *timers;
}

} // namespace

bool remat::rt::opTimerEdge(int64_t id, bool begin) {
  if (opTiming() == OpTiming::Sync) {
    synchronizeDevice();
    return false;
  }
  CUstream stream = rematProgramStream();
  StreamOpTimers &timers = streamOpTimers();
  std::lock_guard<std::mutex> lock(timers.mutex);
  size_t event = timers.record(stream);
  if (begin) {
    timers.openId = id;
    timers.openBegin = event;
  } else if (timers.openId == id) {
    timers.timed.push_back({id, timers.openBegin, event});
    timers.openId = -1;
  }
  return true;
}

void remat::rt::beforeStepEdge() {
  // Work queued before the window must not be timed with the step, and the
  // step's work must be done when it closes; then the ops' events can be
  // read.
  synchronizeDevice();
  streamOpTimers().resolve();
}

ResidentMemory remat::rt::residentMemory() {
  // The device memory in use by every process (the driver's view): this
  // program's arena, buffers, pools and library handles.
  ResidentMemory m;
  size_t freeBytes = 0, totalBytes = 0;
  if (deviceInitialized && cuMemGetInfo(&freeBytes, &totalBytes) == CUDA_SUCCESS)
    m.current = static_cast<int64_t>(totalBytes - freeBytes);
  return m;
}

const void *remat::rt::hostElements(const void *first, size_t bytes,
                                    std::vector<unsigned char> &buffer) {
  synchronizeDevice();
  if (!isDevicePointer(first))
    return first;
  buffer.resize(bytes);
  CHECK(cuMemcpyDtoH(buffer.data(), reinterpret_cast<CUdeviceptr>(first),
                     bytes));
  return buffer.data();
}

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
  // The launch's shape in the error: the driver's INVALID_VALUE says
  // nothing of which limit (grid y/z <= 65535, 1024 threads a block) failed.
  CUresult result = cuLaunchKernel(
      function, static_cast<unsigned>(gridX), static_cast<unsigned>(gridY),
      static_cast<unsigned>(gridZ), static_cast<unsigned>(blockX),
      static_cast<unsigned>(blockY), static_cast<unsigned>(blockZ),
      static_cast<unsigned>(smem), stream, params, extra);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr,
                 "remat-cuda: kernel launch of grid (%ld, %ld, %ld), block "
                 "(%ld, %ld, %ld), %d bytes of shared memory:\n",
                 static_cast<long>(gridX), static_cast<long>(gridY),
                 static_cast<long>(gridZ), static_cast<long>(blockX),
                 static_cast<long>(blockY), static_cast<long>(blockZ), smem);
    CHECK(result);
  }
}

//===----------------------------------------------------------------------===//
// Streams and events.
//===----------------------------------------------------------------------===//

// One stream for the whole program: the lowering creates a stream for every
// region between host synchronizations (gpu-async-region), hundreds per
// step; they would all be ordered one after the other anyway (the plan's
// order is the memory plan). One stream saves their creation and lets the
// library calls (CudaLibrary.cpp) queue behind the kernels without a sync.
CUstream mgpuStreamCreate(void) { return rematProgramStream(); }

void mgpuStreamDestroy(CUstream /*stream*/) {}

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
  if (!counters().recordAlloc(p, static_cast<size_t>(sizeBytes)))
    fatal("the driver returned a device pointer that is already live");
  return p;
}

void mgpuMemFree(void *ptr, CUstream stream) {
  if (!ptr)
    return;
  ensureContext();
  if (!counters().recordFree(ptr))
    fatal("free of device pointer " + pointerText(ptr) +
          " that mgpuMemAlloc did not return (double free, or a free of a "
          "view)");
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
  const DescriptorHead *hdr = static_cast<const DescriptorHead *>(descriptor);
  const int64_t *sizes = descriptorSizes(descriptor);
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
  const DescriptorHead *hdr = static_cast<const DescriptorHead *>(descriptor);
  const int64_t *sizes = descriptorSizes(descriptor);
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return; // nothing was registered
  mgpuMemHostUnregister(hdr->aligned + hdr->offset * elementSizeBytes);
}

void mgpuSetDefaultDevice(int32_t ordinal) { defaultDevice = ordinal; }

//===----------------------------------------------------------------------===//
// Extensions of the CPU runtime's interface (whose functions are the core's,
// counting device bytes here).
//===----------------------------------------------------------------------===//

void _mlir_ciface_remat_rt_device_constant(RematI8MemRef *result,
                                           int64_t hostAddress,
                                           int64_t bytes) {
  markInitialized();
  const void *host = reinterpret_cast<const void *>(hostAddress);
  CUdeviceptr ptr = 0;
  {
    std::lock_guard<std::mutex> lock(constantsMutex);
    auto it = deviceConstants.find(host);
    if (it != deviceConstants.end()) {
      ptr = it->second;
    } else {
      CHECK(cuMemAlloc(&ptr, bytes ? static_cast<size_t>(bytes) : 1));
      if (bytes)
        CHECK(cuMemcpyHtoD(ptr, host, static_cast<size_t>(bytes)));
      deviceConstants[host] = ptr;
      constantBytes += bytes;
    }
  }
  char *p = reinterpret_cast<char *>(ptr);
  result->allocated = p;
  result->aligned = p;
  result->offset = 0;
  result->size = bytes;
  result->stride = 1;
}

void _mlir_ciface_remat_rt_arena(RematI8MemRef *result, int64_t key,
                                 int64_t bytes) {
  // One device arena per step function, allocated at its first call (after
  // the queued work) and reused by every later call; grown when a call asks
  // for more.
  static std::mutex mutex;
  static std::unordered_map<int64_t, std::pair<CUdeviceptr, int64_t>> arenas;
  markInitialized();
  if (bytes < 0)
    fatal("remat_rt_arena: negative size " + std::to_string(bytes));
  std::pair<CUdeviceptr, int64_t> arena;
  {
    std::lock_guard<std::mutex> lock(mutex);
    std::pair<CUdeviceptr, int64_t> &held = arenas[key];
    if (!held.first || bytes > held.second) {
      CHECK(cuCtxSynchronize());
      if (held.first)
        CHECK(cuMemFree(held.first));
      CHECK(cuMemAlloc(&held.first, bytes ? static_cast<size_t>(bytes) : 1));
      held.second = bytes;
    }
    arena = held;
  }
  counters().useArena(key, arena.second);
  char *p = reinterpret_cast<char *>(arena.first);
  result->allocated = p;
  result->aligned = p;
  result->offset = 0;
  result->size = bytes;
  result->stride = 1;
}

int64_t remat_rt_constant_bytes(void) {
  std::lock_guard<std::mutex> lock(constantsMutex);
  return constantBytes;
}

void remat_rt_set_prediction(int64_t predictedPeakBytes, int64_t fixedBytes) {
  counters().setPrediction(predictedPeakBytes, fixedBytes);
}

int64_t remat_rt_step_time_ns(void) {
  return counters().figures().stepTimeNs;
}

} // extern "C"
