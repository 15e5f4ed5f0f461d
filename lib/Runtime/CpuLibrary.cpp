//===- CpuLibrary.cpp - oneDNN behind remat_lib_contraction ---------------===//
//
// See include/remat/Runtime/CpuLibrary.h and LibraryCalls.h.
//
// One plan per distinct descriptor, built at the first call and kept for the
// program (oneDNN's primitive creation JIT-compiles kernels: never per step).
// A plan is a oneDNN primitive in the layouts its fast kernels take
// (channels-last activations and blocked weights for convolutions, the
// user's own strides for matrix products), the reorders between the user's
// buffers and those layouts, and where each working buffer and the
// scratchpads live inside the one workspace buffer of the plan:
//
//   [ in0 working copy | in1 working copy | out working copy | scratchpad ]
//
// every part 64-byte aligned. Every primitive runs in oneDNN's user
// scratchpad mode, so oneDNN allocates nothing per call: the workspace is the
// only transient memory, and the compiler counted it.
//
// Accumulation (`out += result`, the linalg op's semantics when its output is
// not freshly zeroed) is a reorder with a `sum` post-op from the working
// output into the user's output, or the matmul's own sum post-op.
//
// oneDNN reports errors as C++ exceptions: this file is compiled with them
// and never lets one escape.
//
//===----------------------------------------------------------------------===//

#include "remat/Runtime/CpuLibrary.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#ifdef REMAT_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

using namespace remat::lib;

#ifdef REMAT_HAVE_DNNL

namespace {

using dnnl::memory;
using Dims = memory::dims;

constexpr size_t kAlign = 64;
size_t alignUp(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

dnnl::engine &cpuEngine() {
  static dnnl::engine *engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

/// A user buffer's memory descriptor with the given strides. A stride of a
/// dimension of size 1 means nothing; it is replaced by one that makes the
/// layout look like its dense neighbours, so oneDNN recognises plain
/// layouts (and picks its fast kernels).
memory::desc userDesc(const Dims &dims, Dims strides, memory::data_type dt) {
  int64_t outer = 1;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] > 1)
      outer = std::max<int64_t>(outer, strides[i] * dims[i]);
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] == 1)
      strides[i] = outer;
  return memory::desc(dims, dt, strides);
}

/// Channels-last tag for activations of `spatialRank` spatial dimensions.
memory::format_tag channelsLast(int64_t spatialRank) {
  switch (spatialRank) {
  case 1:
    return memory::format_tag::nwc;
  case 2:
    return memory::format_tag::nhwc;
  default:
    return memory::format_tag::ndhwc;
  }
}

dnnl::primitive_attr scratchpadAttr(bool sum = false) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (sum) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attr.set_post_ops(ops);
  }
  return attr;
}

/// One operand: the user's layout, the layout the primitive works in, and
/// the reorder between them when they differ.
struct Operand {
  memory::desc user, work;
  bool reorder = false;
  dnnl::reorder move; // user -> work (inputs) or work -> user (output)
  size_t offset = 0;  // of the working copy in the workspace
  int arg = 0;        // DNNL_ARG_* of the primitive
};

struct Plan {
  ContractionDesc desc;
  dnnl::primitive prim;
  Operand in0, in1, out;
  size_t scratchOffset = 0;
  size_t scratchBytes = 0;
  size_t totalBytes = 0;
  std::string impl;
};

/// Working layout and reorder of an input; adds its working copy to the
/// workspace at `cursor`.
void planInput(Operand &op, const memory::desc &work, size_t &cursor,
               size_t &scratch) {
  op.work = work;
  op.reorder = op.user != work;
  if (!op.reorder)
    return;
  auto pd = dnnl::reorder::primitive_desc(cpuEngine(), op.user, cpuEngine(),
                                          work, scratchpadAttr());
  scratch = std::max(scratch, pd.scratchpad_desc().get_size());
  op.move = dnnl::reorder(pd);
  op.offset = cursor;
  cursor += alignUp(work.get_size());
}

