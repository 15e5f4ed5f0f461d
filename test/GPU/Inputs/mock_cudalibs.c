/* Mocks of cuBLAS (libcublas.so.13) and cuDNN (libcudnn.so.9) for testing
 * GPU executables on a machine without a GPU, next to mock_libcuda.c
 * (test/GPU/mock-driver.test, torch-models-gpu.test). Built twice from this
 * file, with -DMOCK_CUBLAS and -DMOCK_CUDNN.
 *
 * They implement exactly the functions that the project's CUDA runtime loads
 * (lib/Runtime/CudaLibrary.cpp) and check what a real library would reject:
 * a handle used before its creation, a gemm whose leading dimensions are
 * smaller than its matrices, a convolution on descriptors never set, a
 * workspace smaller than the algorithm's, a non-deterministic or TF32
 * algorithm. Nothing is computed (the mock driver runs no kernels either).
 * At exit:
 *   mock-cublas: handles=H gemms=G workspace_max=W
 *   mock-cudnn: handles=H forward=F backward_data=D backward_filter=B
 *     searches=S (measured algorithm searches, cudnnFind*AlgorithmEx)
 * and a misuse prints `mock-cudnn: error: ...` (or cublas) and exits 4.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void fail(const char *lib, const char *what) {
  fflush(stdout);
  fprintf(stderr, "mock-%s: error: %s\n", lib, what);
  fflush(stderr);
  _Exit(4);
}

#ifdef MOCK_CUBLAS

static long handles, gemms;
static size_t workspaceMax;
static int created;

__attribute__((destructor)) static void report(void) {
  if (!handles)
    return;
  fflush(stdout);
  printf("mock-cublas: handles=%ld gemms=%ld workspace_max=%zu\n", handles,
         gemms, workspaceMax);
  fflush(stdout);
}

static void checkHandle(void *h) {
  if (!created || h != (void *)&created)
    fail("cublas", "use of a handle that cublasCreate did not return");
}

int cublasCreate_v2(void **handle) {
  ++handles;
  created = 1;
  *handle = &created;
  return 0;
}

int cublasSetStream_v2(void *handle, void *stream) {
  checkHandle(handle);
  (void)stream;
  return 0;
}

int cublasSetWorkspace_v2(void *handle, void *workspace, size_t bytes) {
  checkHandle(handle);
  if (bytes && !workspace)
    fail("cublas", "a workspace of several bytes at a null pointer");
  if (bytes > workspaceMax)
    workspaceMax = bytes;
  return 0;
}

static void checkGemm(void *handle, int opA, int opB, int m, int n, int k,
                      int lda, int ldb, int ldc, int batch) {
  checkHandle(handle);
  int rowsA = opA == 0 ? m : k, rowsB = opB == 0 ? k : n;
  if (m < 1 || n < 1 || k < 1 || batch < 1)
    fail("cublas", "gemm with an empty dimension");
  if (lda < rowsA || ldb < rowsB || ldc < m)
    fail("cublas", "gemm with a leading dimension smaller than its matrix");
  ++gemms;
}

/* MOCK_CUBLAS_COMPUTE=1: the products are computed (column-major, as
 * cuBLAS defines them) on the pointers as host memory - the mock driver's
 * device memory is host memory - so that a test can check how the runtime
 * maps a contraction onto a gemm. */
#define GEMM_BODY                                                              \
  checkGemm(handle, opA, opB, m, n, k, lda, ldb, ldc, batch);                  \
  if (!getenv("MOCK_CUBLAS_COMPUTE"))                                          \
    return 0;                                                                  \
  for (int q = 0; q < batch; ++q)                                              \
    for (int j = 0; j < n; ++j)                                                \
      for (int i = 0; i < m; ++i) {                                            \
        double sum = 0;                                                        \
        for (int l = 0; l < k; ++l) {                                          \
          double x = opA == 0 ? a[q * sa + i + (long long)l * lda]             \
                              : a[q * sa + l + (long long)i * lda];            \
          double y = opB == 0 ? b[q * sb + l + (long long)j * ldb]             \
                              : b[q * sb + j + (long long)l * ldb];            \
          sum += x * y;                                                        \
        }                                                                      \
        long long at = q * sc + i + (long long)j * ldc;                        \
        c[at] = *alpha * sum + (*beta != 0 ? *beta * c[at] : 0);               \
      }                                                                        \
  return 0;

