//===- JoinSolverTest.cpp - Join structure in training graphs; `join` ----===//
//
// detectJoinStructure on Siamese-like training graphs (branches, stages,
// backward groups, the head and the tail), its refusals, and the `join`
// solver: every plan valid, the simulated cost of each Opt_join schedule
// equal to the dynamic program's value when the graph is the paper's
// uniform model, plans within the budget whenever one fits.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Join.h"

#include "gtest/gtest.h"

#include <random>

using namespace remat;
using namespace remat::join;

namespace {

struct JoinGraphOptions {
  /// The backward of a layer reads its output too (like ReLU's), so Fbar_i
  /// must re-run stage i.
  bool backwardReadsOutput = false;
  /// All branches use one weight: its gradient sums the branches' parts
  /// (the tail).
  bool sharedWeight = false;
  /// Bytes of layer i's output in branch b (default 1).
  std::function<uint64_t(unsigned, unsigned)> bytes;
  /// Cost of every layer's forward and backward.
  double cost = 1;
};

/// k chains x_b -> f_{b,1} -> ... -> f_{b,l_b}, joined by one node J
/// reading every f_{b,l_b}, then the loss; the backward: dJ from the loss
/// gradient, g_{b,l_b} = dJ (x) the other outputs, then per layer
/// (g_{b,i}, a_{b,i-1} [, a_{b,i}]) -> (g_{b,i-1}, dW_{b,i}), the dW being
/// step outputs.
TrainingGraph makeJoinGraph(const std::vector<unsigned> &lengths,
                            const JoinGraphOptions &options = {}) {
  TrainingGraph g;
  const unsigned k = unsigned(lengths.size());
  auto size = [&](unsigned b, unsigned i) -> uint64_t {
    return options.bytes ? options.bytes(b, i) : 1;
  };
  ValueId shared = options.sharedWeight ? g.addFixedValue("w", 8) : -1;
  std::vector<std::vector<ValueId>> acts(k), weights(k);
  for (unsigned b = 0; b < k; ++b) {
    acts[b].push_back(g.addFixedValue("x" + std::to_string(b), 4));
    for (unsigned i = 1; i <= lengths[b]; ++i) {
      ValueId w =
          options.sharedWeight
              ? shared
              : g.addFixedValue(
                    "w" + std::to_string(b) + "_" + std::to_string(i), 8);
      weights[b].push_back(w);
      NodeId f =
          g.addNode("f" + std::to_string(b) + "_" + std::to_string(i), "layer",
                    options.cost, Phase::Forward, {acts[b].back(), w});
      acts[b].push_back(g.addOutput(
          f, "a" + std::to_string(b) + "_" + std::to_string(i), size(b, i)));
    }
  }
  std::vector<ValueId> last;
  for (unsigned b = 0; b < k; ++b)
    last.push_back(acts[b].back());
  NodeId join = g.addNode("J", "join", 1, Phase::Forward, last);
  ValueId p = g.addOutput(join, "p", 1);
  ValueId y = g.addFixedValue("y", 1);
  NodeId lossNode = g.addNode("loss", "loss", 1, Phase::Forward, {p, y});
  ValueId loss = g.addOutput(lossNode, "loss", 1);
  g.markOutput(loss);
  NodeId dj = g.addNode("dJ", "loss_grad", 1, Phase::Backward, {p, y});
  ValueId gp = g.addOutput(dj, "gp", 1);
  std::vector<ValueId> partials;
  for (unsigned b = 0; b < k; ++b) {
    std::vector<ValueId> in = {gp};
    for (unsigned c = 0; c < k; ++c)
      if (c != b)
        in.push_back(last[c]);
    NodeId gl = g.addNode("gJ" + std::to_string(b), "join_grad", 1,
                          Phase::Backward, in);
    ValueId grad =
        g.addOutput(gl, "g" + std::to_string(b), size(b, lengths[b]));
    for (unsigned i = lengths[b]; i >= 1; --i) {
      std::vector<ValueId> reads = {grad, acts[b][i - 1]};
      if (options.backwardReadsOutput)
        reads.push_back(acts[b][i]);
      if (!options.sharedWeight)
        reads.push_back(weights[b][i - 1]);
      NodeId bw = g.addNode("b" + std::to_string(b) + "_" + std::to_string(i),
                            "layer_grad", options.cost, Phase::Backward, reads);
      ValueId dW =
          g.addOutput(bw, "dW" + std::to_string(b) + "_" + std::to_string(i),
                      options.sharedWeight ? 1 : 8);
      if (options.sharedWeight)
        partials.push_back(dW);
      else
        g.markOutput(dW);
      if (i > 1)
        grad = g.addOutput(
            bw, "g" + std::to_string(b) + "_" + std::to_string(i - 1),
            size(b, i - 1));
    }
  }
  if (options.sharedWeight) {
    NodeId sum = g.addNode("dW_sum", "add", 1, Phase::Backward, partials);
    g.markOutput(g.addOutput(sum, "dW", 8));
  }
  EXPECT_FALSE(bool(g.verify()));
  return g;
}

std::vector<std::string> names(const TrainingGraph &g,
                               const std::vector<NodeId> &nodes) {
  std::vector<std::string> out;
  for (NodeId n : nodes)
    out.push_back(g.node(n).name);
  return out;
}

TEST(JoinStructureTest, TwoBranchesOneStagePerLayer) {
  TrainingGraph g = makeJoinGraph({3, 2});
  llvm::Expected<JoinStructure> s = detectJoinStructure(g);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->lengths(), (std::vector<unsigned>{3, 2}));
  EXPECT_EQ(names(g, s->stages[0][0]), (std::vector<std::string>{"f0_1"}));
  EXPECT_EQ(names(g, s->stages[1][1]), (std::vector<std::string>{"f1_2"}));
  // The backward of layer i reads a_{i-1} = x_{i-1} and the gradient: it is
  // Fbar_{i-1}, with no re-run of the stage.
  EXPECT_EQ(names(g, s->groups[0][0]), (std::vector<std::string>{"b0_1"}));
  EXPECT_EQ(names(g, s->groups[0][2]), (std::vector<std::string>{"b0_3"}));
  EXPECT_EQ(names(g, s->groups[1][1]), (std::vector<std::string>{"b1_2"}));
  for (const auto &branch : s->groupReadsStage)
    for (bool reads : branch)
      EXPECT_FALSE(reads);
  EXPECT_EQ(names(g, s->headForward), (std::vector<std::string>{"J", "loss"}));
  EXPECT_EQ(names(g, s->headBackward),
            (std::vector<std::string>{"dJ", "gJ0", "gJ1"}));
  EXPECT_TRUE(s->tail.empty());
  EXPECT_EQ(s->mergedStages, 0u);
  // x_0 is fixed; x_1..x_l one byte each; xbar_l..xbar_1 one byte each.
  EXPECT_EQ(s->xBytes[0], (std::vector<uint64_t>{0, 1, 1, 1}));
  EXPECT_EQ(s->xbarBytes[0], (std::vector<uint64_t>{0, 1, 1, 1}));
  EXPECT_EQ(s->slotBytes, 1u);
}

