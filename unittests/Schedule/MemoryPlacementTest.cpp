//===- MemoryPlacementTest.cpp - Buffers at arena offsets ------------------===//
//
// The placement solvers of issue 22 on hand-built instances whose answer is
// worked out by hand, and on small random instances against two brute
// forces: every aligned offset on a grid (n <= 5), and every order of the
// buffers each put on top of the conflicting ones placed before it (n <= 7;
// every placement can be pushed down into one of these). The exact search
// must find the brute-force optimum and prove it (and prove one byte less
// infeasible); every heuristic must give a valid placement. The buffers of a
// schedule are checked on hand-built graphs here (random graphs and every
// solver's plans: unittests/Property/PlacementPropertyTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "remat/Schedule/MemoryPlacement.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

using namespace remat;

namespace {

PlacementBuffer buffer(uint64_t bytes, int64_t begin, int64_t end,
                       uint64_t alignment = 1) {
  PlacementBuffer b;
  b.bytes = bytes;
  b.alignment = alignment;
  b.begin = begin;
  b.end = end;
  return b;
}

void expectValid(const std::vector<PlacementBuffer> &buffers,
                 const std::vector<uint64_t> &offsets) {
  llvm::Error err = verifyPlacement(buffers, offsets);
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
}

/// Every order with every fit (placeBuffers runs placementHeuristics(), a
/// subset): each must give a valid placement no smaller than the optimum.
std::vector<std::pair<PlacementOrder, PlacementFit>> allHeuristics() {
  std::vector<std::pair<PlacementOrder, PlacementFit>> all;
  for (PlacementOrder order :
       {PlacementOrder::Size, PlacementOrder::Conflicts,
        PlacementOrder::Lifetime, PlacementOrder::Area,
        PlacementOrder::Program, PlacementOrder::Breadth})
    for (PlacementFit fit :
         {PlacementFit::Best, PlacementFit::First, PlacementFit::Skyline})
      all.push_back({order, fit});
  return all;
}

//===----------------------------------------------------------------------===//
// The problem's definitions
//===----------------------------------------------------------------------===//

TEST(Placement, LifetimesAreHalfOpen) {
  // [0, 2) and [2, 4) never meet: they may share bytes.
  EXPECT_FALSE(placementConflict(buffer(8, 0, 2), buffer(8, 2, 4)));
  EXPECT_TRUE(placementConflict(buffer(8, 0, 3), buffer(8, 2, 4)));
  // Empty lifetimes and zero sizes conflict with nothing.
  EXPECT_FALSE(placementConflict(buffer(8, 2, 2), buffer(8, 0, 4)));
  EXPECT_FALSE(placementConflict(buffer(0, 0, 4), buffer(8, 0, 4)));
  std::vector<PlacementBuffer> chain = {buffer(8, 0, 2), buffer(8, 2, 4)};
  EXPECT_EQ(placementLivePeak(chain), 8u);
  std::vector<uint64_t> same = {0, 0};
  expectValid(chain, same);
}

TEST(Placement, LivePeakAndAlignedLowerBound) {
  std::vector<PlacementBuffer> buffers = {
      buffer(10, 0, 3), buffer(5, 1, 4), buffer(7, 3, 5), buffer(100, 6, 7)};
  // Alive at 1, 2: 15; at 3: 5 + 7 = 12; at 6: 100.
  EXPECT_EQ(placementLivePeak(buffers), 100u);
  buffers.pop_back();
  EXPECT_EQ(placementLivePeak(buffers), 15u);
  EXPECT_EQ(placementLowerBound(buffers), 15u);
  // Aligned to 8: at steps 1 and 2, one of 10 and 5 lies below the other
  // and takes its size rounded up to 8: 16 + 5 or 10 + 8, at least 18.
  for (PlacementBuffer &b : buffers)
    b.alignment = 8;
  EXPECT_EQ(placementLowerBound(buffers), 18u);
  PlacementResult result = placeBuffers(buffers);
  EXPECT_EQ(result.arenaBytes, 18u);
  EXPECT_TRUE(result.optimal);
  expectValid(buffers, result.offsets);
}

TEST(Placement, VerifyRejectsOverlapAndMisalignment) {
  std::vector<PlacementBuffer> buffers = {buffer(10, 0, 3), buffer(5, 1, 4, 4)};
  llvm::Error overlap = verifyPlacement(buffers, {0, 8});
  ASSERT_TRUE(bool(overlap));
  EXPECT_NE(llvm::toString(std::move(overlap)).find("overlap in [8, 10)"),
            std::string::npos);
  llvm::Error misaligned = verifyPlacement(buffers, {0, 10});
  ASSERT_TRUE(bool(misaligned));
  EXPECT_NE(llvm::toString(std::move(misaligned)).find("not aligned to 4"),
            std::string::npos);
  EXPECT_FALSE(bool(verifyPlacement(buffers, {0, 12})));
  EXPECT_EQ(placementArena(buffers, {0, 12}), 17u);
  EXPECT_TRUE(bool(verifyPlacement(buffers, {0})));
}

TEST(Placement, CheckRejectsBadInput) {
  llvm::Error align = checkPlacementProblem({buffer(4, 0, 1, 3)});
  ASSERT_TRUE(bool(align));
  EXPECT_NE(llvm::toString(std::move(align)).find("not a power of two"),
            std::string::npos);
  llvm::Error backwards = checkPlacementProblem({buffer(4, 2, 1)});
  ASSERT_TRUE(bool(backwards));
  llvm::consumeError(std::move(backwards));
  llvm::Error huge = checkPlacementProblem(
      {buffer(uint64_t(1) << 61, 0, 1), buffer(uint64_t(1) << 61, 0, 1)});
  ASSERT_TRUE(bool(huge));
  llvm::consumeError(std::move(huge));
  EXPECT_FALSE(bool(checkPlacementProblem({buffer(4, 0, 1, 64)})));
}

TEST(Placement, EmptyProblem) {
  PlacementResult result = placeBuffers({});
  EXPECT_EQ(result.arenaBytes, 0u);
  EXPECT_TRUE(result.optimal);
  std::vector<PlacementBuffer> zero = {buffer(0, 0, 5), buffer(7, 3, 3)};
  result = placeBuffers(zero);
  EXPECT_EQ(result.arenaBytes, 0u);
  EXPECT_EQ(result.offsets, (std::vector<uint64_t>{0, 0}));
}

/// An instance where greedy by size is not optimal: the exact search has to
/// improve on it, and prove the improvement optimal.
TEST(Placement, ExactBeatsGreedyBySize) {
  // By size, the two buffers of 5 go at 0 (they never meet); the one of 1
  // alive over [1, 5) then has to sit above the first (at 5), and the 2 at
  // [2, 3) above it: 8. The optimum puts the long 1 at the bottom, under the
  // 5 of [3, 5) and a 2: 7, the live peak. (Found by a random search.)
  std::vector<PlacementBuffer> buffers = {buffer(5, 3, 5), buffer(5, 0, 1),
                                          buffer(1, 1, 5), buffer(2, 2, 3),
                                          buffer(2, 0, 2)};
  uint64_t bySize = placementArena(
      buffers, placeGreedy(buffers, PlacementOrder::Size, PlacementFit::Best));
  EXPECT_EQ(bySize, 8u);
  PlacementOptions options;
  options.timeLimitSeconds = 0;
  PlacementResult result = placeBuffers(buffers, options);
  expectValid(buffers, result.offsets);
  EXPECT_TRUE(result.optimal);
  EXPECT_EQ(result.arenaBytes, 7u);
  EXPECT_EQ(result.livePeakBytes, 7u);
  // First fit in program order happens to find it too; the exact search
  // alone, from the stacked placement (17 bytes), finds it and proves it.
  options.heuristics = false;
  PlacementResult alone = placeBuffers(buffers, options);
  expectValid(buffers, alone.offsets);
  EXPECT_EQ(alone.method, "exact");
  EXPECT_EQ(alone.arenaBytes, 7u);
  EXPECT_TRUE(alone.optimal);
}

//===----------------------------------------------------------------------===//
// Brute forces on random instances
//===----------------------------------------------------------------------===//

std::vector<PlacementBuffer> randomInstance(std::mt19937_64 &rng, size_t n,
                                            uint64_t maxBytes,
                                            uint64_t maxAlignLog,
                                            int64_t horizon) {
  std::vector<PlacementBuffer> buffers;
  for (size_t i = 0; i < n; ++i) {
    int64_t a = rng() % horizon, b = rng() % horizon;
    if (a > b)
      std::swap(a, b);
    // Mostly proper lifetimes, some single steps, rarely empty or 0 bytes.
    if (rng() % 8 == 0)
      b = a + 1;
    else if (a == b && rng() % 4 != 0)
      ++b;
    uint64_t bytes = rng() % 16 == 0 ? 0 : 1 + rng() % maxBytes;
    buffers.push_back(buffer(bytes, a, b, uint64_t(1) << (rng() % (maxAlignLog + 1))));
  }
  return buffers;
}

/// Every aligned offset of every buffer below the best arena so far, in
/// index order: the least arena over all placements, with no reasoning
/// about which placements suffice.
uint64_t gridOptimum(const std::vector<PlacementBuffer> &buffers) {
  const size_t n = buffers.size();
  uint64_t best = 1;
  for (const PlacementBuffer &b : buffers)
    best += b.bytes + b.alignment;
  std::vector<uint64_t> offsets(n, 0);
  std::function<void(size_t, uint64_t)> visit = [&](size_t k, uint64_t top) {
    if (k == n) {
      best = std::min(best, top);
      return;
    }
    const PlacementBuffer &b = buffers[k];
    if (b.isEmpty()) {
      visit(k + 1, top);
      return;
    }
    for (uint64_t o = 0; o + b.bytes < best; o += b.alignment) {
      bool clash = false;
      for (size_t j = 0; j < k && !clash; ++j)
        clash = placementConflict(b, buffers[j]) &&
                o < offsets[j] + buffers[j].bytes &&
                offsets[j] < o + b.bytes;
      if (clash)
        continue;
      offsets[k] = o;
      visit(k + 1, std::max(top, o + b.bytes));
    }
  };
  visit(0, 0);
  return best;
}

/// Every order of the buffers, each put at the lowest aligned offset above
/// the conflicting buffers placed before it ("gravity": any placement,
/// pushed down buffer by buffer in offset order, is one of these).
uint64_t orderOptimum(const std::vector<PlacementBuffer> &buffers) {
  std::vector<size_t> order;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (!buffers[i].isEmpty())
      order.push_back(i);
  uint64_t best = std::numeric_limits<uint64_t>::max();
  std::vector<uint64_t> offsets(buffers.size(), 0);
  do {
    uint64_t arena = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const PlacementBuffer &b = buffers[order[k]];
      uint64_t at = 0;
      for (size_t j = 0; j < k; ++j)
        if (placementConflict(b, buffers[order[j]]))
          at = std::max(at, offsets[order[j]] + buffers[order[j]].bytes);
      at = (at + b.alignment - 1) / b.alignment * b.alignment;
      offsets[order[k]] = at;
      arena = std::max(arena, at + b.bytes);
    }
    best = std::min(best, arena);
  } while (std::next_permutation(order.begin(), order.end()));
  return order.empty() ? 0 : best;
}

