//===- CheckmateTest.cpp - Checkmate's MILP and LP rounding ---------------===//
//
// The unit-cost chain of Checkmate (seeds/003 §4.6, appendix A: 8 layers,
// n = 17 nodes) at every budget, differential checks of the ILP against an
// exhaustive search over the R matrices of its model on tiny random graphs,
// LP bounds, rounding, coarsening, multi-output nodes and step outputs. Every
// plan is judged by the simulator.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Checkmate.h"
#include "remat/Solvers/Reorder.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>

using namespace remat;

namespace {

/// Checkmate's linear graph with n forward layers (its gen_linear_graph):
/// 2n + 1 unit nodes in a chain f_1 .. f_n, loss, b_n .. b_1, where b_i also
/// reads f_i (node i reads node i - 1; node 2n - i reads node i, zero-based).
/// As in Checkmate's model there are no step outputs and the input is a
/// fixed value outside the budget.
TrainingGraph makeCheckmateChain(int n) {
  TrainingGraph g;
  ValueId prev = g.addFixedValue("x", 1);
  std::vector<ValueId> forward;
  for (int i = 1; i <= n; ++i) {
    NodeId f =
        g.addNode("f" + std::to_string(i), "layer", 1, Phase::Forward, {prev});
    prev = g.addOutput(f, "a" + std::to_string(i), 1);
    forward.push_back(prev);
  }
  NodeId loss = g.addNode("loss", "loss", 1, Phase::Forward, {prev});
  ValueId grad = g.addOutput(loss, "l", 1);
  for (int i = n; i >= 1; --i) {
    NodeId b = g.addNode("b" + std::to_string(i), "grad", 1, Phase::Backward,
                         {grad, forward[i - 1]});
    grad = g.addOutput(b, "d" + std::to_string(i), 1);
  }
  return g;
}

SolverOptions withBudget(uint64_t budget, double seconds = 30) {
  SolverOptions options;
  options.budget = budget;
  options.timeLimitSeconds = seconds;
  return options;
}

CheckmateOptions quiet() {
  CheckmateOptions options;
  options.progressIntervalSeconds = 0;
  return options;
}

//===----------------------------------------------------------------------===//
// The 8-layer unit chain (issue 6)
//===----------------------------------------------------------------------===//

TEST(CheckmateChain, GraphShape) {
  TrainingGraph g = makeCheckmateChain(8);
  ASSERT_EQ(g.numNodes(), 17u);
  ASSERT_FALSE(bool(g.verify()));
  // Checkpoint-all needs 10 units: 8 activations, the loss and b_8.
  SimulationReport all = simulate(g, solveCheckpointAll(g));
  ASSERT_TRUE(all.valid) << all.error;
  EXPECT_EQ(all.peakBytes, 10u);
  EXPECT_EQ(all.totalCost, 17);
}

TEST(CheckmateChain, CostAtEveryBudget) {
  TrainingGraph g = makeCheckmateChain(8);
  // The figures of issue 6 (budget in tensor units -> optimal cost).
  const std::vector<std::pair<uint64_t, double>> expected = {
      {3, 45}, {4, 26}, {5, 22}, {6, 21}, {10, 17}};
  double previous = std::numeric_limits<double>::infinity();
  for (uint64_t budget = 3; budget <= 11; ++budget) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    CheckmateReport ilp, lp;
    // Optimality is what is checked, not speed: under the sanitizers the
    // search at 4 units took close to 30 s and once stopped before its
    // proof (CI on bef728f); a limit far above it keeps the test exact.
    llvm::Expected<Schedule> plan =
        solveCheckmateILP(g, withBudget(budget, 600), quiet(), &ilp);
    ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
    SimulationReport sim = simulate(g, *plan);
    ASSERT_TRUE(sim.valid) << sim.error;
    EXPECT_LE(sim.peakBytes, budget);
    EXPECT_EQ(ilp.status, CheckmateStatus::Optimal);
    EXPECT_TRUE(ilp.meetsBudget);
    EXPECT_EQ(ilp.objective, sim.totalCost);
    for (auto [b, cost] : expected) {
      if (b == budget) {
        EXPECT_EQ(sim.totalCost, cost);
      }
    }
    // Appendix A: with frontier-advancing stages the integrality gap of this
    // instance at budget 4 is 1.18 (ILP 26, relaxation 22).
    if (budget == 4) {
      EXPECT_NEAR(ilp.lpBound, 22, 1e-6);
      EXPECT_NEAR(sim.totalCost / ilp.lpBound, 1.18, 0.005);
    }
    // Cost never increases with the budget.
    EXPECT_LE(sim.totalCost, previous);
    previous = sim.totalCost;
    // Never worse than a baseline that fits the same budget.
    for (const Schedule &baseline :
         {solveCheckpointAll(g), solveChenSqrtN(g)}) {
      SimulationReport base = simulate(g, baseline);
      if (base.valid && base.peakBytes <= budget) {
        EXPECT_LE(sim.totalCost, base.totalCost);
      }
    }

    llvm::Expected<Schedule> rounded =
        solveCheckmateLP(g, withBudget(budget), quiet(), &lp);
    ASSERT_TRUE(bool(rounded)) << llvm::toString(rounded.takeError());
    SimulationReport lpSim = simulate(g, *rounded);
    ASSERT_TRUE(lpSim.valid) << lpSim.error;
    // The LP value bounds the ILP from below; a rounding that fits is never
    // cheaper than the optimum.
    if (lp.lpBound >= 0) {
      EXPECT_LE(lp.lpBound, sim.totalCost + 1e-6);
    }
    if (ilp.lpBound >= 0) {
      EXPECT_LE(ilp.lpBound, sim.totalCost + 1e-6);
    }
    EXPECT_LE(ilp.lowerBound, sim.totalCost + 1e-6);
    if (lp.status == CheckmateStatus::Feasible) {
      EXPECT_LE(lpSim.peakBytes, budget);
      EXPECT_GE(lpSim.totalCost, sim.totalCost);
    }
  }
}

