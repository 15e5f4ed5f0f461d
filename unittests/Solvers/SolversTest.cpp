//===- SolversTest.cpp - Registry, baselines and random-graph properties --===//
//
// Hand-checked peaks of the baselines on chains, runSolver's judgement, and
// properties over random training graphs shaped like real ones (a layered
// forward DAG, a loss, and a backward pass that mirrors it).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Solver.h"

#include "llvm/ADT/STLExtras.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>

using namespace remat;

namespace {

/// The MLP-like chain of n layers with unit sizes and costs (see
/// SimulatorTest.cpp): x -> f_0 .. f_{n-1} -> L (loss, output); backward BL
/// reads a_{n-1}, b_i reads (d_i, a_{i-1}); b_0 produces the output g.
/// Node ids: f_i = i, L = n, BL = n+1, b_i = 2n+1-i.
TrainingGraph makeChain(int n, uint64_t bytes = 1) {
  TrainingGraph g;
  ValueId prev = g.addFixedValue("x", bytes);
  std::vector<ValueId> acts = {prev};
  for (int i = 0; i < n; ++i) {
    NodeId f = g.addNode("f" + std::to_string(i), "linalg.generic", 1,
                         Phase::Forward, {prev});
    prev = g.addOutput(f, "a" + std::to_string(i), bytes);
    acts.push_back(prev);
  }
  NodeId loss = g.addNode("L", "linalg.reduce", 1, Phase::Forward, {prev});
  g.markOutput(g.addOutput(loss, "loss", 1));
  NodeId bl = g.addNode("BL", "linalg.generic", 1, Phase::Backward, {prev});
  ValueId grad = g.addOutput(bl, "d" + std::to_string(n - 1), bytes);
  for (int i = n - 1; i >= 0; --i) {
    NodeId b = g.addNode("b" + std::to_string(i), "linalg.generic", 1,
                         Phase::Backward, {grad, acts[i]});
    grad = g.addOutput(b, i == 0 ? "g" : "d" + std::to_string(i - 1), bytes);
  }
  g.markOutput(grad);
  return g;
}

SimulationReport mustSimulate(const TrainingGraph &g, const Schedule &s) {
  SimulationReport r = simulate(g, s);
  EXPECT_TRUE(r.valid) << r.error;
  return r;
}

//===----------------------------------------------------------------------===//
// Registry and runSolver
//===----------------------------------------------------------------------===//

TEST(Registry, NamesAndLookup) {
  ASSERT_GE(allSolvers().size(), 2u);
  EXPECT_EQ(allSolvers()[0].name, "checkpoint-all");
  EXPECT_EQ(allSolvers()[1].name, "chen-sqrtn");
  for (const SolverInfo &s : allSolvers()) {
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_TRUE(bool(s.fn)) << s.name;
    EXPECT_EQ(findSolver(s.name), &s);
    EXPECT_NE(solverNames().find(s.name), std::string::npos);
  }
  EXPECT_EQ(findSolver("no-such-solver"), nullptr);
  EXPECT_EQ(findSolver(""), nullptr);
  EXPECT_EQ(solverNames().substr(0, 26), "checkpoint-all, chen-sqrtn");
}

TEST(RunSolver, SimulatesAndChecksTheBudget) {
  TrainingGraph g = makeChain(8);
  const SolverInfo *all = findSolver("checkpoint-all");
  ASSERT_TRUE(all);
  SolverOptions options;
  llvm::Expected<SolverResult> r = runSolver(*all, g, options);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->solver, "checkpoint-all");
  EXPECT_TRUE(r->report.valid);
  EXPECT_EQ(r->report.peakBytes, 10u);
  EXPECT_TRUE(r->meetsBudget);
  EXPECT_GE(r->solveSeconds, 0);
  EXPECT_EQ(r->schedule.steps, solveCheckpointAll(g).steps);

  options.budget = 10;
  r = runSolver(*all, g, options);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_TRUE(r->meetsBudget);
  options.budget = 9;
  r = runSolver(*all, g, options);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_FALSE(r->meetsBudget);

  const SolverInfo *chen = findSolver("chen-sqrtn");
  ASSERT_TRUE(chen);
  r = runSolver(*chen, g, options);
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->report.peakBytes, 6u);
  EXPECT_TRUE(r->meetsBudget);
}

/// Every applicable solver's least-memory plan of `g` peaks at `least` or
/// more.
void expectNoPlanBelow(const TrainingGraph &g, uint64_t least) {
  for (const SolverInfo &solver : allSolvers()) {
    if (!solverApplies(solver, g))
      continue;
    llvm::Expected<SolverResult> r = runSolver(solver, g, SolverOptions());
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    EXPECT_GE(r->report.peakBytes, least) << solver.name;
  }
}

