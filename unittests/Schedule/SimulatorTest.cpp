//===- SimulatorTest.cpp - Schedules, early frees and the simulator -------===//
//
// Every expected figure below was worked out by hand from the memory model of
// DESIGN.md §5; the comments show the working.
//
//===----------------------------------------------------------------------===//

#include "remat/Schedule/Schedule.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <string>

using namespace remat;

namespace {

Step C(int node) { return Step::compute(node); }
Step F(int value) { return Step::free(value); }

/// An MLP-like chain of n layers with unit sizes and costs:
///   x (fixed, id 0) -> f_i: a_{i-1} -> a_i (value 1+i) -> L: a_{n-1} -> loss
///   (output, value n+1); backward B_L: a_{n-1} -> d_{n-1} (value n+2), then
///   b_i (i = n-1..0): (d_i, a_{i-1}) -> d_{i-1}, with b_0 producing the
///   output gradient g (value 2n+2).
/// Node ids: f_i = i, L = n, B_L = n+1, b_i = 2n+1-i.
TrainingGraph makeChain(int n) {
  TrainingGraph g;
  ValueId prev = g.addFixedValue("x", 1);
  std::vector<ValueId> acts = {prev};
  for (int i = 0; i < n; ++i) {
    NodeId f = g.addNode("f" + std::to_string(i), "linalg.generic", 1,
                         Phase::Forward, {prev});
    prev = g.addOutput(f, "a" + std::to_string(i), 1);
    acts.push_back(prev);
  }
  NodeId loss = g.addNode("L", "linalg.reduce", 1, Phase::Forward, {prev});
  g.markOutput(g.addOutput(loss, "loss", 1));
  NodeId bl = g.addNode("BL", "linalg.generic", 1, Phase::Backward, {prev});
  ValueId grad = g.addOutput(bl, "d" + std::to_string(n - 1), 1);
  for (int i = n - 1; i >= 0; --i) {
    NodeId b = g.addNode("b" + std::to_string(i), "linalg.generic", 1,
                         Phase::Backward, {grad, acts[i]});
    grad = g.addOutput(b, i == 0 ? "g" : "d" + std::to_string(i - 1), 1);
  }
  g.markOutput(grad);
  return g;
}

/// x (fixed, 100 B) -> n0 (workspace 5) -> u (10 B); n1: u -> w (20 B,
/// output); n2: u -> z (3 B).
TrainingGraph makeFork(uint64_t workspace = 5) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 100);
  NodeId n0 = g.addNode("n0", "op", 2, Phase::Forward, {x});
  g.node(n0).workspaceBytes = workspace;
  ValueId u = g.addOutput(n0, "u", 10);
  NodeId n1 = g.addNode("n1", "op", 3, Phase::Forward, {u});
  g.markOutput(g.addOutput(n1, "w", 20));
  NodeId n2 = g.addNode("n2", "op", 4, Phase::Backward, {u});
  g.addOutput(n2, "z", 3);
  return g;
}

std::string simulateError(const TrainingGraph &g, std::vector<Step> steps) {
  SimulationReport report = simulate(g, Schedule{std::move(steps)});
  EXPECT_FALSE(report.valid);
  return report.error;
}

//===----------------------------------------------------------------------===//
// simulate
//===----------------------------------------------------------------------===//

TEST(Simulator, TimelinePeakAndCost) {
  TrainingGraph g = makeFork();
  // C0: u + ws = 15; C1: u + w = 30; C2: + z = 33; F u: 23; F z: 20.
  SimulationReport r = simulate(g, Schedule{{C(0), C(1), C(2), F(1), F(3)}});
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.timeline, (std::vector<uint64_t>{15, 30, 33, 23, 20}));
  EXPECT_EQ(r.peakBytes, 33u);
  EXPECT_EQ(r.peakStep, 2u);
  EXPECT_EQ(r.fixedBytes, 100u);
  EXPECT_DOUBLE_EQ(r.totalCost, 9);
  EXPECT_DOUBLE_EQ(r.baseCost, 9);
  EXPECT_DOUBLE_EQ(r.overhead(), 1);
  EXPECT_EQ(r.numComputes, 3u);
  EXPECT_EQ(r.numRecomputations, 0u);
  EXPECT_EQ(r.error, "");
}

