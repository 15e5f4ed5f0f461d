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

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <chrono>
#include <limits>
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
    // Built only for a message: simulate runs in solvers' inner loops.
    auto where = [i] { return "step " + std::to_string(i) + ": "; };
    if (step.isCompute()) {
      if (step.id < 0 || static_cast<size_t>(step.id) >= numNodes)
        return fail(where() + "compute of unknown node " +
                    std::to_string(step.id));
      const Node &node = graph.node(step.id);
      for (ValueId in : node.inputs)
        if (!resident[in])
          return fail(where() + "compute of node " + quote(node.name) +
                      " needs value " + quote(graph.value(in).name) +
                      " which is not resident");
      // Computing into a live buffer would need a second copy of it that the
      // plan does not account for; the plan must free the old one first.
      for (ValueId out : node.outputs)
        if (resident[out])
          return fail(where() + "compute of node " + quote(node.name) +
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
      return fail(where() + "free of unknown value " + std::to_string(step.id));
    const GraphValue &value = graph.value(step.id);
    if (value.isFixed())
      return fail(where() + "free of fixed value " + quote(value.name));
    if (value.isOutput)
      return fail(where() + "free of step output " + quote(value.name));
    if (!resident[step.id])
      return fail(where() + "free of value " + quote(value.name) +
                  " which is not resident");
    resident[step.id] = 0;
    live -= held[step.id];
    held[step.id] = 0;
    report.timeline.push_back(live);
  }

  auto where = [] { return std::string("end of schedule: "); };
  for (size_t n = 0; n < numNodes; ++n)
    if (!computed[n])
      return fail(where() + "node " + quote(graph.node(n).name) +
                  " is never computed");
  for (size_t v = 0; v < numValues; ++v)
    if (graph.value(v).isOutput && !resident[v])
      return fail(where() + "step output " + quote(graph.value(v).name) +
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

std::vector<NodeId> remat::withoutNeedlessRecomputations(
    const TrainingGraph &graph, const std::vector<NodeId> &computeOrder,
    uint64_t budget, double seconds, size_t *removed) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point begin = Clock::now();
  auto timeIsUp = [&] {
    return seconds > 0 &&
           std::chrono::duration<double>(Clock::now() - begin).count() >
               seconds;
  };
  constexpr size_t kNone = std::numeric_limits<size_t>::max();
  size_t dropped = 0;
  std::vector<NodeId> order = computeOrder;
  for (bool changed = true; changed && !timeIsUp();) {
    changed = false;
    // The positions of the recomputations, dearest first, then the later.
    std::vector<size_t> candidates;
    std::vector<char> computed(graph.numNodes(), 0);
    for (size_t pos = 0; pos < order.size(); ++pos) {
      if (computed[order[pos]] && graph.node(order[pos]).cost > 0)
        candidates.push_back(pos);
      computed[order[pos]] = 1;
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](size_t a, size_t b) {
                       double ca = graph.node(order[a]).cost;
                       double cb = graph.node(order[b]).cost;
                       return ca != cb ? ca > cb : a > b;
                     });
    std::vector<char> gone(order.size(), 0);
    std::vector<NodeId> plan;
    plan.reserve(order.size());
    auto planWithout = [&]() -> const std::vector<NodeId> & {
      plan.clear();
      for (size_t pos = 0; pos < order.size(); ++pos)
        if (!gone[pos])
          plan.push_back(order[pos]);
      return plan;
    };
    // The plan as it stands, for a necessary condition checked before each
    // simulation. Dropping the Compute at `pos` keeps each output's earlier
    // instance from its Free (`freedAt`, a step of `current`) to that
    // Compute (`stepOf`): each of those steps holds its bytes more. What
    // the dropped reads can give back is an input whose instance is freed
    // right after that Compute, from the step of its previous read or
    // production (`touchedAt`) on: it may be freed after that step, or
    // handed to an update in place there. Nothing else changes.
    Schedule current = insertEarlyFrees(graph, planWithout());
    SimulationReport currentReport = simulate(graph, current);
    std::vector<size_t> stepOf(order.size(), kNone);
    std::vector<size_t> freeStepOf(graph.numValues(), kNone);
    std::vector<size_t> touchStepOf(graph.numValues(), kNone);
    // Per position, its first entry in freedAt (one per output) and in
    // touchedAt (one per input).
    std::vector<size_t> freedFirst(order.size() + 1, 0);
    std::vector<size_t> touchedFirst(order.size() + 1, 0);
    std::vector<size_t> freedAt, touchedAt;
    // Per entry of freedAt, whether a later Compute reads that instance
    // (an unread one holds nothing longer when dropped); the entry of each
    // value's live instance.
    std::vector<char> instanceRead;
    std::vector<size_t> producedEntry(graph.numValues(), kNone);
    auto index = [&] {
      std::fill(stepOf.begin(), stepOf.end(), kNone);
      std::fill(freeStepOf.begin(), freeStepOf.end(), kNone);
      std::fill(touchStepOf.begin(), touchStepOf.end(), kNone);
      freedAt.clear();
      touchedAt.clear();
      instanceRead.clear();
      std::fill(producedEntry.begin(), producedEntry.end(), kNone);
      size_t pos = 0;
      for (size_t s = 0; s < current.steps.size(); ++s) {
        const Step &step = current.steps[s];
        if (!step.isCompute()) {
          freeStepOf[step.id] = s;
          continue;
        }
        // The plan skips the dropped positions.
        for (; gone[pos]; ++pos) {
          freedFirst[pos + 1] = freedAt.size();
          touchedFirst[pos + 1] = touchedAt.size();
        }
        stepOf[pos] = s;
        const Node &node = graph.node(step.id);
        for (ValueId in : node.inputs) {
          touchedAt.push_back(touchStepOf[in]);
          touchStepOf[in] = s;
          if (producedEntry[in] != kNone)
            instanceRead[producedEntry[in]] = 1;
        }
        for (ValueId out : node.outputs) {
          producedEntry[out] = freedAt.size();
          freedAt.push_back(freeStepOf[out]);
          instanceRead.push_back(0);
          touchStepOf[out] = s;
        }
        ++pos;
        freedFirst[pos] = freedAt.size();
        touchedFirst[pos] = touchedAt.size();
      }
    };
    index();
    std::vector<char> freedAfter(graph.numValues(), 0);
    // (step from which it may be given back, bytes), ascending.
    llvm::SmallVector<std::pair<size_t, uint64_t>, 8> giveBack;
    auto mayFit = [&](size_t pos) {
      const Node &node = graph.node(order[pos]);
      for (size_t s = stepOf[pos] + 1;
           s < current.steps.size() && !current.steps[s].isCompute(); ++s)
        freedAfter[current.steps[s].id] = 1;
      giveBack.clear();
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        ValueId in = node.inputs[k];
        if (!freedAfter[in])
          continue;
        freedAfter[in] = 0; // once per value
        size_t touched = touchedAt[touchedFirst[pos] + k];
        giveBack.emplace_back(touched == kNone ? 0 : touched,
                              graph.value(in).bytes);
      }
      for (size_t s = stepOf[pos] + 1;
           s < current.steps.size() && !current.steps[s].isCompute(); ++s)
        freedAfter[current.steps[s].id] = 0;
      llvm::sort(giveBack);
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        size_t from = freedAt[freedFirst[pos] + k];
        if (from == kNone || !instanceRead[freedFirst[pos] + k])
          continue;
        uint64_t more = graph.value(node.outputs[k]).bytes;
        uint64_t back = 0;
        size_t next = 0;
        for (size_t s = from; s < stepOf[pos]; ++s) {
          for (; next < giveBack.size() && giveBack[next].first <= s; ++next)
            back += giveBack[next].second;
          if (currentReport.timeline[s] + more > budget + back)
            return false;
        }
      }
      return true;
    };
    for (size_t candidate : candidates) {
      if (timeIsUp())
        break;
      if (!currentReport.valid || !mayFit(candidate))
        continue;
      gone[candidate] = 1;
      Schedule trial = insertEarlyFrees(graph, planWithout());
      SimulationReport report = simulate(graph, trial);
      if (report.valid && report.peakBytes <= budget) {
        ++dropped;
        changed = true;
        current = std::move(trial);
        currentReport = std::move(report);
        index();
      } else {
        gone[candidate] = 0;
      }
    }
    if (changed)
      order = planWithout();
  }
  if (removed)
    *removed = dropped;
  return order;
}

std::optional<std::pair<Schedule, SimulationReport>>
remat::withoutNeedlessWork(const TrainingGraph &graph, const Schedule &schedule,
                           const SimulationReport &report, uint64_t limit,
                           double seconds) {
  if (!report.valid || report.numRecomputations == 0 ||
      report.peakBytes > limit)
    return std::nullopt;
  std::vector<NodeId> order;
  for (const Step &step : schedule.steps)
    if (step.isCompute())
      order.push_back(step.id);
  size_t removed = 0;
  std::vector<NodeId> kept =
      withoutNeedlessRecomputations(graph, order, limit, seconds, &removed);
  if (removed == 0)
    return std::nullopt;
  Schedule pruned = withoutDeadComputes(graph, insertEarlyFrees(graph, kept));
  SimulationReport prunedReport = simulate(graph, pruned);
  if (!prunedReport.valid || prunedReport.peakBytes > limit ||
      prunedReport.totalCost >= report.totalCost)
    return std::nullopt;
  return std::make_pair(std::move(pruned), std::move(prunedReport));
}
