//===- CudaLibrary.cpp - cuBLAS and cuDNN behind remat_lib_contraction ----===//
//
// The CUDA runtime's remat_lib_contraction (LibraryCalls.h): matrix products
// (and 1x1 convolutions) on cuBLAS, convolutions on cuDNN's graph API (or its
// legacy convolution API, REMAT_CUDNN_API=legacy), on the program's one
// stream (CudaRuntime.cpp), with the workspace the plan allocated
// (GpuLibrary.h says how much) and nothing else:
//
// * cuBLAS gets the buffer through cublasSetWorkspace (after
//   cublasSetStream, which resets it), so it never takes from its own pool
//   during the step;
// * cuDNN's engine (graph API) or algorithm (legacy API) is the first of its
//   heuristic ranking, or the fastest (REMAT_CUDNN_ALGO=measure), that is
//   deterministic (results do not change from run to run, nor between plans
//   that recompute) and fits the buffer.
//
// f32 runs in FMA math, not TF32 (REMAT_CUDA_ALLOW_TF32=1 allows it): the
// results then agree with the CPU's to f32 rounding.
//
// Both libraries are loaded with dlopen at the first call, so a program
// without library calls needs neither, and tests can put their own in place
// (REMAT_CUBLAS_LIBRARY, REMAT_CUDNN_LIBRARY). Handles and cuDNN descriptors
// are made once per program; a plan per distinct descriptor.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/CudaRuntime.h"
#include "remat/Runtime/LibraryCalls.h"

#include "RuntimeCore.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace remat::rt;
using remat::lib::ContractionDesc;
using remat::lib::ElementType;
using remat::lib::OpKind;

namespace {

//===----------------------------------------------------------------------===//
// The libraries, loaded on first use.
//===----------------------------------------------------------------------===//

void *openLibrary(const char *envVar, std::initializer_list<const char *> names,
                  const char *what) {
  std::vector<std::string> tried;
  if (const char *env = std::getenv(envVar); env && *env) {
    if (void *h = dlopen(env, RTLD_NOW | RTLD_GLOBAL))
      return h;
    fatal(std::string("cannot load ") + what + " from " + envVar + "=" + env +
          ": " + dlerror());
  }
  for (const char *name : names) {
    if (void *h = dlopen(name, RTLD_NOW | RTLD_GLOBAL))
      return h;
    tried.push_back(name);
  }
  std::string list;
  for (const std::string &t : tried)
    list += (list.empty() ? "" : ", ") + t;
  fatal(std::string("cannot load ") + what + " (tried " + list +
        "; put its directory on LD_LIBRARY_PATH or set " + envVar + ")");
}

template <typename Fn> Fn symbol(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p)
    fatal(std::string("missing symbol ") + name + ": " + dlerror());
  return reinterpret_cast<Fn>(p);
}

struct Cublas {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasSetStream_v2) setStream;
  decltype(&cublasSetWorkspace_v2) setWorkspace;
  decltype(&cublasSgemmStridedBatched) sgemm;
  decltype(&cublasDgemmStridedBatched) dgemm;
  cublasHandle_t handle = nullptr;

  static Cublas &get() {
    static Cublas *c = [] {
      void *lib = openLibrary(
          "REMAT_CUBLAS_LIBRARY",
          {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
           REMAT_CUDA_LIBRARY_DIR "/libcublas.so"},
          "cuBLAS");
      auto *c = new Cublas();
      c->create = symbol<decltype(c->create)>(lib, "cublasCreate_v2");
      c->setStream = symbol<decltype(c->setStream)>(lib, "cublasSetStream_v2");
      c->setWorkspace =
          symbol<decltype(c->setWorkspace)>(lib, "cublasSetWorkspace_v2");
      c->sgemm = symbol<decltype(c->sgemm)>(lib, "cublasSgemmStridedBatched");
      c->dgemm = symbol<decltype(c->dgemm)>(lib, "cublasDgemmStridedBatched");
      if (cublasStatus_t s = c->create(&c->handle); s != CUBLAS_STATUS_SUCCESS)
        fatal("cublasCreate failed with status " + std::to_string(int(s)));
      return c;
    }();
    return *c;
  }
};

#define CUDNN_FUNCTIONS(X)                                                     \
  X(cudnnCreate)                                                               \
  X(cudnnSetStream)                                                            \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnSetTensorNdDescriptor)                                                \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnSetFilterNdDescriptor)                                                \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnSetConvolutionNdDescriptor)                                           \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                               \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                             \
  X(cudnnFindConvolutionForwardAlgorithmEx)                                    \
  X(cudnnFindConvolutionBackwardDataAlgorithmEx)                               \
  X(cudnnFindConvolutionBackwardFilterAlgorithmEx)                             \
  X(cudnnConvolutionForward)                                                   \
  X(cudnnConvolutionBackwardData)                                              \
  X(cudnnConvolutionBackwardFilter)                                            \
  X(cudnnBackendCreateDescriptor)                                              \
  X(cudnnBackendDestroyDescriptor)                                             \
  X(cudnnBackendSetAttribute)                                                  \
  X(cudnnBackendGetAttribute)                                                  \
  X(cudnnBackendFinalize)                                                      \
  X(cudnnBackendExecute)

struct Cudnn {
#define DECLARE(name) decltype(&::name) name;
  CUDNN_FUNCTIONS(DECLARE)
#undef DECLARE
  cudnnHandle_t handle = nullptr;

  static Cudnn &get() {
    static Cudnn *c = [] {
      void *lib = openLibrary("REMAT_CUDNN_LIBRARY",
                              {"libcudnn.so.9", "libcudnn.so",
                               REMAT_CUDA_LIBRARY_DIR "/libcudnn.so.9"},
                              "cuDNN");
      auto *c = new Cudnn();
#define LOAD(name) c->name = symbol<decltype(c->name)>(lib, #name);
      CUDNN_FUNCTIONS(LOAD)
#undef LOAD
      if (cudnnStatus_t s = c->cudnnCreate(&c->handle);
          s != CUDNN_STATUS_SUCCESS)
        fatal(std::string("cudnnCreate failed: ") +
              c->cudnnGetErrorString(s));
      return c;
    }();
    return *c;
  }

  void check(cudnnStatus_t s, const char *call, const ContractionDesc &d) {
    if (s != CUDNN_STATUS_SUCCESS)
      fatal(std::string(call) + " failed for " + d.describe() + ": " +
            cudnnGetErrorString(s));
  }
};