TEST(Simulator, WorkspaceCountsOnlyDuringItsStep) {
  TrainingGraph g = makeFork(/*workspace=*/50);
  SimulationReport r = simulate(g, Schedule{{C(0), C(1), C(2), F(1), F(3)}});
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.timeline, (std::vector<uint64_t>{60, 30, 33, 23, 20}));
  EXPECT_EQ(r.peakBytes, 60u);
  EXPECT_EQ(r.peakStep, 0u);
}

TEST(Simulator, PeakStepIsTheFirstStepReachingThePeak) {
  TrainingGraph g = makeFork(/*workspace=*/23);
  // C0: 33, C1: 30, C2: 33 -> the peak 33 is first reached at step 0.
  SimulationReport r = simulate(g, Schedule{{C(0), C(1), C(2), F(1), F(3)}});
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.peakBytes, 33u);
  EXPECT_EQ(r.peakStep, 0u);
}

TEST(Simulator, RecomputationAfterFree) {
  TrainingGraph g = makeFork();
  // C0 15, C1 30, F u 20, C0 35 (u + w + ws), C2 33, F u 23, F z 20.
  SimulationReport r =
      simulate(g, Schedule{{C(0), C(1), F(1), C(0), C(2), F(1), F(3)}});
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.timeline, (std::vector<uint64_t>{15, 30, 20, 35, 33, 23, 20}));
  EXPECT_EQ(r.peakBytes, 35u);
  EXPECT_EQ(r.peakStep, 3u);
  EXPECT_EQ(r.numComputes, 4u);
  EXPECT_EQ(r.numRecomputations, 1u);
  EXPECT_DOUBLE_EQ(r.totalCost, 11);
  EXPECT_DOUBLE_EQ(r.overhead(), 11.0 / 9.0);
}

TEST(Simulator, Errors) {
  TrainingGraph g = makeFork();
  EXPECT_EQ(simulateError(g, {C(1)}),
            "step 0: compute of node 'n1' needs value 'u' which is not "
            "resident");
  EXPECT_EQ(simulateError(g, {C(0), C(1), C(2), F(1), F(1)}),
            "step 4: free of value 'u' which is not resident");
  EXPECT_EQ(simulateError(g, {C(0), F(0)}), "step 1: free of fixed value 'x'");
  EXPECT_EQ(simulateError(g, {C(0), C(1), F(2)}),
            "step 2: free of step output 'w'");
  EXPECT_EQ(simulateError(g, {C(0), C(0)}),
            "step 1: compute of node 'n0' whose output 'u' is already "
            "resident");
  EXPECT_EQ(simulateError(g, {C(0), C(1)}),
            "end of schedule: node 'n2' is never computed");
  EXPECT_EQ(simulateError(g, {C(0), C(7)}),
            "step 1: compute of unknown node 7");
  EXPECT_EQ(simulateError(g, {C(0), F(-1)}),
            "step 1: free of unknown value -1");
  EXPECT_EQ(simulateError(g, {F(3)}),
            "step 0: free of value 'z' which is not resident");
  EXPECT_EQ(simulateError(g, {}),
            "end of schedule: node 'n0' is never computed");
}

TEST(Simulator, OutputsMustSurviveToTheEnd) {
  // A node that produces an output is computed, but the output is produced by
  // a node the schedule never runs: the first missing node is reported.
  TrainingGraph g;
  NodeId a = g.addNode("a", "op", 1, Phase::Forward, {});
  g.markOutput(g.addOutput(a, "out", 4));
  EXPECT_EQ(simulateError(g, {}),
            "end of schedule: node 'a' is never computed");
  SimulationReport r = simulate(g, Schedule{{C(0)}});
  EXPECT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.peakBytes, 4u);
}

TEST(Simulator, ReportJSON) {
  TrainingGraph g = makeFork();
  SimulationReport r = simulate(g, Schedule{{C(0), C(1), C(2), F(1), F(3)}});
  llvm::json::Value json = r.toJSON();
  const llvm::json::Object *o = json.getAsObject();
  ASSERT_TRUE(o);
  EXPECT_EQ(o->getBoolean("valid"), true);
  EXPECT_EQ(o->getString("error"), "");
  EXPECT_EQ(o->getInteger("peak_bytes"), 33);
  EXPECT_EQ(o->getInteger("fixed_bytes"), 100);
  EXPECT_EQ(o->getInteger("peak_step"), 2);
  EXPECT_EQ(o->getNumber("total_cost"), 9.0);
  EXPECT_EQ(o->getNumber("base_cost"), 9.0);
  EXPECT_EQ(o->getNumber("overhead"), 1.0);
  EXPECT_EQ(o->getInteger("num_computes"), 3);
  EXPECT_EQ(o->getInteger("num_recomputations"), 0);
  EXPECT_EQ(*o->get("timeline"),
            llvm::json::Value(llvm::json::Array{15, 30, 33, 23, 20}));
  llvm::json::Value brief = r.toJSON(/*withTimeline=*/false);
  EXPECT_EQ(brief.getAsObject()->get("timeline"), nullptr);

  SimulationReport bad = simulate(g, Schedule{{C(1)}});
  llvm::json::Value badJSON = bad.toJSON();
  EXPECT_EQ(badJSON.getAsObject()->getBoolean("valid"), false);
  EXPECT_EQ(badJSON.getAsObject()->getString("error"), bad.error);
}