/// Solver `name` on `g` at `budget` (the test fails on an error).
SolverResult solveAt(const TrainingGraph &g, llvm::StringRef name,
                     uint64_t budget) {
  SolverOptions options;
  options.budget = budget;
  llvm::Expected<SolverResult> r = runSolver(*findSolver(name), g, options);
  EXPECT_TRUE(bool(r)) << llvm::toString(r.takeError());
  return r ? std::move(*r) : SolverResult();
}

TEST(PlanStatus, PeakLowerBoundIsTheLargestNodeFootprint) {
  // b_i holds d_i, a_{i-1} and its output: 3 bytes; b_0 reads the fixed x.
  TrainingGraph g = makeChain(8);
  EXPECT_EQ(peakLowerBound(g), 3u);
  // A workspace counts while its node runs.
  g.node(3).workspaceBytes = 5; // f3: a2 in, a3 out, 5 of workspace
  EXPECT_EQ(peakLowerBound(g), 7u);
  expectNoPlanBelow(g, 7);
}

TEST(PlanStatus, PeakLowerBoundCountsTheStepOutputsNeverFreed) {
  // x (fixed) -> f -> a (5); g1 (a) -> o1 (10, output), g2 (a) -> o2 (10,
  // output), h (o1) -> o3 (1, output). Alone, a node holds at most 15 (g1:
  // a and o1). Step outputs are never freed, so whichever of g1, g2 and h
  // runs last holds the other two step outputs: g1 last 10 + 1 + 15 = 26,
  // g2 last 10 + 1 + 15 = 26, h last 10 + 10 + 1 = 21 (h reads the step
  // output o1, counted once): the peak is at least 21. (The least peak is
  // 25: a stays until both g1 and g2 have run, next to one of their step
  // outputs and the other's; the exact search proves it.)
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 3);
  NodeId f = g.addNode("f", "op", 1, Phase::Forward, {x});
  ValueId a = g.addOutput(f, "a", 5);
  NodeId g1 = g.addNode("g1", "op", 1, Phase::Backward, {a});
  ValueId o1 = g.addOutput(g1, "o1", 10);
  g.markOutput(o1);
  NodeId g2 = g.addNode("g2", "op", 1, Phase::Backward, {a});
  g.markOutput(g.addOutput(g2, "o2", 10));
  NodeId h = g.addNode("h", "op", 1, Phase::Backward, {o1});
  g.markOutput(g.addOutput(h, "o3", 1));
  ASSERT_FALSE(bool(g.verify()));
  EXPECT_EQ(peakLowerBound(g), 21u);
  // It is a bound: every solver's least-memory plan needs 21 or more.
  expectNoPlanBelow(g, 21);
  // The search of the schedules' ends finds the least peak, 25.
  EXPECT_EQ(leastPeakBound(g, /*seconds=*/0), 25u);
  SolverResult below = solveAt(g, "exact", 24);
  EXPECT_FALSE(below.meetsBudget);
  EXPECT_EQ(below.status, PlanStatus::Infeasible);
  SolverResult at = solveAt(g, "exact", 25);
  EXPECT_EQ(at.status, PlanStatus::Optimal);
  EXPECT_EQ(at.report.peakBytes, 25u);
}

TEST(PlanStatus, PeakLowerBoundFollowsTheLastStepOutputsInputs) {
  // x (fixed) -> f0 -> b (6) -> f1 -> a (2) -> g1 -> w1 (2, output);
  // x -> f2 -> c (6) -> g2 -> w2 (2, output). Each node alone holds at most
  // 8 (f1: b and a; g2: c and w2), and whichever of g1, g2 runs last holds
  // the other's step output: g1 last 2 + 4, g2 last 2 + 8: so far 6. But a,
  // read by g1, was produced by f1's last run and held since: f1 ran after
  // w2 existed (2 + 8) or g2 ran while a was held (8 + 2); and c, read by
  // g2, was produced by f2 after w1 (2 + 6) or held while g1 ran (4 + 6).
  // Either way 10, the least peak (f0 f1 f2 g2 g1 peaks at 10).
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 3);
  NodeId f0 = g.addNode("f0", "op", 1, Phase::Forward, {x});
  ValueId b = g.addOutput(f0, "b", 6);
  NodeId f1 = g.addNode("f1", "op", 1, Phase::Forward, {b});
  ValueId a = g.addOutput(f1, "a", 2);
  NodeId f2 = g.addNode("f2", "op", 1, Phase::Forward, {x});
  ValueId c = g.addOutput(f2, "c", 6);
  NodeId g1 = g.addNode("g1", "op", 1, Phase::Backward, {a});
  g.markOutput(g.addOutput(g1, "w1", 2));
  NodeId g2 = g.addNode("g2", "op", 1, Phase::Backward, {c});
  g.markOutput(g.addOutput(g2, "w2", 2));
  ASSERT_FALSE(bool(g.verify()));
  EXPECT_EQ(peakLowerBound(g), 10u);
  expectNoPlanBelow(g, 10);
  EXPECT_EQ(solveAt(g, "auto", 9).status, PlanStatus::Infeasible);
  SolverResult at = solveAt(g, "exact", 10);
  EXPECT_EQ(at.status, PlanStatus::Optimal);
  EXPECT_EQ(at.report.peakBytes, 10u);
}