void checkAgainst(const std::vector<PlacementBuffer> &buffers,
                  uint64_t optimum, const std::string &what) {
  SCOPED_TRACE(what);
  ASSERT_FALSE(bool(checkPlacementProblem(buffers)));
  EXPECT_LE(placementLivePeak(buffers), optimum);
  EXPECT_LE(placementLowerBound(buffers), optimum);
  for (auto [order, fit] : allHeuristics()) {
    std::vector<uint64_t> offsets = placeGreedy(buffers, order, fit);
    expectValid(buffers, offsets);
    EXPECT_GE(placementArena(buffers, offsets), optimum)
        << placementMethodName(order, fit);
  }
  PlacementOptions options;
  options.timeLimitSeconds = 0; // run to the end: a proof every time
  PlacementResult result = placeBuffers(buffers, options);
  expectValid(buffers, result.offsets);
  EXPECT_EQ(result.arenaBytes, optimum);
  EXPECT_TRUE(result.optimal);
  EXPECT_EQ(result.lowerBoundBytes, optimum);
  // The exact search alone, from the stacked placement.
  options.heuristics = false;
  PlacementResult alone = placeBuffers(buffers, options);
  expectValid(buffers, alone.offsets);
  EXPECT_EQ(alone.arenaBytes, optimum);
  EXPECT_TRUE(alone.optimal);
  // The decision search at the optimum and one byte below.
  std::vector<uint64_t> offsets;
  EXPECT_EQ(searchPlacement(buffers, optimum, 0, offsets),
            PlacementSearchOutcome::Found);
  expectValid(buffers, offsets);
  EXPECT_LE(placementArena(buffers, offsets), optimum);
  if (optimum > 0) {
    EXPECT_EQ(searchPlacement(buffers, optimum - 1, 0, offsets),
              PlacementSearchOutcome::Infeasible);
  }
}