TEST(JoinStructureTest, BackwardReadingItsOutputReRunsTheStage) {
  JoinGraphOptions options;
  options.backwardReadsOutput = true;
  TrainingGraph g = makeJoinGraph({2, 3, 1}, options);
  llvm::Expected<JoinStructure> s = detectJoinStructure(g);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->lengths(), (std::vector<unsigned>{2, 3, 1}));
  EXPECT_EQ(names(g, s->groups[1][1]), (std::vector<std::string>{"b1_2"}));
  for (unsigned b = 0; b < 3; ++b)
    for (unsigned i = 0; i < s->groups[b].size(); ++i)
      EXPECT_EQ(bool(s->groupReadsStage[b][i]), !s->groups[b][i].empty());
  // The one-layer branch's backward reads only x_1 (its output, stored at
  // the turn), the head's gradient and fixed values: it runs in the turn.
  EXPECT_TRUE(s->groups[2][0].empty());
  EXPECT_EQ(names(g, s->headBackward),
            (std::vector<std::string>{"dJ", "gJ0", "gJ1", "gJ2", "b2_1"}));
}

TEST(JoinStructureTest, SharedWeightGradientIsTheTail) {
  JoinGraphOptions options;
  options.sharedWeight = true;
  TrainingGraph g = makeJoinGraph({2, 2}, options);
  llvm::Expected<JoinStructure> s = detectJoinStructure(g);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(names(g, s->tail), (std::vector<std::string>{"dW_sum"}));
  // A weight all branches read does not join them: it is fixed memory.
  EXPECT_EQ(s->lengths(), (std::vector<unsigned>{2, 2}));
}