//===----------------------------------------------------------------------===//
// Schedule
//===----------------------------------------------------------------------===//

TEST(Schedule, NumRecomputations) {
  TrainingGraph g = makeFork();
  Schedule s{{C(0), C(1), F(1), C(0), C(2), F(1), C(0)}};
  EXPECT_EQ(s.numRecomputations(g), 2u);
  EXPECT_EQ(Schedule{}.numRecomputations(g), 0u);
}

TEST(Schedule, JSONRoundTrip) {
  Schedule s{{C(0), C(3), F(1), C(2), F(4), F(5)}};
  llvm::json::Value json = s.toJSON();
  EXPECT_EQ(json, llvm::json::Value(llvm::json::Array{
                      llvm::json::Object{{"compute", 0}},
                      llvm::json::Object{{"compute", 3}},
                      llvm::json::Object{{"free", 1}},
                      llvm::json::Object{{"compute", 2}},
                      llvm::json::Object{{"free", 4}},
                      llvm::json::Object{{"free", 5}},
                  }));
  llvm::Expected<Schedule> back = Schedule::fromJSON(json);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->steps, s.steps);

  // The {"steps": [...]} wrapper is accepted too.
  llvm::Expected<llvm::json::Value> wrapped =
      llvm::json::parse(R"({"steps": [{"compute": 2}, {"free": 0}]})");
  ASSERT_TRUE(bool(wrapped));
  llvm::Expected<Schedule> fromWrapped = Schedule::fromJSON(*wrapped);
  ASSERT_TRUE(bool(fromWrapped)) << llvm::toString(fromWrapped.takeError());
  EXPECT_EQ(fromWrapped->steps, (std::vector<Step>{C(2), F(0)}));
}

TEST(Schedule, JSONErrors) {
  struct Case {
    const char *text;
    const char *error;
  } cases[] = {
      {"3", "expected an array of steps"},
      {"{\"stops\": []}", "expected an array of steps"},
      {"[4]", "schedule step 0: expected {\"compute\": node}"},
      {"[{\"compute\": 1, \"free\": 2}]", "schedule step 0: expected"},
      {"[{}]", "schedule step 0: expected"},
      {"[{\"compute\": 0}, {\"drop\": 1}]",
       "schedule step 1: unknown statement 'drop'"},
      {"[{\"compute\": -1}]", "non-negative integer id"},
      {"[{\"free\": \"a\"}]", "non-negative integer id"},
      {"[{\"free\": 1.5}]", "non-negative integer id"},
      {"[{\"free\": 99999999999}]", "non-negative integer id"},
  };
  for (const Case &c : cases) {
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(c.text);
    ASSERT_TRUE(bool(json)) << c.text;
    llvm::Expected<Schedule> s = Schedule::fromJSON(*json);
    ASSERT_FALSE(bool(s)) << c.text;
    std::string err = llvm::toString(s.takeError());
    EXPECT_NE(err.find(c.error), std::string::npos)
        << "input: " << c.text << "\nerror: " << err;
  }
}

//===----------------------------------------------------------------------===//
// insertEarlyFrees
//===----------------------------------------------------------------------===//

TEST(EarlyFrees, AfterLastUseInIncreasingValueOrder) {
  TrainingGraph g = makeFork();
  // u (1) is last read by n2, z (3) is read by nobody: both go right after
  // n2, u first; w is an output and x fixed: never freed.
  Schedule s = insertEarlyFrees(g, {0, 1, 2});
  EXPECT_EQ(s.steps, (std::vector<Step>{C(0), C(1), C(2), F(1), F(3)}));
  // With n2 first, u's last use is n1, and z is freed as soon as it exists.
  Schedule t = insertEarlyFrees(g, {0, 2, 1});
  EXPECT_EQ(t.steps, (std::vector<Step>{C(0), C(2), F(3), C(1), F(1)}));
  EXPECT_TRUE(simulate(g, t).valid);
}