int cublasSgemmStridedBatched(void *handle, int opA, int opB, int m, int n,
                              int k, const float *alpha, const float *a,
                              int lda, long long sa, const float *b, int ldb,
                              long long sb, const float *beta, float *c,
                              int ldc, long long sc, int batch) {
  GEMM_BODY
}

int cublasDgemmStridedBatched(void *handle, int opA, int opB, int m, int n,
                              int k, const double *alpha, const double *a,
                              int lda, long long sa, const double *b, int ldb,
                              long long sb, const double *beta, double *c,
                              int ldc, long long sc, int batch) {
  GEMM_BODY
}

#endif /* MOCK_CUBLAS */

#ifdef MOCK_CUDNN

static long handles, forward, backwardData, backwardFilter, searches;
static int created;

__attribute__((destructor)) static void report(void) {
  if (!handles)
    return;
  fflush(stdout);
  printf("mock-cudnn: handles=%ld forward=%ld backward_data=%ld "
         "backward_filter=%ld searches=%ld\n",
         handles, forward, backwardData, backwardFilter, searches);
  fflush(stdout);
}

static void checkHandle(void *h) {
  if (!created || h != (void *)&created)
    fail("cudnn", "use of a handle that cudnnCreate did not return");
}

/* Descriptors: a magic word and whether they were set. */
typedef struct {
  int magic, set, nbDims;
} Desc;
enum { TENSOR = 0x7e50, FILTER = 0xf117, CONV = 0xc0c0 };

static Desc *newDesc(int magic) {
  Desc *d = calloc(1, sizeof(Desc));
  d->magic = magic;
  return d;
}

static void checkDesc(void *p, int magic) {
  Desc *d = p;
  if (!d || d->magic != magic)
    fail("cudnn", "a descriptor of the wrong kind");
  if (!d->set)
    fail("cudnn", "a descriptor that was never set");
}

int cudnnCreate(void **handle) {
  ++handles;
  created = 1;
  *handle = &created;
  return 0;
}

int cudnnSetStream(void *handle, void *stream) {
  checkHandle(handle);
  (void)stream;
  return 0;
}

const char *cudnnGetErrorString(int status) {
  (void)status;
  return "mock cuDNN error";
}

int cudnnCreateTensorDescriptor(void **d) {
  *d = newDesc(TENSOR);
  return 0;
}
int cudnnCreateFilterDescriptor(void **d) {
  *d = newDesc(FILTER);
  return 0;
}
int cudnnCreateConvolutionDescriptor(void **d) {
  *d = newDesc(CONV);
  return 0;
}

int cudnnSetTensorNdDescriptor(void *p, int type, int nbDims, const int *dims,
                               const int *strides) {
  (void)type;
  if (nbDims < 4 || nbDims > 5)
    fail("cudnn", "a tensor descriptor of fewer than 4 or more than 5 "
                  "dimensions");
  for (int i = 0; i < nbDims; ++i)
    if (dims[i] < 1 || strides[i] < 1)
      fail("cudnn", "a tensor dimension or stride below 1");
  Desc *d = p;
  d->set = 1;
  d->nbDims = nbDims;
  return 0;
}

int cudnnSetFilterNdDescriptor(void *p, int type, int format, int nbDims,
                               const int *dims) {
  (void)type;
  if (format != 0)
    fail("cudnn", "a filter descriptor not in NCHW");
  for (int i = 0; i < nbDims; ++i)
    if (dims[i] < 1)
      fail("cudnn", "a filter dimension below 1");
  Desc *d = p;
  d->set = 1;
  d->nbDims = nbDims;
  return 0;
}

