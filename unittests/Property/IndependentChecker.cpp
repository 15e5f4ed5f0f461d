//===- IndependentChecker.cpp - A second simulator for property tests -----===//
//
// See IndependentChecker.h. Written against DESIGN.md §5 and the contract of
// the schedule types only; this file must not call simulate(),
// inPlaceUpdates() or anything else of lib/Schedule (the CMake target links
// RematGraph alone, so a call would not link).
//
//===----------------------------------------------------------------------===//

#include "IndependentChecker.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>

using namespace remat;
using namespace remat::property;

namespace {

using u128 = unsigned __int128;
using i128 = __int128;

constexpr size_t kNever = std::numeric_limits<size_t>::max();

/// One piece of storage the plan holds: `bytes` during the statements
/// [from, until).
struct Buffer {
  uint64_t bytes;
  size_t from;
  size_t until = kNever;
};

/// Where a value stands while the statements are walked.
struct ValueState {
  bool resident = false;
  /// Index into the buffer list of the storage it holds; -1 for a fixed
  /// value (not counted) or one whose storage an in-place update took.
  long buffer = -1;
  /// The statement that computed the instance now current (-1: fixed, or
  /// never computed yet).
  long instance = -1;
};

/// Key of one instance of a value: (statement that made it + 1, value).
uint64_t instanceKey(long instance, int value) {
  return (uint64_t(instance + 1) << 32) | uint32_t(value);
}

class Walker {
public:
  Walker(const TrainingGraph &graph, const Schedule &schedule)
      : graph(graph), steps(schedule.steps) {}

  CheckResult run();

private:
  void violation(size_t index, const std::string &what);
  std::string nodeName(int id) const {
    return "node #" + std::to_string(id) + " '" + graph.node(id).name + "'";
  }
  std::string valueName(int id) const {
    return "value #" + std::to_string(id) + " '" + graph.value(id).name + "'";
  }
  bool nodeInRange(int id) const {
    return id >= 0 && size_t(id) < graph.numNodes();
  }
  bool valueInRange(int id) const {
    return id >= 0 && size_t(id) < graph.numValues();
  }
  void release(ValueState &state, size_t index) {
    if (state.buffer >= 0 && buffers[state.buffer].until == kNever)
      buffers[state.buffer].until = index;
    state.buffer = -1;
  }
  /// First pass: the last statement reading each instance of each value.
  void findLastReads();
  /// Sums the buffer intervals into result.perStep and the peak.
  void account();

  const TrainingGraph &graph;
  const std::vector<Step> &steps;
  CheckResult result;
  std::vector<Buffer> buffers;
  std::unordered_map<uint64_t, size_t> lastRead;
};

} // namespace

void Walker::violation(size_t index, const std::string &what) {
  ++result.numViolations;
  if (result.violations.size() < kMaxViolations)
    result.violations.push_back(
        (index == kNever ? std::string("after the last statement")
                         : "statement " + std::to_string(index)) +
        ": " + what);
}

void Walker::findLastReads() {
  std::vector<long> current(graph.numValues(), -1);
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step &step = steps[i];
    if (step.kind != Step::Kind::Compute || !nodeInRange(step.id))
      continue;
    const Node &node = graph.node(step.id);
    for (int in : node.inputs)
      if (valueInRange(in))
        lastRead[instanceKey(current[in], in)] = i;
    for (int out : node.outputs)
      if (valueInRange(out))
        current[out] = long(i);
  }
}