TEST(EarlyFrees, UnreadValueFreedRightAfterItsCompute) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 1);
  NodeId a = g.addNode("a", "op", 1, Phase::Forward, {x});
  ValueId keep = g.addOutput(a, "keep", 1);
  ValueId junk = g.addOutput(a, "junk", 7);
  NodeId b = g.addNode("b", "op", 1, Phase::Forward, {keep});
  g.markOutput(g.addOutput(b, "out", 1));
  Schedule s = insertEarlyFrees(g, {a, b});
  EXPECT_EQ(s.steps, (std::vector<Step>{C(a), F(junk), C(b), F(keep)}));
  SimulationReport r = simulate(g, s);
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.timeline, (std::vector<uint64_t>{8, 1, 2, 1}));
}

TEST(EarlyFrees, EachInstanceIsFreedSeparately) {
  TrainingGraph g = makeFork();
  // n0 computed twice: the first u is last read by n1 (position 1), the
  // second by n2 (position 3); each is freed after its own last reader.
  Schedule s = insertEarlyFrees(g, {0, 1, 0, 2});
  EXPECT_EQ(s.steps,
            (std::vector<Step>{C(0), C(1), F(1), C(0), C(2), F(1), F(3)}));
  // An instance nobody reads before the next Compute of its producer is freed
  // right after it is produced.
  Schedule t = insertEarlyFrees(g, {0, 0, 1, 2});
  EXPECT_EQ(t.steps,
            (std::vector<Step>{C(0), F(1), C(0), C(1), C(2), F(1), F(3)}));
  EXPECT_TRUE(simulate(g, s).valid);
  EXPECT_TRUE(simulate(g, t).valid);
  EXPECT_EQ(simulate(g, t).numRecomputations, 1u);
}

//===----------------------------------------------------------------------===//
// scheduleFromCheckpoints
//===----------------------------------------------------------------------===//

TEST(Checkpoints, AllCheckpointedChain) {
  TrainingGraph g = makeChain(4);
  // Nodes f0..f3 = 0..3, L = 4, BL = 5, b3..b0 = 6..9; values x = 0,
  // a0..a3 = 1..4, loss = 5, d3 = 6, d2 = 7, d1 = 8, d0 = 9, g = 10.
  Schedule s = scheduleFromCheckpoints(g, std::vector<bool>(10, true));
  EXPECT_EQ(s.steps, (std::vector<Step>{C(0), C(1), C(2), C(3), C(4), C(5),
                                        F(4), C(6), F(3), F(6), C(7), F(2),
                                        F(7), C(8), F(1), F(8), C(9), F(9)}));
  SimulationReport r = simulate(g, s);
  ASSERT_TRUE(r.valid) << r.error;
  // Forward: 4 activations + loss; BL adds d3 -> 6, the peak.
  EXPECT_EQ(r.timeline, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 5, 6, 5, 4, 5,
                                               4, 3, 4, 3, 2, 3, 2}));
  EXPECT_EQ(r.peakBytes, 6u);
  EXPECT_EQ(r.peakStep, 5u);
  EXPECT_EQ(r.fixedBytes, 1u);
  EXPECT_EQ(r.numRecomputations, 0u);
  EXPECT_DOUBLE_EQ(r.totalCost, 10);
}

TEST(Checkpoints, OneCheckpointInChain) {
  TrainingGraph g = makeChain(4);
  std::vector<bool> mask(10, false);
  mask[1] = true; // f1; L is kept anyway (it produces the loss)
  Schedule s = scheduleFromCheckpoints(g, mask);
  // Forward runs everything (L needs the whole chain) and keeps a1; BL
  // recomputes f2, f3 from a1; b1 recomputes f0 from x.
  EXPECT_EQ(s.steps, (std::vector<Step>{C(0), C(1), F(1), C(2), C(3), F(3),
                                        C(4), F(4), C(2), C(3), C(5), F(4),
                                        C(6), F(3), F(6), C(7), F(2), F(7),
                                        C(0), C(8), F(1), F(8), C(9), F(9)}));
  SimulationReport r = simulate(g, s);
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.timeline,
            (std::vector<uint64_t>{1, 2, 1, 2, 3, 2, 3, 2, 3, 4, 5, 4,
                                   5, 4, 3, 4, 3, 2, 3, 4, 3, 2, 3, 2}));
  EXPECT_EQ(r.peakBytes, 5u);
  EXPECT_EQ(r.peakStep, 10u);
  EXPECT_EQ(r.numRecomputations, 3u);
  EXPECT_DOUBLE_EQ(r.totalCost, 13);
}