TEST(PlanStatus, FollowsTheSimulationAndTheSolversProofs) {
  TrainingGraph g = makeChain(8); // checkpoint-all peaks at 10, cost 18
  const double baseCost = g.totalCost();
  auto run = [&](llvm::StringRef name, std::optional<uint64_t> budget) {
    SolverOptions options;
    options.budget = budget;
    options.timeLimitSeconds = 20;
    llvm::Expected<SolverResult> r = runSolver(*findSolver(name), g, options);
    EXPECT_TRUE(bool(r)) << llvm::toString(r.takeError());
    return std::move(*r);
  };
  // No budget: plans minimise memory, nothing to prove.
  SolverResult free = run("checkpoint-all", std::nullopt);
  EXPECT_EQ(free.status, PlanStatus::Heuristic);
  EXPECT_FALSE(free.lowerBound);
  // Within the budget and computing every node once: optimal, whoever
  // found it, with the graph's total cost as the bound.
  SolverResult fits = run("checkpoint-all", 10);
  EXPECT_EQ(fits.status, PlanStatus::Optimal);
  ASSERT_TRUE(fits.lowerBound);
  EXPECT_EQ(*fits.lowerBound, baseCost);
  // Missed by a baseline, nothing proven.
  EXPECT_EQ(run("checkpoint-all", 6).status, PlanStatus::NoPlan);
  // Met by recomputing, no proof: heuristic.
  SolverResult chen = run("chen-sqrtn", 6);
  ASSERT_TRUE(chen.meetsBudget);
  EXPECT_EQ(chen.status, PlanStatus::Heuristic);
  EXPECT_FALSE(chen.lowerBound);
  // The MILP proves its plan optimal for Checkmate's model only (a fixed
  // order of first computations): a claim about the model, not the graph.
  SolverResult ilp = run("checkmate-ilp", 6);
  ASSERT_TRUE(ilp.meetsBudget);
  EXPECT_EQ(ilp.status, PlanStatus::Heuristic);
  EXPECT_FALSE(ilp.lowerBound);
  ASSERT_TRUE(ilp.modelBound);
  EXPECT_TRUE(ilp.modelBound->optimal);
  EXPECT_LE(ilp.modelBound->lowerBound, ilp.report.totalCost * (1 + 1e-9));
  // The exact search proves optimality over every plan; the portfolio
  // inherits the proof (and stops there rather than spend its time limit).
  SolverResult exact = run("exact", 6);
  ASSERT_TRUE(exact.meetsBudget);
  EXPECT_EQ(exact.status, PlanStatus::Optimal);
  ASSERT_TRUE(exact.lowerBound);
  EXPECT_EQ(*exact.lowerBound, exact.report.totalCost);
  EXPECT_LE(exact.report.totalCost, ilp.report.totalCost);
  SolverResult portfolio = run("auto", 6);
  EXPECT_EQ(portfolio.status, PlanStatus::Optimal);
  EXPECT_EQ(portfolio.report.totalCost, exact.report.totalCost);
  EXPECT_LT(portfolio.solveSeconds, 20);
  // Below the largest node footprint (3 bytes) every solver's plan is
  // proven infeasible, and no bound is given.
  for (const SolverInfo &solver : allSolvers()) {
    if (!solverApplies(solver, g))
      continue;
    SolverResult r = run(solver.name, 2);
    EXPECT_FALSE(r.meetsBudget) << solver.name;
    EXPECT_EQ(r.status, PlanStatus::Infeasible) << solver.name;
    EXPECT_FALSE(r.lowerBound) << solver.name;
  }
  EXPECT_EQ(planStatusName(PlanStatus::NoPlan), "no-plan");
}

