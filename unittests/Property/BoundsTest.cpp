//===- BoundsTest.cpp - Optimality claims against exhaustive search -------===//
//
// Issue 24, item 1: every lower bound, "optimal" and "infeasible" a solver
// reports is a claim about all plans of the graph, so it is judged against
// the cheapest plan of all (BruteForceOptimum.h, exhaustive on tiny graphs),
// never against the solver's own model. The exact search (ExactSearch.h)
// must find that optimum itself.
//
//===----------------------------------------------------------------------===//

#include "BruteForceOptimum.h"
#include "IndependentChecker.h"
#include "RandomGraphs.h"

#include "remat/Schedule/Schedule.h"
#include "remat/Solvers/Evict.h"
#include "remat/Solvers/ExactSearch.h"
#include "remat/Solvers/Reorder.h"
#include "remat/Solvers/Solver.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>

using namespace remat;
using namespace remat::property;

namespace {

/// x (fixed) -> f0 -> a0 (10) -> f1 -> a1 (20) -> loss -> l (1, output);
/// b1 (l, a1) -> d1 (20); b0 (d1, a0) -> dx (7, output). Costs 1 2 1 2 1.
TrainingGraph smallStep() {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 100);
  NodeId f0 = g.addNode("f0", "op", 1, Phase::Forward, {x});
  ValueId a0 = g.addOutput(f0, "a0", 10);
  NodeId f1 = g.addNode("f1", "op", 2, Phase::Forward, {a0});
  ValueId a1 = g.addOutput(f1, "a1", 20);
  NodeId loss = g.addNode("loss", "op", 1, Phase::Forward, {a1});
  ValueId l = g.addOutput(loss, "l", 1);
  g.markOutput(l);
  NodeId b1 = g.addNode("b1", "op", 2, Phase::Backward, {l, a1});
  ValueId d1 = g.addOutput(b1, "d1", 20);
  NodeId b0 = g.addNode("b0", "op", 1, Phase::Backward, {d1, a0});
  ValueId dx = g.addOutput(b0, "dx", 7);
  g.markOutput(dx);
  EXPECT_FALSE(bool(g.verify()));
  return g;
}

TEST(BruteForceOptimum, SmallStepByHand) {
  TrainingGraph g = smallStep();
  // Everything kept: b1 runs with a0, a1, l and d1 resident (51 bytes).
  BruteForceResult all = bruteForceOptimum(g, 51);
  ASSERT_TRUE(all.solved && all.optimum);
  EXPECT_EQ(*all.optimum, 7);
  // Below 51, a0 must go and f0 run again (41 bytes at b1 without a0).
  BruteForceResult tight = bruteForceOptimum(g, 41);
  ASSERT_TRUE(tight.solved && tight.optimum);
  EXPECT_EQ(*tight.optimum, 8);
  // b1 alone holds l, a1 and d1: 41 bytes.
  BruteForceResult none = bruteForceOptimum(g, 40);
  EXPECT_TRUE(none.solved);
  EXPECT_FALSE(none.optimum);
}

TEST(BruteForceOptimum, InPlaceUpdateGivesItsBytes) {
  // p -> a (8); q (a, in place) -> b (8, output): 8 bytes suffice only in
  // place.
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 4);
  NodeId p = g.addNode("p", "op", 1, Phase::Forward, {x});
  ValueId a = g.addOutput(p, "a", 8);
  NodeId q = g.addNode("q", "op", 1, Phase::Forward, {a});
  ValueId b = g.addOutput(q, "b", 8);
  g.markOutput(b);
  g.node(q).reuses.push_back({a, b});
  ASSERT_FALSE(bool(g.verify()));
  EXPECT_EQ(*bruteForceOptimum(g, 8).optimum, 2);
  EXPECT_FALSE(bruteForceOptimum(g, 7).optimum);
}

/// A budget for graph `g` drawn the way remat-property-check draws them:
/// the node lower bound, checkpoint-all's peak, or in between.
uint64_t drawBudget(const TrainingGraph &g, Rng &rng) {
  uint64_t low = nodeLowerBound(g);
  uint64_t top = std::max(low, checkPlan(g, solveCheckpointAll(g)).peakBytes);
  switch (rng.below(4)) {
  case 0:
    return low;
  case 1:
    return low > 0 ? low - 1 : 0;
  case 2:
    return top;
  default:
    return rng.between(low, top);
  }
}

