/* A mock of the CUDA driver (libcuda.so.1) for testing GPU executables on a
 * machine without a GPU (test/GPU/mock-driver.test, docs/gpu.md).
 *
 * It implements exactly the driver functions that the project's CUDA runtime
 * calls. Device memory is host memory (calloc), kernels are not executed
 * (results are therefore meaningless), but every call is checked and
 * counted: the allocation sequence, and so the runtime's measured peak, is
 * the real program's. At exit it prints
 *   mock-cuda: modules=<loaded>/<unloaded> launches=N threads=T
 *     streams=<created>/<destroyed> events=<created>/<destroyed>
 *     allocs=A frees=F async_allocs=AA live=<bytes never freed>
 *     syncs=S (host synchronizations: cuStreamSynchronize, cuCtxSynchronize)
 *     event_reads=R (cuEventElapsedTime: the stream timing of op profiles)
 * and any misuse (unknown pointer freed, stream used after destruction, a
 * kernel module that is not PTX for the expected target, a launch with more
 * than 1024 threads per block) prints `mock-cuda: error: ...` and exits 3.
 *
 * Environment: MOCK_CUDA_NO_POOLS=1 reports no memory-pool support (the
 * runtime then uses cuMemAlloc/cuMemFree); MOCK_CUDA_TARGET=sm_XX is the
 * `.target` that PTX modules must have (default sm_90).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

static long modulesLoaded, modulesUnloaded, launches, streamsCreated,
    streamsDestroyed, eventsCreated, eventsDestroyed, allocs, frees,
    asyncAllocs, syncs, elapsedReads;
static unsigned long long threads;
static long long liveBytes;

/* Live allocations and streams, in small tables (the programs are small). */
#define MAX_LIVE 65536
static struct { void *ptr; size_t size; } live[MAX_LIVE];
static int numLive;
static void *streams[MAX_LIVE];
static int numStreams;

static void fail(const char *what) {
  fflush(stdout);
  fprintf(stderr, "mock-cuda: error: %s\n", what);
  fflush(stderr);
  _Exit(3);
}

static void addLive(void *p, size_t n) {
  if (numLive == MAX_LIVE)
    fail("too many live allocations");
  live[numLive].ptr = p;
  live[numLive].size = n;
  ++numLive;
  liveBytes += (long long)n;
}

static void removeLive(void *p) {
  for (int i = 0; i < numLive; ++i)
    if (live[i].ptr == p) {
      liveBytes -= (long long)live[i].size;
      live[i] = live[--numLive];
      free(p);
      return;
    }
  fail("free of a pointer that is not a live allocation");
}

static void checkStream(void *s) {
  if (!s)
    return; /* the null stream */
  for (int i = 0; i < numStreams; ++i)
    if (streams[i] == s)
      return;
  fail("use of a stream that does not exist (destroyed?)");
}

__attribute__((destructor)) static void report(void) {
  fflush(stdout);
  printf("mock-cuda: modules=%ld/%ld launches=%ld threads=%llu streams=%ld/%ld "
         "events=%ld/%ld allocs=%ld frees=%ld async_allocs=%ld live=%lld "
         "syncs=%ld event_reads=%ld\n",
         modulesLoaded, modulesUnloaded, launches, threads, streamsCreated,
         streamsDestroyed, eventsCreated, eventsDestroyed, allocs, frees,
         asyncAllocs, liveBytes, syncs, elapsedReads);
  fflush(stdout);
}

CUresult cuInit(unsigned flags) { (void)flags; return 0; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return 0; }
CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice d) {
  static int context;
  (void)d;
  *ctx = &context;
  return 0;
}
CUresult cuCtxSetCurrent(void *ctx) { return ctx ? 0 : 201; }
CUresult cuCtxSynchronize(void) { ++syncs; return 0; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  (void)d;
  snprintf(name, (size_t)len, "Mock GPU");
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice d) {
  (void)d;
  switch (attribute) {
  case 75: *value = 9; break;  /* compute capability major */
  case 76: *value = 0; break;  /* minor */
  case 115: *value = getenv("MOCK_CUDA_NO_POOLS") ? 0 : 1; break;
  default: *value = 0; break;
  }
  return 0;
}
CUresult cuGetErrorName(CUresult e, const char **s) {
  (void)e;
  *s = "MOCK_ERROR";
  return 0;
}
CUresult cuGetErrorString(CUresult e, const char **s) {
  (void)e;
  *s = "mock error";
  return 0;
}

static void checkPtx(const void *image) {
  const char *target = getenv("MOCK_CUDA_TARGET");
  char expected[64];
  snprintf(expected, sizeof(expected), ".target %s", target ? target : "sm_90");
  if (!image || !strstr((const char *)image, ".visible .entry") ||
      !strstr((const char *)image, expected))
    fail("a PTX module without entry points or for another target");
}