/// How a convolution's algorithm is chosen (REMAT_CUDNN_ALGO): `heuristic`
/// (the default) takes cuDNN's heuristic ranking (cudnnGet*Algorithm_v7)
/// without running anything: the same algorithm in every run, so the same
/// bits. `measure` times, at the call's first run, every algorithm that fits
/// the planned workspace on the call's own operands (cudnnFind*AlgorithmEx,
/// which allocates nothing: its workspace is the plan's) and takes the
/// fastest, as PyTorch's benchmark mode does; a call that accumulates into
/// its output is never measured (the search overwrites the output).
/// Measured on an H100 (docs/gpu.md, third device session): measuring made
/// the steps 1.1-1.6x faster while the 1x1 convolutions were cuDNN's (the
/// heuristics took IMPLICIT_PRECOMP_GEMM for all of them); with those on
/// cuBLAS (pointwiseConvAsGemm) the two choices gave the same step times
/// within the run-to-run spread, and the heuristic one is reproducible.
bool measureAlgorithms() {
  static const bool measure = [] {
    const char *env = std::getenv("REMAT_CUDNN_ALGO");
    if (!env || !*env || std::strcmp(env, "heuristic") == 0)
      return false;
    if (std::strcmp(env, "measure") == 0)
      return true;
    fatal(std::string("REMAT_CUDNN_ALGO=") + env +
          ": expected 'heuristic' or 'measure'");
  }();
  return measure;
}

bool allowTf32() {
  const char *env = std::getenv("REMAT_CUDA_ALLOW_TF32");
  return env && *env && std::strcmp(env, "0") != 0;
}

//===----------------------------------------------------------------------===//
// Matrix products.
//===----------------------------------------------------------------------===//

/// How cuBLAS (column-major) sees a rows x cols matrix with these strides:
/// itself (N) or the transpose of what is stored (T), and the leading
/// dimension of what is stored. False when neither stride is 1.
bool columnMajorView(int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                     cublasOperation_t &op, int64_t &ld) {
  if (rows == 1 || rs == 1) {
    op = CUBLAS_OP_N;
    ld = cols == 1 ? std::max<int64_t>(1, rows) : std::max(cs, rows);
    return cols == 1 || cs >= rows;
  }
  if (cols == 1 || cs == 1) {
    op = CUBLAS_OP_T;
    ld = std::max(rs, cols);
    return rs >= cols;
  }
  return false;
}

/// How cuBLAS computes a Gemm descriptor: column-major C (m x n) = A B, or,
/// for a row-major C, C^T = B^T A^T; the first and second factors as cuBLAS
/// sees them (`swapped`: B first), their operations, leading dimensions and
/// batch strides. `ok` is false when a matrix has no unit stride (cuBLAS
/// cannot take it).
struct GemmLayout {
  bool ok = false;
  bool swapped = false;
  int64_t rows = 0, cols = 0, ldc = 0;
  cublasOperation_t opX = CUBLAS_OP_N, opY = CUBLAS_OP_N;
  int64_t ldx = 0, ldy = 0, strideX = 0, strideY = 0;
};

GemmLayout gemmLayout(const ContractionDesc &d) {
  GemmLayout l;
  bool cColumnMajor = d.m == 1 || d.cStrides[1] == 1;
  bool cRowMajor = d.n == 1 || d.cStrides[2] == 1;
  if (!cColumnMajor && !cRowMajor)
    return l;
  l.swapped = !cColumnMajor;
  l.rows = cColumnMajor ? d.m : d.n;
  l.cols = cColumnMajor ? d.n : d.m;
  l.ldc = cColumnMajor ? (d.n == 1 ? std::max<int64_t>(1, d.m)
                                   : std::max(d.cStrides[2], d.m))
                       : (d.m == 1 ? std::max<int64_t>(1, d.n)
                                   : std::max(d.cStrides[1], d.n));
  if (cColumnMajor) {
    l.ok = columnMajorView(d.m, d.k, d.aStrides[1], d.aStrides[2], l.opX,
                           l.ldx) &&
           columnMajorView(d.k, d.n, d.bStrides[1], d.bStrides[2], l.opY,
                           l.ldy);
    l.strideX = d.aStrides[0];
    l.strideY = d.bStrides[0];
  } else {
    // B^T is n x k with strides (bn, bk); A^T is k x m with (ak, am).
    l.ok = columnMajorView(d.n, d.k, d.bStrides[2], d.bStrides[1], l.opX,
                           l.ldx) &&
           columnMajorView(d.k, d.m, d.aStrides[2], d.aStrides[1], l.opY,
                           l.ldy);
    l.strideX = d.bStrides[0];
    l.strideY = d.aStrides[0];
  }
  return l;
}

void runGemm(const ContractionDesc &d, void *a, void *b, void *c,
             void *workspace, int64_t workspaceBytes) {
  GemmLayout l = gemmLayout(d);
  if (!l.ok)
    fatal("remat_lib_contraction: " + d.describe() +
          ": a matrix cuBLAS cannot take (no unit stride)");
  Cublas &blas = Cublas::get();
  CUstream stream = rematProgramStream();
  blas.setStream(blas.handle, reinterpret_cast<cudaStream_t>(stream));
  // After setStream, which resets the workspace to the library's pool.
  if (cublasStatus_t s = blas.setWorkspace(blas.handle, workspace,
                                           static_cast<size_t>(workspaceBytes));
      s != CUBLAS_STATUS_SUCCESS)
    fatal("cublasSetWorkspace failed with status " + std::to_string(int(s)));
  void *x = l.swapped ? b : a, *y = l.swapped ? a : b;
  int64_t strideC = d.cStrides[0];
  int k = static_cast<int>(d.k);
  cublasStatus_t s;
  if (d.type == ElementType::F32) {
    float alpha = 1.0f, beta = d.accumulate ? 1.0f : 0.0f;
    s = blas.sgemm(blas.handle, l.opX, l.opY, int(l.rows), int(l.cols), k,
                   &alpha, static_cast<const float *>(x), int(l.ldx),
                   l.strideX, static_cast<const float *>(y), int(l.ldy),
                   l.strideY, &beta, static_cast<float *>(c), int(l.ldc),
                   strideC, int(d.batch));
  } else {
    double alpha = 1.0, beta = d.accumulate ? 1.0 : 0.0;
    s = blas.dgemm(blas.handle, l.opX, l.opY, int(l.rows), int(l.cols), k,
                   &alpha, static_cast<const double *>(x), int(l.ldx),
                   l.strideX, static_cast<const double *>(y), int(l.ldy),
                   l.strideY, &beta, static_cast<double *>(c), int(l.ldc),
                   strideC, int(d.batch));
  }
  if (s != CUBLAS_STATUS_SUCCESS)
    fatal("cuBLAS gemm failed for " + d.describe() + " with status " +
          std::to_string(int(s)));
}

//===----------------------------------------------------------------------===//
// Convolutions.
//===----------------------------------------------------------------------===//