TEST(CheckpointAll, KeepsTheProgramOrderWhenItPeaksLower) {
  // The program consumes the forward value `a` in the backward node `B`
  // before the forward goes on to `b` and the loss; forward-then-backward
  // keeps `a` (100 B) alive next to `b` (100 B) until B runs.
  //   program: f1 (a) | B (a, g; a freed) | f2 (g, b) | L (g, b, loss): 102
  //   phased:  f1 (a) | f2 (a, b) | L (a, b, loss) | B (a, loss, g):    201
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 4);
  ValueId t = g.addFixedValue("t", 4);
  NodeId f1 = g.addNode("f1", "linalg.generic", 1, Phase::Forward, {x});
  ValueId a = g.addOutput(f1, "a", 100);
  NodeId b = g.addNode("B", "linalg.generic", 1, Phase::Backward, {t, a});
  g.markOutput(g.addOutput(b, "g", 1));
  NodeId f2 = g.addNode("f2", "linalg.generic", 1, Phase::Forward, {x});
  ValueId big = g.addOutput(f2, "b", 100);
  NodeId loss = g.addNode("L", "linalg.reduce", 1, Phase::Forward, {big});
  g.markOutput(g.addOutput(loss, "loss", 1));
  ASSERT_FALSE(bool(g.verify()));

  SimulationReport phased = mustSimulate(
      g, scheduleFromCheckpoints(g, std::vector<bool>(g.numNodes(), true)));
  EXPECT_EQ(phased.peakBytes, 201u);
  SimulationReport all = mustSimulate(g, solveCheckpointAll(g));
  EXPECT_EQ(all.peakBytes, 102u);
  EXPECT_EQ(all.numRecomputations, 0u);
  // On a chain the phased order is already the program's.
  TrainingGraph chain = makeChain(6);
  EXPECT_EQ(solveCheckpointAll(chain).steps,
            scheduleFromCheckpoints(
                chain, std::vector<bool>(chain.numNodes(), true))
                .steps);
}

TEST(RunSolver, InvalidPlanIsAnError) {
  TrainingGraph g = makeChain(2);
  SolverInfo bad{"bad-solver", "forgets the backward",
                 [](const TrainingGraph &,
                    const SolverOptions &) -> llvm::Expected<Schedule> {
                   return Schedule{{Step::compute(0), Step::compute(2)}};
                 }};
  llvm::Expected<SolverResult> r = runSolver(bad, g, SolverOptions());
  ASSERT_FALSE(bool(r));
  std::string err = llvm::toString(r.takeError());
  EXPECT_NE(err.find("bad-solver"), std::string::npos) << err;
  EXPECT_NE(err.find("step 1: compute of node 'L' needs value 'a1' which is "
                     "not resident"),
            std::string::npos)
      << err;
}

TEST(RunSolver, SolverErrorsAndBadGraphsAreReported) {
  TrainingGraph g = makeChain(2);
  SolverInfo failing{"failing", "refuses",
                     [](const TrainingGraph &,
                        const SolverOptions &) -> llvm::Expected<Schedule> {
                       return llvm::createStringError(
                           llvm::inconvertibleErrorCode(), "cannot handle");
                     }};
  llvm::Expected<SolverResult> r = runSolver(failing, g, SolverOptions());
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()), "solver 'failing': cannot handle");

  g.node(0).inputs.push_back(42);
  r = runSolver(*findSolver("chen-sqrtn"), g, SolverOptions());
  ASSERT_FALSE(bool(r));
  std::string err = llvm::toString(r.takeError());
  EXPECT_NE(err.find("invalid graph"), std::string::npos) << err;
}