CUresult cuModuleLoadData(void **module, const void *image) {
  if (!image)
    fail("null module image");
  ++modulesLoaded;
  *module = (void *)0x1000;
  return 0;
}
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n,
                            int *options, void **values) {
  (void)n; (void)options; (void)values;
  checkPtx(image);
  ++modulesLoaded;
  *module = (void *)0x1000;
  return 0;
}
CUresult cuModuleUnload(void *module) {
  (void)module;
  ++modulesUnloaded;
  return 0;
}
CUresult cuModuleGetFunction(void **f, void *module, const char *name) {
  if (!module || !name || !*name)
    fail("cuModuleGetFunction without module or name");
  *f = (void *)0x2000;
  return 0;
}
CUresult cuFuncSetAttribute(void *f, int a, int v) {
  (void)f; (void)a; (void)v;
  return 0;
}
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  (void)f; (void)smem; (void)extra;
  checkStream(stream);
  if (!gx || !gy || !gz || !bx || !by || !bz)
    fail("launch with an empty grid or block");
  if ((unsigned long long)bx * by * bz > 1024)
    fail("more than 1024 threads per block");
  /* The shape limits of a real device (an H200 rejected block (1, 1, 128)). */
  if (bx > 1024 || by > 1024 || bz > 64)
    fail("a block dimension above (1024, 1024, 64)");
  if (gy > 65535 || gz > 65535)
    fail("a grid dimension y or z above 65535");
  if (!params)
    fail("launch without parameters");
  ++launches;
  threads += (unsigned long long)gx * gy * gz * bx * by * bz;
  return 0;
}

CUresult cuStreamCreate(void **s, unsigned flags) {
  (void)flags;
  if (numStreams == MAX_LIVE)
    fail("too many streams");
  *s = malloc(1);
  streams[numStreams++] = *s;
  ++streamsCreated;
  return 0;
}
CUresult cuStreamDestroy_v2(void *s) {
  for (int i = 0; i < numStreams; ++i)
    if (streams[i] == s) {
      streams[i] = streams[--numStreams];
      free(s);
      ++streamsDestroyed;
      return 0;
    }
  fail("destroy of a stream that does not exist");
  return 1;
}
CUresult cuStreamSynchronize(void *s) {
  checkStream(s);
  ++syncs;
  return 0;
}
CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
  (void)e; (void)flags;
  checkStream(s);
  return 0;
}
CUresult cuEventCreate(void **e, unsigned flags) {
  (void)flags;
  *e = malloc(1);
  ++eventsCreated;
  return 0;
}
CUresult cuEventDestroy_v2(void *e) {
  free(e);
  ++eventsDestroyed;
  return 0;
}
CUresult cuEventRecord(void *e, void *s) { (void)e; checkStream(s); return 0; }
CUresult cuEventSynchronize(void *e) { (void)e; return 0; }
/* Stream timing (REMAT_CUDA_OP_TIMING=stream): every timed interval is one
 * microsecond, so a profile's times count its intervals. */
CUresult cuEventElapsedTime_v2(float *ms, void *start, void *end) {
  if (!start || !end)
    fail("elapsed time between events that do not exist");
  ++elapsedReads;
  *ms = 0.001f;
  return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  void *q = calloc(1, n);
  addLive(q, n);
  ++allocs;
  *p = (CUdeviceptr)(uintptr_t)q;
  return 0;
}
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *s) {
  if (!s)
    fail("stream-ordered allocation on the null stream");
  checkStream(s);
  ++asyncAllocs;
  return cuMemAlloc_v2(p, n);
}
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags) {
  (void)flags;
  return cuMemAlloc_v2(p, n);
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  removeLive((void *)(uintptr_t)p);
  ++frees;
  return 0;
}
CUresult cuMemFreeAsync(CUdeviceptr p, void *s) {
  checkStream(s);
  return cuMemFree_v2(p);
}
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, void *st) {
  checkStream(st);
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  memmove((void *)(uintptr_t)d, s, n);
  return 0;
}
/* 80 GiB of device memory, less what is live. */
CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  *total = (size_t)80 << 30;
  *free = *total - (size_t)liveBytes;
  return 0;
}
static int pool;
static unsigned long long releaseThreshold;
CUresult cuDeviceGetDefaultMemPool(void **p, CUdevice d) {
  (void)d;
  *p = &pool;
  return 0;
}
/* CU_MEMPOOL_ATTR_RELEASE_THRESHOLD is 4. */
CUresult cuMemPoolSetAttribute(void *p, int attribute, void *value) {
  if (p != &pool)
    fail("a memory pool that cuDeviceGetDefaultMemPool did not return");
  if (attribute != 4)
    fail("a memory pool attribute other than the release threshold");
  releaseThreshold = *(unsigned long long *)value;
  return 0;
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  memmove(d, (const void *)(uintptr_t)s, n);
  return 0;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, void *s) {
  checkStream(s);
  for (size_t i = 0; i < n; ++i)
    memcpy((char *)(uintptr_t)d + 4 * i, &v, 4);
  return 0;
}
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, void *s) {
  checkStream(s);
  for (size_t i = 0; i < n; ++i)
    memcpy((char *)(uintptr_t)d + 2 * i, &v, 2);
  return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags) {
  (void)p; (void)n; (void)flags;
  return 0;
}
CUresult cuMemHostUnregister(void *p) { (void)p; return 0; }
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr p) {
  (void)p;
  if (attribute != 2)
    return 1;
  *(unsigned *)data = 2; /* CU_MEMORYTYPE_DEVICE */
  return 0;
}