/// How convolutions reach cuDNN (REMAT_CUDNN_API): `graph` (the default)
/// builds a one-operation graph per descriptor and runs the engine the
/// graph heuristics rank first among those allowed (below), as PyTorch 2
/// does; `legacy` calls cudnnConvolution{Forward,BackwardData,
/// BackwardFilter} with an algorithm of the legacy enumeration. Why both:
/// the legacy API reaches only the engines behind its eight algorithms;
/// measured on an H100 (docs/gpu.md, third device session), resnet18's 3x3
/// convolutions on 2x2-16x16 maps took 2-4x as long through the fastest of
/// them as the same calls in PyTorch 2.11 (graph API, benchmark mode); with
/// the graph API (fourth session) the convolutional steps ran 1.3-1.9x
/// faster and the calls at 90-180% of PyTorch's speed.
bool useGraphApi() {
  static const bool graph = [] {
    const char *env = std::getenv("REMAT_CUDNN_API");
    if (!env || !*env || std::strcmp(env, "graph") == 0)
      return true;
    if (std::strcmp(env, "legacy") == 0)
      return false;
    fatal(std::string("REMAT_CUDNN_API=") + env +
          ": expected 'graph' or 'legacy'");
  }();
  return graph;
}

/// A backend descriptor, destroyed with its owner.
class BackendDescriptor {
public:
  BackendDescriptor() = default;
  BackendDescriptor(Cudnn &dnn, cudnnBackendDescriptorType_t type,
                    const ContractionDesc &d)
      : dnn(&dnn) {
    dnn.check(dnn.cudnnBackendCreateDescriptor(type, &desc),
              "cudnnBackendCreateDescriptor", d);
  }
  BackendDescriptor(BackendDescriptor &&o) noexcept
      : dnn(o.dnn), desc(o.desc) {
    o.desc = nullptr;
  }
  BackendDescriptor &operator=(BackendDescriptor &&o) noexcept {
    std::swap(dnn, o.dnn);
    std::swap(desc, o.desc);
    return *this;
  }
  BackendDescriptor(const BackendDescriptor &) = delete;
  BackendDescriptor &operator=(const BackendDescriptor &) = delete;
  ~BackendDescriptor() {
    if (desc)
      dnn->cudnnBackendDestroyDescriptor(desc);
  }
  cudnnBackendDescriptor_t get() const { return desc; }
  cudnnBackendDescriptor_t *address() { return &desc; }

private:
  Cudnn *dnn = nullptr;
  cudnnBackendDescriptor_t desc = nullptr;
};

struct ConvPlan {
  cudnnTensorDescriptor_t src = nullptr, dst = nullptr;
  cudnnFilterDescriptor_t filter = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  size_t algoBytes = 0;
  /// Whether the algorithm was timed (REMAT_CUDNN_ALGO=measure) rather than
  /// taken from the heuristics.
  bool measured = false;
  /// The graph API's execution plan (REMAT_CUDNN_API=graph); `algo` is then
  /// its engine's global index. Null: the legacy API's `algo`.
  BackendDescriptor graphPlan;
  /// Variant packs by operand addresses (src, dst, weights, workspace): a
  /// step calls a convolution on the same buffers every time (the arena's
  /// offsets), so its pack is made once. At most kMaxPacks per plan.
  mutable std::map<std::array<void *, 4>, BackendDescriptor> packs;
  static constexpr size_t kMaxPacks = 64;
};

/// An activation's descriptor: (N, C, spatial...), at least 4 dimensions
/// (a 1-d convolution gets a unit height).
void setActivation(Cudnn &dnn, cudnnTensorDescriptor_t t,
                   cudnnDataType_t type, const ContractionDesc &d,
                   int64_t channels, const int64_t *spatial,
                   const int64_t *strides) {
  std::vector<int> dims = {int(d.images), int(d.groups * channels)};
  std::vector<int> str = {int(strides[0]), int(strides[1])};
  if (d.spatialRank == 1) {
    dims.push_back(1);
    str.push_back(int(strides[2] * spatial[0]));
  }
  for (int64_t i = 0; i < d.spatialRank; ++i) {
    dims.push_back(int(spatial[i]));
    str.push_back(int(strides[2 + i]));
  }
  // Strides of unit dimensions mean nothing; cuDNN still wants them >= 1.
  for (int &s : str)
    s = std::max(s, 1);
  dnn.check(dnn.cudnnSetTensorNdDescriptor(t, type, int(dims.size()),
                                           dims.data(), str.data()),
            "cudnnSetTensorNdDescriptor", d);
}

/// The operands of a call, for the measured choice of its algorithm.
struct ConvOperands {
  void *in0, *in1, *out, *workspace;
};