/// The output: computed in its working layout, then moved (and, when
/// accumulating, added) into the user's buffer, unless the primitive can
/// write the user's buffer directly.
void planOutput(Operand &op, const memory::desc &work, bool accumulate,
                size_t &cursor, size_t &scratch) {
  op.work = work;
  op.reorder = accumulate || op.user != work;
  if (!op.reorder)
    return;
  auto pd = dnnl::reorder::primitive_desc(cpuEngine(), work, cpuEngine(),
                                          op.user, scratchpadAttr(accumulate));
  scratch = std::max(scratch, pd.scratchpad_desc().get_size());
  op.move = dnnl::reorder(pd);
  op.offset = cursor;
  cursor += alignUp(work.get_size());
}

memory::data_type dataType(ElementType type) {
  return memory::data_type::f32;
  (void)type;
}

Dims dimsOf(const int64_t *v, int64_t n) { return Dims(v, v + n); }

std::unique_ptr<Plan> planGemm(const ContractionDesc &d) {
  auto plan = std::make_unique<Plan>();
  plan->desc = d;
  memory::data_type dt = dataType(d.type);
  plan->in0.user = userDesc({d.batch, d.m, d.k}, dimsOf(d.aStrides, 3), dt);
  plan->in1.user = userDesc({d.batch, d.k, d.n}, dimsOf(d.bStrides, 3), dt);
  plan->out.user = userDesc({d.batch, d.m, d.n}, dimsOf(d.cStrides, 3), dt);
  // The matrix product takes any strides: no working copies; accumulation
  // is its own sum post-op.
  auto pd = dnnl::matmul::primitive_desc(
      dnnl::matmul::desc(plan->in0.user, plan->in1.user, plan->out.user),
      scratchpadAttr(d.accumulate), cpuEngine());
  plan->in0.work = plan->in0.user;
  plan->in1.work = plan->in1.user;
  plan->out.work = plan->out.user;
  plan->in0.arg = DNNL_ARG_SRC;
  plan->in1.arg = DNNL_ARG_WEIGHTS;
  plan->out.arg = DNNL_ARG_DST;
  plan->prim = dnnl::matmul(pd);
  plan->scratchBytes = pd.scratchpad_desc().get_size();
  plan->scratchOffset = 0;
  plan->totalBytes = plan->scratchBytes ? alignUp(plan->scratchBytes) : 0;
  plan->impl = pd.impl_info_str();
  return plan;
}