/// x -> f0 -> a; m: a -> mask (forward auxiliary read only by the backward);
/// L: a -> loss; BL: a -> d; b0: (d, mask) -> g (output).
TrainingGraph makeAuxiliary() {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 1);
  NodeId f0 = g.addNode("f0", "op", 1, Phase::Forward, {x});
  ValueId a = g.addOutput(f0, "a", 2);
  NodeId m = g.addNode("m", "op", 1, Phase::Forward, {a});
  ValueId mask = g.addOutput(m, "mask", 4);
  NodeId l = g.addNode("L", "op", 1, Phase::Forward, {a});
  g.markOutput(g.addOutput(l, "loss", 1));
  NodeId bl = g.addNode("BL", "op", 1, Phase::Backward, {a});
  ValueId d = g.addOutput(bl, "d", 8);
  NodeId b0 = g.addNode("b0", "op", 1, Phase::Backward, {d, mask});
  g.markOutput(g.addOutput(b0, "g", 16));
  return g;
}

TEST(Checkpoints, SkippedForwardNodeIsNotARecomputation) {
  TrainingGraph g = makeAuxiliary();
  // m is not checkpointed and only the backward reads it: the forward pass
  // skips it and b0 computes it for the first time.
  Schedule s = scheduleFromCheckpoints(g, std::vector<bool>(5, false));
  // f0 L | f0 (recomputed for BL) BL m b0. Values: x 0, a 1, mask 2, loss 3,
  // d 4, g 5.
  EXPECT_EQ(s.steps, (std::vector<Step>{C(0), C(2), F(1), C(0), C(3), C(1),
                                        F(1), C(4), F(2), F(4)}));
  SimulationReport r = simulate(g, s);
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.numRecomputations, 1u);
  EXPECT_EQ(s.numRecomputations(g), 1u);

  std::vector<bool> mask(5, false);
  mask[0] = true; // keep a: nothing is computed twice
  Schedule t = scheduleFromCheckpoints(g, mask);
  EXPECT_EQ(t.steps, (std::vector<Step>{C(0), C(2), C(3), C(1), F(1), C(4),
                                        F(2), F(4)}));
  SimulationReport rt = simulate(g, t);
  ASSERT_TRUE(rt.valid) << rt.error;
  EXPECT_EQ(rt.numRecomputations, 0u);
  // loss 1 + a 2 + d 8 + mask 4, then a freed, then g 16: peak at b0.
  EXPECT_EQ(rt.timeline, (std::vector<uint64_t>{2, 3, 11, 15, 13, 29, 25, 17}));
  EXPECT_EQ(rt.peakBytes, 29u);
}

TEST(Checkpoints, DeadForwardNodeIsStillComputed) {
  // A forward node nothing reads (a metric nobody returns) must still run.
  TrainingGraph h;
  ValueId x = h.addFixedValue("x", 1);
  NodeId d = h.addNode("dead", "op", 1, Phase::Forward, {x});
  ValueId junk = h.addOutput(d, "junk", 5);
  NodeId l = h.addNode("L", "op", 1, Phase::Forward, {x});
  h.markOutput(h.addOutput(l, "loss", 1));
  NodeId b = h.addNode("b", "op", 1, Phase::Backward, {x});
  h.markOutput(h.addOutput(b, "g", 1));
  Schedule s = scheduleFromCheckpoints(h, std::vector<bool>(3, false));
  EXPECT_EQ(s.steps, (std::vector<Step>{C(d), F(junk), C(l), C(b)}));
  EXPECT_TRUE(simulate(h, s).valid);
}