std::unique_ptr<ConvPlan> planConv(const ContractionDesc &d,
                                   int64_t workspaceBytes,
                                   const ConvOperands &operands) {
  Cudnn &dnn = Cudnn::get();
  auto plan = std::make_unique<ConvPlan>();
  cudnnDataType_t type =
      d.type == ElementType::F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
  dnn.check(dnn.cudnnCreateTensorDescriptor(&plan->src),
            "cudnnCreateTensorDescriptor", d);
  dnn.check(dnn.cudnnCreateTensorDescriptor(&plan->dst),
            "cudnnCreateTensorDescriptor", d);
  dnn.check(dnn.cudnnCreateFilterDescriptor(&plan->filter),
            "cudnnCreateFilterDescriptor", d);
  dnn.check(dnn.cudnnCreateConvolutionDescriptor(&plan->conv),
            "cudnnCreateConvolutionDescriptor", d);
  setActivation(dnn, plan->src, type, d, d.inChannels, d.srcSize,
                d.srcStrides);
  setActivation(dnn, plan->dst, type, d, d.outChannels, d.dstSize,
                d.dstStrides);
  std::vector<int> filter = {int(d.groups * d.outChannels), int(d.inChannels)};
  std::vector<int> pad, stride, dilation;
  if (d.spatialRank == 1) {
    filter.push_back(1);
    pad.push_back(0);
    stride.push_back(1);
    dilation.push_back(1);
  }
  for (int64_t i = 0; i < d.spatialRank; ++i) {
    filter.push_back(int(d.kernelSize[i]));
    if (d.padBegin[i] != d.padEnd[i])
      fatal("remat_lib_contraction: " + d.describe() +
            ": cuDNN takes symmetric padding only");
    pad.push_back(int(d.padBegin[i]));
    stride.push_back(int(d.stride[i]));
    dilation.push_back(int(d.dilation[i]));
  }
  dnn.check(dnn.cudnnSetFilterNdDescriptor(plan->filter, type,
                                           CUDNN_TENSOR_NCHW,
                                           int(filter.size()), filter.data()),
            "cudnnSetFilterNdDescriptor", d);
  dnn.check(dnn.cudnnSetConvolutionNdDescriptor(
                plan->conv, int(pad.size()), pad.data(), stride.data(),
                dilation.data(), CUDNN_CROSS_CORRELATION, type),
            "cudnnSetConvolutionNdDescriptor", d);
  dnn.check(dnn.cudnnSetConvolutionGroupCount(plan->conv, int(d.groups)),
            "cudnnSetConvolutionGroupCount", d);
  bool tf32 = allowTf32();
  cudnnMathType_t math = tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  dnn.check(dnn.cudnnSetConvolutionMathType(plan->conv, math),
            "cudnnSetConvolutionMathType", d);

  // The ranking (measured: fastest first; heuristics: best first): the
  // first deterministic algorithm in the chosen math that fits the planned
  // workspace; where none is (a
  // weight gradient of 512x512x3x3 on 2x2 maps on an H200 under 9 MB), the
  // first that fits, said once on stderr: the results are as correct, not
  // bit-reproducible from run to run.
  auto pickAny = [&](auto &perfs, int returned, bool deterministic) {
    for (int i = 0; i < returned; ++i) {
      const auto &p = perfs[i];
      if (p.status != CUDNN_STATUS_SUCCESS ||
          (deterministic && p.determinism != CUDNN_DETERMINISTIC) ||
          p.memory > static_cast<size_t>(workspaceBytes))
        continue;
      if (d.type == ElementType::F32 && !tf32 && p.mathType != CUDNN_FMA_MATH &&
          p.mathType != CUDNN_DEFAULT_MATH)
        continue;
      plan->algo = static_cast<int>(p.algo);
      plan->algoBytes = p.memory;
      // CUDNN_DEFAULT_MATH permits TF32 tensor cores on Ampere and later:
      // without REMAT_CUDA_ALLOW_TF32 an f32 convolution always runs in FMA
      // math, whatever math type its ranking entry names (every legacy
      // algorithm has FMA kernels).
      cudnnMathType_t math =
          d.type == ElementType::F32 && !tf32 ? CUDNN_FMA_MATH : p.mathType;
      dnn.check(dnn.cudnnSetConvolutionMathType(plan->conv, math),
                "cudnnSetConvolutionMathType", d);
      return true;
    }
    return false;
  };
  auto pick = [&](auto &perfs, int returned) {
    if (pickAny(perfs, returned, /*deterministic=*/true))
      return true;
    if (!pickAny(perfs, returned, /*deterministic=*/false))
      return false;
    std::fprintf(stderr,
                 "remat-cuda: note: %s: no deterministic cuDNN algorithm fits "
                 "the planned workspace of %lld bytes; using a "
                 "non-deterministic one\n",
                 d.describe().c_str(), static_cast<long long>(workspaceBytes));
    return true;
  };
  // Measured (fastest first) or ranked by the heuristics (best first); the
  // search runs on the program's stream, on the call's operands, in the
  // planned workspace.
  const bool measure = measureAlgorithms() && !d.accumulate;
  plan->measured = measure;
  if (measure)
    dnn.check(dnn.cudnnSetStream(dnn.handle, reinterpret_cast<cudaStream_t>(
                                                 rematProgramStream())),
              "cudnnSetStream", d);
  void *ws = operands.workspace;
  size_t wsBytes = static_cast<size_t>(workspaceBytes);
  bool found = false;
  int returned = 0;
  switch (d.kind) {
  case OpKind::ConvForward: {
    cudnnConvolutionFwdAlgoPerf_t perfs[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    if (measure)
      dnn.check(dnn.cudnnFindConvolutionForwardAlgorithmEx(
                    dnn.handle, plan->src, operands.in0, plan->filter,
                    operands.in1, plan->conv, plan->dst, operands.out,
                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perfs, ws,
                    wsBytes),
                "cudnnFindConvolutionForwardAlgorithmEx", d);
    else
      dnn.check(dnn.cudnnGetConvolutionForwardAlgorithm_v7(
                    dnn.handle, plan->src, plan->filter, plan->conv, plan->dst,
                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perfs),
                "cudnnGetConvolutionForwardAlgorithm_v7", d);
    found = pick(perfs, returned);
    break;
  }
  case OpKind::ConvBackwardData: {
    cudnnConvolutionBwdDataAlgoPerf_t
        perfs[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    if (measure)
      dnn.check(dnn.cudnnFindConvolutionBackwardDataAlgorithmEx(
                    dnn.handle, plan->filter, operands.in1, plan->dst,
                    operands.in0, plan->conv, plan->src, operands.out,
                    CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perfs,
                    ws, wsBytes),
                "cudnnFindConvolutionBackwardDataAlgorithmEx", d);
    else
      dnn.check(dnn.cudnnGetConvolutionBackwardDataAlgorithm_v7(
                    dnn.handle, plan->filter, plan->dst, plan->conv, plan->src,
                    CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perfs),
                "cudnnGetConvolutionBackwardDataAlgorithm_v7", d);
    found = pick(perfs, returned);
    break;
  }
  case OpKind::ConvBackwardWeights: {
    cudnnConvolutionBwdFilterAlgoPerf_t
        perfs[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    if (measure)
      dnn.check(dnn.cudnnFindConvolutionBackwardFilterAlgorithmEx(
                    dnn.handle, plan->src, operands.in0, plan->dst,
                    operands.in1, plan->conv, plan->filter, operands.out,
                    CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perfs,
                    ws, wsBytes),
                "cudnnFindConvolutionBackwardFilterAlgorithmEx", d);
    else
      dnn.check(dnn.cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                    dnn.handle, plan->src, plan->dst, plan->conv, plan->filter,
                    CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perfs),
                "cudnnGetConvolutionBackwardFilterAlgorithm_v7", d);
    found = pick(perfs, returned);
    break;
  }
  case OpKind::Gemm:
    break;
  }
  if (!found)
    fatal("remat_lib_contraction: " + d.describe() +
          ": no cuDNN algorithm fits the planned workspace of " +
          std::to_string(workspaceBytes) +
          " bytes (raise gpu-workspace-limit)");
  return plan;
}

void runConv(const ContractionDesc &d, const ConvPlan &plan, void *in0,
             void *in1, void *out, void *workspace) {
  Cudnn &dnn = Cudnn::get();
  dnn.check(dnn.cudnnSetStream(dnn.handle, reinterpret_cast<cudaStream_t>(
                                               rematProgramStream())),
            "cudnnSetStream", d);
  float alphaF = 1.0f, betaF = d.accumulate ? 1.0f : 0.0f;
  double alphaD = 1.0, betaD = d.accumulate ? 1.0 : 0.0;
  const void *alpha = d.type == ElementType::F32 ? static_cast<void *>(&alphaF)
                                                 : static_cast<void *>(&alphaD);
  const void *beta = d.type == ElementType::F32 ? static_cast<void *>(&betaF)
                                                : static_cast<void *>(&betaD);
  switch (d.kind) {
  case OpKind::ConvForward:
    dnn.check(dnn.cudnnConvolutionForward(
                  dnn.handle, alpha, plan.src, in0, plan.filter, in1,
                  plan.conv, cudnnConvolutionFwdAlgo_t(plan.algo), workspace,
                  plan.algoBytes, beta, plan.dst, out),
              "cudnnConvolutionForward", d);
    break;
  case OpKind::ConvBackwardData:
    dnn.check(dnn.cudnnConvolutionBackwardData(
                  dnn.handle, alpha, plan.filter, in1, plan.dst, in0,
                  plan.conv, cudnnConvolutionBwdDataAlgo_t(plan.algo),
                  workspace, plan.algoBytes, beta, plan.src, out),
              "cudnnConvolutionBackwardData", d);
    break;
  case OpKind::ConvBackwardWeights:
    dnn.check(dnn.cudnnConvolutionBackwardFilter(
                  dnn.handle, alpha, plan.src, in0, plan.dst, in1, plan.conv,
                  cudnnConvolutionBwdFilterAlgo_t(plan.algo), workspace,
                  plan.algoBytes, beta, plan.filter, out),
              "cudnnConvolutionBackwardFilter", d);
    break;
  case OpKind::Gemm:
    break;
  }
}

//===----------------------------------------------------------------------===//
// Convolutions through cuDNN's graph (backend) API.
//===----------------------------------------------------------------------===//

/// Sets an attribute of `count` elements; a failure is fatal (a descriptor
/// the runtime built wrongly, not a choice of engine).
template <typename T>
void setAttribute(Cudnn &dnn, cudnnBackendDescriptor_t desc,
                  cudnnBackendAttributeName_t name,
                  cudnnBackendAttributeType_t type, int64_t count,
                  const T *values, const ContractionDesc &d) {
  dnn.check(dnn.cudnnBackendSetAttribute(desc, name, type, count, values),
            "cudnnBackendSetAttribute", d);
}

/// The operands' unique ids in the graph and the variant pack.
enum : int64_t { kSrcId = 1, kDstId = 2, kWeightId = 3 };

/// An activation (N, G*C, spatial...) or the kernel (G*OC, IC, K...) as a
/// backend tensor: at least 4 dimensions (a 1-d convolution gets a unit
/// height, as in the legacy descriptors), strides >= 1.
BackendDescriptor backendTensor(Cudnn &dnn, const ContractionDesc &d,
                                int64_t id, std::vector<int64_t> dims,
                                std::vector<int64_t> strides,
                                int64_t alignment) {
  BackendDescriptor t(dnn, CUDNN_BACKEND_TENSOR_DESCRIPTOR, d);
  for (int64_t &s : strides)
    s = std::max<int64_t>(s, 1);
  cudnnDataType_t type =
      d.type == ElementType::F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
  setAttribute(dnn, t.get(), CUDNN_ATTR_TENSOR_DATA_TYPE,
               CUDNN_TYPE_DATA_TYPE, 1, &type, d);
  setAttribute(dnn, t.get(), CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64,
               int64_t(dims.size()), dims.data(), d);
  setAttribute(dnn, t.get(), CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64,
               int64_t(strides.size()), strides.data(), d);
  setAttribute(dnn, t.get(), CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1,
               &id, d);
  setAttribute(dnn, t.get(), CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
               CUDNN_TYPE_INT64, 1, &alignment, d);
  dnn.check(dnn.cudnnBackendFinalize(t.get()), "cudnnBackendFinalize(tensor)",
            d);
  return t;
}

/// Dimensions and strides of an activation as setActivation lays them out.
void activationLayout(const ContractionDesc &d, int64_t channels,
                      const int64_t *spatial, const int64_t *strides,
                      std::vector<int64_t> &dims, std::vector<int64_t> &str) {
  dims = {d.images, d.groups * channels};
  str = {strides[0], strides[1]};
  if (d.spatialRank == 1) {
    dims.push_back(1);
    str.push_back(strides[2] * spatial[0]);
  }
  for (int64_t i = 0; i < d.spatialRank; ++i) {
    dims.push_back(spatial[i]);
    str.push_back(strides[2 + i]);
  }
}

/// The largest power of two up to 16 that divides every operand's address:
/// engines may assume it (vector loads), so it is part of the plan's key.
int64_t operandAlignment(const ConvOperands &o) {
  uintptr_t bits = reinterpret_cast<uintptr_t>(o.in0) |
                   reinterpret_cast<uintptr_t>(o.in1) |
                   reinterpret_cast<uintptr_t>(o.out);
  int64_t alignment = 16;
  while (alignment > 1 && (bits & uintptr_t(alignment - 1)))
    alignment /= 2;
  return alignment;
}

/// The numerical notes of an engine configuration's engine.
std::vector<cudnnBackendNumericalNote_t>
numericalNotes(Cudnn &dnn, cudnnBackendDescriptor_t config,
               const ContractionDesc &d, int64_t &globalIndex) {
  BackendDescriptor engine(dnn, CUDNN_BACKEND_ENGINE_DESCRIPTOR, d);
  int64_t n = 0;
  cudnnBackendDescriptor_t e = engine.get();
  dnn.check(dnn.cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                         &e),
            "cudnnBackendGetAttribute(engine)", d);
  dnn.check(dnn.cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                         CUDNN_TYPE_INT64, 1, &n,
                                         &globalIndex),
            "cudnnBackendGetAttribute(global index)", d);
  std::vector<cudnnBackendNumericalNote_t> notes(
      CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
  dnn.check(dnn.cudnnBackendGetAttribute(
                e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                int64_t(notes.size()), &n, notes.data()),
            "cudnnBackendGetAttribute(numerical notes)", d);
  notes.resize(static_cast<size_t>(std::max<int64_t>(0, n)));
  return notes;
}

/// The engine configurations the graph heuristics propose (mode A, then the
/// fallback list), best first.
std::vector<BackendDescriptor> engineConfigs(Cudnn &dnn,
                                             cudnnBackendDescriptor_t graph,
                                             const ContractionDesc &d) {
  std::vector<BackendDescriptor> configs;
  for (cudnnBackendHeurMode_t mode :
       {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    BackendDescriptor heur(dnn, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, d);
    setAttribute(dnn, heur.get(), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph, d);
    setAttribute(dnn, heur.get(), CUDNN_ATTR_ENGINEHEUR_MODE,
                 CUDNN_TYPE_HEUR_MODE, 1, &mode, d);
    if (dnn.cudnnBackendFinalize(heur.get()) != CUDNN_STATUS_SUCCESS)
      continue;
    int64_t count = 0;
    if (dnn.cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                     nullptr) != CUDNN_STATUS_SUCCESS ||
        count <= 0)
      continue;
    std::vector<BackendDescriptor> found;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      found.emplace_back(dnn, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, d);
      raw.push_back(found.back().get());
    }
    int64_t returned = 0;
    dnn.check(dnn.cudnnBackendGetAttribute(
                  heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                  CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()),
              "cudnnBackendGetAttribute(heuristics results)", d);
    found.resize(static_cast<size_t>(std::clamp<int64_t>(returned, 0, count)));
    for (BackendDescriptor &c : found)
      configs.push_back(std::move(c));
  }
  return configs;
}

