//===- LibraryCalls.h - Contractions handed to vendor libraries -*- C++ -*-===//
//
// The contract between `remat-lower-library-calls` (the compiler) and the
// runtimes (CPU: oneDNN; CUDA: cuBLAS and cuDNN). A contraction the compiler
// recognised (remat/Transforms/ContractionMatch.h) is described once, at
// compile time, by a `ContractionDesc`: what it computes, every size, every
// stride of every operand, whether it accumulates into its output. The
// compiler stores the encoded descriptor as a constant global and calls
//
//   remat_lib_contraction(desc, in0, in1, out, workspace, workspaceBytes)
//
// with the operands' element pointers and a workspace buffer the step
// allocated right before the call and frees right after it: a buffer of the
// memory plan, the node's `workspaceBytes` in the training graph, so that
// the library never allocates behind the plan's back.
//
// Operand roles (the library's names for them):
//   Gemm                : in0 = A[b,m,k], in1 = B[b,k,n], out = C[b,m,n]
//   ConvForward         : in0 = src,      in1 = weights,   out = dst
//   ConvBackwardData    : in0 = diff_dst, in1 = weights,   out = diff_src
//   ConvBackwardWeights : in0 = src,      in1 = diff_dst,  out = diff_weights
// The convolutions are described by the forward convolution they belong to:
// src [N, G*IC, I...], weights [G, OC, IC, K...], dst [N, G*OC, O...],
// O = (I + padBegin + padEnd - (K-1)*dilation - 1) / stride + 1 (exact).
// `accumulate`: out += result (the linalg op's semantics); else out = result.
//
// Header-only and plain C++ (no MLIR, no LLVM): included by the compiler, the
// CPU runtime and the CUDA runtime.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_RUNTIME_LIBRARYCALLS_H
#define REMAT_RUNTIME_LIBRARYCALLS_H

#include <cstdint>
#include <string>
#include <vector>

namespace remat::lib {

enum class OpKind : int64_t {
  Gemm = 1,
  ConvForward = 2,
  ConvBackwardData = 3,
  ConvBackwardWeights = 4,
};

enum class ElementType : int64_t { F32 = 1, F64 = 2 };

/// Spatial dimensions of a convolution: 1 to 3, as oneDNN and cuDNN take.
constexpr int kMaxSpatial = 3;

/// Bytes of one element.
inline int64_t elementBytes(ElementType type) {
  return type == ElementType::F64 ? 8 : 4;
}

inline const char *opKindName(OpKind kind) {
  switch (kind) {
  case OpKind::Gemm:
    return "gemm";
  case OpKind::ConvForward:
    return "conv_fwd";
  case OpKind::ConvBackwardData:
    return "conv_bwd_data";
  case OpKind::ConvBackwardWeights:
    return "conv_bwd_weights";
  }
  return "unknown";
}

/// One contraction, every figure in elements (strides) or counts.
struct ContractionDesc {
  OpKind kind = OpKind::Gemm;
  ElementType type = ElementType::F32;
  bool accumulate = true;

  // Gemm: C[b, m, n] (+)= sum_k A[b, m, k] * B[b, k, n]. Strides in the
  // order of those indices.
  int64_t batch = 1, m = 1, n = 1, k = 1;
  int64_t aStrides[3] = {0, 0, 0};
  int64_t bStrides[3] = {0, 0, 0};
  int64_t cStrides[3] = {0, 0, 0};

  // Convolutions (of the forward convolution they belong to).
  int64_t spatialRank = 0;
  int64_t images = 1, groups = 1, inChannels = 1, outChannels = 1;
  int64_t srcSize[kMaxSpatial] = {1, 1, 1};
  int64_t kernelSize[kMaxSpatial] = {1, 1, 1};
  int64_t dstSize[kMaxSpatial] = {1, 1, 1};
  int64_t stride[kMaxSpatial] = {1, 1, 1};
  /// Distance between kernel taps (1: dense, oneDNN's dilation 0).
  int64_t dilation[kMaxSpatial] = {1, 1, 1};
  int64_t padBegin[kMaxSpatial] = {0, 0, 0};
  int64_t padEnd[kMaxSpatial] = {0, 0, 0};
  /// src: (image, channel of G*IC, spatial...).
  int64_t srcStrides[2 + kMaxSpatial] = {0, 0, 0, 0, 0};
  /// weights: (group, out channel, in channel, spatial...).
  int64_t weightStrides[3 + kMaxSpatial] = {0, 0, 0, 0, 0, 0};
  /// dst: (image, channel of G*OC, spatial...).
  int64_t dstStrides[2 + kMaxSpatial] = {0, 0, 0, 0, 0};

  /// Multiply-adds of the contraction (its FLOPs are twice this): per
  /// spatial dimension, the (output position, tap) pairs that read the
  /// input rather than its padding (a backward data matched from a flipped
  /// kernel is described with padding (K-1)*dilation, most of whose taps
  /// read zeros).
  double multiplyAdds() const {
    if (kind == OpKind::Gemm)
      return double(batch) * double(m) * double(n) * double(k);
    double macs = double(images) * double(groups) * double(inChannels) *
                  double(outChannels);
    for (int64_t s = 0; s < spatialRank; ++s) {
      int64_t pairs = 0;
      for (int64_t tap = 0; tap < kernelSize[s]; ++tap)
        for (int64_t o = 0; o < dstSize[s]; ++o) {
          int64_t at = o * stride[s] + tap * dilation[s] - padBegin[s];
          pairs += at >= 0 && at < srcSize[s];
        }
      macs *= double(pairs);
    }
    return macs;
  }