TEST(JoinStructureTest, ReadingAcrossACutMergesStages) {
  // Branch 0: f1 -> f2 -> f3 -> f4, and the backward of f4 also reads f1's
  // output, which no forward node after f2 reads: no group sees both a1 and
  // a3 unless f2 and f3 are one stage (whose input x_1 is a1).
  TrainingGraph g;
  ValueId x0 = g.addFixedValue("x0", 1), x1 = g.addFixedValue("x1", 1);
  std::vector<ValueId> a = {x0};
  for (int i = 1; i <= 4; ++i) {
    NodeId f =
        g.addNode("f" + std::to_string(i), "op", 1, Phase::Forward, {a.back()});
    a.push_back(g.addOutput(f, "a" + std::to_string(i), 1));
  }
  NodeId h1 = g.addNode("h1", "op", 1, Phase::Forward, {x1});
  ValueId c1 = g.addOutput(h1, "c1", 1);
  NodeId j = g.addNode("J", "op", 1, Phase::Forward, {a[4], c1});
  g.markOutput(g.addOutput(j, "loss", 1));
  NodeId dj = g.addNode("dJ", "op", 1, Phase::Backward, {a[4], c1});
  ValueId grad = g.addOutput(dj, "g4", 1);
  ValueId gc = g.addOutput(dj, "gc", 1);
  NodeId b4 = g.addNode("b4", "op", 1, Phase::Backward, {grad, a[3], a[1]});
  grad = g.addOutput(b4, "g3", 1);
  for (int i = 3; i >= 1; --i) {
    NodeId b = g.addNode("b" + std::to_string(i), "op", 1, Phase::Backward,
                         {grad, a[i - 1]});
    grad = g.addOutput(b, "g" + std::to_string(i - 1), 1);
  }
  g.markOutput(grad);
  NodeId bh = g.addNode("bh", "op", 1, Phase::Backward, {gc, x1});
  g.markOutput(g.addOutput(bh, "dx1", 1));
  ASSERT_FALSE(bool(g.verify()));

  llvm::Expected<JoinStructure> s = detectJoinStructure(g);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_EQ(s->lengths(), (std::vector<unsigned>{3, 1}));
  EXPECT_EQ(names(g, s->stages[0][1]), (std::vector<std::string>{"f2", "f3"}));
  EXPECT_EQ(s->mergedStages, 1u);
  // b4 needs a1 (x_1) and a3 (made by stage 1): Fbar_1, with a re-run.
  EXPECT_EQ(names(g, s->groups[0][1]),
            (std::vector<std::string>{"b4", "b3", "b2"}));
  EXPECT_TRUE(s->groupReadsStage[0][1]);
  EXPECT_EQ(names(g, s->groups[0][0]), (std::vector<std::string>{"b1"}));
  EXPECT_EQ(names(g, s->groups[1][0]), (std::vector<std::string>{"bh"}));
  llvm::Expected<Schedule> plan = solveJoin(g, {});
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  SimulationReport report = simulate(g, *plan);
  EXPECT_TRUE(report.valid) << report.error;
}

TEST(JoinStructureTest, RefusesGraphsThatAreNotJoins) {
  // One chain.
  TrainingGraph chain;
  ValueId x = chain.addFixedValue("x", 1);
  NodeId f = chain.addNode("f", "op", 1, Phase::Forward, {x});
  ValueId a = chain.addOutput(f, "a", 1);
  NodeId l = chain.addNode("l", "op", 1, Phase::Forward, {a});
  chain.markOutput(chain.addOutput(l, "loss", 1));
  llvm::Expected<JoinStructure> s = detectJoinStructure(chain);
  ASSERT_FALSE(bool(s));
  EXPECT_NE(llvm::toString(s.takeError()).find("not a join graph"),
            std::string::npos);

  // A residual block: both paths start from the same node.
  TrainingGraph residual;
  x = residual.addFixedValue("x", 1);
  NodeId r0 = residual.addNode("r0", "op", 1, Phase::Forward, {x});
  ValueId v0 = residual.addOutput(r0, "v0", 1);
  NodeId r1 = residual.addNode("r1", "op", 1, Phase::Forward, {v0});
  ValueId v1 = residual.addOutput(r1, "v1", 1);
  NodeId add = residual.addNode("add", "op", 1, Phase::Forward, {v0, v1});
  residual.markOutput(residual.addOutput(add, "loss", 1));
  s = detectJoinStructure(residual);
  ASSERT_FALSE(bool(s));
  llvm::consumeError(s.takeError());

  // A branch that returns a step output cannot be recomputed.
  TrainingGraph out = makeJoinGraph({2, 2});
  out.markOutput(out.node(0).outputs[0]);
  s = detectJoinStructure(out);
  ASSERT_FALSE(bool(s));
  EXPECT_NE(llvm::toString(s.takeError()).find("step output"),
            std::string::npos);
}