/// The variant pack binding the graph's tensors to `src`, `dst`, `weights`
/// and the workspace.
BackendDescriptor variantPack(Cudnn &dnn, const ContractionDesc &d, void *src,
                              void *dst, void *weights, void *workspace) {
  BackendDescriptor pack(dnn, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, d);
  int64_t ids[3] = {kSrcId, kDstId, kWeightId};
  void *pointers[3] = {src, dst, weights};
  setAttribute(dnn, pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
               CUDNN_TYPE_INT64, 3, ids, d);
  setAttribute(dnn, pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
               CUDNN_TYPE_VOID_PTR, 3, pointers, d);
  setAttribute(dnn, pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
               CUDNN_TYPE_VOID_PTR, 1, &workspace, d);
  dnn.check(dnn.cudnnBackendFinalize(pack.get()),
            "cudnnBackendFinalize(variant pack)", d);
  return pack;
}

/// Runs `plan` with `pack` on the program's stream.
void executeGraphPlan(Cudnn &dnn, cudnnBackendDescriptor_t plan,
                      cudnnBackendDescriptor_t pack, const ContractionDesc &d) {
  dnn.check(dnn.cudnnSetStream(dnn.handle, reinterpret_cast<cudaStream_t>(
                                               rematProgramStream())),
            "cudnnSetStream", d);
  dnn.check(dnn.cudnnBackendExecute(dnn.handle, plan, pack),
            "cudnnBackendExecute", d);
}

