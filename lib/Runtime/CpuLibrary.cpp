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
  try {
    run(*plan, in0, in1, out, static_cast<char *>(workspace));
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