/// Graph `i` of the tiny random graphs of `seed`, a budget drawn for it and
/// the brute-force optimum there.
struct TinyCase {
  RandomGraph rg;
  uint64_t budget = 0;
  BruteForceResult truth;
  /// "graph I (SHAPE) budget B", for failure messages.
  std::string where;
};

TinyCase tinyCase(uint64_t seed, uint64_t i) {
  Rng rng(graphSeed(seed, i));
  TinyCase c{randomTrainingGraph(rng, 9)};
  c.budget = drawBudget(c.rg.graph, rng);
  c.truth = bruteForceOptimum(c.rg.graph, c.budget);
  c.where = "graph " + std::to_string(i) + " (" + c.rg.shape + ") budget " +
            std::to_string(c.budget);
  return c;
}

TEST(ExactSearch, EqualsBruteForceOnTinyRandomGraphs) {
  unsigned compared = 0, infeasible = 0, recomputing = 0;
  for (uint64_t i = 0; i < 3000 && compared < 1200; ++i) {
    TinyCase c = tinyCase(24, i);
    const TrainingGraph &g = c.rg.graph;
    const uint64_t budget = c.budget;
    const BruteForceResult &truth = c.truth;
    const std::string &where = c.where;
    if (!truth.solved)
      continue;
    ++compared;
    SolverOptions options;
    options.budget = budget;
    options.timeLimitSeconds = 0; // no time limit: only the state limit
    ExactSearchReport report;
    llvm::Expected<SolvedPlan> plan =
        solveExactSearch(g, options, ExactSearchOptions(), &report);
    if (!truth.optimum) {
      ++infeasible;
      EXPECT_FALSE(bool(plan)) << where;
      if (!plan)
        llvm::consumeError(plan.takeError());
      continue;
    }
    ASSERT_TRUE(bool(plan)) << where << ": " << llvm::toString(plan.takeError());
    EXPECT_TRUE(report.optimal) << where;
    CheckResult check = checkPlan(g, plan->schedule);
    ASSERT_TRUE(check.valid()) << where << ": " << check.violations[0];
    EXPECT_LE(check.peakBytes, budget) << where;
    EXPECT_NEAR(double(check.totalCost), double(*truth.optimum),
                1e-9 * std::max(1.0L, *truth.optimum))
        << where;
    EXPECT_NEAR(report.lowerBound, double(*truth.optimum),
                1e-9 * std::max(1.0L, *truth.optimum))
        << where;
    recomputing += check.numRecomputations > 0;
  }
  // The comparisons must include hard cases, not only trivial ones.
  EXPECT_GE(compared, 1000u);
  EXPECT_GE(infeasible, 50u);
  EXPECT_GE(recomputing, 50u);
}

/// peakLowerBound and leastPeakBound (its search of the schedules' ends,
/// which is at least it) are bounds: no plan of a tiny random graph peaks
/// below them (exhaustive search one byte under finds none), and the
/// searched one is the least peak on a good share of them.
TEST(PeakLowerBound, NoPlanOfTinyRandomGraphsPeaksBelowIt) {
  unsigned compared = 0, tight = 0, endgameRaises = 0, searchRaises = 0;
  for (uint64_t i = 0; i < 3000 && compared < 1500; ++i) {
    Rng rng(graphSeed(2417, i));
    RandomGraph rg = randomTrainingGraph(rng, 9);
    const TrainingGraph &g = rg.graph;
    const uint64_t cheap = peakLowerBound(g);
    const uint64_t bound = leastPeakBound(g, /*seconds=*/0);
    EXPECT_GE(bound, cheap) << "graph " << i;
    if (bound == 0)
      continue;
    BruteForceResult below = bruteForceOptimum(g, bound - 1);
    BruteForceResult at = bruteForceOptimum(g, bound);
    if (!below.solved || !at.solved)
      continue;
    ++compared;
    EXPECT_FALSE(below.optimum)
        << "graph " << i << " (" << rg.shape << "): a plan peaks below "
        << bound;
    tight += bool(at.optimum);
    std::vector<uint64_t> footprints = nodeFootprints(g);
    uint64_t largest = *std::max_element(footprints.begin(), footprints.end());
    endgameRaises += cheap > largest;
    searchRaises += bound > cheap;
  }
  std::printf("peak lower bound: %u graphs, the least peak on %u, the "
              "endgame above every node footprint on %u, the search above "
              "the endgame on %u\n",
              compared, tight, endgameRaises, searchRaises);
  EXPECT_GE(compared, 1000u);
  EXPECT_GE(tight, 1400u);
  EXPECT_GE(endgameRaises, 50u);
  EXPECT_GE(searchRaises, 20u);
}