/// The call's operands as the graph names them: (X, Y, W) of the forward
/// convolution whatever the direction computes.
struct GraphOperands {
  void *src, *dst, *weights;
};
GraphOperands graphOperands(const ContractionDesc &d, void *in0, void *in1,
                            void *out) {
  switch (d.kind) {
  case OpKind::ConvBackwardData: // in0 = diff_dst, out = diff_src
    return {out, in0, in1};
  case OpKind::ConvBackwardWeights: // in0 = src, in1 = diff_dst
    return {in0, in1, out};
  default: // forward: in0 = src, out = dst
    return {in0, out, in1};
  }
}

/// Plans `d` on the graph API: the one-operation graph, the heuristics'
/// engine configurations, and the first (heuristic) or fastest (measure)
/// whose engine is allowed and whose plan fits the planned workspace.
/// Allowed: deterministic (results do not change between runs or plans that
/// recompute; a non-deterministic engine only where none is, said once),
/// and for f32 without REMAT_CUDA_ALLOW_TF32 no tensor-core, down-converting
/// or reduced-precision engine (PyTorch's filter for allow_tf32=False).
/// False when no configuration is (the caller then takes the legacy API).
bool planGraphConv(const ContractionDesc &d, int64_t workspaceBytes,
                   const ConvOperands &operands, int64_t alignment,
                   ConvPlan &plan) {
  Cudnn &dnn = Cudnn::get();
  std::vector<int64_t> srcDims, srcStr, dstDims, dstStr;
  activationLayout(d, d.inChannels, d.srcSize, d.srcStrides, srcDims, srcStr);
  activationLayout(d, d.outChannels, d.dstSize, d.dstStrides, dstDims,
                   dstStr);
  // The kernel, packed [G*OC, IC, K...] (gpuWorkspaceBytes checked it).
  std::vector<int64_t> wDims = {d.groups * d.outChannels, d.inChannels};
  if (d.spatialRank == 1)
    wDims.push_back(1);
  for (int64_t i = 0; i < d.spatialRank; ++i)
    wDims.push_back(d.kernelSize[i]);
  std::vector<int64_t> wStr(wDims.size(), 1);
  for (int64_t i = int64_t(wDims.size()) - 2; i >= 0; --i)
    wStr[i] = wStr[i + 1] * wDims[i + 1];
  BackendDescriptor x = backendTensor(dnn, d, kSrcId, srcDims, srcStr,
                                      alignment);
  BackendDescriptor y = backendTensor(dnn, d, kDstId, dstDims, dstStr,
                                      alignment);
  BackendDescriptor w = backendTensor(dnn, d, kWeightId, wDims, wStr,
                                      alignment);

  BackendDescriptor conv(dnn, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, d);
  std::vector<int64_t> pre, post, stride, dilation;
  if (d.spatialRank == 1) {
    pre.push_back(0), post.push_back(0), stride.push_back(1),
        dilation.push_back(1);
  }
  for (int64_t i = 0; i < d.spatialRank; ++i) {
    pre.push_back(d.padBegin[i]);
    post.push_back(d.padEnd[i]);
    stride.push_back(d.stride[i]);
    dilation.push_back(d.dilation[i]);
  }
  int64_t spatialDims = int64_t(pre.size());
  cudnnDataType_t compute =
      d.type == ElementType::F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  setAttribute(dnn, conv.get(), CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS,
               CUDNN_TYPE_INT64, 1, &spatialDims, d);
  setAttribute(dnn, conv.get(), CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
               CUDNN_TYPE_DATA_TYPE, 1, &compute, d);
  setAttribute(dnn, conv.get(), CUDNN_ATTR_CONVOLUTION_CONV_MODE,
               CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, d);
  setAttribute(dnn, conv.get(), CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
               CUDNN_TYPE_INT64, spatialDims, pre.data(), d);
  setAttribute(dnn, conv.get(), CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
               CUDNN_TYPE_INT64, spatialDims, post.data(), d);
  setAttribute(dnn, conv.get(), CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
               CUDNN_TYPE_INT64, spatialDims, stride.data(), d);
  setAttribute(dnn, conv.get(), CUDNN_ATTR_CONVOLUTION_DILATIONS,
               CUDNN_TYPE_INT64, spatialDims, dilation.data(), d);
  dnn.check(dnn.cudnnBackendFinalize(conv.get()),
            "cudnnBackendFinalize(convolution)", d);

  // The operation, with alpha 1 and beta 0 (overwrite) or 1 (accumulate).
  cudnnBackendDescriptorType_t opType;
  cudnnBackendAttributeName_t aAlpha, aBeta, aConv, aX, aY, aW;
  switch (d.kind) {
  case OpKind::ConvBackwardData:
    opType = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR;
    aAlpha = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA;
    aBeta = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA;
    aConv = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC;
    aX = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX;
    aY = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY;
    aW = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W;
    break;
  case OpKind::ConvBackwardWeights:
    opType = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR;
    aAlpha = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA;
    aBeta = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA;
    aConv = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC;
    aX = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X;
    aY = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY;
    aW = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW;
    break;
  default:
    opType = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
    aAlpha = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA;
    aBeta = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA;
    aConv = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC;
    aX = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X;
    aY = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y;
    aW = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W;
    break;
  }
  BackendDescriptor op(dnn, opType, d);
  if (d.type == ElementType::F32) {
    float alpha = 1.0f, beta = d.accumulate ? 1.0f : 0.0f;
    setAttribute(dnn, op.get(), aAlpha, CUDNN_TYPE_FLOAT, 1, &alpha, d);
    setAttribute(dnn, op.get(), aBeta, CUDNN_TYPE_FLOAT, 1, &beta, d);
  } else {
    double alpha = 1.0, beta = d.accumulate ? 1.0 : 0.0;
    setAttribute(dnn, op.get(), aAlpha, CUDNN_TYPE_DOUBLE, 1, &alpha, d);
    setAttribute(dnn, op.get(), aBeta, CUDNN_TYPE_DOUBLE, 1, &beta, d);
  }
  cudnnBackendDescriptor_t raw[4] = {conv.get(), x.get(), y.get(), w.get()};
  setAttribute(dnn, op.get(), aConv, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[0],
               d);
  setAttribute(dnn, op.get(), aX, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[1], d);
  setAttribute(dnn, op.get(), aY, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[2], d);
  setAttribute(dnn, op.get(), aW, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw[3], d);
  if (dnn.cudnnBackendFinalize(op.get()) != CUDNN_STATUS_SUCCESS)
    return false; // e.g. a layout the graph API does not take

  BackendDescriptor graph(dnn, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, d);
  cudnnBackendDescriptor_t ops = op.get();
  setAttribute(dnn, graph.get(), CUDNN_ATTR_OPERATIONGRAPH_OPS,
               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &ops, d);
  setAttribute(dnn, graph.get(), CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
               CUDNN_TYPE_HANDLE, 1, &dnn.handle, d);
  if (dnn.cudnnBackendFinalize(graph.get()) != CUDNN_STATUS_SUCCESS)
    return false;

  const bool tf32 = allowTf32();
  const bool measure = measureAlgorithms() && !d.accumulate;
  GraphOperands ops3 = graphOperands(d, operands.in0, operands.in1,
                                     operands.out);
  // Candidates in ranking order: deterministic ones first, then (only if no
  // deterministic one fits) the others.
  std::vector<BackendDescriptor> configs = engineConfigs(dnn, graph.get(), d);
  for (bool deterministic : {true, false}) {
    struct Candidate {
      BackendDescriptor plan;
      int64_t engine, bytes;
    };
    std::vector<Candidate> candidates;
    for (BackendDescriptor &config : configs) {
      int64_t engine = -1;
      std::vector<cudnnBackendNumericalNote_t> notes =
          numericalNotes(dnn, config.get(), d, engine);
      auto has = [&](cudnnBackendNumericalNote_t n) {
        return std::find(notes.begin(), notes.end(), n) != notes.end();
      };
      if (has(CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC) == deterministic)
        continue;
      if (d.type == ElementType::F32 && !tf32 &&
          (has(CUDNN_NUMERICAL_NOTE_TENSOR_CORE) ||
           has(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) ||
           has(CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)))
        continue;
      BackendDescriptor p(dnn, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, d);
      cudnnBackendDescriptor_t c = config.get();
      setAttribute(dnn, p.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                   CUDNN_TYPE_HANDLE, 1, &dnn.handle, d);
      setAttribute(dnn, p.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, d);
      if (dnn.cudnnBackendFinalize(p.get()) != CUDNN_STATUS_SUCCESS)
        continue; // this engine cannot take these operands
      int64_t bytes = 0, n = 0;
      dnn.check(dnn.cudnnBackendGetAttribute(
                    p.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                    CUDNN_TYPE_INT64, 1, &n, &bytes),
                "cudnnBackendGetAttribute(workspace size)", d);
      if (bytes > workspaceBytes)
        continue;
      candidates.push_back({std::move(p), engine, bytes});
      if (!measure)
        break; // the heuristics' first
    }
    if (candidates.empty())
      continue;
    size_t best = 0;
    if (measure && candidates.size() > 1) {
      // Each candidate on the call's own operands in the planned workspace:
      // one warm-up run, then the best of three, synchronised (the output
      // is overwritten: measure only ever plans overwriting calls).
      CUstream stream = rematProgramStream();
      double bestSeconds = 0;
      for (size_t i = 0; i < candidates.size(); ++i) {
        double fastest = 0;
        for (int run = 0; run < 4; ++run) {
          cuStreamSynchronize(stream);
          auto start = std::chrono::steady_clock::now();
          BackendDescriptor pack = variantPack(
              dnn, d, ops3.src, ops3.dst, ops3.weights, operands.workspace);
          executeGraphPlan(dnn, candidates[i].plan.get(), pack.get(), d);
          cuStreamSynchronize(stream);
          double s = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
          if (run > 0 && (run == 1 || s < fastest))
            fastest = s;
        }
        if (i == 0 || fastest < bestSeconds)
          bestSeconds = fastest, best = i;
      }
    }
    if (!deterministic)
      std::fprintf(stderr,
                   "remat-cuda: note: %s: no deterministic cuDNN engine fits "
                   "the planned workspace of %lld bytes; using a "
                   "non-deterministic one\n",
                   d.describe().c_str(),
                   static_cast<long long>(workspaceBytes));
    plan.graphPlan = std::move(candidates[best].plan);
    plan.algo = static_cast<int>(candidates[best].engine);
    plan.algoBytes = static_cast<size_t>(candidates[best].bytes);
    plan.measured = measure;
    return true;
  }
  return false;
}