TEST(CheckmateChain, BudgetTwoIsInfeasible) {
  TrainingGraph g = makeCheckmateChain(8);
  CheckmateReport report;
  llvm::Expected<Schedule> plan =
      solveCheckmateILP(g, withBudget(2), quiet(), &report);
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  EXPECT_EQ(report.status, CheckmateStatus::Infeasible);
  EXPECT_FALSE(report.meetsBudget);
  // The fallback is still a valid plan, judged over budget.
  SimulationReport sim = simulate(g, *plan);
  EXPECT_TRUE(sim.valid) << sim.error;
  EXPECT_GT(sim.peakBytes, 2u);

  CheckmateReport lp;
  ASSERT_TRUE(bool(solveCheckmateLP(g, withBudget(2), quiet(), &lp)));
  EXPECT_NE(lp.status, CheckmateStatus::Feasible);
  EXPECT_FALSE(lp.meetsBudget);
}

TEST(CheckmateChain, NoBudgetMeansLeastKnownMemory) {
  // Without a budget every solver minimises memory: Checkmate takes the
  // least peak of the other solvers' least-memory plans as its budget and
  // returns the cheapest plan of its model there (it used to return the
  // checkpoint-all plan, the most memory of all).
  TrainingGraph g = makeCheckmateChain(8);
  uint64_t leastPeak = UINT64_MAX;
  double costAtLeast = 0;
  for (const SolverInfo &solver : allSolvers()) {
    llvm::StringRef name = solver.name;
    if (name.starts_with("checkmate") || name == "auto" ||
        !solverApplies(solver, g))
      continue;
    llvm::Expected<SolverResult> r = runSolver(solver, g, SolverOptions());
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    if (r->report.peakBytes < leastPeak ||
        (r->report.peakBytes == leastPeak &&
         r->report.totalCost < costAtLeast)) {
      leastPeak = r->report.peakBytes;
      costAtLeast = r->report.totalCost;
    }
  }
  SimulationReport all = simulate(g, solveCheckpointAll(g));
  ASSERT_LT(leastPeak, all.peakBytes);
  CheckmateReport report;
  llvm::Expected<Schedule> plan =
      solveCheckmateILP(g, SolverOptions(), quiet(), &report);
  ASSERT_TRUE(bool(plan));
  SimulationReport sim = simulate(g, *plan);
  EXPECT_TRUE(sim.valid);
  EXPECT_EQ(report.budgetBytes, leastPeak);
  EXPECT_LE(sim.peakBytes, leastPeak);
  EXPECT_LE(sim.totalCost, costAtLeast);
  EXPECT_EQ(report.status, CheckmateStatus::Optimal);
}