TEST(Checkpoints, NodeProducingAnOutputIsKept) {
  // f0 produces a (read by the backward) and a step output: it cannot be
  // recomputed (its output is never freed), so it is kept whatever the mask.
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 1);
  NodeId f0 = g.addNode("f0", "op", 1, Phase::Forward, {x});
  ValueId a = g.addOutput(f0, "a", 2);
  g.markOutput(g.addOutput(f0, "stats", 3));
  NodeId f1 = g.addNode("f1", "op", 1, Phase::Forward, {a});
  ValueId c = g.addOutput(f1, "c", 4);
  NodeId l = g.addNode("L", "op", 1, Phase::Forward, {c});
  g.markOutput(g.addOutput(l, "loss", 1));
  NodeId b = g.addNode("b", "op", 1, Phase::Backward, {a, c});
  g.markOutput(g.addOutput(b, "g", 1));
  Schedule s = scheduleFromCheckpoints(g, std::vector<bool>(4, false));
  SimulationReport r = simulate(g, s);
  ASSERT_TRUE(r.valid) << r.error;
  // Only f1 is recomputed (for c).
  EXPECT_EQ(r.numRecomputations, 1u);
  EXPECT_EQ(s.steps[0], C(f0));
  EXPECT_EQ(std::count(s.steps.begin(), s.steps.end(), C(f0)), 1);
  EXPECT_EQ(std::count(s.steps.begin(), s.steps.end(), C(f1)), 2);
}

TEST(Checkpoints, ShortMaskMeansNotCheckpointed) {
  TrainingGraph g = makeChain(3);
  Schedule s = scheduleFromCheckpoints(g, {});
  SimulationReport r = simulate(g, s);
  ASSERT_TRUE(r.valid) << r.error;
  // Only L is kept: BL recomputes f0..f2 once, and the rest stays available.
  EXPECT_EQ(r.numRecomputations, 3u);
}

TEST(Checkpoints, LongChainIsFastAndValid) {
  // 10,000 layers, no checkpoint: the backward recomputes the whole chain
  // from x in one demand 10,000 producers deep (an explicit stack, no
  // recursion), then every activation stays available.
  const int n = 10000;
  TrainingGraph g = makeChain(n);
  Schedule none = scheduleFromCheckpoints(g, {});
  SimulationReport r = simulate(g, none);
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.numRecomputations, static_cast<size_t>(n));
  Schedule all =
      scheduleFromCheckpoints(g, std::vector<bool>(g.numNodes(), true));
  SimulationReport ra = simulate(g, all);
  ASSERT_TRUE(ra.valid) << ra.error;
  EXPECT_EQ(ra.numRecomputations, 0u);
  EXPECT_EQ(ra.peakBytes, static_cast<uint64_t>(n + 2));
}


//===----------------------------------------------------------------------===//
// In-place updates (Node::reuses)
//===----------------------------------------------------------------------===//

/// An accumulation: p0 (8 B) = a0 (x), p1 = a1 (x, p0) updating p0 in place,
/// then r reads p1 (and, in the variant, p0 again).
///   x (fixed 4) -> a0 -> p0 (8); a1: (x, p0) -> p1 (8), reuses p0;
///   r: p1 [, p0] -> out (1, step output).
TrainingGraph makeAccumulation(bool readOldLater) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 4);
  NodeId a0 = g.addNode("a0", "linalg.matmul", 1, Phase::Forward, {x});
  ValueId p0 = g.addOutput(a0, "p0", 8);
  NodeId a1 = g.addNode("a1", "linalg.matmul", 1, Phase::Forward, {x, p0});
  ValueId p1 = g.addOutput(a1, "p1", 8);
  g.node(a1).reuses.push_back({p0, p1});
  std::vector<ValueId> inputs = {p1};
  if (readOldLater)
    inputs.push_back(p0);
  NodeId r = g.addNode("r", "linalg.reduce", 1, Phase::Forward, inputs);
  g.markOutput(g.addOutput(r, "out", 1));
  return g;
}

TEST(Simulator, InPlaceUpdateTakesOverTheBuffer) {
  TrainingGraph g = makeAccumulation(/*readOldLater=*/false);
  ASSERT_FALSE(bool(g.verify()));
  Schedule s = insertEarlyFrees(g, {0, 1, 2});
  // a0: p0 (8) | a1 in place: p1 holds p0's 8 | free p0 (releases 0) |
  // r: p1 + out = 9 | free p1: 1.
  SimulationReport r = simulate(g, s);
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.peakBytes, 9u);
  EXPECT_EQ(r.timeline, (std::vector<uint64_t>{8, 8, 8, 9, 1}));
  std::vector<std::vector<char>> inPlace = inPlaceUpdates(g, s);
  ASSERT_EQ(inPlace[1].size(), 1u);
  EXPECT_TRUE(inPlace[1][0]);
}