std::unique_ptr<Plan> planConv(const ContractionDesc &d) {
  auto plan = std::make_unique<Plan>();
  plan->desc = d;
  memory::data_type dt = dataType(d.type);
  const int64_t s = d.spatialRank;
  Dims srcDims = {d.images, d.groups * d.inChannels};
  Dims dstDims = {d.images, d.groups * d.outChannels};
  Dims weiDims;
  if (d.groups > 1)
    weiDims = {d.groups, d.outChannels, d.inChannels};
  else
    weiDims = {d.outChannels, d.inChannels};
  Dims strides, dilation, padBegin, padEnd;
  for (int64_t i = 0; i < s; ++i) {
    srcDims.push_back(d.srcSize[i]);
    dstDims.push_back(d.dstSize[i]);
    weiDims.push_back(d.kernelSize[i]);
    strides.push_back(d.stride[i]);
    dilation.push_back(d.dilation[i] - 1); // oneDNN counts the gaps
    padBegin.push_back(d.padBegin[i]);
    padEnd.push_back(d.padEnd[i]);
  }
  Dims weiStrides(d.weightStrides + (d.groups > 1 ? 0 : 1),
                  d.weightStrides + 3 + s);
  memory::desc srcUser = userDesc(srcDims, dimsOf(d.srcStrides, 2 + s), dt);
  memory::desc dstUser = userDesc(dstDims, dimsOf(d.dstStrides, 2 + s), dt);
  memory::desc weiUser = userDesc(weiDims, weiStrides, dt);
  // Channels-last activations and blocked weights: the layouts of oneDNN's
  // JIT kernels (plain NCHW only gets its im2col kernels, with scratchpads
  // of several copies of the weights).
  memory::desc srcWork(srcDims, dt, channelsLast(s));
  memory::desc dstWork(dstDims, dt, channelsLast(s));
  memory::desc weiAny(weiDims, dt, memory::format_tag::any);
  auto algo = dnnl::algorithm::convolution_direct;
  auto fwdDesc = dnnl::convolution_forward::desc(
      dnnl::prop_kind::forward_training, algo, srcWork, weiAny, dstWork,
      strides, dilation, padBegin, padEnd);
  dnnl::primitive_attr attr = scratchpadAttr();
  auto fwdPd =
      dnnl::convolution_forward::primitive_desc(fwdDesc, attr, cpuEngine());

  size_t cursor = 0, scratch = 0;
  switch (d.kind) {
  case OpKind::ConvForward: {
    plan->in0.user = srcUser;
    plan->in1.user = weiUser;
    plan->out.user = dstUser;
    planInput(plan->in0, fwdPd.src_desc(), cursor, scratch);
    planInput(plan->in1, fwdPd.weights_desc(), cursor, scratch);
    planOutput(plan->out, fwdPd.dst_desc(), d.accumulate, cursor, scratch);
    plan->in0.arg = DNNL_ARG_SRC;
    plan->in1.arg = DNNL_ARG_WEIGHTS;
    plan->out.arg = DNNL_ARG_DST;
    scratch = std::max(scratch, fwdPd.scratchpad_desc().get_size());
    plan->prim = dnnl::convolution_forward(fwdPd);
    plan->impl = fwdPd.impl_info_str();
    break;
  }
  case OpKind::ConvBackwardData: {
    auto pd = dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(algo, srcWork, weiAny, dstWork,
                                              strides, dilation, padBegin,
                                              padEnd),
        attr, cpuEngine(), fwdPd);
    plan->in0.user = dstUser; // diff_dst
    plan->in1.user = weiUser;
    plan->out.user = srcUser; // diff_src
    planInput(plan->in0, pd.diff_dst_desc(), cursor, scratch);
    planInput(plan->in1, pd.weights_desc(), cursor, scratch);
    planOutput(plan->out, pd.diff_src_desc(), d.accumulate, cursor, scratch);
    plan->in0.arg = DNNL_ARG_DIFF_DST;
    plan->in1.arg = DNNL_ARG_WEIGHTS;
    plan->out.arg = DNNL_ARG_DIFF_SRC;
    scratch = std::max(scratch, pd.scratchpad_desc().get_size());
    plan->prim = dnnl::convolution_backward_data(pd);
    plan->impl = pd.impl_info_str();
    break;
  }
  case OpKind::ConvBackwardWeights: {
    auto pd = dnnl::convolution_backward_weights::primitive_desc(
        dnnl::convolution_backward_weights::desc(algo, srcWork, weiAny,
                                                 dstWork, strides, dilation,
                                                 padBegin, padEnd),
        attr, cpuEngine(), fwdPd);
    plan->in0.user = srcUser;
    plan->in1.user = dstUser; // diff_dst
    plan->out.user = weiUser; // diff_weights
    planInput(plan->in0, pd.src_desc(), cursor, scratch);
    planInput(plan->in1, pd.diff_dst_desc(), cursor, scratch);
    planOutput(plan->out, pd.diff_weights_desc(), d.accumulate, cursor,
               scratch);
    plan->in0.arg = DNNL_ARG_SRC;
    plan->in1.arg = DNNL_ARG_DIFF_DST;
    plan->out.arg = DNNL_ARG_DIFF_WEIGHTS;
    scratch = std::max(scratch, pd.scratchpad_desc().get_size());
    plan->prim = dnnl::convolution_backward_weights(pd);
    plan->impl = pd.impl_info_str();
    break;
  }
  case OpKind::Gemm:
    break;
  }
  plan->scratchOffset = cursor;
  plan->scratchBytes = scratch;
  plan->totalBytes = cursor + (scratch ? alignUp(scratch) : 0);
  return plan;
}

/// Plans by descriptor contents: call sites with the same contraction share
/// one plan. Built under the lock, once per program.
class PlanCache {
public:
  /// The plan of `desc`, or null with `error` set.
  const Plan *get(const ContractionDesc &desc, std::string &error) {
    std::vector<int64_t> key = desc.encode();
    std::lock_guard<std::mutex> lock(mutex);
    auto it = plans.find(key);
    if (it != plans.end())
      return it->second.get();
    std::unique_ptr<Plan> plan = build(desc, error);
    if (!plan)
      return nullptr;
    return (plans[key] = std::move(plan)).get();
  }

private:
  static std::unique_ptr<Plan> build(const ContractionDesc &desc,
                                     std::string &error) {
    if (desc.type != ElementType::F32) {
      error = "oneDNN has no f64 primitive";
      return nullptr;
    }
    try {
      return desc.kind == OpKind::Gemm ? planGemm(desc) : planConv(desc);
    } catch (const dnnl::error &e) {
      error = std::string("oneDNN rejects it: ") + e.what();
    } catch (const std::exception &e) {
      error = e.what();
    }
    return nullptr;
  }

