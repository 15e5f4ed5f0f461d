//===- IndependentCheckerTest.cpp - The independent re-simulator ----------===//
//
// The checker on hand-built plans whose bytes are counted by hand (valid
// ones, and corrupted ones it must reject: a dropped recomputation, a value
// freed too early, an argument or a step output freed, a node never
// computed, a value computed twice, unknown ids), in-place updates and
// workspaces; corrupted solver plans; and a small property run of every
// solver on 300 random graphs (issue 13), so that CI exercises
// remat-property-check's code.
//
//===----------------------------------------------------------------------===//

#include "IndependentChecker.h"
#include "PropertyRun.h"
#include "RandomGraphs.h"

#include "remat/Schedule/Schedule.h"
#include "remat/Solvers/Solver.h"

#include "gtest/gtest.h"

using namespace remat;
using namespace remat::property;

namespace {

/// x (fixed, 100) -> f0 -> a0 (10) -> f1 -> a1 (20) -> loss -> l (1, output);
/// b1 (l, a1) -> d1 (20); b0 (d1, a0) -> dx (7, output).
struct Small {
  TrainingGraph g;
  ValueId x, a0, a1, l, d1, dx;
  NodeId f0, f1, loss, b1, b0;
  Small() {
    x = g.addFixedValue("x", 100);
    f0 = g.addNode("f0", "op", 1, Phase::Forward, {x});
    a0 = g.addOutput(f0, "a0", 10);
    f1 = g.addNode("f1", "op", 2, Phase::Forward, {a0});
    a1 = g.addOutput(f1, "a1", 20);
    loss = g.addNode("loss", "op", 1, Phase::Forward, {a1});
    l = g.addOutput(loss, "l", 1);
    g.markOutput(l);
    b1 = g.addNode("b1", "op", 2, Phase::Backward, {l, a1});
    d1 = g.addOutput(b1, "d1", 20);
    b0 = g.addNode("b0", "op", 1, Phase::Backward, {d1, a0});
    dx = g.addOutput(b0, "dx", 7);
    g.markOutput(dx);
    EXPECT_FALSE(bool(g.verify()));
  }
  Schedule keepAll() const {
    return {{Step::compute(f0), Step::compute(f1), Step::compute(loss),
             Step::compute(b1), Step::free(a1), Step::compute(b0),
             Step::free(d1), Step::free(a0)}};
  }
  /// a0 freed after f1 and recomputed before b0.
  Schedule recompute() const {
    return {{Step::compute(f0), Step::compute(f1), Step::free(a0),
             Step::compute(loss), Step::compute(b1), Step::free(a1),
             Step::compute(f0), Step::compute(b0), Step::free(d1),
             Step::free(a0)}};
  }
};

/// The checker rejects `plan`, and so does the simulator.
void expectRejected(const TrainingGraph &g, const Schedule &plan,
                    const std::string &needle) {
  CheckResult r = checkPlan(g, plan);
  EXPECT_FALSE(r.valid());
  ASSERT_FALSE(r.violations.empty());
  bool found = false;
  for (const std::string &v : r.violations)
    found |= v.find(needle) != std::string::npos;
  EXPECT_TRUE(found) << "no violation mentions '" << needle << "'; first: "
                     << r.violations[0];
  EXPECT_FALSE(simulate(g, plan).valid);
}

TEST(IndependentChecker, CountsAValidPlanByHand) {
  Small s;
  CheckResult r = checkPlan(s.g, s.keepAll());
  ASSERT_TRUE(r.valid()) << r.violations[0];
  EXPECT_EQ(r.perStep,
            (std::vector<uint64_t>{10, 30, 31, 51, 31, 38, 18, 8}));
  EXPECT_EQ(r.peakBytes, 51u);
  EXPECT_EQ(r.peakStep, 3u);
  EXPECT_EQ(r.numComputes, 5u);
  EXPECT_EQ(r.numRecomputations, 0u);
  EXPECT_EQ(double(r.totalCost), 7.0);
  // l and dx are outputs, resident at the end; nothing else is.
  EXPECT_EQ(r.numLeftResident, 0u);
  SimulationReport sim = simulate(s.g, s.keepAll());
  EXPECT_EQ(sim.peakBytes, r.peakBytes);
  EXPECT_EQ(sim.timeline, r.perStep);
}

TEST(IndependentChecker, CountsARecomputationByHand) {
  Small s;
  CheckResult r = checkPlan(s.g, s.recompute());
  ASSERT_TRUE(r.valid()) << r.violations[0];
  EXPECT_EQ(r.perStep,
            (std::vector<uint64_t>{10, 30, 20, 21, 41, 21, 31, 38, 18, 8}));
  EXPECT_EQ(r.peakBytes, 41u);
  EXPECT_EQ(r.numRecomputations, 1u);
  EXPECT_EQ(double(r.totalCost), 8.0);
  EXPECT_EQ(simulate(s.g, s.recompute()).peakBytes, 41u);
}

TEST(IndependentChecker, RejectsADroppedRecomputation) {
  Small s;
  Schedule plan = s.recompute();
  plan.steps.erase(plan.steps.begin() + 6); // the second Compute f0
  expectRejected(s.g, plan, "reads value #1 'a0' which was freed");
}

TEST(IndependentChecker, RejectsAValueFreedTooEarly) {
  Small s;
  Schedule plan = s.keepAll();
  // Free a1 before b1 reads it.
  std::swap(plan.steps[3], plan.steps[4]);
  expectRejected(s.g, plan, "'b1' reads value #2 'a1' which was freed");
}

TEST(IndependentChecker, RejectsFreesOfArgumentsOutputsAndDeadValues) {
  Small s;
  Schedule plan = s.keepAll();
  plan.steps.push_back(Step::free(s.x));
  expectRejected(s.g, plan, "Free of the fixed value #0 'x'");
  plan = s.keepAll();
  plan.steps.push_back(Step::free(s.l));
  expectRejected(s.g, plan, "Free of the step output");
  plan = s.keepAll();
  plan.steps.push_back(Step::free(s.a0)); // freed twice
  expectRejected(s.g, plan, "which is not resident");
  plan = s.keepAll();
  plan.steps.push_back(Step::free(42));
  expectRejected(s.g, plan, "does not exist");
}

TEST(IndependentChecker, RejectsMissingNodesAndOutputs) {
  Small s;
  Schedule plan = s.keepAll();
  plan.steps.erase(plan.steps.begin() + 5, plan.steps.begin() + 7); // b0, F d1
  plan.steps.push_back(Step::free(s.d1));
  expectRejected(s.g, plan, "'b0' (backward) is never computed");
  CheckResult r = checkPlan(s.g, plan);
  bool outputMissing = false;
  for (const std::string &v : r.violations)
    outputMissing |= v.find("step output value #5 'dx' is not resident") !=
                     std::string::npos;
  EXPECT_TRUE(outputMissing);
  expectRejected(s.g, Schedule{}, "is never computed");
}

TEST(IndependentChecker, RejectsComputingAResidentValueAgain) {
  Small s;
  Schedule plan = s.keepAll();
  plan.steps.insert(plan.steps.begin() + 2, Step::compute(s.f1));
  expectRejected(s.g, plan, "while it is still resident");
  plan = s.keepAll();
  plan.steps.insert(plan.steps.begin(), Step::compute(99));
  expectRejected(s.g, plan, "node id 99 which does not exist");
  plan = s.keepAll();
  plan.steps.insert(plan.steps.begin(), Step::compute(s.b0));
  expectRejected(s.g, plan, "never computed");
}

/// x -> f0 -> a (8) -> f1 -> b (8), f1 may update a in place; then g reads
/// b (and a, when `laterRead`).
TEST(IndependentChecker, InPlaceUpdatesTakeTheInputsBytes) {
  for (int variant = 0; variant < 3; ++variant) {
    bool laterRead = variant == 1, aIsOutput = variant == 2;
    TrainingGraph g;
    ValueId x = g.addFixedValue("x", 4);
    NodeId f0 = g.addNode("f0", "op", 1, Phase::Forward, {x});
    ValueId a = g.addOutput(f0, "a", 8);
    NodeId f1 = g.addNode("f1", "op", 1, Phase::Forward, {a});
    ValueId b = g.addOutput(f1, "b", 8);
    g.node(f1).reuses.push_back({a, b});
    std::vector<ValueId> in{b};
    if (laterRead)
      in.push_back(a);
    NodeId h = g.addNode("g", "op", 1, Phase::Backward, in);
    ValueId c = g.addOutput(h, "c", 3);
    g.markOutput(c);
    if (aIsOutput)
      g.markOutput(a);
    ASSERT_FALSE(bool(g.verify()));
    Schedule plan{{Step::compute(f0), Step::compute(f1), Step::compute(h),
                   Step::free(b)}};
    if (!aIsOutput)
      plan.steps.push_back(Step::free(a));
    CheckResult r = checkPlan(g, plan);
    ASSERT_TRUE(r.valid()) << r.violations[0];
    if (variant == 0) {
      // In place: b takes a's 8 bytes; a's Free releases nothing.
      EXPECT_EQ(r.perStep, (std::vector<uint64_t>{8, 8, 11, 3, 3}));
      EXPECT_EQ(r.numInPlace, 1u);
    } else if (variant == 1) {
      EXPECT_EQ(r.perStep, (std::vector<uint64_t>{8, 16, 19, 11, 3}));
      EXPECT_EQ(r.numInPlace, 0u);
    } else {
      EXPECT_EQ(r.perStep, (std::vector<uint64_t>{8, 16, 19, 11}));
      EXPECT_EQ(r.numInPlace, 0u);
    }
    SimulationReport sim = simulate(g, plan);
    EXPECT_EQ(sim.timeline, r.perStep) << "variant " << variant;
  }
}

TEST(IndependentChecker, WorkspaceIsHeldForOneStatement) {
  Small s;
  s.g.node(s.f1).workspaceBytes = 1000;
  CheckResult r = checkPlan(s.g, s.keepAll());
  ASSERT_TRUE(r.valid());
  EXPECT_EQ(r.perStep[1], 1030u);
  EXPECT_EQ(r.perStep[2], 31u);
  EXPECT_EQ(r.peakBytes, 1030u);
  EXPECT_EQ(nodeLowerBound(s.g), 1030u);
}

/// Solver plans with a recomputation dropped or a Free moved before the
/// value's last read: the checker rejects them, as the simulator does.
TEST(IndependentChecker, CatchesCorruptedSolverPlans) {
  const SolverInfo *chen = findSolver("chen-sqrtn");
  ASSERT_NE(chen, nullptr);
  unsigned droppedCaught = 0, earlyFreesCaught = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    Rng rng(graphSeed(7, i));
    RandomGraph rg = randomTrainingGraph(rng, 20);
    const TrainingGraph &g = rg.graph;
    llvm::Expected<SolverResult> result = runSolver(*chen, g, SolverOptions());
    ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
    const std::vector<Step> &steps = result->schedule.steps;
    ASSERT_TRUE(checkPlan(g, result->schedule).valid());
    // Drop the first recomputation.
    std::vector<char> seen(g.numNodes(), 0);
    for (size_t k = 0; k < steps.size(); ++k) {
      if (!steps[k].isCompute())
        continue;
      if (seen[steps[k].id]) {
        Schedule bad = result->schedule;
        bad.steps.erase(bad.steps.begin() + k);
        CheckResult r = checkPlan(g, bad);
        EXPECT_EQ(r.valid(), simulate(g, bad).valid);
        droppedCaught += !r.valid();
        break;
      }
      seen[steps[k].id] = 1;
    }
    // Move the first Free of a value that some later statement reads to the
    // front of the plan.
    for (size_t k = 0; k < steps.size(); ++k) {
      if (steps[k].isCompute())
        continue;
      Schedule bad = result->schedule;
      Step freeStep = bad.steps[k];
      bad.steps.erase(bad.steps.begin() + k);
      size_t producer = 0;
      while (producer < bad.steps.size() &&
             !(bad.steps[producer].isCompute() &&
               bad.steps[producer].id == g.value(freeStep.id).producer))
        ++producer;
      bad.steps.insert(bad.steps.begin() + producer + 1, freeStep);
      bool readBetween = false;
      for (size_t j = producer + 2; j <= k; ++j)
        if (bad.steps[j].isCompute())
          for (ValueId in : g.node(bad.steps[j].id).inputs)
            readBetween |= in == freeStep.id;
      if (!readBetween)
        continue;
      CheckResult r = checkPlan(g, bad);
      EXPECT_FALSE(r.valid());
      EXPECT_FALSE(simulate(g, bad).valid);
      earlyFreesCaught += !r.valid();
      break;
    }
  }
  EXPECT_GT(droppedCaught, 20u);
  EXPECT_GT(earlyFreesCaught, 20u);
}