TEST(Placement, ExactMatchesGridBruteForce) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 300; ++trial) {
    size_t n = 1 + rng() % 5;
    std::vector<PlacementBuffer> buffers =
        randomInstance(rng, n, 3, trial % 3 == 0 ? 1 : 0, 5);
    checkAgainst(buffers, gridOptimum(buffers),
                 "grid trial " + std::to_string(trial));
    if (HasFailure())
      return;
  }
}

TEST(Placement, ExactMatchesOrderBruteForce) {
  std::mt19937_64 rng(7);
  int improvedOnHeuristics = 0;
  for (int trial = 0; trial < 400; ++trial) {
    size_t n = 2 + rng() % 6;
    std::vector<PlacementBuffer> buffers =
        randomInstance(rng, n, 8, trial % 2 == 0 ? 2 : 0, 7);
    uint64_t optimum = orderOptimum(buffers);
    checkAgainst(buffers, optimum, "order trial " + std::to_string(trial));
    if (HasFailure())
      return;
    PlacementOptions heuristicsOnly;
    heuristicsOnly.exact = false;
    improvedOnHeuristics +=
        placeBuffers(buffers, heuristicsOnly).arenaBytes > optimum;
  }
  // The instances are not all easy: the heuristics miss some optima that
  // the exact search finds (a search that only confirmed them would pass
  // the rest of this test too).
  EXPECT_GT(improvedOnHeuristics, 0);
}