// A time limit of -1 or NaN used to reach the solvers: `auto` then ran one
// solver (or gave each 1 s) and returned a worse plan, silently.
TEST(RunSolver, NumericOptionsAreRangeChecked) {
  TrainingGraph g = makeChain(4);
  auto errorFor = [&](const char *solver, double seconds, unsigned slots) {
    SolverOptions options;
    options.timeLimitSeconds = seconds;
    options.memorySlots = slots;
    llvm::Expected<SolverResult> r = runSolver(*findSolver(solver), g, options);
    return r ? std::string() : llvm::toString(r.takeError());
  };
  for (const char *solver : {"auto", "checkpoint-all", "rotor"}) {
    EXPECT_EQ(errorFor(solver, -1, 500),
              std::string("solver '") + solver +
                  "': time-limit must be a finite number of seconds, 0 or "
                  "more (0: no time-bounded search), got -1");
    EXPECT_NE(errorFor(solver, std::nan(""), 500).find("got nan"),
              std::string::npos);
    EXPECT_NE(errorFor(solver, INFINITY, 500).find("got inf"),
              std::string::npos);
    EXPECT_EQ(errorFor(solver, 0, 500), ""); // no time-bounded search
    EXPECT_EQ(errorFor(solver, 60, 0),
              std::string("solver '") + solver +
                  "': slots must be in [1, 1048576], got 0");
    EXPECT_NE(errorFor(solver, 60, kMaxMemorySlots + 1).find("got 1048577"),
              std::string::npos);
    EXPECT_EQ(errorFor(solver, 1e-3, kMaxMemorySlots), "");
    EXPECT_EQ(errorFor(solver, 1e300, 64), "");
  }
  // The front ends name the option as they spell it.
  EXPECT_EQ(llvm::toString(checkTimeLimit(-2.5, "--time-limit")),
            "--time-limit must be a finite number of seconds, 0 or more (0: no "
            "time-bounded search), got -2.5");
  EXPECT_FALSE(bool(checkMemorySlots(1)));
}

//===----------------------------------------------------------------------===//
// Baselines on chains
//===----------------------------------------------------------------------===//

TEST(ChenSqrtN, CheckpointMask) {
  TrainingGraph g = makeChain(8);
  // 9 forward nodes (f0..f7, L): k = 3, segments {f0 f1 f2} {f3 f4 f5}
  // {f6 f7 L}; their last nodes are kept.
  std::vector<bool> mask = chenSqrtNCheckpoints(g);
  ASSERT_EQ(mask.size(), g.numNodes());
  std::vector<NodeId> kept;
  for (NodeId n = 0; n < static_cast<NodeId>(mask.size()); ++n)
    if (mask[n])
      kept.push_back(n);
  EXPECT_EQ(kept, (std::vector<NodeId>{2, 5, 8}));

  // 10 forward nodes: k = 4, segments of 4, 4, 2: f3, f7, and L (the last,
  // which also produces the loss).
  TrainingGraph h = makeChain(9);
  mask = chenSqrtNCheckpoints(h);
  kept.clear();
  for (NodeId n = 0; n < static_cast<NodeId>(mask.size()); ++n)
    if (mask[n])
      kept.push_back(n);
  EXPECT_EQ(kept, (std::vector<NodeId>{3, 7, 9}));
}

TEST(ChenSqrtN, OutputProducersAreCheckpointed) {
  TrainingGraph g = makeChain(8);
  g.markOutput(2); // a1, produced by f1
  std::vector<bool> mask = chenSqrtNCheckpoints(g);
  EXPECT_TRUE(mask[1]);
  EXPECT_FALSE(mask[0]);
  mustSimulate(g, solveChenSqrtN(g));
}

TEST(ChenSqrtN, HandCheckedChainOfNine) {
  TrainingGraph g = makeChain(8);
  // Checkpoints a2, a5 (and the loss). Forward: at most a2, a5 and two more
  // live. Backward: BL recomputes f6, f7 from a5: a2 a5 loss a6 a7 + d7 = 6.
  // b5 recomputes f3, f4 from a2: a2 loss d5 a3 a4 + d4 = 6; b2 recomputes
  // f0, f1 from x: loss d2 a0 a1 + d1 = 5.
  SimulationReport chen = mustSimulate(g, solveChenSqrtN(g));
  EXPECT_EQ(chen.peakBytes, 6u);
  EXPECT_EQ(chen.numRecomputations, 6u);
  EXPECT_DOUBLE_EQ(chen.totalCost, 24);
  EXPECT_DOUBLE_EQ(chen.baseCost, 18);
  // The peak is first reached at BL, after 9 forward computes, their 6 frees
  // (a0, a1, a3, a4, a6, a7) and the two recomputations.
  EXPECT_EQ(chen.peakStep, 17u);
  EXPECT_EQ(solveChenSqrtN(g).steps[17], Step::compute(9));

  // Checkpoint-all: a0..a7 + loss + d7 at BL.
  SimulationReport all = mustSimulate(g, solveCheckpointAll(g));
  EXPECT_EQ(all.peakBytes, 10u);
  EXPECT_EQ(all.peakStep, 9u);
  EXPECT_EQ(all.numRecomputations, 0u);
  EXPECT_DOUBLE_EQ(all.totalCost, 18);
}

