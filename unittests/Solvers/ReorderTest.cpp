//===- ReorderTest.cpp - An operator order chosen for memory --------------===//
//
// The reordering of issue 22 (item 3): its memory model against the
// simulator on random graphs and random topological orders; its optimum
// against every topological order (brute force, each judged by simulate)
// on small random graphs, with the heuristics weakened so that the exact
// program does the work; the renumbering of a graph into an order and the
// mapping of schedules back; the `reorder` solver and solveOnReorderedGraph
// through runSolver.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Reorder.h"

#include "../Property/RandomGraphs.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

using namespace remat;

namespace {

/// A random DAG of `n` nodes, wider than the training graphs of the
/// property generator (so that there are many orders): each node reads one
/// to three earlier values or fixed arguments, has one or two outputs
/// (sometimes read by no one, sometimes a step output), sometimes a
/// workspace, sometimes an in-place update of one of its inputs.
TrainingGraph randomDag(std::mt19937_64 &rng, size_t n) {
  TrainingGraph g;
  std::vector<ValueId> values;
  std::vector<ValueId> fixed = {g.addFixedValue("w0", 1 + rng() % 50),
                                g.addFixedValue("w1", 1 + rng() % 50)};
  for (size_t i = 0; i < n; ++i) {
    std::vector<ValueId> inputs;
    size_t reads = values.empty() ? 0 : 1 + rng() % 3;
    for (size_t r = 0; r < reads; ++r) {
      // Mostly recent values, so that chains and branches both appear.
      size_t back = std::min<size_t>(values.size(), 1 + rng() % 4);
      ValueId v = rng() % 3 == 0 ? values[rng() % values.size()]
                                 : values[values.size() - back];
      if (std::find(inputs.begin(), inputs.end(), v) == inputs.end())
        inputs.push_back(v);
    }
    if (rng() % 3 == 0)
      inputs.push_back(fixed[rng() % 2]);
    Phase phase = i < n / 2 ? Phase::Forward : Phase::Backward;
    NodeId node = g.addNode("n" + std::to_string(i), "op", 1, phase, inputs);
    size_t outs = 1 + (rng() % 4 == 0);
    for (size_t k = 0; k < outs; ++k) {
      ValueId out = g.addOutput(node, "v" + std::to_string(i) + "_" +
                                          std::to_string(k),
                                rng() % 10 == 0 ? 0 : 1 + rng() % 100);
      values.push_back(out);
      if (rng() % 8 == 0)
        g.markOutput(out);
    }
    if (rng() % 4 == 0)
      g.node(node).workspaceBytes = rng() % 60;
    // An in-place update of a non-fixed input of the same size.
    if (!inputs.empty() && rng() % 3 == 0) {
      ValueId in = inputs[0];
      if (!g.value(in).isFixed()) {
        ValueId out = g.node(node).outputs[0];
        g.value(out).bytes = g.value(in).bytes;
        g.node(node).reuses.push_back({in, out});
      }
    }
  }
  // verify() fails only for a backward node feeding a forward one, which
  // the phases above cannot make; keep the check for the generator itself.
  EXPECT_FALSE(bool(g.verify()));
  return g;
}

/// Every topological order (up to `limit` of them; false if there are
/// more), each passed to `visit`.
bool forEachTopologicalOrder(const TrainingGraph &g, size_t limit,
                             const std::function<void(
                                 const std::vector<NodeId> &)> &visit) {
  const size_t n = g.numNodes();
  std::vector<int> missing(n, 0);
  std::vector<std::vector<NodeId>> readers(n);
  for (NodeId v = 0; v < static_cast<NodeId>(n); ++v) {
    std::vector<NodeId> preds;
    for (ValueId in : g.node(v).inputs)
      if (g.value(in).producer >= 0)
        preds.push_back(g.value(in).producer);
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    missing[v] = static_cast<int>(preds.size());
    for (NodeId p : preds)
      readers[p].push_back(v);
  }
  std::vector<NodeId> order;
  std::vector<char> done(n, 0);
  size_t count = 0;
  std::function<bool()> extend = [&]() {
    if (order.size() == n) {
      visit(order);
      return ++count < limit;
    }
    for (NodeId v = 0; v < static_cast<NodeId>(n); ++v) {
      if (done[v] || missing[v] != 0)
        continue;
      done[v] = 1;
      order.push_back(v);
      for (NodeId r : readers[v])
        --missing[r];
      bool more = extend();
      for (NodeId r : readers[v])
        ++missing[r];
      order.pop_back();
      done[v] = 0;
      if (!more)
        return false;
    }
    return true;
  };
  return extend();
}

uint64_t simulatedPeak(const TrainingGraph &g, const std::vector<NodeId> &order) {
  SimulationReport report = simulate(g, insertEarlyFrees(g, order));
  EXPECT_TRUE(report.valid) << report.error;
  return report.peakBytes;
}

/// A random topological order (Kahn's algorithm with random picks).
std::vector<NodeId> randomOrder(const TrainingGraph &g, std::mt19937_64 &rng) {
  const size_t n = g.numNodes();
  std::vector<int> missing(n, 0);
  for (NodeId v = 0; v < static_cast<NodeId>(n); ++v)
    for (ValueId in : g.node(v).inputs)
      missing[v] += g.value(in).producer >= 0;
  std::vector<NodeId> ready, order;
  for (NodeId v = 0; v < static_cast<NodeId>(n); ++v)
    if (missing[v] == 0)
      ready.push_back(v);
  while (!ready.empty()) {
    size_t pick = rng() % ready.size();
    NodeId v = ready[pick];
    ready.erase(ready.begin() + pick);
    order.push_back(v);
    for (ValueId out : g.node(v).outputs)
      for (NodeId u : g.value(out).users)
        if (--missing[u] == 0)
          ready.push_back(u);
  }
  return order;
}

std::vector<TrainingGraph> smallGraphs(size_t count, unsigned seed) {
  std::vector<TrainingGraph> graphs;
  std::mt19937_64 rng(seed);
  property::Rng prng(seed);
  for (size_t i = 0; i < count; ++i) {
    if (i % 2 == 0)
      graphs.push_back(randomDag(rng, 3 + rng() % 7));
    else
      graphs.push_back(property::randomTrainingGraph(prng, 9).graph);
  }
  return graphs;
}

TEST(Reorder, ModelMatchesTheSimulator) {
  std::mt19937_64 rng(5);
  property::Rng prng(5);
  for (int trial = 0; trial < 200; ++trial) {
    TrainingGraph g = trial % 2 ? randomDag(rng, 5 + rng() % 40)
                                : property::randomTrainingGraph(prng, 40).graph;
    for (int k = 0; k < 5; ++k) {
      std::vector<NodeId> order = randomOrder(g, rng);
      ASSERT_TRUE(isTopologicalOrder(g, order));
      ASSERT_EQ(orderPeak(g, order), simulatedPeak(g, order))
          << "trial " << trial << " order " << k;
    }
  }
}

TEST(Reorder, TopologicalOrderCheck) {
  std::mt19937_64 rng(1);
  TrainingGraph g = randomDag(rng, 6);
  std::vector<NodeId> order(6);
  std::iota(order.begin(), order.end(), 0);
  EXPECT_TRUE(isTopologicalOrder(g, order));
  EXPECT_FALSE(isTopologicalOrder(g, {0, 1, 2}));
  std::vector<NodeId> twice = order;
  twice[5] = 4;
  EXPECT_FALSE(isTopologicalOrder(g, twice));
  std::reverse(order.begin(), order.end());
  // Node 1 reads something of node 0 (every node reads a recent value).
  EXPECT_FALSE(isTopologicalOrder(g, order));
  EXPECT_FALSE(bool(renumberGraph(g, order)));
}

/// What a comparison with every order saw.
struct Checked {
  size_t graphs = 0;
  /// Graphs whose best order peaks below the program's order.
  size_t improvable = 0;
};

/// The optimum over every topological order, judged by the simulator.
void expectOptimal(const TrainingGraph &g, const ReorderOptions &options,
                   const std::string &what, Checked &checked) {
  uint64_t best = std::numeric_limits<uint64_t>::max();
  bool all = forEachTopologicalOrder(g, 200000, [&](const std::vector<NodeId> &o) {
    best = std::min(best, simulatedPeak(g, o));
  });
  if (!all)
    return; // too many orders to enumerate: not a test case
  ReorderResult result = reorderForMemory(g, options);
  ++checked.graphs;
  checked.improvable += best < result.programPeakBytes;
  ASSERT_TRUE(isTopologicalOrder(g, result.order)) << what;
  EXPECT_EQ(result.peakBytes, simulatedPeak(g, result.order)) << what;
  EXPECT_EQ(result.peakBytes, best) << what << " (method " << result.method
                                    << ")";
  EXPECT_TRUE(result.optimal) << what;
  EXPECT_LE(result.lowerBoundBytes, best) << what;
  EXPECT_LE(result.peakBytes, result.programPeakBytes) << what;
}

TEST(Reorder, OptimalAgainstEveryOrder) {
  std::vector<TrainingGraph> graphs = smallGraphs(300, 11);
  ReorderOptions options;
  options.timeLimitSeconds = 0;
  Checked checked;
  for (size_t i = 0; i < graphs.size(); ++i) {
    expectOptimal(graphs[i], options, "graph " + std::to_string(i), checked);
    if (HasFailure())
      return;
  }
  // Most graphs have few enough orders, and in many the program's order is
  // not the best (else the test would prove little).
  EXPECT_GE(checked.graphs, 250u);
  EXPECT_GE(checked.improvable, 30u);
}

/// The same with a beam of one and no local moves: the exact program
/// starts from a weak bound and must find the optimum itself.
TEST(Reorder, ExactProgramAloneAgainstEveryOrder) {
  std::vector<TrainingGraph> graphs = smallGraphs(300, 12);
  ReorderOptions options;
  options.timeLimitSeconds = 0;
  options.beamWidth = 1;
  options.localSearch = false;
  size_t byExact = 0;
  Checked checked;
  for (size_t i = 0; i < graphs.size(); ++i) {
    expectOptimal(graphs[i], options, "graph " + std::to_string(i), checked);
    if (HasFailure())
      return;
    byExact += reorderForMemory(graphs[i], options).method == "exact";
  }
  // The program improved on the greedy order somewhere (a program that only
  // confirmed the heuristics would pass the checks above as well).
  EXPECT_GT(byExact, 0u);
  EXPECT_GE(checked.graphs, 250u);
}

/// Two branches from one input, each a big value consumed into a small one:
/// in the program's order both big values are alive at once; the best order
/// finishes one branch before starting the other.
TEST(Reorder, FinishesOneBranchFirst) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 10);
  NodeId a = g.addNode("a", "op", 1, Phase::Forward, {x});
  ValueId big1 = g.addOutput(a, "big1", 100);
  NodeId b = g.addNode("b", "op", 1, Phase::Forward, {x});
  ValueId big2 = g.addOutput(b, "big2", 100);
  NodeId a2 = g.addNode("a2", "op", 1, Phase::Forward, {big1});
  ValueId s1 = g.addOutput(a2, "s1", 1);
  NodeId b2 = g.addNode("b2", "op", 1, Phase::Forward, {big2});
  ValueId s2 = g.addOutput(b2, "s2", 1);
  NodeId join = g.addNode("join", "op", 1, Phase::Forward, {s1, s2});
  g.markOutput(g.addOutput(join, "out", 1));
  ASSERT_FALSE(bool(g.verify()));
  ReorderResult result = reorderForMemory(g);
  // a, b: 200 alive; a2 adds s1 while big1 is still read: 201.
  EXPECT_EQ(result.programPeakBytes, 201u);
  // a, a2 (100 + 1 alive), b (1 + 100), b2 (1 + 100 + 1).
  EXPECT_EQ(result.peakBytes, 102u);
  EXPECT_TRUE(result.optimal);
  EXPECT_EQ(simulatedPeak(g, result.order), 102u);
  (void)a;
  (void)b;
  (void)a2;
  (void)b2;
}