TEST(CheckmateChain, NeverWorseThanTheBaselines) {
  TrainingGraph g = makeCheckmateChain(8);
  const std::pair<const char *, Schedule> baselines[] = {
      {"checkpoint-all", solveCheckpointAll(g)},
      {"chen-sqrtn", solveChenSqrtN(g)}};
  for (const auto &[name, schedule] : baselines) {
    SimulationReport base = simulate(g, schedule);
    ASSERT_TRUE(base.valid) << name;
    CheckmateReport report;
    llvm::Expected<Schedule> plan =
        solveCheckmateILP(g, withBudget(base.peakBytes), quiet(), &report);
    ASSERT_TRUE(bool(plan));
    SimulationReport sim = simulate(g, *plan);
    EXPECT_LE(sim.peakBytes, base.peakBytes) << name;
    EXPECT_LE(sim.totalCost, base.totalCost) << name;
  }
}

TEST(CheckmateChain, CoarseGraphIsSolvedAndExpanded) {
  // An MLIR-like chain (matmul -> activation pairs, the matmul read only by
  // its activation) solved on a coarse graph of at most 12 nodes.
  TrainingGraph g;
  ValueId prev = g.addFixedValue("x", 4);
  std::vector<ValueId> acts;
  for (int i = 0; i < 6; ++i) {
    NodeId mm = g.addNode("mm" + std::to_string(i), "linalg.matmul", 4,
                          Phase::Forward, {prev});
    ValueId z = g.addOutput(mm, "z" + std::to_string(i), 4);
    NodeId act = g.addNode("act" + std::to_string(i), "linalg.generic", 1,
                           Phase::Forward, {z});
    prev = g.addOutput(act, "a" + std::to_string(i), 4);
    acts.push_back(prev);
  }
  NodeId loss = g.addNode("loss", "loss", 1, Phase::Forward, {prev});
  g.markOutput(g.addOutput(loss, "l", 4));
  NodeId seed = g.addNode("seed", "seed", 1, Phase::Backward, {prev});
  ValueId grad = g.addOutput(seed, "g", 4);
  for (int i = 5; i >= 0; --i) {
    NodeId b = g.addNode("b" + std::to_string(i), "grad", 4, Phase::Backward,
                         {grad, acts[i]});
    grad = g.addOutput(b, "d" + std::to_string(i), 4);
  }
  g.markOutput(grad);
  ASSERT_FALSE(bool(g.verify()));
  ASSERT_EQ(g.numNodes(), 20u);

  // Budgets below every plan without recomputation, so that the search has
  // to run: the reorder solver (issue 22) needs less than checkpoint-all.
  SimulationReport all = simulate(g, solveCheckpointAll(g));
  all.peakBytes = std::min(
      all.peakBytes, simulate(g, solveReorder(g, SolverOptions())).peakBytes);
  CheckmateOptions options = quiet();
  options.maxNodes = 12;
  for (uint64_t budget : {all.peakBytes - 4, all.peakBytes - 12}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    CheckmateReport report, fine;
    llvm::Expected<Schedule> plan =
        solveCheckmateILP(g, withBudget(budget), options, &report);
    ASSERT_TRUE(bool(plan));
    SimulationReport sim = simulate(g, *plan);
    ASSERT_TRUE(sim.valid) << sim.error;
    EXPECT_LE(sim.peakBytes, budget);
    EXPECT_NE(report.level.find("coarse"), std::string::npos) << report.level;
    EXPECT_LE(report.modelNodes, 12u);
    EXPECT_EQ(report.graphNodes, 20u);
    // The coarse model is a restriction: never cheaper than the full one.
    ASSERT_TRUE(bool(solveCheckmateILP(g, withBudget(budget), quiet(), &fine)));
    EXPECT_EQ(fine.level, "full graph");
    EXPECT_GE(report.objective, fine.objective);
    // Memory in units of the gcd of the sizes (4 bytes here).
    EXPECT_EQ(report.memoryUnit, 4u);
  }
}

//===----------------------------------------------------------------------===//
// Multi-output nodes, workspace, step outputs
//===----------------------------------------------------------------------===//

