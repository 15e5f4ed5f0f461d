//===- PlacementPropertyTest.cpp - Placements judged independently --------===//
//
// Issue 22: the property check extended to placements. Random training
// graphs (RandomGraphs.h) x plans of several solvers (budgets drawn between
// the node lower bound and the checkpoint-all peak) x alignments; for each
// plan, the buffers of scheduleBuffers are placed by every heuristic and by
// placeBuffers, and each placement is judged by a checker written here from
// the memory model (DESIGN.md §5), which does not use the lifetimes that
// scheduleBuffers derived: it walks the plan itself, decides by itself which
// values are resident and which reuse pairs are in-place updates (scanning
// forward for a later read of the same instance), and at every statement
// checks that
//  - the byte ranges of everything held (resident values, the running
//    node's workspace) are pairwise disjoint and inside the arena;
//  - each output's buffer has the output's size, and an in-place update's
//    output sits exactly where its input was;
//  - the buffers held are exactly those whose lifetime covers the statement
//    (so the lifetimes are neither too short nor too long);
//  - the bytes held equal the independent checker's (IndependentChecker.h)
//    and the simulator's, so the live peak of the buffers is the plan's
//    peak, and the arena is at least that.
//
//===----------------------------------------------------------------------===//

#include "IndependentChecker.h"
#include "RandomGraphs.h"

#include "remat/Schedule/MemoryPlacement.h"
#include "remat/Solvers/Solver.h"

#include "llvm/ADT/STLExtras.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <set>

using namespace remat;
using namespace remat::property;