/// Without alignment, small random instances almost always place in their
/// live peak; this one (found among 1.7 million) cannot: the search must
/// prove 9 bytes infeasible, not merely fail to find a placement.
TEST(Placement, ProvesAnOptimumAboveTheLivePeak) {
  std::vector<PlacementBuffer> buffers = {
      buffer(4, 5, 6), buffer(2, 3, 7), buffer(5, 6, 7), buffer(3, 2, 3),
      buffer(3, 2, 6), buffer(1, 2, 5), buffer(2, 0, 4), buffer(6, 0, 1)};
  EXPECT_EQ(placementLivePeak(buffers), 9u);
  EXPECT_EQ(orderOptimum(buffers), 10u);
  checkAgainst(buffers, 10, "above the live peak");
}

TEST(Placement, BreadthsAgainstBruteForce) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<PlacementBuffer> buffers =
        randomInstance(rng, 1 + rng() % 40, 100, 0, 1 + rng() % 30);
    std::vector<uint64_t> breadths = placementBreadths(buffers);
    ASSERT_EQ(breadths.size(), buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
      uint64_t most = 0;
      if (!buffers[i].isEmpty())
        for (int64_t t = buffers[i].begin; t < buffers[i].end; ++t) {
          uint64_t alive = 0;
          for (const PlacementBuffer &b : buffers)
            if (!b.isEmpty() && b.begin <= t && t < b.end)
              alive += b.bytes;
          most = std::max(most, alive);
        }
      EXPECT_EQ(breadths[i], most) << "trial " << trial << " buffer " << i;
    }
  }
}

/// Hundreds of buffers: every method valid, the result no worse than any
/// heuristic and at least the lower bound, and the time limit respected.
TEST(Placement, LargeRandomInstances) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 6; ++trial) {
    std::vector<PlacementBuffer> buffers =
        randomInstance(rng, 300 + 100 * trial, 1 << 20, 6, 400);
    PlacementOptions options;
    options.timeLimitSeconds = 0.2;
    PlacementResult result = placeBuffers(buffers, options);
    expectValid(buffers, result.offsets);
    EXPECT_GE(result.arenaBytes, result.lowerBoundBytes);
    EXPECT_GE(result.lowerBoundBytes, result.livePeakBytes);
    for (const PlacementAttempt &attempt : result.attempts)
      if (attempt.found) {
        EXPECT_GE(attempt.arenaBytes, result.arenaBytes) << attempt.method;
      }
    // The search stops near its limit (generous: the heuristics come on
    // top, and the machine may be loaded).
    EXPECT_LT(result.seconds, 3.0);
  }
}