TEST(CheckmateModel, MultiOutputNodesWorkspaceAndOutputs) {
  // f0 produces two values, p and q, that different nodes read; f1 has a
  // workspace; the loss and the last gradient are step outputs.
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 8);
  NodeId f0 = g.addNode("f0", "split", 2, Phase::Forward, {x});
  ValueId p = g.addOutput(f0, "p", 8);
  ValueId q = g.addOutput(f0, "q", 16);
  NodeId f1 = g.addNode("f1", "conv", 3, Phase::Forward, {p});
  g.node(f1).workspaceBytes = 8;
  ValueId r = g.addOutput(f1, "r", 8);
  NodeId f2 = g.addNode("f2", "relu", 1, Phase::Forward, {r});
  ValueId s = g.addOutput(f2, "s", 8);
  NodeId f3 = g.addNode("f3", "mul", 1, Phase::Forward, {q, s});
  ValueId t = g.addOutput(f3, "t", 8);
  NodeId loss = g.addNode("loss", "loss", 1, Phase::Forward, {t});
  g.markOutput(g.addOutput(loss, "l", 8));
  NodeId b3 = g.addNode("b3", "grad", 1, Phase::Backward, {s, t});
  ValueId d3 = g.addOutput(b3, "d3", 8);
  NodeId b2 = g.addNode("b2", "grad", 1, Phase::Backward, {r, d3});
  ValueId d2 = g.addOutput(b2, "d2", 8);
  NodeId b1 = g.addNode("b1", "grad", 2, Phase::Backward, {p, q, d2});
  g.markOutput(g.addOutput(b1, "d1", 8));
  ASSERT_FALSE(bool(g.verify()));

  SimulationReport all = simulate(g, solveCheckpointAll(g));
  ASSERT_TRUE(all.valid);
  // Down from the checkpoint-all peak in steps of the memory unit (8 bytes)
  // until the model runs out of plans; the cost never decreases on the way.
  double previous = all.totalCost;
  int solved = 0;
  for (uint64_t budget = all.peakBytes; budget >= 8; budget -= 8) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    CheckmateReport report;
    llvm::Expected<Schedule> plan =
        solveCheckmateILP(g, withBudget(budget), quiet(), &report);
    ASSERT_TRUE(bool(plan));
    SimulationReport sim = simulate(g, *plan);
    ASSERT_TRUE(sim.valid) << sim.error;
    if (!report.meetsBudget) {
      EXPECT_EQ(report.status, CheckmateStatus::Infeasible);
      break;
    }
    EXPECT_EQ(report.status, CheckmateStatus::Optimal);
    ++solved;
    EXPECT_LE(sim.peakBytes, budget);
    EXPECT_GE(sim.totalCost, previous);
    previous = sim.totalCost;
    if (report.level == "full graph") {
      EXPECT_EQ(report.memoryUnit, 8u);
    }
  }
  // Some budgets need recomputation.
  EXPECT_GE(solved, 3);
  EXPECT_GT(previous, all.totalCost);
}

//===----------------------------------------------------------------------===//
// Exhaustive search over the model on tiny random graphs
//===----------------------------------------------------------------------===//

/// A tiny random training graph shaped like a real one: forward nodes each
/// reading the previous one (and sometimes an earlier one), then backward
/// nodes each reading the previous node and a random forward activation.
/// Every node has one output of 1-3 units and a cost of 1-5; sometimes the
/// last node's output is a step output.
TrainingGraph randomTinyGraph(std::mt19937 &rng, int numNodes) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 1);
  std::vector<ValueId> outs;
  int numForward = (numNodes + 1) / 2;
  for (int i = 0; i < numNodes; ++i) {
    bool forward = i < numForward;
    std::vector<ValueId> inputs;
    if (i == 0) {
      inputs.push_back(x);
    } else {
      inputs.push_back(outs[i - 1]);
      if (!forward)
        inputs.push_back(outs[rng() % numForward]);
      else if (i >= 2 && rng() % 3 == 0)
        inputs.push_back(outs[rng() % (i - 1)]);
    }
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    NodeId node = g.addNode("n" + std::to_string(i), "op",
                            1 + static_cast<double>(rng() % 5),
                            forward ? Phase::Forward : Phase::Backward, inputs);
    outs.push_back(g.addOutput(node, "v" + std::to_string(i), 1 + rng() % 3));
  }
  if (rng() % 4 == 0)
    g.markOutput(outs.back());
  return g;
}