/// A 1x1 convolution (stride 1, no padding, one group) as the batched matrix
/// product it is, over the images: the forward dst[n, oc, p] = sum_ic
/// W[oc, ic] src[n, ic, p] and the backward data diff_src[n, ic, p] = sum_oc
/// W[oc, ic] diff_dst[n, oc, p], with the spatial positions p as one
/// dimension (their strides must nest). Why: on small maps with many
/// channels - a classifier's last stages, K = 1024..2048 channels over 4 or
/// 16 positions - every legacy cuDNN algorithm reduces the channels serially
/// in a few threads; measured on an H100 (resnet50, batch 4 at 64x64), 1x1
/// convolutions of 1024-2048 channels on 2x2 and 4x4 maps took 0.35-0.63 ms
/// with the fastest of them, against 0.05-0.1 ms for the same calls in
/// PyTorch; cuBLAS splits the reduction. False when the call is not one.
bool pointwiseConvAsGemm(const ContractionDesc &d, ContractionDesc &g) {
  if ((d.kind != OpKind::ConvForward && d.kind != OpKind::ConvBackwardData) ||
      d.groups != 1 || d.spatialRank < 1)
    return false;
  for (int64_t i = 0; i < d.spatialRank; ++i)
    if (d.kernelSize[i] != 1 || d.stride[i] != 1 || d.padBegin[i] != 0 ||
        d.padEnd[i] != 0 || d.srcSize[i] != d.dstSize[i])
      return false;
  // The positions as one dimension: its size and the innermost stride.
  int64_t positions = 1;
  auto flatStride = [&](const int64_t *strides, int64_t &stride) {
    stride = 0;
    int64_t expected = -1;
    for (int64_t i = d.spatialRank - 1; i >= 0; --i) {
      int64_t size = d.srcSize[i], st = strides[2 + i];
      if (size == 1)
        continue;
      if (expected >= 0 && st != expected)
        return false;
      if (expected < 0)
        stride = st;
      expected = st * size;
    }
    return true;
  };
  for (int64_t i = 0; i < d.spatialRank; ++i)
    positions *= d.srcSize[i];
  int64_t srcP = 0, dstP = 0;
  if (!flatStride(d.srcStrides, srcP) || !flatStride(d.dstStrides, dstP))
    return false;
  // Forward: C = dst[n, oc, p] = W[oc, ic] src[n, ic, p]; backward data:
  // C = diff_src[n, ic, p] = W^T[ic, oc] diff_dst[n, oc, p]. A is the weights
  // (the same for every image), B the activation read.
  const bool forward = d.kind == OpKind::ConvForward;
  const int64_t wOut = d.weightStrides[1], wIn = d.weightStrides[2];
  const int64_t *bStrides = forward ? d.srcStrides : d.dstStrides;
  const int64_t *cStrides = forward ? d.dstStrides : d.srcStrides;
  g = ContractionDesc();
  g.kind = OpKind::Gemm;
  g.type = d.type;
  g.accumulate = d.accumulate;
  g.batch = d.images;
  g.m = forward ? d.outChannels : d.inChannels;
  g.k = forward ? d.inChannels : d.outChannels;
  g.n = positions;
  const int64_t a[3] = {0, forward ? wOut : wIn, forward ? wIn : wOut};
  const int64_t b[3] = {bStrides[0], bStrides[1], forward ? srcP : dstP};
  const int64_t c[3] = {cStrides[0], cStrides[1], forward ? dstP : srcP};
  std::copy(a, a + 3, g.aStrides);
  std::copy(b, b + 3, g.bStrides);
  std::copy(c, c + 3, g.cStrides);
  // Views cuBLAS cannot take (no unit stride in a matrix) stay cuDNN's,
  // whose tensor descriptors take any strides.
  return gemmLayout(g).ok;
}