int cudnnSetConvolutionNdDescriptor(void *p, int n, const int *pad,
                                    const int *stride, const int *dilation,
                                    int mode, int type) {
  (void)type;
  if (mode != 1)
    fail("cudnn", "a convolution that is not a cross-correlation");
  for (int i = 0; i < n; ++i)
    if (pad[i] < 0 || stride[i] < 1 || dilation[i] < 1)
      fail("cudnn", "a negative padding or a stride or dilation below 1");
  Desc *d = p;
  d->set = 1;
  d->nbDims = n;
  return 0;
}

int cudnnSetConvolutionGroupCount(void *p, int groups) {
  if (groups < 1)
    fail("cudnn", "a group count below 1");
  checkDesc(p, CONV);
  return 0;
}

/* cudnnMathType_t: 0 default, 1 tensor op, 2 allow conversion, 3 FMA. */
int cudnnSetConvolutionMathType(void *p, int math) {
  if (math == 1 || math == 2)
    fail("cudnn", "tensor-core math (TF32) was asked for");
  checkDesc(p, CONV);
  return 0;
}

/* All three perf structs have this layout. */
typedef struct {
  int algo, status;
  float time;
  size_t memory;
  int determinism, mathType;
  int reserved[3];
} Perf;

/* Two algorithms: the fastest is non-deterministic, the second needs 256
 * bytes of workspace; a planned workspace below that finds none. */
static int perfs(void *handle, void *a, void *b, void *conv, void *c,
                 int requested, int *returned, Perf *results) {
  checkHandle(handle);
  checkDesc(conv, CONV);
  (void)a, (void)b, (void)c;
  if (requested < 2)
    fail("cudnn", "fewer than 2 results requested");
  results[0] = (Perf){.algo = 5, .status = 0, .time = 1, .memory = 0,
                      .determinism = 0, .mathType = 3};
  results[1] = (Perf){.algo = 1, .status = 0, .time = 2, .memory = 256,
                      .determinism = 1, .mathType = 3};
  *returned = 2;
  return 0;
}

int cudnnGetConvolutionForwardAlgorithm_v7(void *h, void *x, void *w,
                                           void *conv, void *y, int n,
                                           int *returned, Perf *r) {
  checkDesc(x, TENSOR);
  checkDesc(w, FILTER);
  checkDesc(y, TENSOR);
  return perfs(h, x, w, conv, y, n, returned, r);
}

int cudnnGetConvolutionBackwardDataAlgorithm_v7(void *h, void *w, void *dy,
                                                void *conv, void *dx, int n,
                                                int *returned, Perf *r) {
  checkDesc(w, FILTER);
  checkDesc(dy, TENSOR);
  checkDesc(dx, TENSOR);
  return perfs(h, w, dy, conv, dx, n, returned, r);
}

int cudnnGetConvolutionBackwardFilterAlgorithm_v7(void *h, void *x, void *dy,
                                                  void *conv, void *dw, int n,
                                                  int *returned, Perf *r) {
  checkDesc(x, TENSOR);
  checkDesc(dy, TENSOR);
  checkDesc(dw, FILTER);
  return perfs(h, x, dy, conv, dw, n, returned, r);
}

/* The measured search (cudnnFind*AlgorithmEx): on the call's own buffers
 * and the planned workspace; reports the same two algorithms, fastest
 * first. */
static int search(void *h, void *conv, void *a, void *b, void *c, int n,
                  int *returned, Perf *r, void *ws, size_t bytes) {
  if (!a || !b || !c)
    fail("cudnn", "a search on a null buffer");
  if (bytes && !ws)
    fail("cudnn", "a search with a null workspace");
  ++searches;
  int status = perfs(h, a, b, conv, c, n, returned, r);
  /* Algorithms that need more workspace than given do not run. */
  for (int i = 0; i < *returned; ++i)
    if (r[i].memory > bytes)
      r[i].status = 2; /* CUDNN_STATUS_ALLOC_FAILED */
  return status;
}

