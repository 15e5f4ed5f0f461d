//===- MemoryPlacement.cpp - Buffers at compile-time arena offsets --------===//
//
// placeBuffers: the greedy heuristics and skyline dives
// (PlacementHeuristics.cpp), then MiniMalloc's exact search over canonical
// solutions (ASPLOS'23; PlacementSearch.cpp) within the time limit, and the
// result with its JSON report; and the buffers of a schedule as the
// simulator counts them (scheduleBuffers, placeSchedule). See
// MemoryPlacement.h.
//
//===----------------------------------------------------------------------===//

#include "remat/Schedule/MemoryPlacement.h"

#include "PlacementInternal.h"

#include "remat/Support/Debug.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace remat;

// -debug-only=remat-placement: the heuristics' arenas, the exact search's
// probes (capacity, outcome, nodes) and the winner.
#define DEBUG_TYPE "remat-placement"

namespace {
double secondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}
} // namespace

//===----------------------------------------------------------------------===//
// The placement: heuristics, then the exact search
//===----------------------------------------------------------------------===//

double PlacementResult::fragmentation() const {
  return livePeakBytes ? double(arenaBytes) / double(livePeakBytes) - 1 : 0;
}

llvm::json::Value PlacementResult::toJSON(bool withOffsets) const {
  llvm::json::Array attemptsJSON;
  for (const PlacementAttempt &attempt : attempts)
    attemptsJSON.push_back(llvm::json::Object{
        {"method", attempt.method},
        {"arena_bytes", attempt.arenaBytes},
        {"found", attempt.found},
        {"seconds", attempt.seconds}});
  llvm::json::Object object{
      {"arena_bytes", arenaBytes},
      {"live_peak_bytes", livePeakBytes},
      {"lower_bound_bytes", lowerBoundBytes},
      {"fragmentation", fragmentation()},
      {"method", method},
      {"optimal", optimal},
      {"search_finished", searchFinished},
      {"search_nodes", searchNodes},
      {"seconds", seconds},
      {"attempts", std::move(attemptsJSON)},
  };
  if (withOffsets)
    object["offsets"] = llvm::json::Array(offsets);
  return object;
}

llvm::ArrayRef<std::pair<PlacementOrder, PlacementFit>>
remat::placementHeuristics() {
  static const std::pair<PlacementOrder, PlacementFit> heuristics[] = {
    {PlacementOrder::Size, PlacementFit::Best},
    {PlacementOrder::Conflicts, PlacementFit::Best},
    {PlacementOrder::Lifetime, PlacementFit::Best},
    {PlacementOrder::Area, PlacementFit::Best},
    {PlacementOrder::Program, PlacementFit::First},
    {PlacementOrder::Lifetime, PlacementFit::Skyline},
    {PlacementOrder::Size, PlacementFit::Skyline},
    {PlacementOrder::Area, PlacementFit::Skyline},
    {PlacementOrder::Program, PlacementFit::Skyline},
    {PlacementOrder::Breadth, PlacementFit::Skyline},
    {PlacementOrder::Breadth, PlacementFit::Best},
  };
  return heuristics;
}