  /// The encoded form: a constant i64 array in the compiled program.
  std::vector<int64_t> encode() const;
  /// Decodes `data`; false (with `error` set) on a bad magic, version or
  /// field.
  static bool decode(const int64_t *data, ContractionDesc &desc,
                     std::string &error);
  /// One line for diagnostics: "conv_fwd f32 N=4 G=1 IC=64 ...".
  std::string describe() const;
};

/// First two words of an encoded descriptor.
constexpr int64_t kDescMagic = 0x52454d41544c4942; // "REMATLIB"
constexpr int64_t kDescVersion = 1;
/// Number of int64 words of an encoded descriptor.
constexpr int64_t kDescWords =
    5 + 4 + 9 + 5 + 7 * kMaxSpatial + (2 + kMaxSpatial) + (3 + kMaxSpatial) +
    (2 + kMaxSpatial);

inline std::vector<int64_t> ContractionDesc::encode() const {
  std::vector<int64_t> w;
  w.reserve(kDescWords);
  w.push_back(kDescMagic);
  w.push_back(kDescVersion);
  w.push_back(static_cast<int64_t>(kind));
  w.push_back(static_cast<int64_t>(type));
  w.push_back(accumulate ? 1 : 0);
  for (int64_t v : {batch, m, n, k})
    w.push_back(v);
  for (const int64_t *s : {aStrides, bStrides, cStrides})
    w.insert(w.end(), s, s + 3);
  for (int64_t v : {spatialRank, images, groups, inChannels, outChannels})
    w.push_back(v);
  for (const int64_t *s : {srcSize, kernelSize, dstSize, stride, dilation,
                           padBegin, padEnd})
    w.insert(w.end(), s, s + kMaxSpatial);
  w.insert(w.end(), srcStrides, srcStrides + 2 + kMaxSpatial);
  w.insert(w.end(), weightStrides, weightStrides + 3 + kMaxSpatial);
  w.insert(w.end(), dstStrides, dstStrides + 2 + kMaxSpatial);
  return w;
}

inline bool ContractionDesc::decode(const int64_t *data, ContractionDesc &d,
                                    std::string &error) {
  if (!data || data[0] != kDescMagic || data[1] != kDescVersion) {
    error = "not a remat library-call descriptor (bad magic or version)";
    return false;
  }
  const int64_t *p = data + 2;
  int64_t kind = *p++, type = *p++;
  if (kind < 1 || kind > 4 || type < 1 || type > 2) {
    error = "descriptor with an unknown operation or element type";
    return false;
  }
  d.kind = static_cast<OpKind>(kind);
  d.type = static_cast<ElementType>(type);
  d.accumulate = *p++ != 0;
  for (int64_t *v : {&d.batch, &d.m, &d.n, &d.k})
    *v = *p++;
  for (int64_t *s : {d.aStrides, d.bStrides, d.cStrides})
    for (int i = 0; i < 3; ++i)
      s[i] = *p++;
  for (int64_t *v :
       {&d.spatialRank, &d.images, &d.groups, &d.inChannels, &d.outChannels})
    *v = *p++;
  for (int64_t *s : {d.srcSize, d.kernelSize, d.dstSize, d.stride, d.dilation,
                     d.padBegin, d.padEnd})
    for (int i = 0; i < kMaxSpatial; ++i)
      s[i] = *p++;
  for (int i = 0; i < 2 + kMaxSpatial; ++i)
    d.srcStrides[i] = *p++;
  for (int i = 0; i < 3 + kMaxSpatial; ++i)
    d.weightStrides[i] = *p++;
  for (int i = 0; i < 2 + kMaxSpatial; ++i)
    d.dstStrides[i] = *p++;
  if (d.kind != OpKind::Gemm &&
      (d.spatialRank < 1 || d.spatialRank > kMaxSpatial)) {
    error = "convolution descriptor with a spatial rank outside [1, 3]";
    return false;
  }
  return true;
}

inline std::string ContractionDesc::describe() const {
  std::string s = opKindName(kind);
  s += type == ElementType::F64 ? " f64" : " f32";
  auto add = [&](const char *name, int64_t v) {
    s += " ";
    s += name;
    s += "=";
    s += std::to_string(v);
  };
  if (kind == OpKind::Gemm) {
    add("batch", batch);
    add("M", m);
    add("N", n);
    add("K", k);
  } else {
    add("N", images);
    add("G", groups);
    add("IC", inChannels);
    add("OC", outChannels);
    for (int64_t i = 0; i < spatialRank; ++i) {
      s += " [I=" + std::to_string(srcSize[i]) +
           " K=" + std::to_string(kernelSize[i]) +
           " O=" + std::to_string(dstSize[i]) +
           " s=" + std::to_string(stride[i]) +
           " d=" + std::to_string(dilation[i]) +
           " p=" + std::to_string(padBegin[i]) + "," +
           std::to_string(padEnd[i]) + "]";
    }
  }
  s += accumulate ? " accumulate" : " overwrite";
  return s;
}

} // namespace remat::lib

extern "C" {
/// Runs the contraction `desc` (an encoded ContractionDesc) on element
/// pointers of the operands (device pointers on the CUDA runtime), with
/// `workspace` of `workspaceBytes` bytes for the library. Defined by the CPU
/// runtime (oneDNN) and the CUDA runtime (cuBLAS, cuDNN); errors are fatal
/// with a message naming the call.
void remat_lib_contraction(const int64_t *desc, void *in0, void *in1,
                           void *out, void *workspace,
                           int64_t workspaceBytes);
}

#endif // REMAT_RUNTIME_LIBRARYCALLS_H