TEST(ChenSqrtN, BeatsCheckpointAllOnLongUniformChains) {
  for (int n = 16; n <= 200; n += 7) {
    TrainingGraph g = makeChain(n, /*bytes=*/8);
    SimulationReport chen = mustSimulate(g, solveChenSqrtN(g));
    SimulationReport all = mustSimulate(g, solveCheckpointAll(g));
    EXPECT_LE(chen.peakBytes, all.peakBytes) << "n = " << n;
    // Strictly better once segments exist: O(sqrt n) against O(n).
    EXPECT_LT(chen.peakBytes, all.peakBytes) << "n = " << n;
    // sqrt(n) checkpoints + a segment of sqrt(n) + a few gradients and the
    // loss, in units of 8 bytes.
    size_t k = 1;
    while (k * k < static_cast<size_t>(n + 1))
      ++k;
    EXPECT_LE(chen.peakBytes, 8 * (2 * k + 4)) << "n = " << n;
    // Each forward node is recomputed at most once.
    EXPECT_LE(chen.numRecomputations, static_cast<size_t>(n)) << "n = " << n;
    EXPECT_EQ(all.numRecomputations, 0u);
  }
}

TEST(Baselines, EmptyAndForwardOnlyGraphs) {
  TrainingGraph empty;
  EXPECT_TRUE(solveCheckpointAll(empty).steps.empty());
  EXPECT_TRUE(solveChenSqrtN(empty).steps.empty());
  EXPECT_TRUE(chenSqrtNCheckpoints(empty).empty());
  EXPECT_TRUE(simulate(empty, solveChenSqrtN(empty)).valid);

  TrainingGraph fwd;
  ValueId x = fwd.addFixedValue("x", 4);
  NodeId a = fwd.addNode("a", "op", 1, Phase::Forward, {x});
  ValueId av = fwd.addOutput(a, "a", 4);
  NodeId b = fwd.addNode("b", "op", 1, Phase::Forward, {av});
  fwd.markOutput(fwd.addOutput(b, "b", 2));
  SimulationReport r = mustSimulate(fwd, solveChenSqrtN(fwd));
  EXPECT_EQ(r.peakBytes, 6u);
  EXPECT_EQ(r.numRecomputations, 0u);
}

//===----------------------------------------------------------------------===//
// Random training graphs
//===----------------------------------------------------------------------===//