//===----------------------------------------------------------------------===//
// Larger graphs: the heuristics
//===----------------------------------------------------------------------===//

TEST(Reorder, LargeGraphsNeverWorseThanTheProgram) {
  std::mt19937_64 rng(8);
  property::Rng prng(8);
  for (int trial = 0; trial < 10; ++trial) {
    TrainingGraph g = trial % 2 ? randomDag(rng, 300)
                                : property::randomTrainingGraph(prng, 300).graph;
    ReorderOptions options;
    options.timeLimitSeconds = 0.25;
    ReorderResult result = reorderForMemory(g, options);
    ASSERT_TRUE(isTopologicalOrder(g, result.order));
    EXPECT_EQ(result.peakBytes, simulatedPeak(g, result.order));
    EXPECT_LE(result.peakBytes, result.programPeakBytes);
    EXPECT_GE(result.peakBytes, result.lowerBoundBytes);
  }
}

//===----------------------------------------------------------------------===//
// Renumbering, the solver, other solvers on the reordered graph
//===----------------------------------------------------------------------===//

TEST(Reorder, RenumberedGraphIsTheSameProblem) {
  std::mt19937_64 rng(21);
  property::Rng prng(21);
  for (int trial = 0; trial < 40; ++trial) {
    TrainingGraph g = trial % 2 ? randomDag(rng, 5 + rng() % 30)
                                : property::randomTrainingGraph(prng, 30).graph;
    std::vector<NodeId> order = randomOrder(g, rng);
    llvm::Expected<RenumberedGraph> r = renumberGraph(g, order);
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    ASSERT_FALSE(bool(r->graph.verify()));
    ASSERT_EQ(r->graph.numNodes(), g.numNodes());
    ASSERT_EQ(r->graph.numValues(), g.numValues());
    for (size_t i = 0; i < g.numNodes(); ++i) {
      const Node &now = r->graph.node(i), &was = g.node(r->newToOld[i]);
      EXPECT_EQ(now.name, was.name);
      EXPECT_EQ(now.inputs, was.inputs);
      EXPECT_EQ(now.outputs, was.outputs);
      EXPECT_EQ(now.reuses, was.reuses);
      EXPECT_EQ(now.workspaceBytes, was.workspaceBytes);
      EXPECT_EQ(now.phase, was.phase);
      EXPECT_EQ(r->oldToNew[r->newToOld[i]], NodeId(i));
    }
    for (size_t v = 0; v < g.numValues(); ++v) {
      const GraphValue &now = r->graph.value(v), &was = g.value(v);
      EXPECT_EQ(now.bytes, was.bytes);
      EXPECT_EQ(now.isOutput, was.isOutput);
      EXPECT_EQ(now.producer < 0 ? -1 : r->newToOld[now.producer],
                was.producer);
      EXPECT_TRUE(std::is_sorted(now.users.begin(), now.users.end()));
    }
    // The program order of the renumbered graph is `order`; plans of any
    // solver map back to plans that simulate the same.
    std::vector<NodeId> ids(g.numNodes());
    std::iota(ids.begin(), ids.end(), 0);
    EXPECT_EQ(orderPeak(r->graph, ids), orderPeak(g, order));
    for (const char *name : {"checkpoint-all", "chen-sqrtn", "rotor"}) {
      const SolverInfo *solver = findSolver(name);
      ASSERT_NE(solver, nullptr);
      llvm::Expected<SolverResult> result = runSolver(*solver, r->graph, {});
      ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
      Schedule back = mapScheduleToOriginal(*r, result->schedule);
      SimulationReport report = simulate(g, back);
      ASSERT_TRUE(report.valid) << report.error;
      EXPECT_EQ(report.peakBytes, result->report.peakBytes) << name;
      EXPECT_EQ(report.timeline, result->report.timeline) << name;
      EXPECT_EQ(report.totalCost, result->report.totalCost) << name;
    }
  }
}