/// The residency bound (residencyLowerBound, every candidate moment) is at
/// most the optimum of every tiny random graph at a random budget, and above
/// the total cost on a good share of them (a bound that never rises above
/// the trivial one would pass the first check vacuously).
/// Every moment alone, and every moment at once (each node's cost counted
/// once), are both checked; the joint bound must rise above the best moment
/// alone on some graphs, and the integer programs (CBC's bound) at every
/// moment are checked the same way. Mutations that each made it fail: a
/// value of a node unordered with the moment counted as produced before it,
/// a reader unordered with it counted as after it, and a step output of an
/// unordered node counted as resident whichever side it ran. Found by it,
/// over 100,000 graphs of other seeds: CBC's infeasible and optimal claims
/// at its default integer tolerance, a memory row without slack, and the
/// order link between unordered moments (lib/Solvers/ResidencyBound.cpp).
TEST(ResidencyBound, IsAtMostTheOptimumOfTinyRandomGraphs) {
  unsigned compared = 0, aboveTotal = 0, tight = 0, jointAbove = 0,
           integerAbove = 0;
  for (uint64_t i = 0; i < 3000 && compared < 1500; ++i) {
    TinyCase c = tinyCase(2402, i);
    const TrainingGraph &g = c.rg.graph;
    if (!c.truth.solved || !c.truth.optimum)
      continue;
    ++compared;
    double opt = double(*c.truth.optimum);
    double total = g.totalCost();
    const unsigned all = unsigned(g.numNodes());
    double alone = residencyLowerBound(g, c.budget, /*seconds=*/10.0,
                                       /*maxMoments=*/all, /*jointMoments=*/0,
                                       /*integerMoments=*/0);
    double bound = residencyLowerBound(g, c.budget, /*seconds=*/10.0,
                                       /*maxMoments=*/all,
                                       /*jointMoments=*/all,
                                       /*integerMoments=*/0);
    double integer = residencyLowerBound(g, c.budget, /*seconds=*/10.0,
                                         /*maxMoments=*/all,
                                         /*jointMoments=*/0,
                                         /*integerMoments=*/all);
    const std::string &where = c.where;
    EXPECT_GE(bound, total) << where;
    EXPECT_LE(bound, opt + 1e-9 * std::max(1.0, opt)) << where;
    EXPECT_GE(bound, alone) << where;
    EXPECT_LE(integer, opt + 1e-9 * std::max(1.0, opt)) << where;
    EXPECT_GE(integer, alone * (1 - 1e-6)) << where;
    jointAbove += bound > alone * (1 + 1e-9);
    integerAbove += integer > alone * (1 + 1e-6);
    aboveTotal += bound > total * (1 + 1e-9);
    tight += opt > total && bound >= opt * (1 - 1e-5);
  }
  std::printf("residency bound: %u graphs, %u above the total cost, %u "
              "equal to the optimum where it recomputes, %u raised by the "
              "moments at once, %u by the integer programs\n",
              compared, aboveTotal, tight, jointAbove, integerAbove);
  EXPECT_GE(compared, 1000u);
  // 199 and 142 when the nodes unordered with the moment came in (166 and
  // 122 with the ancestors' values alone), 202 and 255 once a value larger
  // than the room is never kept (even fractionally): the thresholds fail
  // without them. 11 raised by the integer programs when they came in.
  EXPECT_GE(aboveTotal, 190u);
  EXPECT_GE(tight, 240u);
  // 3 of the 1,500 when written, 9 with the rows that count a value's two
  // reruns (80,000 graphs of four other seeds: 315 raised, none above the
  // optimum).
  EXPECT_GE(jointAbove, 8u);
  EXPECT_GE(integerAbove, 8u);
}

/// Per node of `g`, the nodes reachable from it (its descendants).
std::vector<std::vector<char>> descendantsOf(const TrainingGraph &g) {
  const size_t n = g.numNodes();
  std::vector<std::vector<char>> reaches(n, std::vector<char>(n, 0));
  for (NodeId id = NodeId(n) - 1; id >= 0; --id)
    for (ValueId out : g.node(id).outputs)
      for (NodeId user : g.value(out).users) {
        reaches[id][user] = 1;
        for (size_t k = 0; k < n; ++k)
          reaches[id][k] |= reaches[user][k];
      }
  return reaches;
}

