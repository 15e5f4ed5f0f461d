//===- Simulator.cpp - Peak memory and validity of a schedule -------------===//
//
// The single source of truth for a plan's memory (DESIGN.md §5): the compiled
// program allocates each output when its node runs, holds the node's
// workspace only while it runs, and frees exactly where the schedule says, so
// walking the statements in order gives the peak the program will measure.
//
//===----------------------------------------------------------------------===//

#include "remat/Schedule/Schedule.h"

#include <string>

using namespace remat;

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

  auto fail = [&](std::string message) {
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
        live += graph.value(out).bytes;
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
    live -= value.bytes;
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
  return report;
}

llvm::json::Value SimulationReport::toJSON(bool withTimeline) const {
  llvm::json::Object object{
      {"valid", valid},
      {"error", error},
      {"peakBytes", peakBytes},
      {"fixedBytes", fixedBytes},
      {"peakStep", static_cast<uint64_t>(peakStep)},
      {"totalCost", totalCost},
      {"baseCost", baseCost},
      {"overhead", overhead()},
      {"numComputes", static_cast<uint64_t>(numComputes)},
      {"numRecomputations", static_cast<uint64_t>(numRecomputations)},
  };
  if (withTimeline)
    object["timeline"] = llvm::json::Array(timeline);
  return object;
}