TEST(Reorder, RegisteredSolver) {
  const SolverInfo *solver = findSolver("reorder");
  ASSERT_NE(solver, nullptr);
  std::mt19937_64 rng(31);
  property::Rng prng(31);
  for (int trial = 0; trial < 30; ++trial) {
    TrainingGraph g = trial % 2 ? randomDag(rng, 5 + rng() % 60)
                                : property::randomTrainingGraph(prng, 60).graph;
    SolverOptions options;
    options.timeLimitSeconds = 1;
    llvm::Expected<SolverResult> result = runSolver(*solver, g, options);
    ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
    EXPECT_EQ(result->report.numRecomputations, 0u);
    EXPECT_EQ(result->report.numComputes, g.numNodes());
    std::vector<NodeId> ids(g.numNodes());
    std::iota(ids.begin(), ids.end(), 0);
    EXPECT_LE(result->report.peakBytes, simulatedPeak(g, ids));
    // Never worse than checkpoint-all, the better of the program's and the
    // forward-then-backward order.
    llvm::Expected<SolverResult> all =
        runSolver(*findSolver("checkpoint-all"), g, options);
    ASSERT_TRUE(bool(all)) << llvm::toString(all.takeError());
    EXPECT_LE(result->report.peakBytes, all->report.peakBytes);
  }
}