PlacementResult remat::placeBuffers(const std::vector<PlacementBuffer> &buffers,
                                    const PlacementOptions &options) {
  const Clock::time_point begin = Clock::now();
  PlacementResult result;
  result.livePeakBytes = placementLivePeak(buffers);
  result.lowerBoundBytes = placementLowerBound(buffers);

  auto adopt = [&](std::vector<uint64_t> offsets, std::string method) {
    uint64_t arena = placementArena(buffers, offsets);
    if (result.method.empty() || arena < result.arenaBytes) {
      result.offsets = std::move(offsets);
      result.arenaBytes = arena;
      result.method = std::move(method);
    }
  };

  // The incumbent without heuristics: every buffer stacked on the previous
  // one, always valid.
  if (!options.heuristics) {
    std::vector<uint64_t> offsets(buffers.size(), 0);
    uint64_t top = 0;
    for (size_t i = 0, e = buffers.size(); i < e; ++i)
      if (!buffers[i].isEmpty()) {
        offsets[i] = alignUp(top, buffers[i].alignment);
        top = offsets[i] + buffers[i].bytes;
      }
    adopt(std::move(offsets), "stacked");
  } else {
    for (auto [order, fit] : placementHeuristics()) {
      Clock::time_point start = Clock::now();
      std::vector<uint64_t> offsets = placeGreedy(buffers, order, fit);
      PlacementAttempt attempt;
      attempt.method = placementMethodName(order, fit);
      attempt.arenaBytes = placementArena(buffers, offsets);
      attempt.seconds = secondsSince(start);
      result.attempts.push_back(attempt);
      LLVM_DEBUG(llvm::dbgs() << "placement: " << attempt.method << " arena "
                              << attempt.arenaBytes << " ("
                              << llvm::format("%.4f", attempt.seconds)
                              << " s)\n");
      adopt(std::move(offsets), attempt.method);
    }
  }
  if (buffers.empty())
    result.method = "empty";

  // The time limit covers the random dives and the exact search.
  const Clock::time_point start = Clock::now();
  const bool limited = options.timeLimitSeconds > 0;
  auto timeLeft = [&] {
    return !limited || secondsSince(start) < options.timeLimitSeconds;
  };

  // Random dives: skyline dives whose priorities (lifetime, area or
  // breadth, in turn) are scaled by random factors of growing spread, so
  // that each dive breaks the ties of the lowest skyline differently. The
  // dives differ most where the deterministic heuristics disagree, at the
  // fullest steps; the best of a few often closes most of the remaining gap
  // on large plans, where the exact search rarely finishes.
  if (options.heuristics && options.randomDives > 0 &&
      result.arenaBytes > result.lowerBoundBytes) {
    Clock::time_point diveStart = Clock::now();
    std::vector<uint64_t> breadth = placementBreadths(buffers);
    uint64_t state = 0x22dec0de;
    std::vector<size_t> sequence;
    std::vector<double> key(buffers.size(), 0);
    uint64_t bestDive = 0;
    bool found = false;
    for (unsigned dive = 0; dive < options.randomDives && timeLeft() &&
                            result.arenaBytes > result.lowerBoundBytes;
         ++dive) {
      static const double kSpread[] = {0.05, 0.2, 0.5, 1.0};
      double spread = kSpread[dive % 4];
      unsigned base = (dive / 4) % 3;
      sequence.clear();
      for (size_t i = 0; i < buffers.size(); ++i) {
        const PlacementBuffer &b = buffers[i];
        if (b.isEmpty())
          continue;
        sequence.push_back(i);
        double length = double(b.end - b.begin);
        double primary = base == 0   ? length
                         : base == 1 ? length * double(b.bytes)
                                     : double(breadth[i]);
        // splitmix64 (fixed seed): the same dives on every platform.
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        double unit = double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
        key[i] = primary * (1 + spread * (unit - 0.5));
      }
      std::stable_sort(sequence.begin(), sequence.end(),
                       [&](size_t a, size_t b) { return key[a] > key[b]; });
      std::vector<uint64_t> offsets = skylineDive(buffers, sequence);
      uint64_t arena = placementArena(buffers, offsets);
      if (!found || arena < bestDive)
        bestDive = arena;
      found = true;
      adopt(std::move(offsets), "skyline-random");
    }
    PlacementAttempt attempt;
    attempt.method = "skyline-random";
    attempt.found = found;
    attempt.arenaBytes = found ? bestDive : 0;
    attempt.seconds = secondsSince(diveStart);
    result.attempts.push_back(attempt);
    LLVM_DEBUG(llvm::dbgs() << "placement: random dives: best arena "
                            << bestDive << " ("
                            << llvm::format("%.4f", attempt.seconds)
                            << " s)\n");
  }

  // Binary search on the capacity between the proven lower bound and the
  // incumbent, the lower bound first (the usual answer on real plans, where
  // a placement meeting the live peak often exists). Each probe gets half
  // of the time that remains, so that a hard first probe leaves time for
  // the others. `lo` is proven (no arena below it exists); `probe` is the
  // least capacity not yet tried, above the probes that stopped unproven.
  uint64_t lo = result.lowerBoundBytes;
  if (options.exact && lo < result.arenaBytes && timeLeft()) {
    Clock::time_point searchStart = Clock::now();
    bool improved = false, first = true;
    uint64_t probe = lo;
    while (probe < result.arenaBytes) {
      double remaining = options.timeLimitSeconds - secondsSince(start);
      if (limited && remaining <= 1e-4)
        break;
      uint64_t capacity =
          first ? probe : probe + (result.arenaBytes - 1 - probe) / 2;
      first = false;
      std::vector<uint64_t> offsets;
      uint64_t nodes = 0;
      PlacementSearchOutcome outcome = searchPlacement(
          buffers, capacity, limited ? std::max(remaining / 2, 1e-3) : 0,
          offsets, &nodes, &result.offsets);
      result.searchNodes += nodes;
      LLVM_DEBUG(llvm::dbgs()
                 << "placement: exact probe at " << capacity << ": "
                 << (outcome == PlacementSearchOutcome::Found
                         ? "found"
                         : outcome == PlacementSearchOutcome::Infeasible
                               ? "infeasible"
                               : "stopped")
                 << " after " << nodes << " nodes\n");
      switch (outcome) {
      case PlacementSearchOutcome::Found:
        result.arenaBytes = placementArena(buffers, offsets);
        result.offsets = std::move(offsets);
        result.method = "exact";
        improved = true;
        probe = std::min(probe, result.arenaBytes);
        break;
      case PlacementSearchOutcome::Infeasible:
        // Infeasible at `capacity` is infeasible at every smaller one.
        lo = std::max(lo, capacity + 1);
        probe = std::max(probe, capacity + 1);
        break;
      case PlacementSearchOutcome::Stopped:
        probe = capacity + 1;
        break;
      }
    }
    result.searchFinished = lo >= result.arenaBytes;
    PlacementAttempt attempt;
    attempt.method = "exact";
    attempt.found = improved;
    attempt.arenaBytes = improved ? result.arenaBytes : 0;
    attempt.seconds = secondsSince(searchStart);
    result.attempts.push_back(attempt);
  }
  result.lowerBoundBytes = std::max(result.lowerBoundBytes,
                                    std::min(lo, result.arenaBytes));
  result.optimal = result.arenaBytes <= result.lowerBoundBytes;
  result.seconds = secondsSince(begin);
  LLVM_DEBUG(llvm::dbgs() << "placement: " << buffers.size() << " buffers, "
                          << "arena " << result.arenaBytes << " by "
                          << result.method << ", live peak "
                          << result.livePeakBytes << ", lower bound "
                          << result.lowerBoundBytes
                          << (result.optimal ? " (optimal)" : "") << ", "
                          << llvm::format("%.4f", result.seconds) << " s\n");
  return result;
}