int uniform(std::mt19937 &rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

/// A random training graph shaped like the ones extracted from real steps:
/// fixed arguments, a layered forward DAG (each node reads the previous layer
/// and sometimes earlier ones, like residual connections; some nodes have two
/// outputs, a workspace, or a step output), a loss, and a backward pass that
/// mirrors the forward in reverse: the backward node of f reads the gradients
/// produced by the backward nodes of f's users and some of f's inputs and
/// outputs (its saved activations), and may produce parameter gradients.
/// Some forward nodes (metrics) have no backward counterpart.
TrainingGraph randomTrainingGraph(std::mt19937 &rng) {
  TrainingGraph g;
  std::vector<std::vector<ValueId>> layers(1);
  for (int i = 0, e = uniform(rng, 1, 3); i < e; ++i)
    layers[0].push_back(
        g.addFixedValue("arg" + std::to_string(i), uniform(rng, 1, 64)));
  auto pick = [&](const std::vector<ValueId> &from) {
    return from[uniform(rng, 0, static_cast<int>(from.size()) - 1)];
  };

  std::vector<NodeId> mirrored;
  for (int l = 1, numLayers = uniform(rng, 1, 7); l <= numLayers; ++l) {
    std::vector<ValueId> layer;
    for (int w = 0, width = uniform(rng, 1, 3); w < width; ++w) {
      std::vector<ValueId> inputs;
      if (uniform(rng, 0, 15) != 0) { // else a constant: no input at all
        inputs.push_back(pick(layers[l - 1]));
        for (int extra = uniform(rng, 0, 2); extra > 0; --extra)
          inputs.push_back(pick(layers[uniform(rng, 0, l - 1)]));
      }
      NodeId n = g.addNode("f" + std::to_string(g.numNodes()), "op",
                           uniform(rng, 0, 10), Phase::Forward, inputs);
      if (uniform(rng, 0, 4) == 0)
        g.node(n).workspaceBytes = uniform(rng, 1, 32);
      for (int o = 0, numOut = uniform(rng, 0, 3) == 0 ? 2 : 1; o < numOut;
           ++o) {
        ValueId v = g.addOutput(n, "v" + std::to_string(g.numValues()),
                                uniform(rng, 0, 64));
        if (uniform(rng, 0, 24) == 0)
          g.markOutput(v);
        layer.push_back(v);
      }
      if (uniform(rng, 0, 9) != 0)
        mirrored.push_back(n);
    }
    layers.push_back(layer);
  }
  std::vector<ValueId> lossInputs;
  for (ValueId v : layers.back())
    if (uniform(rng, 0, 1) == 0 || lossInputs.empty())
      lossInputs.push_back(v);
  NodeId loss = g.addNode("loss", "op", 1, Phase::Forward, lossInputs);
  ValueId lossValue = g.addOutput(loss, "loss", uniform(rng, 1, 8));
  g.markOutput(lossValue);
  mirrored.push_back(loss);

  std::map<NodeId, ValueId> gradOf;
  for (auto it = mirrored.rbegin(); it != mirrored.rend(); ++it) {
    NodeId f = *it;
    std::vector<ValueId> inputs;
    if (f == loss)
      inputs.push_back(lossValue); // the seed
    for (ValueId out : g.node(f).outputs)
      for (NodeId user : g.value(out).users)
        if (gradOf.count(user))
          inputs.push_back(gradOf[user]);
    std::vector<ValueId> saved = g.node(f).inputs;
    saved.insert(saved.end(), g.node(f).outputs.begin(),
                 g.node(f).outputs.end());
    for (ValueId v : saved)
      if (uniform(rng, 0, 2) != 0)
        inputs.push_back(v);
    if (inputs.empty() && !saved.empty())
      inputs.push_back(pick(saved));
    NodeId b = g.addNode("b" + std::to_string(f), "op", uniform(rng, 0, 20),
                         Phase::Backward, inputs);
    if (uniform(rng, 0, 6) == 0)
      g.node(b).workspaceBytes = uniform(rng, 1, 64);
    gradOf[f] = g.addOutput(b, "d" + std::to_string(f), uniform(rng, 1, 64));
    bool readsFixed = llvm::any_of(
        g.node(f).inputs, [&](ValueId v) { return g.value(v).isFixed(); });
    if (readsFixed && uniform(rng, 0, 1) == 0)
      g.markOutput(
          g.addOutput(b, "dparam" + std::to_string(f), uniform(rng, 1, 64)));
  }
  return g;
}

/// The peak after each Compute, computed independently of insertEarlyFrees
/// and simulate: a value instance lives from the Compute of its producer to
/// its last reader before the next Compute of that producer (to the end for
/// outputs), and a Compute step also holds its node's workspace.
std::vector<uint64_t>
referenceComputeFigures(const TrainingGraph &g,
                        const std::vector<NodeId> &order) {
  const size_t steps = order.size();
  std::vector<uint64_t> figure(steps, 0);
  for (size_t p = 0; p < steps; ++p)
    figure[p] = g.node(order[p]).workspaceBytes;
  for (size_t p = 0; p < steps; ++p)
    for (ValueId v : g.node(order[p]).outputs) {
      size_t end = p;
      for (size_t q = p + 1; q < steps && order[q] != order[p]; ++q)
        if (llvm::is_contained(g.node(order[q]).inputs, v))
          end = q;
      if (g.value(v).isOutput)
        end = steps - 1;
      for (size_t q = p; q <= end; ++q)
        figure[q] += g.value(v).bytes;
    }
  return figure;
}

/// Checks a schedule made by insertEarlyFrees: valid, each Free right after a
/// Compute that reads or produces the value (the free is as early as it can
/// be), and the Compute figures equal the independent reference.
void checkEarlyFreeSchedule(const TrainingGraph &g, const Schedule &s,
                            const SimulationReport &r, const std::string &ctx) {
  ASSERT_TRUE(r.valid) << ctx << ": " << r.error;
  std::vector<NodeId> order;
  std::vector<uint64_t> computeFigures;
  NodeId lastCompute = -1;
  ValueId lastFreed = -1;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step &step = s.steps[i];
    if (step.isCompute()) {
      order.push_back(step.id);
      computeFigures.push_back(r.timeline[i]);
      lastCompute = step.id;
      lastFreed = -1;
      continue;
    }
    ASSERT_GE(lastCompute, 0) << ctx;
    const Node &node = g.node(lastCompute);
    EXPECT_TRUE(llvm::is_contained(node.inputs, step.id) ||
                llvm::is_contained(node.outputs, step.id))
        << ctx << ": free of " << step.id << " at step " << i;
    EXPECT_GT(step.id, lastFreed) << ctx << ": frees out of order";
    lastFreed = step.id;
  }
  EXPECT_EQ(computeFigures, referenceComputeFigures(g, order)) << ctx;
}