TEST(Simulator, UpdateOfAValueReadLaterIsACopy) {
  // r reads p0 after a1: bufferization copies p0 instead of writing into it,
  // and the simulator allocates p1 anew: p0 + p1 = 16 at a1, 17 at r.
  TrainingGraph g = makeAccumulation(/*readOldLater=*/true);
  ASSERT_FALSE(bool(g.verify()));
  SimulationReport r = simulate(g, insertEarlyFrees(g, {0, 1, 2}));
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.peakBytes, 17u);
}

TEST(Simulator, RecomputedUpdateIsInPlaceAgainOnlyWhenNothingReadsLater) {
  // a0, a1 (in place), r, then a0 and a1 again (a new instance of p0 is
  // consumed by the second a1 in place) and nothing reads p0 in between.
  TrainingGraph g = makeAccumulation(/*readOldLater=*/false);
  Schedule s{{C(0), C(1), F(1), C(2), F(2), C(0), C(1), F(1), F(2)}};
  // The step output 'out' stays; p1 is freed before the second a1.
  SimulationReport r = simulate(g, s);
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.timeline,
            (std::vector<uint64_t>{8, 8, 8, 9, 1, 9, 9, 9, 1}));
  // An update whose input is a step output is never in place.
  TrainingGraph out = makeAccumulation(false);
  out.markOutput(1);
  SimulationReport ro = simulate(out, Schedule{{C(0), C(1), C(2), F(2)}});
  ASSERT_TRUE(ro.valid) << ro.error;
  EXPECT_EQ(ro.peakBytes, 17u);
}

TEST(TrainingGraphReuses, VerifyAndJSON) {
  TrainingGraph g = makeAccumulation(false);
  llvm::Expected<TrainingGraph> back = TrainingGraph::fromJSON(g.toJSON());
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->toJSON(), g.toJSON());
  ASSERT_EQ(back->node(1).reuses.size(), 1u);
  EXPECT_EQ(back->node(1).reuses[0], (std::pair<ValueId, ValueId>{1, 2}));

  auto expectError = [](TrainingGraph graph, llvm::StringRef text) {
    llvm::Error err = graph.verify();
    ASSERT_TRUE(bool(err));
    std::string message = llvm::toString(std::move(err));
    EXPECT_NE(message.find(text.str()), std::string::npos) << message;
  };
  TrainingGraph wrongPair = g;
  wrongPair.node(1).reuses = {{2, 1}};
  expectError(wrongPair, "must pair one of its inputs with one of its outputs");
  TrainingGraph fixed = g;
  fixed.node(1).reuses = {{0, 2}};
  expectError(fixed, "reuses the fixed value 0 'x'");
  TrainingGraph sizes = g;
  sizes.value(2).bytes = 9;
  expectError(sizes, "of different sizes");

  llvm::json::Value json = g.toJSON();
  (*(*json.getAsObject()->getArray("nodes"))[1].getAsObject())["reuses"] =
      llvm::json::Array{llvm::json::Array{1}};
  llvm::Expected<TrainingGraph> bad = TrainingGraph::fromJSON(json);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("nodes[1].reuses[0]"),
            std::string::npos);
}

} // namespace

namespace {

// makeChain(2): values x=0, a0=1, a1=2, loss=3, d1=4, d0=5, g=6;
// nodes f0=0, f1=1, L=2, BL=3, b1=4, b0=5.
TEST(DeadComputes, RecomputationNothingReadsGoes) {
  TrainingGraph g = makeChain(2);
  // f0, f1, L, BL (a1 freed), then f1 recomputed and freed before anything
  // reads it (dead), b1 (reads d1, a0), b0 (reads d0, x). The dead instance
  // and its Free go: one computation less, the same results.
  Schedule s{{C(0), C(1), C(2), C(3), F(2), C(1), F(2), C(4), F(4), F(1),
              C(5), F(5)}};
  SimulationReport before = simulate(g, s);
  ASSERT_TRUE(before.error.empty()) << before.error;
  size_t removed = 0;
  Schedule pruned = withoutDeadComputes(g, s, &removed);
  EXPECT_EQ(removed, 1u);
  SimulationReport after = simulate(g, pruned);
  ASSERT_TRUE(after.error.empty()) << after.error;
  EXPECT_EQ(pruned.steps.size(), s.steps.size() - 2);
  EXPECT_EQ(after.totalCost, before.totalCost - 1);
  EXPECT_LE(after.peakBytes, before.peakBytes);
  EXPECT_EQ(after.numRecomputations, before.numRecomputations - 1);
}

TEST(DeadComputes, EveryNodeKeepsOneComputation) {
  // n2's output z is read by nothing: its only computation stays (a plan
  // computes the whole graph), and a plan without dead work is unchanged.
  TrainingGraph g = makeFork();
  Schedule s{{C(0), C(1), C(2), F(1), F(3)}};
  size_t removed = 7;
  Schedule pruned = withoutDeadComputes(g, s, &removed);
  EXPECT_EQ(removed, 0u);
  EXPECT_EQ(pruned.steps, s.steps);
}

} // namespace