/// Convolution plans by descriptor and workspace, made once per program.
std::mutex planMutex;
/// Never destroyed: the plans' descriptors must not be destroyed at exit,
/// after the program may have released the device.
auto &convPlans =
    *new std::map<std::vector<int64_t>, std::unique_ptr<ConvPlan>>();

/// Convolution plans by descriptor, workspace and (graph API) the
/// operands' alignment, made once per program: on the graph API where it
/// has an allowed engine that fits, else on the legacy API.
const ConvPlan &convPlan(const ContractionDesc &d, int64_t workspaceBytes,
                         const ConvOperands &operands) {
  const bool graph = useGraphApi();
  const int64_t alignment = graph ? operandAlignment(operands) : 0;
  std::vector<int64_t> key = d.encode();
  key.push_back(workspaceBytes);
  key.push_back(alignment);
  std::lock_guard<std::mutex> lock(planMutex);
  std::unique_ptr<ConvPlan> &plan = convPlans[key];
  if (plan)
    return *plan;
  if (graph) {
    plan = std::make_unique<ConvPlan>();
    if (planGraphConv(d, workspaceBytes, operands, alignment, *plan))
      return *plan;
  }
  plan = planConv(d, workspaceBytes, operands);
  return *plan;
}

/// The variant pack of a call: made once per operand addresses (up to
/// ConvPlan::kMaxPacks), else for this call only (`scratch`).
cudnnBackendDescriptor_t variantPackFor(Cudnn &dnn, const ConvPlan &plan,
                                        const ContractionDesc &d,
                                        const GraphOperands &o,
                                        void *workspace) {
  static BackendDescriptor &scratch = *new BackendDescriptor();
  std::array<void *, 4> key = {o.src, o.dst, o.weights, workspace};
  std::lock_guard<std::mutex> lock(planMutex);
  auto &packs = plan.packs;
  if (auto it = packs.find(key); it != packs.end())
    return it->second.get();
  BackendDescriptor pack =
      variantPack(dnn, d, o.src, o.dst, o.weights, workspace);
  if (packs.size() < ConvPlan::kMaxPacks)
    return packs.emplace(key, std::move(pack)).first->second.get();
  scratch = std::move(pack);
  return scratch.get();
}

} // namespace

extern "C" void remat_lib_contraction(const int64_t *encoded, void *in0,
                                      void *in1, void *out, void *workspace,
                                      int64_t workspaceBytes) {
  ContractionDesc desc;
  std::string error;
  if (!ContractionDesc::decode(encoded, desc, error))
    fatal("remat_lib_contraction: " + error);
  if (desc.kind == OpKind::Gemm) {
    traceLibraryCall(desc.describe() + " library=cublas workspace_bytes=" +
                     std::to_string(workspaceBytes));
    runGemm(desc, in0, in1, out, workspace, workspaceBytes);
    return;
  }
  // The matrix product's A is the weights (in1), its B the activation (in0).
  if (ContractionDesc gemm; pointwiseConvAsGemm(desc, gemm)) {
    traceLibraryCall(desc.describe() + " library=cublas as=" +
                     gemm.describe() + " workspace_bytes=" +
                     std::to_string(workspaceBytes));
    runGemm(gemm, in1, in0, out, workspace, workspaceBytes);
    return;
  }
  const ConvPlan &plan =
      convPlan(desc, workspaceBytes, ConvOperands{in0, in1, out, workspace});
  const bool graph = plan.graphPlan.get() != nullptr;
  traceLibraryCall(desc.describe() + " library=cudnn api=" +
                   (graph ? "graph engine=" : "legacy algo=") +
                   std::to_string(plan.algo) + " chosen_by=" +
                   (plan.measured ? "measure" : "heuristic") +
                   " algo_workspace_bytes=" +
                   std::to_string(plan.algoBytes) + " workspace_bytes=" +
                   std::to_string(workspaceBytes));
  if (graph) {
    GraphOperands o = graphOperands(desc, in0, in1, out);
    Cudnn &dnn = Cudnn::get();
    executeGraphPlan(dnn, plan.graphPlan.get(),
                     variantPackFor(dnn, plan, desc, o, workspace), desc);
    return;
  }
  runConv(desc, plan, in0, in1, out, workspace);
}