/// The eviction planner guided by the residency bound's relaxation
/// (solveEvictGuided) on tiny random graphs at random budgets: the guide
/// holds one share in [0, 1] per node and, per moment, unordered nodes
/// only, each on one side; its start order is topological; every plan is
/// valid and, within the budget, costs at least the optimum. On these
/// graphs the guide gains nothing over the unguided planner (the shares
/// mostly come from values too large to keep, and the planner already
/// evicts those); its gain is on the transformer (docs/solvers-at-scale.md),
/// and `auto` runs both.
TEST(EvictGuided, FollowsTheRelaxationToValidPlansOfTinyRandomGraphs) {
  unsigned guided = 0, planned = 0, binding = 0, optimal = 0;
  for (uint64_t i = 0; i < 4000 && guided < 600; ++i) {
    TinyCase c = tinyCase(2425, i);
    const TrainingGraph &g = c.rg.graph;
    if (!c.truth.solved || !c.truth.optimum)
      continue;
    const std::string &where = c.where;
    const size_t n = g.numNodes();
    const unsigned all = unsigned(n);
    ResidencyGuide guide;
    residencyLowerBound(g, c.budget, /*seconds=*/10.0, /*maxMoments=*/all,
                        /*jointMoments=*/all, /*integerMoments=*/0, &guide);
    if (guide.empty())
      continue;
    ++guided;
    ASSERT_EQ(guide.rerunShare.size(), n) << where;
    for (double share : guide.rerunShare) {
      EXPECT_GE(share, 0.0) << where;
      EXPECT_LE(share, 1.0) << where;
    }
    std::vector<std::vector<char>> reaches = descendantsOf(g);
    for (const ResidencyGuide::MomentOrder &moment : guide.moments) {
      binding += moment.binding;
      std::vector<char> side(n, 0);
      for (auto [group, mark] : {std::pair(&moment.before, 1),
                                 std::pair(&moment.after, 2)})
        for (NodeId z : *group) {
          ASSERT_TRUE(z >= 0 && size_t(z) < n) << where;
          EXPECT_NE(z, moment.node) << where;
          EXPECT_FALSE(reaches[z][moment.node] || reaches[moment.node][z])
              << where << ": node " << z << " is ordered with moment "
              << moment.node;
          EXPECT_EQ(side[z], 0) << where << ": node " << z << " on both sides";
          side[z] = char(mark);
        }
    }
    EXPECT_TRUE(isTopologicalOrder(g, guidedStartOrder(g, guide))) << where;
    SolverOptions options;
    options.budget = c.budget;
    options.timeLimitSeconds = 0;
    llvm::Expected<SolvedPlan> plan = solveEvictGuided(g, options, guide);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    CheckResult check = checkPlan(g, plan->schedule);
    ASSERT_TRUE(check.valid()) << where << ": " << check.violations[0];
    if (check.peakBytes > c.budget)
      continue;
    ++planned;
    const double optimum = double(*c.truth.optimum);
    EXPECT_GE(double(check.totalCost), optimum * (1 - 1e-12)) << where;
    optimal += double(check.totalCost) <= optimum * (1 + 1e-12);
  }
  std::printf("evict guided: %u graphs with a guide (%u binding moments), "
              "%u plans within the budget, %u of them optimal\n",
              guided, binding, planned, optimal);
  EXPECT_GE(guided, 500u);
  EXPECT_GE(planned, 400u);
  EXPECT_GE(binding, 10u);
}

/// x -> f0 -> a0 (10) -> f1 -> a1 (10) -> f2 -> a2 (10) -> loss -> l (1,
/// output); b2 (l, a2) -> d2 (5); b1 (d2, a1) -> d1 (5); b0 (d1, a0) -> dx
/// (1, output). Costs 1. Within 33 bytes a0 or a1 goes before b2 runs.
TrainingGraph threeLayerStep() {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 100);
  NodeId f0 = g.addNode("f0", "op", 1, Phase::Forward, {x});
  ValueId a0 = g.addOutput(f0, "a0", 10);
  NodeId f1 = g.addNode("f1", "op", 1, Phase::Forward, {a0});
  ValueId a1 = g.addOutput(f1, "a1", 10);
  NodeId f2 = g.addNode("f2", "op", 1, Phase::Forward, {a1});
  ValueId a2 = g.addOutput(f2, "a2", 10);
  NodeId loss = g.addNode("loss", "op", 1, Phase::Forward, {a2});
  ValueId l = g.addOutput(loss, "l", 1);
  g.markOutput(l);
  NodeId b2 = g.addNode("b2", "op", 1, Phase::Backward, {l, a2});
  ValueId d2 = g.addOutput(b2, "d2", 5);
  NodeId b1 = g.addNode("b1", "op", 1, Phase::Backward, {d2, a1});
  ValueId d1 = g.addOutput(b1, "d1", 5);
  NodeId b0 = g.addNode("b0", "op", 1, Phase::Backward, {d1, a0});
  ValueId dx = g.addOutput(b0, "dx", 1);
  g.markOutput(dx);
  EXPECT_FALSE(bool(g.verify()));
  return g;
}