  std::mutex mutex;
  std::map<std::vector<int64_t>, std::unique_ptr<Plan>> plans;
};

PlanCache &planCache() {
  static PlanCache *cache = new PlanCache();
  return *cache;
}

[[noreturn]] void fail(const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "remat-runtime: error: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

void run(const Plan &plan, void *in0, void *in1, void *out, char *workspace) {
  dnnl::engine &engine = cpuEngine();
  dnnl::stream stream(engine);
  auto workMemory = [&](Operand const &op, void *user) {
    return op.reorder ? memory(op.work, engine, workspace + op.offset)
                      : memory(op.work, engine, user);
  };
  std::unique_ptr<memory> scratch;
  std::unordered_map<int, memory> scratchArg;
  memory scratchMem;
  bool hasScratch = plan.scratchBytes > 0;
  if (hasScratch)
    scratchMem = memory(memory::desc({static_cast<int64_t>(plan.scratchBytes)},
                                     memory::data_type::u8,
                                     memory::format_tag::a),
                        engine, workspace + plan.scratchOffset);
  auto withScratch = [&](std::unordered_map<int, memory> args) {
    if (hasScratch)
      args.insert({DNNL_ARG_SCRATCHPAD, scratchMem});
    return args;
  };
  memory in0Work = workMemory(plan.in0, in0);
  memory in1Work = workMemory(plan.in1, in1);
  memory outWork = workMemory(plan.out, out);
  if (plan.in0.reorder)
    plan.in0.move.execute(
        stream, withScratch({{DNNL_ARG_FROM, memory(plan.in0.user, engine, in0)},
                             {DNNL_ARG_TO, in0Work}}));
  if (plan.in1.reorder)
    plan.in1.move.execute(
        stream, withScratch({{DNNL_ARG_FROM, memory(plan.in1.user, engine, in1)},
                             {DNNL_ARG_TO, in1Work}}));
  plan.prim.execute(stream, withScratch({{plan.in0.arg, in0Work},
                                         {plan.in1.arg, in1Work},
                                         {plan.out.arg, outWork}}));
  if (plan.out.reorder)
    plan.out.move.execute(
        stream, withScratch({{DNNL_ARG_FROM, outWork},
                             {DNNL_ARG_TO, memory(plan.out.user, engine, out)}}));
  stream.wait();
}

/// REMAT_LIB_CHECK=1: every contraction is recomputed by a direct loop nest
/// over its descriptor, in double, and compared with oneDNN's result; the
/// first mismatch of each descriptor (an error above 1e-3 of the sum of the
/// magnitudes of its terms in f32, 1e-9 in f64) is printed on stderr with
/// the descriptor. A debugging aid: slow, and its reference buffers are
/// allocated outside the plan.
bool checkRequested() {
  static const bool requested = [] {
    const char *env = std::getenv("REMAT_LIB_CHECK");
    return env && *env && std::string(env) != "0";
  }();
  return requested;
}

/// REMAT_LIB_CHECK=replace: after the comparison, the reference (rounded
/// once to the element type) replaces oneDNN's result, so that a step's
/// results show what the library's own rounding contributes.
bool replaceRequested() {
  static const bool requested = [] {
    const char *env = std::getenv("REMAT_LIB_CHECK");
    return env && std::string(env) == "replace";
  }();
  return requested;
}

double loadElement(const void *base, int64_t offset, ElementType type) {
  return type == ElementType::F32
             ? double(static_cast<const float *>(base)[offset])
             : static_cast<const double *>(base)[offset];
}

/// The reference of `d` on its operands: out's values and the sums of
/// |terms| (the scale of rounding errors), in out's index order (gemm:
/// [b, m, n]; convolutions: the output tensor's dimensions in their
/// natural order), with the output's strided offsets.
struct Reference {
  std::vector<double> value, magnitude;
  std::vector<int64_t> offset;
};

Reference referenceOf(const ContractionDesc &d, const void *in0,
                      const void *in1, const void *outBefore) {
  Reference r;
  auto add = [&](size_t i, double term) {
    r.value[i] += term;
    r.magnitude[i] += std::fabs(term);
  };
  if (d.kind == OpKind::Gemm) {
    size_t count = size_t(d.batch * d.m * d.n);
    r.value.assign(count, 0.0);
    r.magnitude.assign(count, 0.0);
    r.offset.resize(count);
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t j = 0; j < d.n; ++j) {
          size_t at = size_t((b * d.m + i) * d.n + j);
          r.offset[at] =
              b * d.cStrides[0] + i * d.cStrides[1] + j * d.cStrides[2];
          if (d.accumulate)
            add(at, loadElement(outBefore, r.offset[at], d.type));
          for (int64_t k = 0; k < d.k; ++k)
            add(at, loadElement(in0, b * d.aStrides[0] + i * d.aStrides[1] +
                                         k * d.aStrides[2], d.type) *
                        loadElement(in1, b * d.bStrides[0] +
                                             k * d.bStrides[1] +
                                             j * d.bStrides[2], d.type));
        }
    return r;
  }
  const int64_t s = d.spatialRank;
  // Spatial extents padded to three dimensions.
  int64_t src[3] = {1, 1, 1}, dst[3] = {1, 1, 1}, ker[3] = {1, 1, 1};
  for (int64_t i = 0; i < s; ++i) {
    src[i] = d.srcSize[i];
    dst[i] = d.dstSize[i];
    ker[i] = d.kernelSize[i];
  }
  auto srcAt = [&](int64_t n, int64_t c, const int64_t *x) {
    int64_t o = n * d.srcStrides[0] + c * d.srcStrides[1];
    for (int64_t i = 0; i < s; ++i)
      o += x[i] * d.srcStrides[2 + i];
    return o;
  };
  auto dstAt = [&](int64_t n, int64_t c, const int64_t *y) {
    int64_t o = n * d.dstStrides[0] + c * d.dstStrides[1];
    for (int64_t i = 0; i < s; ++i)
      o += y[i] * d.dstStrides[2 + i];
    return o;
  };
  auto weightAt = [&](int64_t g, int64_t oc, int64_t ic, const int64_t *k) {
    int64_t o = g * d.weightStrides[0] + oc * d.weightStrides[1] +
                ic * d.weightStrides[2];
    for (int64_t i = 0; i < s; ++i)
      o += k[i] * d.weightStrides[3 + i];
    return o;
  };
  // The output tensor: dst (forward), src (backward data) or the weights.
  const int64_t G = d.groups, IC = d.inChannels, OC = d.outChannels;
  size_t count;
  if (d.kind == OpKind::ConvForward)
    count = size_t(d.images * G * OC * dst[0] * dst[1] * dst[2]);
  else if (d.kind == OpKind::ConvBackwardData)
    count = size_t(d.images * G * IC * src[0] * src[1] * src[2]);
  else
    count = size_t(G * OC * IC * ker[0] * ker[1] * ker[2]);
  r.value.assign(count, 0.0);
  r.magnitude.assign(count, 0.0);
  r.offset.assign(count, 0);
  auto spatialIndex = [](const int64_t *extent, const int64_t *x) {
    return (x[0] * extent[1] + x[1]) * extent[2] + x[2];
  };
  auto outIndex = [&](int64_t n, int64_t g, int64_t oc, int64_t ic,
                      const int64_t *y, const int64_t *x, const int64_t *k) {
    if (d.kind == OpKind::ConvForward)
      return size_t(((n * G + g) * OC + oc) * dst[0] * dst[1] * dst[2] +
                    spatialIndex(dst, y));
    if (d.kind == OpKind::ConvBackwardData)
      return size_t(((n * G + g) * IC + ic) * src[0] * src[1] * src[2] +
                    spatialIndex(src, x));
    return size_t(((g * OC + oc) * IC + ic) * ker[0] * ker[1] * ker[2] +
                  spatialIndex(ker, k));
  };
  auto outOffset = [&](int64_t n, int64_t g, int64_t oc, int64_t ic,
                       const int64_t *y, const int64_t *x, const int64_t *k) {
    if (d.kind == OpKind::ConvForward)
      return dstAt(n, g * OC + oc, y);
    if (d.kind == OpKind::ConvBackwardData)
      return srcAt(n, g * IC + ic, x);
    return weightAt(g, oc, ic, k);
  };
  // Every output element first (a backward-data pixel that no window covers
  // is still written: zero, or its old value when accumulating), then the
  // terms.
  const int64_t *extent = d.kind == OpKind::ConvForward        ? dst
                          : d.kind == OpKind::ConvBackwardData ? src
                                                               : ker;
  const bool weights = d.kind == OpKind::ConvBackwardWeights;
  int64_t lead[3] = {d.images, G, d.kind == OpKind::ConvForward ? OC : IC};
  if (weights) {
    lead[0] = G;
    lead[1] = OC;
    lead[2] = IC;
  }
  int64_t p[3];
  for (int64_t i0 = 0; i0 < lead[0]; ++i0)
    for (int64_t i1 = 0; i1 < lead[1]; ++i1)
      for (int64_t i2 = 0; i2 < lead[2]; ++i2)
        for (p[0] = 0; p[0] < extent[0]; ++p[0])
          for (p[1] = 0; p[1] < extent[1]; ++p[1])
            for (p[2] = 0; p[2] < extent[2]; ++p[2]) {
              int64_t n = weights ? 0 : i0, g = weights ? i0 : i1;
              int64_t oc = weights ? i1 : i2, ic = i2;
              size_t at = outIndex(n, g, oc, ic, p, p, p);
              r.offset[at] = outOffset(n, g, oc, ic, p, p, p);
              if (d.accumulate)
                add(at, loadElement(outBefore, r.offset[at], d.type));
            }
  int64_t y[3], x[3], k[3];
  for (int64_t n = 0; n < d.images; ++n)
    for (int64_t g = 0; g < G; ++g)
      for (int64_t oc = 0; oc < OC; ++oc)
        for (int64_t ic = 0; ic < IC; ++ic)
          for (y[0] = 0; y[0] < dst[0]; ++y[0])
            for (y[1] = 0; y[1] < dst[1]; ++y[1])
              for (y[2] = 0; y[2] < dst[2]; ++y[2])
                for (k[0] = 0; k[0] < ker[0]; ++k[0])
                  for (k[1] = 0; k[1] < ker[1]; ++k[1])
                    for (k[2] = 0; k[2] < ker[2]; ++k[2]) {
                      bool inside = true;
                      for (int64_t i = 0; i < 3; ++i) {
                        x[i] = i < s ? y[i] * d.stride[i] +
                                           k[i] * d.dilation[i] -
                                           d.padBegin[i]
                                     : 0;
                        inside = inside && x[i] >= 0 && x[i] < src[i];
                      }
                      if (!inside)
                        continue;
                      double a, b;
                      if (d.kind == OpKind::ConvForward) {
                        a = loadElement(in0, srcAt(n, g * IC + ic, x), d.type);
                        b = loadElement(in1, weightAt(g, oc, ic, k), d.type);
                      } else if (d.kind == OpKind::ConvBackwardData) {
                        a = loadElement(in0, dstAt(n, g * OC + oc, y), d.type);
                        b = loadElement(in1, weightAt(g, oc, ic, k), d.type);
                      } else {
                        a = loadElement(in0, srcAt(n, g * IC + ic, x), d.type);
                        b = loadElement(in1, dstAt(n, g * OC + oc, y), d.type);
                      }
                      add(outIndex(n, g, oc, ic, y, x, k), a * b);
                    }
  return r;
}