int cudnnFindConvolutionForwardAlgorithmEx(void *h, void *x, const void *xp,
                                           void *w, const void *wp,
                                           void *conv, void *y, void *yp,
                                           int n, int *returned, Perf *r,
                                           void *ws, size_t bytes) {
  checkDesc(x, TENSOR);
  checkDesc(w, FILTER);
  checkDesc(y, TENSOR);
  return search(h, conv, (void *)xp, (void *)wp, yp, n, returned, r, ws,
                bytes);
}

int cudnnFindConvolutionBackwardDataAlgorithmEx(void *h, void *w,
                                                const void *wp, void *dy,
                                                const void *dyp, void *conv,
                                                void *dx, void *dxp, int n,
                                                int *returned, Perf *r,
                                                void *ws, size_t bytes) {
  checkDesc(w, FILTER);
  checkDesc(dy, TENSOR);
  checkDesc(dx, TENSOR);
  return search(h, conv, (void *)wp, (void *)dyp, dxp, n, returned, r, ws,
                bytes);
}

int cudnnFindConvolutionBackwardFilterAlgorithmEx(void *h, void *x,
                                                  const void *xp, void *dy,
                                                  const void *dyp, void *conv,
                                                  void *dw, void *dwp, int n,
                                                  int *returned, Perf *r,
                                                  void *ws, size_t bytes) {
  checkDesc(x, TENSOR);
  checkDesc(dy, TENSOR);
  checkDesc(dw, FILTER);
  return search(h, conv, (void *)xp, (void *)dyp, dwp, n, returned, r, ws,
                bytes);
}

static void checkRun(void *handle, void *conv, int algo, void *workspace,
                     size_t bytes) {
  checkHandle(handle);
  checkDesc(conv, CONV);
  if (algo != 1)
    fail("cudnn", "an algorithm that is not the deterministic one");
  if (bytes < 256)
    fail("cudnn", "a workspace smaller than the algorithm's");
  if (!workspace)
    fail("cudnn", "a null workspace");
}

int cudnnConvolutionForward(void *h, const void *alpha, void *x,
                            const void *xp, void *w, const void *wp,
                            void *conv, int algo, void *ws, size_t bytes,
                            const void *beta, void *y, void *yp) {
  (void)alpha, (void)xp, (void)wp, (void)beta, (void)yp;
  checkDesc(x, TENSOR);
  checkDesc(w, FILTER);
  checkDesc(y, TENSOR);
  checkRun(h, conv, algo, ws, bytes);
  ++forward;
  return 0;
}

int cudnnConvolutionBackwardData(void *h, const void *alpha, void *w,
                                 const void *wp, void *dy, const void *dyp,
                                 void *conv, int algo, void *ws, size_t bytes,
                                 const void *beta, void *dx, void *dxp) {
  (void)alpha, (void)wp, (void)dyp, (void)beta, (void)dxp;
  checkDesc(w, FILTER);
  checkDesc(dy, TENSOR);
  checkDesc(dx, TENSOR);
  checkRun(h, conv, algo, ws, bytes);
  ++backwardData;
  return 0;
}

int cudnnConvolutionBackwardFilter(void *h, const void *alpha, void *x,
                                   const void *xp, void *dy, const void *dyp,
                                   void *conv, int algo, void *ws,
                                   size_t bytes, const void *beta, void *dw,
                                   void *dwp) {
  (void)alpha, (void)xp, (void)dyp, (void)beta, (void)dwp;
  checkDesc(x, TENSOR);
  checkDesc(dy, TENSOR);
  checkDesc(dw, FILTER);
  checkRun(h, conv, algo, ws, bytes);
  ++backwardFilter;
  return 0;
}

#endif /* MOCK_CUDNN */