/// The shares choose the victim: unguided, the next-use score evicts a0
/// (needed last) and recomputes f0; with the share on f1 (a relaxation that
/// runs f1 again), a1 goes and f1 runs twice. Both plans fit.
TEST(EvictGuided, TheSharesChooseWhichValueIsRecomputed) {
  TrainingGraph g = threeLayerStep();
  std::vector<NodeId> program(g.numNodes());
  std::iota(program.begin(), program.end(), 0);
  auto runs = [&](const std::vector<NodeId> &order, NodeId node) {
    return std::count(order.begin(), order.end(), node);
  };
  for (bool guided : {false, true}) {
    std::vector<double> shares(g.numNodes(), 0.0);
    if (guided)
      shares[1] = 1.0; // f1
    llvm::Expected<std::vector<NodeId>> order = evictionComputeOrder(
        g, program, 33, EvictionScore::NextUse, 0,
        guided ? llvm::ArrayRef<double>(shares) : llvm::ArrayRef<double>());
    ASSERT_TRUE(bool(order)) << llvm::toString(order.takeError());
    EXPECT_EQ(runs(*order, 0), guided ? 1 : 2) << "f0, guided " << guided;
    EXPECT_EQ(runs(*order, 1), guided ? 2 : 1) << "f1, guided " << guided;
    CheckResult check = checkPlan(g, insertEarlyFrees(g, *order));
    ASSERT_TRUE(check.valid()) << check.violations[0];
    EXPECT_LE(check.peakBytes, 33u);
  }
  // A share vector of the wrong length is an error, not a guess.
  llvm::Expected<std::vector<NodeId>> wrong = evictionComputeOrder(
      g, program, 33, EvictionScore::NextUse, 0, std::vector<double>(3, 0.0));
  EXPECT_FALSE(bool(wrong));
  if (!wrong)
    llvm::consumeError(wrong.takeError());
}

/// guidedStartOrder on tiny random graphs: for one binding moment whose
/// sides come from a random topological order, every node it runs before
/// the moment comes before it and every node it runs after comes after it;
/// a moment that does not bind leaves the program's order; moments whose
/// sides disagree (random sides) still give a topological order.
TEST(EvictGuided, StartOrderPutsUnorderedNodesOnTheirMomentsSides) {
  unsigned moved = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    Rng rng(graphSeed(2426, i));
    RandomGraph rg = randomTrainingGraph(rng, 12);
    const TrainingGraph &g = rg.graph;
    const size_t n = g.numNodes();
    if (n < 2)
      continue;
    std::vector<std::vector<char>> reaches = descendantsOf(g);
    // A random topological order: a random node whose ancestors are all
    // placed, each time.
    std::vector<char> placed(n, 0);
    std::vector<NodeId> random;
    while (random.size() < n) {
      std::vector<NodeId> ready;
      for (NodeId id = 0; id < NodeId(n); ++id) {
        bool free = !placed[id];
        for (NodeId p = 0; p < NodeId(n) && free; ++p)
          free = placed[p] || !reaches[p][id];
        if (free)
          ready.push_back(id);
      }
      ASSERT_FALSE(ready.empty()) << "graph " << i;
      NodeId id = ready[rng.below(ready.size())];
      placed[id] = 1;
      random.push_back(id);
    }
    ASSERT_EQ(random.size(), n);
    std::vector<size_t> at(n);
    for (size_t k = 0; k < n; ++k)
      at[random[k]] = k;
    ResidencyGuide guide;
    guide.rerunShare.assign(n, 0.0);
    ResidencyGuide::MomentOrder moment;
    moment.node = NodeId(rng.below(n));
    moment.binding = true;
    for (NodeId z = 0; z < NodeId(n); ++z)
      if (z != moment.node && !reaches[z][moment.node] &&
          !reaches[moment.node][z])
        (at[z] < at[moment.node] ? moment.before : moment.after).push_back(z);
    guide.moments = {moment};
    std::vector<NodeId> order = guidedStartOrder(g, guide);
    ASSERT_TRUE(isTopologicalOrder(g, order)) << "graph " << i;
    std::vector<size_t> position(n);
    for (size_t k = 0; k < n; ++k)
      position[order[k]] = k;
    for (NodeId z : moment.before)
      EXPECT_LT(position[z], position[moment.node]) << "graph " << i;
    for (NodeId z : moment.after)
      EXPECT_GT(position[z], position[moment.node]) << "graph " << i;
    for (NodeId z : moment.before)
      moved += z > moment.node;
    for (NodeId z : moment.after)
      moved += z < moment.node;
    // Not binding: the program's order.
    guide.moments[0].binding = false;
    std::vector<NodeId> program(n);
    std::iota(program.begin(), program.end(), 0);
    EXPECT_EQ(guidedStartOrder(g, guide), program) << "graph " << i;
    // Several moments with random sides.
    guide.moments.clear();
    for (int k = 0; k < 3; ++k) {
      ResidencyGuide::MomentOrder m;
      m.node = NodeId(rng.below(n));
      m.binding = true;
      for (NodeId z = 0; z < NodeId(n); ++z)
        if (z != m.node && !reaches[z][m.node] && !reaches[m.node][z])
          (rng.below(2) ? m.before : m.after).push_back(z);
      guide.moments.push_back(std::move(m));
    }
    llvm::sort(guide.moments,
               [](const auto &l, const auto &r) { return l.node < r.node; });
    EXPECT_TRUE(isTopologicalOrder(g, guidedStartOrder(g, guide)))
        << "graph " << i;
  }
  // The sides must differ from the program's order often enough to matter.
  EXPECT_GE(moved, 100u);
}