TEST(IndependentChecker, RandomGraphsAreValidAndReproducible) {
  for (uint64_t i = 0; i < 500; ++i) {
    Rng r1(graphSeed(3, i)), r2(graphSeed(3, i));
    RandomGraph a = randomTrainingGraph(r1, 30);
    RandomGraph b = randomTrainingGraph(r2, 30);
    EXPECT_FALSE(bool(a.graph.verify()));
    EXPECT_EQ(a.graph.toJSON(), b.graph.toJSON());
    EXPECT_EQ(a.shape, b.shape);
  }
}

/// The property run of remat-property-check, small: every solver (the CBC
/// ones on graphs 0, 100 and 200), one random budget per graph, one mutant
/// per plan.
TEST(PropertyRun, EverySolverOn300RandomGraphs) {
  RunOptions options;
  options.seed = 2024;
  options.graphs = 300;
  options.maxNodes = 16;
  options.timeLimit = 0.2;
  options.cbcEvery = 100;
  llvm::Expected<RunStats> stats = runProperty(options);
  ASSERT_TRUE(bool(stats)) << llvm::toString(stats.takeError());
  std::string text;
  llvm::raw_string_ostream os(text);
  stats->print(os);
  EXPECT_TRUE(stats->clean()) << text;
  EXPECT_EQ(stats->graphs, 300u);
  EXPECT_GT(stats->plans(), 300u * 10);
  // The mutants exercise the rejecting side of both judges.
  EXPECT_GT(stats->mutantsInvalid, 300u);
  EXPECT_GT(stats->mutantsValid, 100u);
  EXPECT_EQ(stats->mutantDisagreements, 0u);
  for (const SolverStats &s : stats->solvers) {
    if (s.name == "checkmate-ilp" || s.name == "auto") {
      EXPECT_GE(s.runs, 1u) << s.name;
    } else if (s.name != "join") {
      EXPECT_GE(s.plans, 250u) << s.name;
    }
  }
}

} // namespace