CheckResult Walker::run() {
  findLastReads();
  const size_t numNodes = graph.numNodes();
  const size_t numValues = graph.numValues();
  std::vector<ValueState> state(numValues);
  for (size_t v = 0; v < numValues; ++v)
    state[v].resident = graph.value(v).producer < 0;
  std::vector<size_t> timesComputed(numNodes, 0);

  for (size_t i = 0; i < steps.size(); ++i) {
    const Step &step = steps[i];
    if (step.kind == Step::Kind::Compute) {
      if (!nodeInRange(step.id)) {
        violation(i, "Compute of node id " + std::to_string(step.id) +
                         " which does not exist");
        continue;
      }
      const Node &node = graph.node(step.id);
      for (int in : node.inputs) {
        if (!valueInRange(in)) {
          violation(i, nodeName(step.id) + " reads value id " +
                           std::to_string(in) + " which does not exist");
          continue;
        }
        if (!state[in].resident)
          violation(i, nodeName(step.id) + " reads " + valueName(in) +
                           (state[in].instance < 0
                                ? " which was never computed"
                                : " which was freed after statement " +
                                      std::to_string(state[in].instance)));
      }
      // The instances the node reads, before its outputs start new ones.
      std::vector<std::pair<int, long>> reusedInstances;
      for (auto [in, out] : node.reuses)
        if (valueInRange(in))
          reusedInstances.push_back({in, state[in].instance});
      for (int out : node.outputs) {
        if (!valueInRange(out)) {
          violation(i, nodeName(step.id) + " writes value id " +
                           std::to_string(out) + " which does not exist");
          continue;
        }
        ValueState &s = state[out];
        if (s.resident) {
          violation(i, nodeName(step.id) + " computes " + valueName(out) +
                           " while it is still resident (computed at "
                           "statement " +
                           std::to_string(s.instance) + ", never freed)");
          release(s, i); // best effort: the old copy is dropped
        }
        s.resident = true;
        s.instance = long(i);
        s.buffer = long(buffers.size());
        buffers.push_back({graph.value(out).bytes, i});
      }
      for (auto [in, instance] : reusedInstances) {
        if (graph.value(in).isOutput)
          continue;
        auto it = lastRead.find(instanceKey(instance, in));
        bool readLater = it != lastRead.end() && it->second > i;
        if (readLater)
          continue;
        // In place: the output's storage is the input's; the input keeps
        // its name (resident) until its Free but holds nothing.
        ++result.numInPlace;
        release(state[in], i);
      }
      if (node.workspaceBytes > 0)
        buffers.push_back({node.workspaceBytes, i, i + 1});
      ++result.numComputes;
      if (timesComputed[step.id]++ > 0)
        ++result.numRecomputations;
      result.totalCost += node.cost;
      continue;
    }

    if (step.kind != Step::Kind::Free) {
      violation(i, "statement of unknown kind");
      continue;
    }
    if (!valueInRange(step.id)) {
      violation(i, "Free of value id " + std::to_string(step.id) +
                       " which does not exist");
      continue;
    }
    const GraphValue &value = graph.value(step.id);
    if (value.producer < 0) {
      violation(i, "Free of the fixed " + valueName(step.id) +
                       " (an argument, resident throughout)");
      continue;
    }
    if (value.isOutput) {
      violation(i, "Free of the step output " + valueName(step.id));
      continue;
    }
    if (!state[step.id].resident) {
      violation(i, "Free of " + valueName(step.id) + " which is not resident");
      continue;
    }
    state[step.id].resident = false;
    release(state[step.id], i);
  }

  for (size_t n = 0; n < numNodes; ++n)
    if (timesComputed[n] == 0)
      violation(kNever, nodeName(int(n)) + " (" +
                            (graph.node(n).phase == Phase::Forward
                                 ? "forward"
                                 : "backward") +
                            ") is never computed");
  for (size_t v = 0; v < numValues; ++v) {
    const GraphValue &value = graph.value(v);
    if (value.producer < 0)
      continue;
    if (value.isOutput && !state[v].resident)
      violation(kNever, "the step output " + valueName(int(v)) +
                            " is not resident at the end");
    if (!value.isOutput && state[v].resident)
      ++result.numLeftResident;
  }
  account();
  return std::move(result);
}

void Walker::account() {
  const size_t n = steps.size();
  std::vector<i128> delta(n + 1, 0);
  for (const Buffer &buffer : buffers) {
    delta[buffer.from] += i128(buffer.bytes);
    if (buffer.until != kNever && buffer.until <= n)
      delta[buffer.until] -= i128(buffer.bytes);
  }
  result.perStep.assign(n, 0);
  i128 sum = 0;
  i128 peak = 0;
  bool overflow = false;
  for (size_t i = 0; i < n; ++i) {
    sum += delta[i];
    if (sum < 0 || sum > i128(std::numeric_limits<uint64_t>::max())) {
      overflow = true;
      continue;
    }
    result.perStep[i] = uint64_t(sum);
    if (sum > peak) {
      peak = sum;
      result.peakStep = i;
    }
  }
  if (overflow)
    violation(kNever, "bytes held leave the range of uint64_t");
  result.peakBytes = uint64_t(peak);
}

CheckResult remat::property::checkPlan(const TrainingGraph &graph,
                                       const Schedule &schedule) {
  return Walker(graph, schedule).run();
}

uint64_t remat::property::nodeLowerBound(const TrainingGraph &graph) {
  u128 best = 0;
  for (size_t n = 0; n < graph.numNodes(); ++n) {
    const Node &node = graph.node(n);
    u128 held = node.workspaceBytes;
    for (int out : node.outputs)
      held += graph.value(out).bytes;
    for (int in : node.inputs) {
      const GraphValue &value = graph.value(in);
      if (value.producer < 0)
        continue;
      bool mayBeUpdated =
          !value.isOutput &&
          std::any_of(node.reuses.begin(), node.reuses.end(),
                      [&](const std::pair<int, int> &r) { return r.first == in; });
      if (!mayBeUpdated)
        held += value.bytes;
    }
    best = std::max(best, held);
  }
  return best > u128(std::numeric_limits<uint64_t>::max())
             ? std::numeric_limits<uint64_t>::max()
             : uint64_t(best);
}