/// Every registered solver (auto and the CBC ones on every tenth graph) at a
/// random budget: a plan within the budget costs at least the optimum; a
/// reported lower bound is at most the optimum; "optimal" is the optimum;
/// "infeasible" only when no plan fits.
TEST(ReportedBounds, AreTrueForEveryPlanOfTinyRandomGraphs) {
  unsigned bounds = 0, optimal = 0, infeasibleClaims = 0;
  // REMAT_BOUNDS_GRAPHS=N runs N graphs instead of 400 (the run of
  // docs/solvers-at-scale.md used 5,000).
  const char *more = std::getenv("REMAT_BOUNDS_GRAPHS");
  uint64_t graphs = more ? std::strtoull(more, nullptr, 10) : 400;
  for (uint64_t i = 0; i < graphs; ++i) {
    TinyCase c = tinyCase(2424, i);
    const TrainingGraph &g = c.rg.graph;
    const uint64_t budget = c.budget;
    const BruteForceResult &truth = c.truth;
    if (!truth.solved)
      continue;
    for (const SolverInfo &solver : allSolvers()) {
      llvm::StringRef name = solver.name;
      bool slow = name.starts_with("checkmate") || name == "auto";
      if ((slow && i % 10 != 0) || !solverApplies(solver, g))
        continue;
      SolverOptions options;
      options.budget = budget;
      options.timeLimitSeconds = 0.5;
      llvm::Expected<SolverResult> result = runSolver(solver, g, options);
      std::string where = solver.name + " on " + c.where;
      if (!result) {
        llvm::consumeError(result.takeError());
        continue;
      }
      const SolverResult &r = *result;
      double cost = r.report.totalCost;
      if (!truth.optimum) {
        EXPECT_FALSE(r.meetsBudget) << where;
        continue;
      }
      double opt = double(*truth.optimum);
      double slack = 1e-9 * std::max(1.0, opt);
      if (r.meetsBudget) {
        EXPECT_GE(cost, opt - slack) << where;
      }
      if (r.lowerBound) {
        ++bounds;
        EXPECT_LE(*r.lowerBound, opt + slack) << where;
      }
      if (r.status == PlanStatus::Optimal) {
        ++optimal;
        EXPECT_NEAR(cost, opt, slack) << where;
      }
      if (r.status == PlanStatus::Infeasible) {
        ++infeasibleClaims;
        ADD_FAILURE() << where << ": infeasible, but a plan of cost " << opt
                      << " fits";
      }
    }
  }
  EXPECT_GT(bounds, 500u);
  EXPECT_GT(optimal, 200u);
  EXPECT_EQ(infeasibleClaims, 0u);
}

