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
 * algorithm or engine, a graph-API descriptor finalized without what it
 * needs. Nothing is computed (the mock driver runs no kernels either).
 * At exit:
 *   mock-cublas: handles=H gemms=G workspace_max=W
 *   mock-cudnn: handles=H forward=F backward_data=D backward_filter=B
 *     searches=S (measured algorithm searches, cudnnFind*AlgorithmEx)
 *     graph_plans=P (execution plans finalized on the graph API)
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
static long graphPlans; /* execution plans finalized (graph API) */
static int created;

__attribute__((destructor)) static void report(void) {
  if (!handles)
    return;
  fflush(stdout);
  printf("mock-cudnn: handles=%ld forward=%ld backward_data=%ld "
         "backward_filter=%ld searches=%ld graph_plans=%ld\n",
         handles, forward, backwardData, backwardFilter, searches,
         graphPlans);
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

/* The graph (backend) API, as CudaLibrary.cpp uses it for one convolution
 * per graph. Descriptors record what was set; finalizing checks that the
 * attributes a real library requires were set (and the descriptors they
 * point to finalized). The heuristics propose three engines: 0 uses tensor
 * cores (TF32 for f32), 1 is non-deterministic, 2 is the deterministic FMA
 * engine and needs 256 bytes of workspace (the fallback list has engine 2
 * only); running any but engine 2 is an error, as is a variant pack without
 * the graph's three tensors or a workspace smaller than the plan's. */
/* cudnnBackendDescriptorType_t */
enum {
  B_CONV = 1, B_ENGINE = 2, B_ENGINECFG = 3, B_ENGINEHEUR = 4, B_PLAN = 5,
  B_FWD = 10, B_BWD_FILTER = 11, B_BWD_DATA = 12, B_GRAPH = 15,
  B_VARIANT = 16, B_TENSOR = 17
};
typedef struct BDesc {
  int magic, type, finalized;
  long attrs;            /* bit per attribute set (attribute % 64) */
  int engine, heurMode;  /* engine configs, engines, heuristics */
  int opType;            /* graphs, heuristics, configs, plans: B_FWD... */
  struct BDesc *refs[4]; /* an operation's conv, x, y, w */
  long long ids[3];
  void *pointers[3], *workspace;
} BDesc;
#define BMAGIC 0xbacd

static BDesc *bdesc(void *p, int type) {
  BDesc *d = p;
  if (!d || d->magic != BMAGIC)
    fail("cudnn", "a backend call on something that is not a backend "
                  "descriptor");
  if (type >= 0 && d->type != type)
    fail("cudnn", "a backend descriptor of the wrong type");
  return d;
}

int cudnnBackendCreateDescriptor(int type, void **out) {
  BDesc *d = calloc(1, sizeof(BDesc));
  d->magic = BMAGIC;
  d->type = type;
  d->engine = -1;
  *out = d;
  return 0;
}

int cudnnBackendDestroyDescriptor(void *p) {
  BDesc *d = bdesc(p, -1);
  d->magic = 0;
  free(d);
  return 0;
}

static void needFinalized(void *p, int type) {
  if (!bdesc(p, type)->finalized)
    fail("cudnn", "a backend descriptor used before it was finalized");
}

/* Attribute names (cudnnBackendAttributeName_t) the runtime sets. */
enum {
  A_CONV_SPATIAL = 106, A_HEUR_MODE = 200, A_HEUR_GRAPH = 201,
  A_CFG_ENGINE = 300, A_PLAN_HANDLE = 400, A_PLAN_CFG = 401,
  A_PLAN_WS = 402, A_GRAPH_HANDLE = 800, A_GRAPH_OPS = 801,
  A_TENSOR_ALIGN = 900, A_TENSOR_TYPE = 901, A_TENSOR_DIMS = 902,
  A_TENSOR_STRIDES = 903, A_TENSOR_ID = 906, A_VP_IDS = 1000,
  A_VP_PTRS = 1001, A_VP_WS = 1003, A_ENGINE_INDEX = 1301,
  A_ENGINE_NOTES = 1303, A_HEUR_RESULTS = 202
};

int cudnnBackendSetAttribute(void *p, int name, int type, long long count,
                             const void *values) {
  BDesc *d = bdesc(p, -1);
  (void)type;
  if (d->finalized)
    fail("cudnn", "an attribute set on a finalized backend descriptor");
  if (count < 1 || !values)
    fail("cudnn", "an attribute without values");
  d->attrs |= 1L << (name % 64);
  const long long *ints = values;
  void *const *ptrs = values;
  switch (name) {
  case A_TENSOR_DIMS:
  case A_TENSOR_STRIDES:
    if (count < 4 || count > 5)
      fail("cudnn", "a backend tensor of fewer than 4 or more than 5 "
                    "dimensions");
    for (long long i = 0; i < count; ++i)
      if (ints[i] < 1)
        fail("cudnn", "a backend tensor dimension or stride below 1");
    break;
  case 104: /* post paddings */
  case 105: /* pre paddings */
    for (long long i = 0; i < count; ++i)
      if (ints[i] < 0)
        fail("cudnn", "a negative padding");
    break;
  case A_GRAPH_HANDLE:
  case A_PLAN_HANDLE:
    checkHandle(ptrs[0]);
    break;
  case A_GRAPH_OPS:
    needFinalized(ptrs[0], -1);
    d->opType = ((BDesc *)ptrs[0])->type;
    break;
  case A_HEUR_GRAPH:
    needFinalized(ptrs[0], B_GRAPH);
    d->opType = ((BDesc *)ptrs[0])->opType;
    break;
  case A_HEUR_MODE:
    d->heurMode = *(const int *)values;
    break;
  case A_PLAN_CFG: {
    BDesc *cfg = bdesc(ptrs[0], B_ENGINECFG);
    d->engine = cfg->engine;
    d->opType = cfg->opType;
    break;
  }
  case A_VP_IDS:
    if (count != 3)
      fail("cudnn", "a variant pack without exactly three tensors");
    for (int i = 0; i < 3; ++i)
      d->ids[i] = ints[i];
    break;
  case A_VP_PTRS:
    for (int i = 0; i < 3 && i < count; ++i)
      d->pointers[i] = ptrs[i];
    break;
  case A_VP_WS:
    d->workspace = ptrs[0];
    break;
  default:
    /* An operation's conv, x, y, w (702-705, 708-711, 714-717). */
    if ((name >= 702 && name <= 705) || (name >= 708 && name <= 711) ||
        (name >= 714 && name <= 717)) {
      int slot = name <= 705 ? name - 702 : name <= 711 ? name - 708
                                                        : name - 714;
      needFinalized(ptrs[0], -1);
      d->refs[slot] = ptrs[0];
    }
    break;
  }
  return 0;
}

static int hasAll(BDesc *d, const int *names, int n) {
  for (int i = 0; i < n; ++i)
    if (!(d->attrs & (1L << (names[i] % 64))))
      return 0;
  return 1;
}

int cudnnBackendFinalize(void *p) {
  BDesc *d = bdesc(p, -1);
  static const int tensor[] = {A_TENSOR_TYPE, A_TENSOR_DIMS, A_TENSOR_STRIDES,
                               A_TENSOR_ID, A_TENSOR_ALIGN};
  static const int conv[] = {100, 101, 102, 103, 104, 105, A_CONV_SPATIAL};
  static const int graph[] = {A_GRAPH_OPS, A_GRAPH_HANDLE};
  static const int heur[] = {A_HEUR_GRAPH, A_HEUR_MODE};
  static const int plan[] = {A_PLAN_HANDLE, A_PLAN_CFG};
  static const int pack[] = {A_VP_IDS, A_VP_PTRS, A_VP_WS};
  int ok = 1;
  switch (d->type) {
  case B_TENSOR: ok = hasAll(d, tensor, 5); break;
  case B_CONV: ok = hasAll(d, conv, 7); break;
  case B_FWD:
  case B_BWD_DATA:
  case B_BWD_FILTER:
    for (int i = 0; i < 4; ++i)
      ok = ok && d->refs[i] != NULL;
    break;
  case B_GRAPH: ok = hasAll(d, graph, 2); break;
  case B_ENGINEHEUR: ok = hasAll(d, heur, 2); break;
  case B_PLAN: ok = hasAll(d, plan, 2); break;
  case B_VARIANT: ok = hasAll(d, pack, 3); break;
  default: fail("cudnn", "finalizing a backend descriptor of a type the "
                         "runtime never finalizes");
  }
  if (!ok)
    fail("cudnn", "a backend descriptor finalized without its required "
                  "attributes");
  d->finalized = 1;
  if (d->type == B_PLAN)
    ++graphPlans;
  return 0;
}

int cudnnBackendGetAttribute(void *p, int name, int type, long long requested,
                             long long *count, void *values) {
  BDesc *d = bdesc(p, -1);
  (void)type;
  long long *ints = values;
  void **ptrs = values;
  switch (name) {
  case A_HEUR_RESULTS: {
    needFinalized(d, B_ENGINEHEUR);
    int n = d->heurMode == 2 ? 1 : 3; /* CUDNN_HEUR_MODE_FALLBACK: engine 2 */
    *count = requested == 0 ? n : (requested < n ? requested : n);
    for (long long i = 0; requested && i < *count; ++i) {
      BDesc *cfg = bdesc(ptrs[i], B_ENGINECFG);
      cfg->engine = d->heurMode == 2 ? 2 : (int)i;
      cfg->opType = d->opType;
      cfg->finalized = 1;
    }
    return 0;
  }
  case A_CFG_ENGINE: {
    BDesc *e = bdesc(ptrs[0], B_ENGINE);
    e->engine = bdesc(d, B_ENGINECFG)->engine;
    e->finalized = 1;
    *count = 1;
    return 0;
  }
  case A_ENGINE_INDEX:
    ints[0] = bdesc(d, B_ENGINE)->engine;
    *count = 1;
    return 0;
  case A_ENGINE_NOTES: {
    int *notes = values;
    int engine = bdesc(d, B_ENGINE)->engine;
    *count = 0;
    if (engine == 0 && requested > 0)
      notes[(*count)++] = 0; /* CUDNN_NUMERICAL_NOTE_TENSOR_CORE */
    if (engine == 1 && requested > 0)
      notes[(*count)++] = 4; /* CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC */
    return 0;
  }
  case A_PLAN_WS:
    needFinalized(d, B_PLAN);
    ints[0] = d->engine == 2 ? 256 : 0;
    *count = 1;
    return 0;
  default:
    fail("cudnn", "a backend attribute the mock does not answer");
  }
  return 0;
}

int cudnnBackendExecute(void *h, void *planp, void *packp) {
  checkHandle(h);
  needFinalized(planp, B_PLAN);
  needFinalized(packp, B_VARIANT);
  BDesc *plan = planp, *pack = packp;
  if (plan->engine != 2)
    fail("cudnn", "an engine that is not the deterministic FMA one");
  for (int id = 1; id <= 3; ++id) {
    int found = 0;
    for (int i = 0; i < 3; ++i)
      if (pack->ids[i] == id && pack->pointers[i])
        found = 1;
    if (!found)
      fail("cudnn", "a variant pack without one of the graph's tensors");
  }
  if (!pack->workspace)
    fail("cudnn", "a null workspace");
  if (plan->opType == B_FWD)
    ++forward;
  else if (plan->opType == B_BWD_DATA)
    ++backwardData;
  else if (plan->opType == B_BWD_FILTER)
    ++backwardFilter;
  else
    fail("cudnn", "a plan of a graph that is not one convolution");
  return 0;
}

#endif /* MOCK_CUDNN */
