//===- Simulator.cpp - Peak memory and validity of a schedule -------------===//
//
// The single source of truth for a plan's memory (DESIGN.md §5): the compiled
// program allocates each output when its node runs (unless it updates an
// input in place, as one-shot bufferization does when nothing reads that
// input afterwards), holds the node's workspace only while it runs, and frees
// exactly where the schedule says, so walking the statements in order gives
// the peak the program will measure.
//
//===----------------------------------------------------------------------===//

#include "remat/Schedule/Schedule.h"
#include "remat/Support/Debug.h"

#include "llvm/Support/Format.h"

#include <string>

using namespace remat;

// -debug-only=remat-simulator: one line per simulated plan (its peak, where
// it is reached, cost and recomputations), or why the plan is invalid.
#define DEBUG_TYPE "remat-simulator"

std::vector<std::vector<char>>
remat::inPlaceUpdates(const TrainingGraph &graph, const Schedule &schedule) {
  // Backwards over the schedule, `readLater[v]` says whether a step after the
  // current one reads the instance of v that is live at this point: a read
  // sets it, a Compute of v's producer (which starts a new instance) clears
  // it. A reuse is in place when the input is not read later and is not a
  // step output (which the caller reads after the step).
  const size_t numValues = graph.numValues();
  std::vector<std::vector<char>> inPlace(schedule.steps.size());
  std::vector<char> readLater(numValues, 0);
  for (size_t i = schedule.steps.size(); i-- > 0;) {
    const Step &step = schedule.steps[i];
    if (!step.isCompute() || step.id < 0 ||
        static_cast<size_t>(step.id) >= graph.numNodes())
      continue;
    const Node &node = graph.node(step.id);
    for (ValueId out : node.outputs)
      readLater[out] = 0;
    if (!node.reuses.empty()) {
      inPlace[i].resize(node.reuses.size());
      for (size_t k = 0; k < node.reuses.size(); ++k) {
        ValueId in = node.reuses[k].first;
        inPlace[i][k] = !readLater[in] && !graph.value(in).isOutput;
      }
    }
    for (ValueId in : node.inputs)
      readLater[in] = 1;
  }
  return inPlace;
}

Schedule remat::withoutDeadComputes(const TrainingGraph &graph,
                                    const Schedule &schedule,
                                    size_t *removed) {
  const size_t numValues = graph.numValues();
  const size_t numNodes = graph.numNodes();
  // Every node is computed at least once (a plan computes the whole graph):
  // a node all of whose computations are dead keeps its first one, and the
  // pass runs again with it kept (its inputs are then read).
  std::vector<char> keep(schedule.steps.size(), 0);
  std::vector<char> dead;
  size_t count = 0;
  for (int round = 0; round < 2; ++round) {
    // Backwards: `readLater[v]` says whether a step after this one reads
    // the instance of v live here (the step outputs are read by the caller
    // after the last step); a kept Compute of v's producer starts it.
    std::vector<char> readLater(numValues, 0);
    for (size_t v = 0; v < numValues; ++v)
      readLater[v] = graph.value(v).isOutput;
    dead.assign(schedule.steps.size(), 0);
    count = 0;
    for (size_t i = schedule.steps.size(); i-- > 0;) {
      const Step &step = schedule.steps[i];
      if (!step.isCompute() || step.id < 0 ||
          static_cast<size_t>(step.id) >= numNodes)
        continue;
      const Node &node = graph.node(step.id);
      bool used = node.outputs.empty() || keep[i];
      for (ValueId out : node.outputs)
        used |= readLater[out] != 0;
      if (!used) {
        dead[i] = 1;
        ++count;
        continue;
      }
      for (ValueId out : node.outputs)
        readLater[out] = 0;
      for (ValueId in : node.inputs)
        readLater[in] = 1;
    }
    // The first computation of each node left with none.
    std::vector<char> kept(numNodes, 0);
    std::vector<int64_t> first(numNodes, -1);
    for (size_t i = 0; i < schedule.steps.size(); ++i) {
      const Step &step = schedule.steps[i];
      if (!step.isCompute() || step.id < 0 ||
          static_cast<size_t>(step.id) >= numNodes)
        continue;
      if (first[step.id] < 0)
        first[step.id] = static_cast<int64_t>(i);
      kept[step.id] |= !dead[i];
    }
    bool again = false;
    for (size_t n = 0; n < numNodes; ++n)
      if (!kept[n] && first[n] >= 0) {
        keep[first[n]] = 1;
        again = true;
      }
    if (!again)
      break;
  }
  if (removed)
    *removed = count;
  if (count == 0)
    return schedule;
  // Forwards: a Free of an instance that is no longer created goes (the
  // value is then not resident, or holds an older instance that an earlier
  // Free already released).
  Schedule result;
  result.steps.reserve(schedule.steps.size());
  std::vector<char> resident(numValues, 0);
  for (size_t v = 0; v < numValues; ++v)
    resident[v] = graph.value(v).isFixed();
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const Step &step = schedule.steps[i];
    if (dead[i])
      continue;
    if (step.isCompute()) {
      if (step.id >= 0 && static_cast<size_t>(step.id) < numNodes)
        for (ValueId out : graph.node(step.id).outputs)
          resident[out] = 1;
    } else if (step.id >= 0 && static_cast<size_t>(step.id) < numValues) {
      if (!resident[step.id])
        continue;
      resident[step.id] = 0;
    }
    result.steps.push_back(step);
  }
  return result;
}