//===----------------------------------------------------------------------===//
// The buffers of a schedule
//===----------------------------------------------------------------------===//

llvm::Expected<ScheduleBuffers>
remat::scheduleBuffers(const TrainingGraph &graph, const Schedule &schedule,
                       uint64_t alignment) {
  if (!llvm::isPowerOf2_64(alignment))
    return makeError("scheduleBuffers: alignment " + llvm::Twine(alignment) +
                     " is not a power of two");
  // The buffers follow the simulator's walk, so the plan must be one it
  // accepts (every read resident, no double allocation).
  SimulationReport report = simulate(graph, schedule);
  if (!report.valid)
    return makeError("scheduleBuffers: invalid schedule: " + report.error);

  const std::vector<std::vector<char>> inPlace =
      inPlaceUpdates(graph, schedule);
  const size_t numSteps = schedule.steps.size();
  ScheduleBuffers result;
  result.outputBuffers.resize(numSteps);
  result.workspaceBuffers.assign(numSteps, -1);
  // The buffer the live instance of each value holds; -1 when none (not
  // resident, fixed, or handed over by an in-place update).
  std::vector<int> holds(graph.numValues(), -1);
  constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();

  auto newBuffer = [&](uint64_t bytes, int64_t begin, int64_t end) {
    result.buffers.push_back({bytes, alignment, begin, end});
    result.occupants.emplace_back();
    return static_cast<int>(result.buffers.size() - 1);
  };

  for (size_t i = 0; i < numSteps; ++i) {
    const Step &step = schedule.steps[i];
    const int64_t t = static_cast<int64_t>(i);
    if (!step.isCompute()) {
      int &buffer = holds[step.id];
      if (buffer >= 0)
        result.buffers[buffer].end = t;
      buffer = -1;
      continue;
    }
    const Node &node = graph.node(step.id);
    std::vector<int> &outs = result.outputBuffers[i];
    outs.assign(node.outputs.size(), -1);
    for (size_t k = 0, e = node.outputs.size(); k < e; ++k) {
      ValueId out = node.outputs[k];
      int buffer = -1;
      // An in-place update continues the input's buffer.
      for (size_t r = 0; r < node.reuses.size(); ++r)
        if (inPlace[i][r] && node.reuses[r].second == out &&
            holds[node.reuses[r].first] >= 0) {
          buffer = holds[node.reuses[r].first];
          holds[node.reuses[r].first] = -1;
        }
      if (buffer < 0)
        buffer = newBuffer(graph.value(out).bytes, t, kOpen);
      result.occupants[buffer].push_back({i, out});
      holds[out] = buffer;
      outs[k] = buffer;
    }
    if (node.workspaceBytes > 0) {
      int buffer = newBuffer(node.workspaceBytes, t, t + 1);
      result.occupants[buffer].push_back({i, -1});
      result.workspaceBuffers[i] = buffer;
    }
  }
  for (PlacementBuffer &buffer : result.buffers)
    if (buffer.end == kOpen)
      buffer.end = static_cast<int64_t>(numSteps);
  return result;
}

llvm::Expected<SchedulePlacement>
remat::placeSchedule(const TrainingGraph &graph, const Schedule &schedule,
                     uint64_t alignment, const PlacementOptions &options) {
  llvm::Expected<ScheduleBuffers> buffers =
      scheduleBuffers(graph, schedule, alignment);
  if (!buffers)
    return buffers.takeError();
  SchedulePlacement result;
  result.placement = placeBuffers(buffers->buffers, options);
  result.buffers = std::move(*buffers);
  return result;
}