/// Checkmate's model evaluated directly from the paper's formulas, for one
/// training-graph node per model node: is (R, S) feasible under `budget`
/// units? (1b), (1c), (8a-8c), pinned nodes, FREE from (5) including
/// FREE_{t,k,k}, U from (2)-(3), U_{t,k} <= budget.
bool modelFeasible(const TrainingGraph &g,
                   const std::vector<std::vector<int>> &R,
                   const std::vector<std::vector<int>> &S, uint64_t budget) {
  const int n = static_cast<int>(g.numNodes());
  auto mem = [&](int i) -> long {
    long m = 0;
    for (ValueId v : g.node(i).outputs)
      if (!g.value(v).isOutput)
        m += static_cast<long>(g.value(v).bytes);
    return m;
  };
  auto memOut = [&](int i) -> long {
    long m = 0;
    for (ValueId v : g.node(i).outputs)
      if (g.value(v).isOutput)
        m += static_cast<long>(g.value(v).bytes);
    return m;
  };
  auto deps = [&](int j) {
    std::vector<int> d;
    for (ValueId v : g.node(j).inputs)
      if (g.value(v).producer >= 0)
        d.push_back(g.value(v).producer);
    return d;
  };
  auto users = [&](int i) {
    std::vector<int> u;
    for (ValueId v : g.node(i).outputs)
      for (NodeId user : g.value(v).users)
        u.push_back(user);
    return u;
  };
  auto r = [&](int t, int i) { return i <= t ? R[t][i] : 0; };
  auto s = [&](int t, int i) { return t < n && i < t ? S[t][i] : 0; };
  for (int t = 0; t < n; ++t) {
    if (!r(t, t))
      return false;
    for (int j = 0; j <= t; ++j)
      for (int i : deps(j))
        if (r(t, j) > r(t, i) + s(t, i))
          return false;
    for (int i = 0; i < t; ++i) {
      if (t >= 1 && s(t, i) > r(t - 1, i) + s(t - 1, i))
        return false;
      if (memOut(i) > 0 && r(t, i))
        return false;
    }
  }
  for (int t = 0; t < n; ++t) {
    auto freeOf = [&](int i, int k) {
      if (!r(t, k) || s(t + 1, i))
        return 0;
      for (int j : users(i))
        if (j > k && r(t, j))
          return 0;
      return 1;
    };
    long u = 0;
    for (int g2 = 0; g2 < t; ++g2)
      u += memOut(g2);
    for (int i = 0; i < t; ++i)
      u += mem(i) * s(t, i);
    for (int k = 0; k <= t; ++k) {
      if (k > 0) {
        std::vector<int> freed = deps(k - 1);
        freed.push_back(k - 1);
        for (int i : freed)
          u -= mem(i) * freeOf(i, k - 1);
      }
      u += (mem(k) + memOut(k)) * r(t, k);
      if (u > static_cast<long>(budget))
        return false;
    }
  }
  return true;
}

/// The model's optimum by enumerating every R (each with every S when
/// `allS`, else with the least S that (1b) and (1c) allow, which is optimal
/// since U grows with S); +inf when infeasible.
double bruteForceOptimum(const TrainingGraph &g, uint64_t budget, bool allS) {
  const int n = static_cast<int>(g.numNodes());
  std::vector<std::pair<int, int>> cells;
  for (int t = 1; t < n; ++t)
    for (int i = 0; i < t; ++i)
      cells.push_back({t, i});
  const size_t m = cells.size();
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::vector<int>> R(n), S(n + 1);
  for (int t = 0; t < n; ++t) {
    R[t].assign(t + 1, 0);
    R[t][t] = 1;
  }
  for (int t = 0; t <= n; ++t)
    S[t].assign(std::max(t, 1), 0);
  for (uint64_t rBits = 0; rBits < (uint64_t(1) << m); ++rBits) {
    double cost = 0;
    for (int t = 0; t < n; ++t)
      cost += g.node(t).cost;
    for (size_t c = 0; c < m; ++c) {
      R[cells[c].first][cells[c].second] = (rBits >> c) & 1;
      if ((rBits >> c) & 1)
        cost += g.node(cells[c].second).cost;
    }
    if (cost >= best)
      continue;
    if (allS) {
      for (uint64_t sBits = 0; sBits < (uint64_t(1) << m); ++sBits) {
        for (size_t c = 0; c < m; ++c)
          S[cells[c].first][cells[c].second] = (sBits >> c) & 1;
        if (modelFeasible(g, R, S, budget)) {
          best = cost;
          break;
        }
      }
      continue;
    }
    // The least S: checkpoint v_i into stage t when it is not computed there
    // and a node computed there reads it, or stage t + 1 needs it.
    for (int t = n - 1; t >= 1; --t)
      for (int i = 0; i < t; ++i) {
        bool need = false;
        if (!R[t][i]) {
          need = t + 1 < n && S[t + 1][i];
          for (ValueId v : g.node(i).outputs)
            for (NodeId j : g.value(v).users)
              need |= j <= t && R[t][j];
        }
        S[t][i] = need;
      }
    if (modelFeasible(g, R, S, budget))
      best = cost;
  }
  return best;
}

