// The CUDA runtime's 1x1 convolutions on cuBLAS (lib/Runtime/CudaLibrary.cpp,
// pointwiseConvAsGemm): remat_lib_contraction is called on descriptors of 1x1
// convolutions - forward and backward data, overwriting and accumulating,
// packed and strided views, one position - against the mocks, whose cuBLAS
// computes the products it is given (MOCK_CUBLAS_COMPUTE=1, device memory is
// host memory), and each output is compared with a direct loop nest.
#include "remat/Runtime/LibraryCalls.h"

#include <cmath>
#include <cstdio>
#include <vector>

using namespace remat::lib;

namespace {

struct Case {
  const char *name;
  OpKind kind;
  bool accumulate;
  int64_t images, ic, oc, h, w;
  // Channel stride padding of the activations (a view of a wider buffer).
  int64_t srcChannelPad, dstChannelPad;
  // The source's positions every `srcStep` elements: a matrix without a unit
  // stride, which cuBLAS cannot take (the call stays cuDNN's).
  int64_t srcStep = 1;
};

float value(int64_t i, int salt) {
  return static_cast<float>(((i * 37 + salt * 11) % 23) - 11) / 8.0f;
}

bool run(const Case &c) {
  ContractionDesc d;
  d.kind = c.kind;
  d.type = ElementType::F32;
  d.accumulate = c.accumulate;
  d.spatialRank = 2;
  d.images = c.images;
  d.groups = 1;
  d.inChannels = c.ic;
  d.outChannels = c.oc;
  int64_t p = c.h * c.w;
  int64_t sizes[2] = {c.h, c.w};
  for (int i = 0; i < 2; ++i) {
    d.srcSize[i] = d.dstSize[i] = sizes[i];
    d.kernelSize[i] = d.stride[i] = d.dilation[i] = 1;
  }
  int64_t srcC = p * c.srcStep + c.srcChannelPad, dstC = p + c.dstChannelPad;
  int64_t srcStrides[4] = {c.ic * srcC, srcC, c.w * c.srcStep, c.srcStep};
  int64_t dstStrides[4] = {c.oc * dstC, dstC, c.w, 1};
  int64_t weightStrides[5] = {c.oc * c.ic, c.ic, 1, 1, 1};
  std::copy(srcStrides, srcStrides + 4, d.srcStrides);
  std::copy(dstStrides, dstStrides + 4, d.dstStrides);
  std::copy(weightStrides, weightStrides + 5, d.weightStrides);
  std::vector<float> src(c.images * srcStrides[0]), dst(c.images * dstStrides[0]),
      wei(c.oc * c.ic);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = value(i, 1);
  for (size_t i = 0; i < dst.size(); ++i)
    dst[i] = value(i, 2);
  for (size_t i = 0; i < wei.size(); ++i)
    wei[i] = value(i, 3);
  // Forward: dst (+)= W src; backward data: src (+)= W^T dst.
  bool forward = c.kind == OpKind::ConvForward;
  std::vector<float> expect = forward ? dst : src;
  for (int64_t n = 0; n < c.images; ++n)
    for (int64_t q = 0; q < p; ++q) {
      int64_t outs = forward ? c.oc : c.ic, ins = forward ? c.ic : c.oc;
      for (int64_t o = 0; o < outs; ++o) {
        double sum = 0;
        for (int64_t i = 0; i < ins; ++i) {
          double wv = forward ? wei[o * c.ic + i] : wei[i * c.ic + o];
          double x = forward ? src[n * srcStrides[0] + i * srcC + q * c.srcStep]
                             : dst[n * dstStrides[0] + i * dstC + q];
          sum += wv * x;
        }
        int64_t at = forward ? n * dstStrides[0] + o * dstC + q
                             : n * srcStrides[0] + o * srcC + q * c.srcStep;
        expect[at] = static_cast<float>(sum + (c.accumulate ? expect[at] : 0));
      }
    }
  std::vector<int64_t> encoded = d.encode();
  std::vector<char> workspace(4096);
  if (forward)
    remat_lib_contraction(encoded.data(), src.data(), wei.data(), dst.data(),
                          workspace.data(), workspace.size());
  else
    remat_lib_contraction(encoded.data(), dst.data(), wei.data(), src.data(),
                          workspace.data(), workspace.size());
  if (c.srcStep != 1) {
    // On cuDNN, which the mock does not compute: the trace says where it ran.
    std::printf("%s: ran\n", c.name);
    return true;
  }
  const std::vector<float> &got = forward ? dst : src;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(double(got[i]) - double(expect[i])));
  std::printf("%s: worst difference %g: %s\n", c.name, worst,
              worst <= 1e-4 ? "ok" : "WRONG");
  return worst <= 1e-4;
}

} // namespace

int main() {
  const Case cases[] = {
      {"forward", OpKind::ConvForward, false, 2, 3, 4, 3, 5, 0, 0},
      {"forward accumulate", OpKind::ConvForward, true, 2, 3, 4, 3, 5, 0, 0},
      {"forward strided views", OpKind::ConvForward, false, 3, 5, 2, 2, 2, 3, 1},
      {"forward one position", OpKind::ConvForward, false, 4, 6, 3, 1, 1, 0, 0},
      {"backward data", OpKind::ConvBackwardData, false, 2, 3, 4, 3, 5, 0, 0},
      {"backward data accumulate", OpKind::ConvBackwardData, true, 2, 3, 4, 3, 5, 0, 0},
      {"backward data strided views", OpKind::ConvBackwardData, false, 3, 5, 2, 2, 2, 1, 3},
      {"backward data one position", OpKind::ConvBackwardData, false, 4, 6, 3, 1, 1, 0, 0},
      {"forward every other position", OpKind::ConvForward, false, 2, 3, 4, 2, 3, 0, 0, 2},
  };
  bool ok = true;
  for (const Case &c : cases)
    ok &= run(c);
  return ok ? 0 : 1;
}