TEST(RandomGraphs, BaselinesAndMasksGiveValidPlans) {
  std::mt19937 rng(20240611);
  size_t totalRecomputations = 0, numPlans = 0;
  for (int iter = 0; iter < 500; ++iter) {
    std::string ctx = "graph " + std::to_string(iter);
    TrainingGraph g = randomTrainingGraph(rng);
    ASSERT_FALSE(bool(g.verify())) << ctx;

    // The JSON round trip reproduces the graph exactly.
    llvm::Expected<TrainingGraph> back = TrainingGraph::fromJSON(g.toJSON());
    ASSERT_TRUE(bool(back)) << ctx << ": " << llvm::toString(back.takeError());
    EXPECT_EQ(back->toJSON(), g.toJSON()) << ctx;

    // checkpoint-all: every node once, no recomputation.
    Schedule all = solveCheckpointAll(g);
    SimulationReport ra = simulate(g, all);
    checkEarlyFreeSchedule(g, all, ra, ctx + " checkpoint-all");
    EXPECT_EQ(ra.numRecomputations, 0u) << ctx;
    EXPECT_EQ(ra.numComputes, g.numNodes()) << ctx;
    EXPECT_DOUBLE_EQ(ra.totalCost, ra.baseCost) << ctx;
    EXPECT_EQ(ra.fixedBytes, g.fixedBytes()) << ctx;
    // ... and never above the program's own order.
    std::vector<NodeId> programOrder(g.numNodes());
    std::iota(programOrder.begin(), programOrder.end(), 0);
    EXPECT_LE(ra.peakBytes,
              simulate(g, insertEarlyFrees(g, programOrder)).peakBytes)
        << ctx;

    // chen-sqrtn: valid, and no forward node computed more than twice (once
    // in the forward pass, at most once for the backward).
    Schedule chen = solveChenSqrtN(g);
    SimulationReport rc = simulate(g, chen);
    checkEarlyFreeSchedule(g, chen, rc, ctx + " chen-sqrtn");
    EXPECT_LE(rc.numRecomputations, g.forwardNodes().size()) << ctx;
    EXPECT_EQ(chen.numRecomputations(g), rc.numRecomputations) << ctx;

    // Random masks: valid; checkpointed and backward nodes run exactly once.
    for (int m = 0; m < 4; ++m) {
      std::vector<bool> mask(g.numNodes());
      for (size_t n = 0; n < mask.size(); ++n)
        mask[n] = m == 3 || uniform(rng, 0, 2) == 0;
      Schedule s = scheduleFromCheckpoints(g, mask);
      SimulationReport r = simulate(g, s);
      std::string mctx = ctx + " mask " + std::to_string(m);
      checkEarlyFreeSchedule(g, s, r, mctx);
      std::vector<int> count(g.numNodes(), 0);
      for (const Step &step : s.steps)
        if (step.isCompute())
          ++count[step.id];
      for (size_t n = 0; n < g.numNodes(); ++n) {
        bool once = mask[n] || g.node(n).phase == Phase::Backward;
        if (once)
          EXPECT_EQ(count[n], 1) << mctx << " node " << n;
        else
          EXPECT_TRUE(count[n] == 1 || count[n] == 2) << mctx << " node " << n;
      }
      if (m == 3) { // everything checkpointed: checkpoint-all's phased order
        EXPECT_EQ(r.numRecomputations, 0u) << mctx;
        EXPECT_LE(ra.peakBytes, r.peakBytes) << mctx;
      }
      totalRecomputations += r.numRecomputations;
      ++numPlans;
    }

    // Through runSolver too, as the tools call it. Without a budget the
    // Checkmate solvers (and auto, which runs them) search for the cheapest
    // plan at the least memory the others find, with CBC: on the first 10
    // graphs only, with a short limit.
    for (const SolverInfo &solver : allSolvers()) {
      if (!solverApplies(solver, g))
        continue;
      llvm::StringRef name = solver.name;
      bool searches = name.starts_with("checkmate") || name == "auto";
      if (searches && iter >= 10)
        continue;
      SolverOptions options;
      options.timeLimitSeconds = 1;
      llvm::Expected<SolverResult> result = runSolver(solver, g, options);
      ASSERT_TRUE(bool(result))
          << ctx << ": " << llvm::toString(result.takeError());
      EXPECT_TRUE(result->meetsBudget);
    }
  }
  // The generator must exercise recomputation, or the masks test nothing.
  EXPECT_GT(totalRecomputations, numPlans / 4);
}

} // namespace