namespace {

/// Judges `offsets` for the buffers `sb` of `schedule`; returns the first
/// violation, or an empty string. `perStep` receives the bytes held at each
/// statement.
std::string checkPlacement(const TrainingGraph &graph, const Schedule &schedule,
                           const ScheduleBuffers &sb,
                           const std::vector<uint64_t> &offsets,
                           std::vector<uint64_t> &perStep) {
  const size_t numSteps = schedule.steps.size();
  const uint64_t arena = placementArena(sb.buffers, offsets);
  if (offsets.size() != sb.buffers.size())
    return "one offset per buffer expected";
  if (sb.outputBuffers.size() != numSteps ||
      sb.workspaceBuffers.size() != numSteps)
    return "one entry per statement expected";
  for (size_t b = 0; b < sb.buffers.size(); ++b)
    if (offsets[b] % sb.buffers[b].alignment != 0)
      return "buffer " + std::to_string(b) + " misaligned";

  // Whether the reuse pair r of the Compute at statement i is in place: the
  // input is not a step output and no Compute after i reads it before its
  // producer runs again (which would start a new instance).
  auto inPlace = [&](size_t i, ValueId in) {
    if (graph.value(in).isOutput)
      return false;
    NodeId producer = graph.value(in).producer;
    for (size_t j = i + 1; j < numSteps; ++j) {
      const Step &step = schedule.steps[j];
      if (!step.isCompute())
        continue;
      const Node &node = graph.node(step.id);
      if (std::find(node.inputs.begin(), node.inputs.end(), in) !=
          node.inputs.end())
        return false;
      if (step.id == producer)
        return true;
    }
    return true;
  };

  // The buffer each value's live instance holds (-1: none).
  std::vector<int> holds(graph.numValues(), -1);
  perStep.assign(numSteps, 0);
  for (size_t i = 0; i < numSteps; ++i) {
    const Step &step = schedule.steps[i];
    int workspace = -1;
    if (step.isCompute()) {
      const Node &node = graph.node(step.id);
      const std::vector<int> &outs = sb.outputBuffers[i];
      if (outs.size() != node.outputs.size())
        return "statement " + std::to_string(i) + ": output buffers missing";
      std::vector<int> released;
      for (size_t k = 0; k < node.outputs.size(); ++k) {
        ValueId out = node.outputs[k];
        int b = outs[k];
        if (b < 0 || static_cast<size_t>(b) >= sb.buffers.size())
          return "statement " + std::to_string(i) + ": no buffer for output";
        if (sb.buffers[b].bytes != graph.value(out).bytes)
          return "statement " + std::to_string(i) + ": buffer " +
                 std::to_string(b) + " has the wrong size";
        for (auto [in, reused] : node.reuses)
          if (reused == out && inPlace(i, in)) {
            if (holds[in] < 0 || offsets[holds[in]] != offsets[b])
              return "statement " + std::to_string(i) +
                     ": in-place output not at its input's offset";
            released.push_back(in);
          }
        holds[out] = b;
      }
      for (ValueId in : released)
        holds[in] = -1;
      if (node.workspaceBytes > 0) {
        workspace = sb.workspaceBuffers[i];
        if (workspace < 0 ||
            sb.buffers[workspace].bytes != node.workspaceBytes)
          return "statement " + std::to_string(i) + ": workspace buffer";
      } else if (sb.workspaceBuffers[i] != -1) {
        return "statement " + std::to_string(i) + ": unexpected workspace";
      }
    } else {
      holds[step.id] = -1;
    }

    // Everything held at this statement.
    std::set<int> held;
    for (int b : holds)
      if (b >= 0 && !held.insert(b).second)
        return "statement " + std::to_string(i) + ": buffer " +
               std::to_string(b) + " held by two values";
    if (workspace >= 0)
      held.insert(workspace);
    std::set<int> alive;
    for (size_t b = 0; b < sb.buffers.size(); ++b)
      if (sb.buffers[b].begin <= int64_t(i) && int64_t(i) < sb.buffers[b].end)
        alive.insert(static_cast<int>(b));
    if (held != alive)
      return "statement " + std::to_string(i) +
             ": the lifetimes do not match the buffers held (" +
             std::to_string(held.size()) + " held, " +
             std::to_string(alive.size()) + " alive)";
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (int b : held) {
      perStep[i] += sb.buffers[b].bytes;
      if (sb.buffers[b].bytes == 0)
        continue;
      ranges.push_back({offsets[b], offsets[b] + sb.buffers[b].bytes});
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t r = 0; r < ranges.size(); ++r) {
      if (ranges[r].second > arena)
        return "statement " + std::to_string(i) + ": outside the arena";
      if (r > 0 && ranges[r].first < ranges[r - 1].second)
        return "statement " + std::to_string(i) + ": bytes [" +
               std::to_string(ranges[r].first) + ", " +
               std::to_string(ranges[r - 1].second) + ") used twice";
    }
  }
  return "";
}

TEST(PlacementProperty, EverySolversPlanPlacedWithoutOverlap) {
  const char *const solvers[] = {"checkpoint-all", "chen-sqrtn", "chen-greedy",
                                 "hong-linear",    "feng",       "rotor",
                                 "revolve",        "reorder"};
  size_t plans = 0, placements = 0, withInPlace = 0, withWorkspace = 0;
  for (uint64_t index = 0; index < 120; ++index) {
    Rng rng(graphSeed(22, index));
    RandomGraph random = randomTrainingGraph(rng, 24);
    const TrainingGraph &graph = random.graph;
    uint64_t low = nodeLowerBound(graph);
    for (const char *name : solvers) {
      const SolverInfo *solver = findSolver(name);
      ASSERT_NE(solver, nullptr) << name;
      if (!solverApplies(*solver, graph))
        continue;
      SolverOptions options;
      options.timeLimitSeconds = 0.2;
      options.memorySlots = 100;
      if (rng.chance(50)) {
        llvm::Expected<SolverResult> all =
            runSolver(*findSolver("checkpoint-all"), graph, options);
        ASSERT_TRUE(bool(all));
        uint64_t high = all->report.peakBytes;
        options.budget = low + (high > low ? rng.below(high - low + 1) : 0);
      }
      llvm::Expected<SolverResult> result = runSolver(*solver, graph, options);
      if (!result) {
        llvm::consumeError(result.takeError());
        continue;
      }
      ++plans;
      const Schedule &schedule = result->schedule;
      CheckResult check = checkPlan(graph, schedule);
      ASSERT_TRUE(check.valid());
      withInPlace += check.numInPlace > 0;
      uint64_t alignment = uint64_t(1) << (rng.below(4) * 2); // 1, 4, 16, 64
      llvm::Expected<ScheduleBuffers> sb =
          scheduleBuffers(graph, schedule, alignment);
      ASSERT_TRUE(bool(sb)) << llvm::toString(sb.takeError());
      withWorkspace += llvm::any_of(sb->workspaceBuffers,
                                    [](int b) { return b >= 0; });
      // The live peak of the buffers is the plan's peak, both ways.
      EXPECT_EQ(placementLivePeak(sb->buffers), result->report.peakBytes);
      EXPECT_EQ(placementLivePeak(sb->buffers), check.peakBytes);

      std::string where = "graph " + std::to_string(index) + " (" +
                          random.shape + "), solver " + name +
                          ", alignment " + std::to_string(alignment);
      auto judge = [&](const std::vector<uint64_t> &offsets,
                       const std::string &method) {
        std::vector<uint64_t> perStep;
        std::string violation =
            checkPlacement(graph, schedule, *sb, offsets, perStep);
        EXPECT_EQ(violation, "") << where << ", " << method;
        if (violation.empty()) {
          EXPECT_EQ(perStep, check.perStep) << where << ", " << method;
          EXPECT_GE(placementArena(sb->buffers, offsets), check.peakBytes)
              << where << ", " << method;
        }
        ++placements;
      };
      for (auto [order, fit] : placementHeuristics())
        judge(placeGreedy(sb->buffers, order, fit),
              placementMethodName(order, fit));
      PlacementOptions placementOptions;
      placementOptions.timeLimitSeconds = 0.05;
      PlacementResult placed = placeBuffers(sb->buffers, placementOptions);
      judge(placed.offsets, "placeBuffers (" + placed.method + ")");
      EXPECT_GE(placed.arenaBytes, placed.lowerBoundBytes) << where;
      EXPECT_GE(placed.lowerBoundBytes, placed.livePeakBytes) << where;
      if (HasFailure())
        return;
    }
  }
  // The run covered what it claims to (a generator change that dropped
  // in-place updates or workspaces would make it prove less).
  EXPECT_GE(plans, 600u);
  EXPECT_GE(withInPlace, 50u);
  EXPECT_GE(withWorkspace, 50u);
  EXPECT_GE(placements, 6 * plans);
}

/// The checker rejects placements that break each rule (so the test above
/// can fail).
TEST(PlacementProperty, CheckerRejectsBadPlacements) {
  Rng rng(graphSeed(22, 1000));
  TrainingGraph graph;
  // Find a graph whose checkpoint-all plan has an in-place update.
  Schedule schedule;
  for (int attempt = 0; attempt < 200; ++attempt) {
    graph = randomTrainingGraph(rng, 16).graph;
    llvm::Expected<SolverResult> all =
        runSolver(*findSolver("checkpoint-all"), graph, {});
    ASSERT_TRUE(bool(all));
    if (checkPlan(graph, all->schedule).numInPlace > 0) {
      schedule = all->schedule;
      break;
    }
  }
  ASSERT_FALSE(schedule.steps.empty());
  llvm::Expected<ScheduleBuffers> sb = scheduleBuffers(graph, schedule);
  ASSERT_TRUE(bool(sb));
  PlacementResult placed = placeBuffers(sb->buffers);
  std::vector<uint64_t> perStep;
  ASSERT_EQ(checkPlacement(graph, schedule, *sb, placed.offsets, perStep), "");
  // Every buffer at 0: two buffers alive at once share bytes.
  std::vector<uint64_t> zeros(sb->buffers.size(), 0);
  EXPECT_NE(checkPlacement(graph, schedule, *sb, zeros, perStep)
                .find("used twice"),
            std::string::npos);
  // A lifetime cut short.
  ScheduleBuffers shorter = *sb;
  for (PlacementBuffer &b : shorter.buffers)
    if (b.end - b.begin > 1) {
      --b.end;
      break;
    }
  EXPECT_NE(checkPlacement(graph, schedule, shorter, placed.offsets, perStep)
                .find("lifetimes do not match"),
            std::string::npos);
  // An in-place output given a buffer of its own.
  ScheduleBuffers split = *sb;
  for (size_t b = 0; b < split.occupants.size(); ++b)
    if (split.occupants[b].size() > 1) {
      const ScheduleBuffers::Occupant &second = split.occupants[b][1];
      const Node &node = graph.node(schedule.steps[second.step].id);
      size_t k = std::find(node.outputs.begin(), node.outputs.end(),
                           second.value) -
                 node.outputs.begin();
      split.buffers.push_back(split.buffers[b]);
      split.buffers.back().begin = static_cast<int64_t>(second.step);
      split.outputBuffers[second.step][k] =
          static_cast<int>(split.buffers.size() - 1);
      break;
    }
  std::vector<uint64_t> stacked(split.buffers.size());
  uint64_t top = 0;
  for (size_t b = 0; b < split.buffers.size(); ++b) {
    stacked[b] = top;
    top += split.buffers[b].bytes;
  }
  EXPECT_NE(checkPlacement(graph, schedule, split, stacked, perStep)
                .find("in-place output not at its input's offset"),
            std::string::npos);
}

} // namespace