//===----------------------------------------------------------------------===//
// The buffers of a schedule
//===----------------------------------------------------------------------===//

/// x (fixed) -> f0 -> a (8) -> f1 (workspace 5) -> b (4); acc: a += b in
/// place -> c (8, reuses a); loss -> l (1, output).
struct Graph {
  TrainingGraph g;
  ValueId x, a, b, c, l;
  NodeId f0, f1, acc, loss;
  Graph() {
    x = g.addFixedValue("x", 100);
    f0 = g.addNode("f0", "op", 1, Phase::Forward, {x});
    a = g.addOutput(f0, "a", 8);
    f1 = g.addNode("f1", "op", 1, Phase::Forward, {a});
    b = g.addOutput(f1, "b", 4);
    g.node(f1).workspaceBytes = 5;
    acc = g.addNode("acc", "op", 1, Phase::Forward, {a, b});
    c = g.addOutput(acc, "c", 8);
    g.node(acc).reuses.push_back({a, c});
    loss = g.addNode("loss", "op", 1, Phase::Forward, {c});
    l = g.addOutput(loss, "l", 1);
    g.markOutput(l);
    EXPECT_FALSE(bool(g.verify()));
  }
};

void expectTimelineMatches(const TrainingGraph &g, const Schedule &schedule,
                           const ScheduleBuffers &sb) {
  SimulationReport report = simulate(g, schedule);
  ASSERT_TRUE(report.valid) << report.error;
  for (size_t t = 0; t < schedule.steps.size(); ++t) {
    uint64_t live = 0;
    for (const PlacementBuffer &b : sb.buffers)
      if (b.begin <= int64_t(t) && int64_t(t) < b.end)
        live += b.bytes;
    EXPECT_EQ(live, report.timeline[t]) << "statement " << t;
  }
  EXPECT_EQ(placementLivePeak(sb.buffers), report.peakBytes);
}

TEST(ScheduleBuffers, InPlaceUpdateSharesTheInputsBuffer) {
  Graph G;
  Schedule schedule = insertEarlyFrees(G.g, {G.f0, G.f1, G.acc, G.loss});
  // f0, f1, acc, free a, free b, loss, free c.
  ASSERT_EQ(schedule.steps.size(), 7u);
  llvm::Expected<ScheduleBuffers> sb = scheduleBuffers(G.g, schedule, 16);
  ASSERT_TRUE(bool(sb)) << llvm::toString(sb.takeError());
  // a/c share one buffer, b, f1's workspace, l.
  ASSERT_EQ(sb->buffers.size(), 4u);
  int ac = sb->outputBuffers[0][0];
  EXPECT_EQ(sb->outputBuffers[2][0], ac);
  EXPECT_EQ(sb->buffers[ac].begin, 0);
  EXPECT_EQ(sb->buffers[ac].end, 6); // the Free of c, statement 6
  EXPECT_EQ(sb->buffers[ac].alignment, 16u);
  ASSERT_EQ(sb->occupants[ac].size(), 2u);
  EXPECT_EQ(sb->occupants[ac][0].value, G.a);
  EXPECT_EQ(sb->occupants[ac][1].value, G.c);
  EXPECT_EQ(sb->occupants[ac][1].step, 2u);
  int ws = sb->workspaceBuffers[1];
  ASSERT_GE(ws, 0);
  EXPECT_EQ(sb->buffers[ws].begin, 1);
  EXPECT_EQ(sb->buffers[ws].end, 2);
  EXPECT_EQ(sb->buffers[ws].bytes, 5u);
  int b = sb->outputBuffers[1][0];
  EXPECT_EQ(sb->buffers[b].begin, 1);
  EXPECT_EQ(sb->buffers[b].end, 4); // freed at statement 4
  int l = sb->outputBuffers[5][0];
  EXPECT_EQ(sb->buffers[l].end, 7); // a step output: to the end
  EXPECT_TRUE(sb->outputBuffers[3].empty());
  EXPECT_EQ(sb->workspaceBuffers[0], -1);
  expectTimelineMatches(G.g, schedule, *sb);
  PlacementResult placed = placeBuffers(sb->buffers);
  expectValid(sb->buffers, placed.offsets);
  // 8 + 4 + 5 alive at f1, each rounded to 16 but the topmost: 16 + 16 + 4.
  EXPECT_EQ(placed.livePeakBytes, 17u);
  EXPECT_EQ(placed.lowerBoundBytes, 36u);
  EXPECT_EQ(placed.arenaBytes, 36u);
  EXPECT_TRUE(placed.optimal);
}