namespace {

// makeChain(3): nodes f0..f2 = 0..2, L = 3, BL = 4, b2 = 5, b1 = 6, b0 = 7;
// b1 reads a0. Recomputing f0 for b1 peaks at 4 bytes, keeping a0 at 5.
TEST(NeedlessRecomputations, DroppedOnlyWhereTheBudgetHoldsTheValue) {
  TrainingGraph g = makeChain(3);
  const std::vector<NodeId> recomputing = {0, 1, 2, 3, 4, 5, 0, 6, 7};
  SimulationReport r = simulate(g, insertEarlyFrees(g, recomputing));
  ASSERT_TRUE(r.valid) << r.error;
  EXPECT_EQ(r.peakBytes, 4u);
  EXPECT_EQ(r.numRecomputations, 1u);
  size_t removed = 7;
  EXPECT_EQ(withoutNeedlessRecomputations(g, recomputing, 4, 0, &removed),
            recomputing);
  EXPECT_EQ(removed, 0u);
  EXPECT_EQ(withoutNeedlessRecomputations(g, recomputing, 5, 0, &removed),
            (std::vector<NodeId>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(removed, 1u);
}

// Two activations of 10 bytes, u (cost 5) and v (cost 1), both recomputed
// for their backward nodes: the plan peaks at 21 bytes (the loss), keeping
// u alone too, keeping v alone at 22, both at 22. At 21 only one can go:
// the dearer u.
TEST(NeedlessRecomputations, TheDearerGoesFirst) {
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 100);
  NodeId fu = g.addNode("fu", "op", 5, Phase::Forward, {x});
  ValueId u = g.addOutput(fu, "u", 10);
  NodeId fv = g.addNode("fv", "op", 1, Phase::Forward, {x});
  ValueId v = g.addOutput(fv, "v", 10);
  NodeId loss = g.addNode("L", "op", 1, Phase::Forward, {u, v});
  ValueId l = g.addOutput(loss, "l", 1);
  g.markOutput(l);
  NodeId bu = g.addNode("bu", "op", 1, Phase::Backward, {l, u});
  g.markOutput(g.addOutput(bu, "du", 1));
  NodeId bv = g.addNode("bv", "op", 1, Phase::Backward, {l, v});
  g.markOutput(g.addOutput(bv, "dv", 1));
  ASSERT_FALSE(bool(g.verify()));
  auto peak = [&](const std::vector<NodeId> &order) {
    SimulationReport r = simulate(g, insertEarlyFrees(g, order));
    EXPECT_TRUE(r.valid) << r.error;
    return r.peakBytes;
  };
  const std::vector<NodeId> both = {fu, fv, loss, fu, bu, fv, bv};
  const std::vector<NodeId> none = {fu, fv, loss, bu, bv};
  ASSERT_EQ(peak(both), 21u);
  const std::vector<NodeId> keepU = {fu, fv, loss, bu, fv, bv};
  ASSERT_EQ(peak(keepU), 21u);
  ASSERT_EQ(peak({fu, fv, loss, fu, bu, bv}), 22u);
  ASSERT_EQ(peak(none), 22u);
  size_t removed = 0;
  EXPECT_EQ(withoutNeedlessRecomputations(g, both, 20, 0, &removed), both);
  EXPECT_EQ(removed, 0u);
  EXPECT_EQ(withoutNeedlessRecomputations(g, both, 21, 0, &removed), keepU);
  EXPECT_EQ(removed, 1u);
  EXPECT_EQ(withoutNeedlessRecomputations(g, both, 22, 0, &removed), none);
  EXPECT_EQ(removed, 2u);
}

} // namespace