TEST(Reorder, OtherSolversOnTheReorderedGraph) {
  std::mt19937_64 rng(41);
  property::Rng prng(41);
  for (int trial = 0; trial < 20; ++trial) {
    TrainingGraph g = trial % 2 ? randomDag(rng, 5 + rng() % 40)
                                : property::randomTrainingGraph(prng, 40).graph;
    for (const char *name : {"checkpoint-all", "chen-sqrtn", "rotor",
                             "reorder"}) {
      SolverOptions options;
      options.timeLimitSeconds = 1;
      llvm::Expected<SolverResult> result =
          solveOnReorderedGraph(g, *findSolver(name), options);
      ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
      EXPECT_EQ(result->solver, name);
      SimulationReport report = simulate(g, result->schedule);
      ASSERT_TRUE(report.valid) << report.error;
      EXPECT_EQ(report.peakBytes, result->report.peakBytes);
    }
    // checkpoint-all on the reordered graph keeps the better of its two
    // orders there, one of which is the reordering's.
    llvm::Expected<SolverResult> all = solveOnReorderedGraph(
        g, *findSolver("checkpoint-all"), SolverOptions());
    ASSERT_TRUE(bool(all));
    EXPECT_LE(all->report.peakBytes, reorderForMemory(g).peakBytes);
  }
}

} // namespace