TEST(ScheduleBuffers, PlaceScheduleGivesEveryOutputAnOffset) {
  Graph G;
  Schedule schedule = insertEarlyFrees(G.g, {G.f0, G.f1, G.acc, G.loss});
  llvm::Expected<SchedulePlacement> placed = placeSchedule(G.g, schedule, 16);
  ASSERT_TRUE(bool(placed)) << llvm::toString(placed.takeError());
  expectValid(placed->buffers.buffers, placed->placement.offsets);
  EXPECT_EQ(placed->placement.arenaBytes, 36u);
  // The accumulation writes where a was.
  EXPECT_EQ(placed->outputOffset(2, 0), placed->outputOffset(0, 0));
  ASSERT_TRUE(placed->workspaceOffset(1).has_value());
  EXPECT_EQ(*placed->workspaceOffset(1) % 16, 0u);
  EXPECT_FALSE(placed->workspaceOffset(0).has_value());
  // b and the workspace are alive at f1 with a: three different places.
  std::set<uint64_t> atF1 = {placed->outputOffset(0, 0),
                             placed->outputOffset(1, 0),
                             *placed->workspaceOffset(1)};
  EXPECT_EQ(atF1.size(), 3u);
  llvm::Expected<SchedulePlacement> invalid =
      placeSchedule(G.g, Schedule{{Step::compute(G.f1)}});
  ASSERT_FALSE(bool(invalid));
  llvm::consumeError(invalid.takeError());
}

TEST(ScheduleBuffers, NotInPlaceWhenTheInputIsReadLater) {
  Graph G;
  // The loss also reads a: the accumulation cannot write into a's buffer.
  G.g.node(G.loss).inputs.push_back(G.a);
  G.g.value(G.a).users.push_back(G.loss);
  ASSERT_FALSE(bool(G.g.verify()));
  Schedule schedule = insertEarlyFrees(G.g, {G.f0, G.f1, G.acc, G.loss});
  llvm::Expected<ScheduleBuffers> sb = scheduleBuffers(G.g, schedule);
  ASSERT_TRUE(bool(sb)) << llvm::toString(sb.takeError());
  int a = sb->outputBuffers[0][0];
  EXPECT_NE(sb->outputBuffers[2][0], a);
  EXPECT_EQ(sb->occupants[a].size(), 1u);
  expectTimelineMatches(G.g, schedule, *sb);
}

TEST(ScheduleBuffers, RecomputationAllocatesANewBuffer) {
  Graph G;
  // f0 computed, freed, computed again.
  Schedule schedule{{Step::compute(G.f0), Step::compute(G.f1),
                     Step::free(G.a), Step::compute(G.f0),
                     Step::compute(G.acc), Step::free(G.b),
                     Step::compute(G.loss), Step::free(G.c)}};
  llvm::Expected<ScheduleBuffers> sb = scheduleBuffers(G.g, schedule);
  ASSERT_TRUE(bool(sb)) << llvm::toString(sb.takeError());
  int first = sb->outputBuffers[0][0], second = sb->outputBuffers[3][0];
  EXPECT_NE(first, second);
  EXPECT_EQ(sb->buffers[first].end, 2);
  EXPECT_EQ(sb->buffers[second].begin, 3);
  EXPECT_EQ(sb->outputBuffers[4][0], second); // acc in place into a
  expectTimelineMatches(G.g, schedule, *sb);
}

TEST(ScheduleBuffers, RejectsInvalidPlans) {
  Graph G;
  Schedule bad{{Step::compute(G.f1)}};
  llvm::Expected<ScheduleBuffers> sb = scheduleBuffers(G.g, bad);
  ASSERT_FALSE(bool(sb));
  EXPECT_NE(llvm::toString(sb.takeError()).find("invalid schedule"),
            std::string::npos);
  llvm::Expected<ScheduleBuffers> align =
      scheduleBuffers(G.g, insertEarlyFrees(G.g, {0, 1, 2, 3}), 12);
  ASSERT_FALSE(bool(align));
  llvm::consumeError(align.takeError());
}

} // namespace
