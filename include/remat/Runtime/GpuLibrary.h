//===- GpuLibrary.h - What cuBLAS and cuDNN take, and their workspace -*- C++ -*-===//
//
// The GPU side of the library calls (LibraryCalls.h), decided at compile
// time without a GPU: which contractions the CUDA runtime hands to cuBLAS
// (matrix products) and cuDNN (convolutions), and the workspace each gets.
// The compiler plans exactly `gpuWorkspaceBytes` bytes as the node's
// workspace; the CUDA runtime gives that buffer to the library
// (`cublasSetWorkspace`; the fastest deterministic cuDNN algorithm whose
// workspace fits) so that nothing is allocated behind the plan and the
// results do not change from run to run.
//
// Workspace policy: min(limit, the bytes of the contraction's largest
// operand). The limit is the pipelines' `gpu-workspace-limit` (0: only
// algorithms without workspace). A plan's memory then grows by at most one
// operand's bytes at the op, which the simulator counts.
//
// Header-only, plain C++: included by the compiler and the CUDA runtime.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_GPULIBRARY_H
#define REMAT_RUNTIME_GPULIBRARY_H

#include "remat/Runtime/LibraryCalls.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace remat::lib {

/// Default of the pipelines' `gpu-workspace-limit`: 64 MiB per op.
constexpr int64_t kDefaultGpuWorkspaceLimit = int64_t(64) << 20;

/// Elements spanned by a strided box (the last element's offset + 1).
inline int64_t spanElements(const int64_t *sizes, const int64_t *strides,
                            int rank) {
  int64_t last = 0;
  for (int i = 0; i < rank; ++i)
    last += (sizes[i] - 1) * (strides[i] < 0 ? -strides[i] : strides[i]);
  return last + 1;
}

/// Whether a matrix [rows, cols] with these strides is row- or
/// column-major for BLAS: one stride 1 (or its dimension of size 1).
inline bool blasMatrix(int64_t rows, int64_t cols, int64_t rowStride,
                       int64_t colStride) {
  return (colStride == 1 || cols == 1) || (rowStride == 1 || rows == 1);
}

/// Bytes of the largest operand of `d`.
inline int64_t largestOperandBytes(const ContractionDesc &d) {
  int64_t e = elementBytes(d.type);
  if (d.kind == OpKind::Gemm) {
    int64_t a[3] = {d.batch, d.m, d.k}, b[3] = {d.batch, d.k, d.n},
            c[3] = {d.batch, d.m, d.n};
    return e * std::max({spanElements(a, d.aStrides, 3),
                         spanElements(b, d.bStrides, 3),
                         spanElements(c, d.cStrides, 3)});
  }
  int s = static_cast<int>(d.spatialRank);
  int64_t src[2 + kMaxSpatial] = {d.images, d.groups * d.inChannels};
  int64_t dst[2 + kMaxSpatial] = {d.images, d.groups * d.outChannels};
  int64_t wei[3 + kMaxSpatial] = {d.groups, d.outChannels, d.inChannels};
  for (int i = 0; i < s; ++i) {
    src[2 + i] = d.srcSize[i];
    dst[2 + i] = d.dstSize[i];
    wei[3 + i] = d.kernelSize[i];
  }
  return e * std::max({spanElements(src, d.srcStrides, 2 + s),
                       spanElements(dst, d.dstStrides, 2 + s),
                       spanElements(wei, d.weightStrides, 3 + s)});
}

/// The workspace the CUDA runtime gets for `d` under `limit`, or -1 with
/// `reason` when cuBLAS/cuDNN cannot run it: a matrix without a unit stride
/// (cuBLAS takes row- or column-major matrices only), a kernel that is not
/// a packed [G*OC, IC, K...] array (cuDNN's filter descriptors have no
/// strides), negative activation strides.
inline int64_t gpuWorkspaceBytes(const ContractionDesc &d, int64_t limit,
                                 std::string &reason) {
  if (d.kind == OpKind::Gemm) {
    if (!blasMatrix(d.m, d.k, d.aStrides[1], d.aStrides[2]) ||
        !blasMatrix(d.k, d.n, d.bStrides[1], d.bStrides[2]) ||
        !blasMatrix(d.m, d.n, d.cStrides[1], d.cStrides[2])) {
      reason = "cuBLAS takes row- or column-major matrices only";
      return -1;
    }
  } else {
    int s = static_cast<int>(d.spatialRank);
    // Packed [G*OC, IC, K...]: innermost kernel dimension first.
    int64_t expect = 1;
    for (int i = s - 1; i >= 0; --i) {
      if (d.kernelSize[i] > 1 && d.weightStrides[3 + i] != expect) {
        reason = "cuDNN takes packed kernels only";
        return -1;
      }
      expect *= d.kernelSize[i];
    }
    if ((d.inChannels > 1 && d.weightStrides[2] != expect) ||
        (d.outChannels > 1 &&
         d.weightStrides[1] != expect * d.inChannels) ||
        (d.groups > 1 &&
         d.weightStrides[0] != expect * d.inChannels * d.outChannels)) {
      reason = "cuDNN takes packed kernels only";
      return -1;
    }
    for (int i = 0; i < 2 + s; ++i)
      if (d.srcStrides[i] < 0 || d.dstStrides[i] < 0) {
        reason = "cuDNN takes positive strides only";
        return -1;
      }
  }
  return std::max<int64_t>(0, std::min(limit, largestOperandBytes(d)));
}

} // namespace remat::lib

#endif // REMAT_RUNTIME_GPULIBRARY_H