void storeReference(const ContractionDesc &d, const Reference &ref,
                    void *out) {
  for (size_t i = 0; i < ref.value.size(); ++i) {
    if (d.type == ElementType::F32)
      static_cast<float *>(out)[ref.offset[i]] = float(ref.value[i]);
    else
      static_cast<double *>(out)[ref.offset[i]] = ref.value[i];
  }
}

/// REMAT_LIB_CHECK: oneDNN's `out` against the reference, at every call;
/// per descriptor one ok line (its first call) and one MISMATCH line (its
/// first call that mismatches, whichever call that is).
void checkAgainstReference(const ContractionDesc &d, const Reference &ref,
                           const void *out) {
  static std::mutex mutex;
  static std::set<std::vector<int64_t>> reportedOk, reportedMismatch;
  double tolerance = d.type == ElementType::F32 ? 1e-3 : 1e-9;
  double worst = 0;
  size_t worstAt = 0;
  for (size_t i = 0; i < ref.value.size(); ++i) {
    double got = loadElement(out, ref.offset[i], d.type);
    double error = std::fabs(got - ref.value[i]) /
                   std::max(ref.magnitude[i], 1e-30);
    if (error > worst) {
      worst = error;
      worstAt = i;
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (worst <= tolerance) {
    if (reportedOk.insert(d.encode()).second)
      std::fprintf(stderr, "remat-lib-check: ok %s (worst %.3g)\n",
                   d.describe().c_str(), worst);
    return;
  }
  if (!reportedMismatch.insert(d.encode()).second)
    return;
  std::fprintf(stderr,
               "remat-lib-check: MISMATCH %s: element %zu: oneDNN %.9g, "
               "reference %.9g (error %.3g of the terms' magnitude %.3g)\n",
               d.describe().c_str(), worstAt,
               loadElement(out, ref.offset[worstAt], d.type),
               ref.value[worstAt], worst, ref.magnitude[worstAt]);
}

} // namespace

bool remat::lib::cpuLibraryAvailable() { return true; }

int64_t remat::lib::cpuWorkspaceBytes(const ContractionDesc &desc,
                                      std::string &reason) {
  const Plan *plan = planCache().get(desc, reason);
  return plan ? static_cast<int64_t>(plan->totalBytes) : -1;
}

std::string remat::lib::cpuImplementation(const ContractionDesc &desc) {
  std::string reason;
  const Plan *plan = planCache().get(desc, reason);
  return plan ? plan->impl : "";
}

extern "C" void remat_lib_contraction(const int64_t *encoded, void *in0,
                                      void *in1, void *out, void *workspace,
                                      int64_t workspaceBytes) {
  ContractionDesc desc;
  std::string error;
  if (!ContractionDesc::decode(encoded, desc, error))
    fail("remat_lib_contraction: " + error);
  const Plan *plan = planCache().get(desc, error);
  if (!plan)
    fail("remat_lib_contraction: " + desc.describe() + ": " + error);
  if (static_cast<int64_t>(plan->totalBytes) > workspaceBytes)
    fail("remat_lib_contraction: " + desc.describe() + ": oneDNN (" +
         plan->impl + ") needs " + std::to_string(plan->totalBytes) +
         " bytes of workspace but the plan gives " +
         std::to_string(workspaceBytes) +
         " (compiled for another machine or oneDNN version?)");
  // The reference reads the output's old values before the call overwrites
  // them.
  std::optional<Reference> reference;
  if (checkRequested())
    reference = referenceOf(desc, in0, in1, out);
  try {
    run(*plan, in0, in1, out, static_cast<char *>(workspace));
    if (reference) {
      checkAgainstReference(desc, *reference, out);
      if (replaceRequested())
        storeReference(desc, *reference, out);
    }
  } catch (const dnnl::error &e) {
    fail("remat_lib_contraction: " + desc.describe() + ": oneDNN failed: " +
         e.what());
  }
}

#else // !REMAT_HAVE_DNNL

bool remat::lib::cpuLibraryAvailable() { return false; }

int64_t remat::lib::cpuWorkspaceBytes(const ContractionDesc &,
                                      std::string &reason) {
  reason = "the project was built without oneDNN";
  return -1;
}

std::string remat::lib::cpuImplementation(const ContractionDesc &) {
  return "";
}

extern "C" void remat_lib_contraction(const int64_t *, void *, void *, void *,
                                      void *, int64_t) {
  std::fflush(stdout);
  std::fprintf(stderr, "remat-runtime: error: remat_lib_contraction: this "
                       "runtime was built without oneDNN\n");
  std::abort();
}

#endif // REMAT_HAVE_DNNL