TEST(CheckmateBruteForce, IlpReachesTheModelOptimum) {
  std::mt19937 rng(20200306);
  int checked = 0, infeasible = 0;
  for (int trial = 0; trial < 40; ++trial) {
    int n = 4 + trial % 3; // 4..6 nodes
    TrainingGraph g = randomTinyGraph(rng, n);
    ASSERT_FALSE(bool(g.verify()));
    SimulationReport all = simulate(g, solveCheckpointAll(g));
    ASSERT_TRUE(all.valid);
    // Every budget below the checkpoint-all peak down to the first one the
    // model cannot meet.
    for (uint64_t budget = all.peakBytes - 1; budget >= 1; --budget) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " n=" +
                   std::to_string(n) + " budget " + std::to_string(budget));
      double optimum = bruteForceOptimum(g, budget, /*allS=*/n <= 4);
      CheckmateOptions options = quiet();
      options.warmStart = trial % 2 == 0; // with and without a warm start
      CheckmateReport report;
      llvm::Expected<Schedule> plan =
          solveCheckmateILP(g, withBudget(budget), options, &report);
      ASSERT_TRUE(bool(plan));
      SimulationReport sim = simulate(g, *plan);
      ASSERT_TRUE(sim.valid) << sim.error;
      if (getenv("CHECKMATE_TEST_VERBOSE"))
        fprintf(stderr,
                "trial %d n=%d budget=%llu peak=%llu optimum=%g "
                "ilp=%g %s %s\n",
                trial, n, (unsigned long long)budget,
                (unsigned long long)all.peakBytes, optimum, sim.totalCost,
                checkmateStatusName(report.status).str().c_str(),
                report.warmStart.c_str());
      if (std::isinf(optimum)) {
        ++infeasible;
        // The model has no plan: the answer is another solver's plan, and
        // "optimal" only if the simulator finds it within the budget.
        EXPECT_EQ(report.meetsBudget, sim.peakBytes <= budget);
        if (report.status == CheckmateStatus::Optimal) {
          EXPECT_TRUE(report.meetsBudget);
        }
        break;
      }
      ++checked;
      EXPECT_EQ(report.status, CheckmateStatus::Optimal);
      EXPECT_LE(sim.peakBytes, budget);
      // The model's optimum is the ILP's objective; the simulated plan can
      // only be cheaper (it drops computations nothing reads, or is another
      // solver's plan that the simulator finds cheaper).
      EXPECT_LE(sim.totalCost, optimum + 1e-9);
      if (report.message.empty()) {
        EXPECT_NEAR(sim.totalCost, optimum, 1e-9);
      }
      if (report.lpBound >= 0) {
        EXPECT_LE(report.lpBound, optimum + 1e-6);
      }

      // LP rounding: within the budget when it claims a plan, never below
      // the relaxation.
      CheckmateReport lp;
      llvm::Expected<Schedule> rounded =
          solveCheckmateLP(g, withBudget(budget), quiet(), &lp);
      ASSERT_TRUE(bool(rounded));
      SimulationReport lpSim = simulate(g, *rounded);
      ASSERT_TRUE(lpSim.valid) << lpSim.error;
      if (lp.status == CheckmateStatus::Feasible) {
        EXPECT_LE(lpSim.peakBytes, budget);
        EXPECT_GE(lpSim.totalCost + 1e-6, lp.lpBound);
      }
    }
  }
  EXPECT_GE(checked, 15);
  EXPECT_GE(infeasible, 20);
}

TEST(CheckmateReport, JsonNamesTheStatus) {
  CheckmateReport report;
  report.status = CheckmateStatus::TimeLimit;
  report.lpBound = std::numeric_limits<double>::infinity();
  llvm::json::Value json = report.toJSON();
  const llvm::json::Object *object = json.getAsObject();
  ASSERT_TRUE(object);
  EXPECT_EQ(object->getString("status"), "time-limit");
  EXPECT_TRUE(object->get("lp_bound")->getAsNull());
  EXPECT_EQ(checkmateStatusName(CheckmateStatus::Optimal), "proven-optimal");
}

} // namespace