SimulationReport remat::simulate(const TrainingGraph &graph,
                                 const Schedule &schedule) {
  SimulationReport report;
  report.fixedBytes = graph.fixedBytes();
  report.baseCost = graph.totalCost();
  report.timeline.reserve(schedule.steps.size());

  const size_t numNodes = graph.numNodes();
  const size_t numValues = graph.numValues();
  // Fixed values are resident from the start and never leave.
  std::vector<char> resident(numValues, 0);
  for (size_t v = 0; v < numValues; ++v)
    resident[v] = graph.value(v).isFixed();
  std::vector<char> computed(numNodes, 0);
  uint64_t live = 0;
  // Bytes each resident value holds: its size, or 0 once an in-place update
  // has handed its buffer to the updated value (it stays resident until its
  // Free, which then releases nothing).
  std::vector<uint64_t> held(numValues, 0);
  const std::vector<std::vector<char>> inPlace = inPlaceUpdates(graph, schedule);

  auto fail = [&](std::string message) {
    LLVM_DEBUG(llvm::dbgs()
               << "simulator: invalid plan of " << schedule.steps.size()
               << " steps: " << message << "\n");
    report.valid = false;
    report.error = std::move(message);
    return report;
  };
  auto quote = [](const std::string &name) { return "'" + name + "'"; };

  for (size_t i = 0, e = schedule.steps.size(); i < e; ++i) {
    const Step &step = schedule.steps[i];
    std::string where = "step " + std::to_string(i) + ": ";
    if (step.isCompute()) {
      if (step.id < 0 || static_cast<size_t>(step.id) >= numNodes)
        return fail(where + "compute of unknown node " +
                    std::to_string(step.id));
      const Node &node = graph.node(step.id);
      for (ValueId in : node.inputs)
        if (!resident[in])
          return fail(where + "compute of node " + quote(node.name) +
                      " needs value " + quote(graph.value(in).name) +
                      " which is not resident");
      // Computing into a live buffer would need a second copy of it that the
      // plan does not account for; the plan must free the old one first.
      for (ValueId out : node.outputs)
        if (resident[out])
          return fail(where + "compute of node " + quote(node.name) +
                      " whose output " + quote(graph.value(out).name) +
                      " is already resident");
      for (ValueId out : node.outputs) {
        resident[out] = 1;
        held[out] = graph.value(out).bytes;
        live += held[out];
      }
      // An in-place update writes into the input's buffer: the output takes
      // over the input's bytes instead of new ones.
      for (size_t k = 0; k < node.reuses.size(); ++k)
        if (inPlace[i][k]) {
          ValueId in = node.reuses[k].first;
          live -= held[in];
          held[in] = 0;
        }
      // The workspace is held only while the node runs: it counts towards
      // this step's figure and is gone at the next step.
      uint64_t now = live + node.workspaceBytes;
      report.timeline.push_back(now);
      if (now > report.peakBytes) {
        report.peakBytes = now;
        report.peakStep = i;
      }
      report.totalCost += node.cost;
      ++report.numComputes;
      if (computed[step.id])
        ++report.numRecomputations;
      computed[step.id] = 1;
      continue;
    }

    if (step.id < 0 || static_cast<size_t>(step.id) >= numValues)
      return fail(where + "free of unknown value " + std::to_string(step.id));
    const GraphValue &value = graph.value(step.id);
    if (value.isFixed())
      return fail(where + "free of fixed value " + quote(value.name));
    if (value.isOutput)
      return fail(where + "free of step output " + quote(value.name));
    if (!resident[step.id])
      return fail(where + "free of value " + quote(value.name) +
                  " which is not resident");
    resident[step.id] = 0;
    live -= held[step.id];
    held[step.id] = 0;
    report.timeline.push_back(live);
  }

  std::string where = "end of schedule: ";
  for (size_t n = 0; n < numNodes; ++n)
    if (!computed[n])
      return fail(where + "node " + quote(graph.node(n).name) +
                  " is never computed");
  for (size_t v = 0; v < numValues; ++v)
    if (graph.value(v).isOutput && !resident[v])
      return fail(where + "step output " + quote(graph.value(v).name) +
                  " is not resident");
  LLVM_DEBUG({
    llvm::dbgs() << "simulator: " << schedule.steps.size() << " steps, peak "
                 << report.peakBytes << " at step " << report.peakStep;
    const Step &at = schedule.steps.empty() ? Step::compute(-1)
                                            : schedule.steps[report.peakStep];
    if (at.isCompute() && at.id >= 0)
      llvm::dbgs() << " ('" << graph.node(at.id).name << "')";
    llvm::dbgs() << ", cost " << llvm::format("%g", report.totalCost) << " ("
                 << report.numRecomputations << " recomputations)\n";
  });
  return report;
}

llvm::json::Value SimulationReport::toJSON(bool withTimeline) const {
  llvm::json::Object object{
      {"valid", valid},
      {"error", error},
      {"peak_bytes", peakBytes},
      {"fixed_bytes", fixedBytes},
      {"peak_step", static_cast<uint64_t>(peakStep)},
      {"total_cost", totalCost},
      {"base_cost", baseCost},
      {"overhead", overhead()},
      {"num_computes", static_cast<uint64_t>(numComputes)},
      {"num_recomputations", static_cast<uint64_t>(numRecomputations)},
  };
  if (withTimeline)
    object["timeline"] = llvm::json::Array(timeline);
  return object;
}