TEST(JoinSolverTest, UniformModelCostsEqualTheDynamicProgram) {
  // Unit sizes and costs, backward steps that read x_i only: the graph is
  // the pebble model of §2 (u_f = u_b = 1, the turn = the head's 4 nodes).
  for (std::vector<unsigned> lengths :
       {std::vector<unsigned>{3, 2}, {5, 5}, {6, 1, 3}, {4, 4, 4}}) {
    TrainingGraph g = makeJoinGraph(lengths);
    llvm::Expected<JoinStructure> s = detectJoinStructure(g);
    ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
    const unsigned k = unsigned(lengths.size());
    UniformCosts costs;
    costs.turn = 2 + 1 + k; // J, loss, dJ, gJ_b
    unsigned total = 0;
    for (unsigned l : lengths)
      total += l;
    JoinDP dp(lengths, total + k + 1, costs);
    for (unsigned c = minMemory(lengths); c <= total + k + 1; ++c) {
      llvm::Expected<JoinSchedule> ops = dp.schedule(c);
      ASSERT_TRUE(bool(ops)) << llvm::toString(ops.takeError());
      llvm::Expected<Schedule> plan = scheduleFromJoinSchedule(g, *s, *ops);
      ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
      SimulationReport report = simulate(g, *plan);
      ASSERT_TRUE(report.valid) << report.error;
      EXPECT_DOUBLE_EQ(report.totalCost, dp.opt(c))
          << "c=" << c << " lengths " << lengths.size();
    }
  }
}

TEST(JoinSolverTest, PlansAreValidAndWithinEveryFeasibleBudget) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    unsigned k = 2 + rng() % 2;
    std::vector<unsigned> lengths;
    for (unsigned b = 0; b < k; ++b)
      lengths.push_back(1 + rng() % 6);
    JoinGraphOptions options;
    options.backwardReadsOutput = rng() % 2;
    options.sharedWeight = rng() % 3 == 0;
    std::vector<std::vector<uint64_t>> sizes(k);
    for (unsigned b = 0; b < k; ++b)
      for (unsigned i = 0; i <= lengths[b]; ++i)
        sizes[b].push_back(1 + rng() % 16);
    options.bytes = [&](unsigned b, unsigned i) { return sizes[b][i]; };
    TrainingGraph g = makeJoinGraph(lengths, options);

    JoinSolveInfo info;
    llvm::Expected<Schedule> least = solveJoin(g, {}, &info);
    ASSERT_TRUE(bool(least)) << llvm::toString(least.takeError());
    SimulationReport leastReport = simulate(g, *least);
    ASSERT_TRUE(leastReport.valid) << leastReport.error;
    EXPECT_EQ(info.lengths, lengths);
    SimulationReport all = simulate(g, solveCheckpointAll(g));
    ASSERT_TRUE(all.valid);
    for (uint64_t budget = leastReport.peakBytes; budget <= all.peakBytes;
         budget += 1 + (all.peakBytes - leastReport.peakBytes) / 8) {
      SolverOptions withBudget;
      withBudget.budget = budget;
      llvm::Expected<Schedule> plan = solveJoin(g, withBudget);
      ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
      SimulationReport report = simulate(g, *plan);
      ASSERT_TRUE(report.valid) << report.error;
      EXPECT_LE(report.peakBytes, budget) << "trial " << trial;
    }
  }
}

} // namespace