/// The eviction planner (Evict.h) by hand: a chain whose middle activation
/// is cheap to make. x -> f0 (cost 10) -> a0 (8) -> f1 (cost 1) -> a1 (8)
/// -> f2 (cost 10) -> a2 (8) -> loss (cost 1) -> l (1, output); backward
/// b2 (l, a2) -> d2 (4), b1 (d2, a1) -> d1 (4), b0 (d1, a0) -> dx (4,
/// output). Keeping everything peaks at b2: a0, a1, a2, l, d2 = 29 bytes.
/// At 25 one activation must be gone by then: the planner frees a1, the
/// cheapest to make again from the resident a0, and its plan costs one f1
/// more - the optimum (b1 then holds a0, a1, l, d2, d1 = 25).
TEST(Evict, RecomputesTheCheapActivation) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 8);
  NodeId f0 = g.addNode("f0", "op", 10, Phase::Forward, {x});
  ValueId a0 = g.addOutput(f0, "a0", 8);
  NodeId f1 = g.addNode("f1", "op", 1, Phase::Forward, {a0});
  ValueId a1 = g.addOutput(f1, "a1", 8);
  NodeId f2 = g.addNode("f2", "op", 10, Phase::Forward, {a1});
  ValueId a2 = g.addOutput(f2, "a2", 8);
  NodeId loss = g.addNode("loss", "op", 1, Phase::Forward, {a2});
  ValueId l = g.addOutput(loss, "l", 1);
  g.markOutput(l);
  NodeId b2 = g.addNode("b2", "op", 10, Phase::Backward, {l, a2});
  ValueId d2 = g.addOutput(b2, "d2", 4);
  NodeId b1 = g.addNode("b1", "op", 1, Phase::Backward, {d2, a1});
  ValueId d1 = g.addOutput(b1, "d1", 4);
  NodeId b0 = g.addNode("b0", "op", 10, Phase::Backward, {d1, a0});
  g.markOutput(g.addOutput(b0, "dx", 4));
  ASSERT_FALSE(bool(g.verify()));

  SimulationReport all = simulate(g, solveCheckpointAll(g));
  ASSERT_TRUE(all.valid) << all.error;
  ASSERT_EQ(all.peakBytes, 29u);
  const uint64_t budget = 25;
  std::vector<NodeId> programOrder(g.numNodes());
  std::iota(programOrder.begin(), programOrder.end(), 0);
  BruteForceResult truth = bruteForceOptimum(g, budget);
  ASSERT_TRUE(truth.solved && truth.optimum);
  for (EvictionScore score : {EvictionScore::NextUse, EvictionScore::Staleness,
                              EvictionScore::CostPerByte}) {
    llvm::Expected<std::vector<NodeId>> order =
        evictionComputeOrder(g, programOrder, budget, score);
    ASSERT_TRUE(bool(order)) << llvm::toString(order.takeError());
    CheckResult check = checkPlan(g, insertEarlyFrees(g, *order));
    ASSERT_TRUE(check.valid()) << check.violations[0];
    EXPECT_LE(check.peakBytes, budget) << evictionScoreName(score).str();
    EXPECT_EQ(check.numRecomputations, 1u) << evictionScoreName(score).str();
    EXPECT_EQ(double(check.totalCost), double(*truth.optimum))
        << evictionScoreName(score).str();
    EXPECT_EQ(std::count(order->begin(), order->end(), f1), 2)
        << evictionScoreName(score).str();
  }
  // Below the largest node footprint nothing fits: an error naming the node.
  llvm::Expected<std::vector<NodeId>> none =
      evictionComputeOrder(g, programOrder, 16, EvictionScore::NextUse);
  ASSERT_FALSE(bool(none));
  EXPECT_NE(llvm::toString(none.takeError()).find("does not fit in 16 bytes"),
            std::string::npos);
}

/// The eviction planner's compute order from the program order, or nothing
/// where it finds no plan within the budget.
std::optional<std::vector<NodeId>>
evictionOrderFromProgramOrder(const TrainingGraph &g, uint64_t budget,
                              EvictionScore score) {
  std::vector<NodeId> programOrder(g.numNodes());
  std::iota(programOrder.begin(), programOrder.end(), 0);
  llvm::Expected<std::vector<NodeId>> order =
      evictionComputeOrder(g, programOrder, budget, score);
  if (!order) {
    llvm::consumeError(order.takeError());
    return std::nullopt;
  }
  return std::move(*order);
}

/// On tiny random graphs at random budgets every plan the eviction planner
/// returns is valid (the independent checker), within the budget it was
/// given, and costs at least the optimum; it finds a plan on most budgets
/// where one exists and the optimum itself on a good share.
TEST(Evict, ValidWithinTheBudgetAndNeverBelowTheOptimum) {
  unsigned feasible = 0, found = 0, optimal = 0;
  for (uint64_t i = 0; i < 3000 && feasible < 1000; ++i) {
    TinyCase c = tinyCase(2425, i);
    const TrainingGraph &g = c.rg.graph;
    if (!c.truth.solved || !c.truth.optimum)
      continue;
    ++feasible;
    double opt = double(*c.truth.optimum);
    bool any = false, best = false;
    for (EvictionScore score :
         {EvictionScore::NextUse, EvictionScore::Staleness,
          EvictionScore::CostPerByte}) {
      std::string where = c.where + " " + evictionScoreName(score).str();
      std::optional<std::vector<NodeId>> order =
          evictionOrderFromProgramOrder(g, c.budget, score);
      if (!order)
        continue;
      CheckResult check = checkPlan(g, insertEarlyFrees(g, *order));
      ASSERT_TRUE(check.valid()) << where << ": " << check.violations[0];
      EXPECT_LE(check.peakBytes, c.budget) << where;
      EXPECT_GE(double(check.totalCost), opt - 1e-9 * std::max(1.0, opt))
          << where;
      any = true;
      best |= double(check.totalCost) <= opt + 1e-9 * std::max(1.0, opt);
    }
    found += any;
    optimal += best;
  }
  std::printf("evict: %u feasible budgets, a plan on %u, the optimum on %u\n",
              feasible, found, optimal);
  EXPECT_GE(feasible, 900u);
  EXPECT_GE(found, feasible * 85 / 100);
  EXPECT_GE(optimal, feasible * 3 / 4);
}

/// withoutNeedlessRecomputations on the eviction planner's plans of tiny
/// random graphs: every result is valid by the independent checker, within
/// the budget, no dearer than the plan it was given and never below the
/// optimum, and no single recomputation left in it can go (each removal,
/// simulated in full, breaks the budget): its shortcut, a necessary
/// condition checked before each simulation, turns nothing down that fits.
TEST(NeedlessRecomputations, EvictionPlansLoseWhatFitsAndNothingElse) {
  unsigned plans = 0, cheaper = 0, optimalBefore = 0, optimalAfter = 0;
  for (uint64_t i = 0; i < 3000 && plans < 1500; ++i) {
    TinyCase c = tinyCase(2426, i);
    const TrainingGraph &g = c.rg.graph;
    if (!c.truth.solved || !c.truth.optimum)
      continue;
    const double opt = double(*c.truth.optimum);
    const double tolerance = 1e-9 * std::max(1.0, opt);
    for (EvictionScore score :
         {EvictionScore::NextUse, EvictionScore::CostPerByte}) {
      std::string where = c.where + " " + evictionScoreName(score).str();
      std::optional<std::vector<NodeId>> order =
          evictionOrderFromProgramOrder(g, c.budget, score);
      if (!order)
        continue;
      ++plans;
      double before = double(checkPlan(g, insertEarlyFrees(g, *order)).totalCost);
      std::vector<NodeId> kept =
          withoutNeedlessRecomputations(g, *order, c.budget, 0);
      CheckResult check = checkPlan(g, insertEarlyFrees(g, kept));
      ASSERT_TRUE(check.valid()) << where << ": " << check.violations[0];
      EXPECT_LE(check.peakBytes, c.budget) << where;
      double after = double(check.totalCost);
      EXPECT_LE(after, before + tolerance) << where;
      EXPECT_GE(after, opt - tolerance) << where;
      cheaper += after < before - tolerance;
      optimalBefore += before <= opt + tolerance;
      optimalAfter += after <= opt + tolerance;
      std::vector<char> seen(g.numNodes(), 0);
      for (size_t p = 0; p < kept.size(); ++p) {
        bool again = seen[kept[p]];
        seen[kept[p]] = 1;
        if (!again || g.node(kept[p]).cost <= 0)
          continue;
        std::vector<NodeId> fewer = kept;
        fewer.erase(fewer.begin() + p);
        CheckResult dropped = checkPlan(g, insertEarlyFrees(g, fewer));
        EXPECT_FALSE(dropped.valid() && dropped.peakBytes <= c.budget)
            << where << ": the recomputation of node " << kept[p]
            << " at position " << p << " could go";
      }
    }
  }
  std::printf("needless recomputations: %u eviction plans, %u cheaper; the "
              "optimum on %u before, %u after\n",
              plans, cheaper, optimalBefore, optimalAfter);
  EXPECT_GE(plans, 1500u);
  EXPECT_GT(cheaper, 0u);
}

} // namespace
