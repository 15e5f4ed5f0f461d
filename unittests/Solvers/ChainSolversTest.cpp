//===- ChainSolversTest.cpp - Chain solvers against brute force ----------===//
//
// The chain algorithms of Hong et al. (seeds/000) and Feng & Huang (seeds/001)
// checked against exhaustive search over checkpoint subsets on thousands of
// random small chains, in the model each one optimises; Hong et al.'s Table 2
// for VGG-19 reproduced from tensor sizes computed from the architecture; the
// chain baselines; and every registered solver's plans validated by the
// simulator on chain-shaped and random training graphs.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Chain.h"
#include "remat/Solvers/HierarchySolvers.h"
#include "remat/Solvers/Solver.h"

#include "llvm/ADT/STLExtras.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>

using namespace remat;

namespace {

using Sizes = std::vector<uint64_t>;

std::string show(const std::vector<size_t> &set) {
  std::string text = "{";
  for (size_t i = 0; i < set.size(); ++i)
    text += (i ? "," : "") + std::to_string(set[i]);
  return text + "}";
}

std::string showSizes(const Sizes &sizes) {
  std::string text = "d=[";
  for (size_t i = 0; i < sizes.size(); ++i)
    text += (i ? "," : "") + std::to_string(sizes[i]);
  return text + "]";
}

/// The optimum of both models over every subset of {1..n-1} (d_0 and d_n are
/// always checkpoints).
struct BruteForce {
  uint64_t segment = UINT64_MAX;
  uint64_t pytorch = UINT64_MAX;
};

BruteForce bruteForce(const Sizes &d) {
  const size_t n = d.size() - 1;
  BruteForce best;
  for (uint64_t mask = 0; mask < (uint64_t(1) << (n > 0 ? n - 1 : 0)); ++mask) {
    std::vector<size_t> set;
    for (size_t i = 1; i < n; ++i)
      if (mask >> (i - 1) & 1)
        set.push_back(i);
    if (n > 0)
      set.push_back(n);
    best.segment = std::min(best.segment, segmentModelPeak(d, set));
    best.pytorch = std::min(best.pytorch, pytorchModelPeak(d, set));
  }
  return best;
}

/// A checkpoint set as the solvers must return it: sorted, in 1..n, ends in n.
void expectWellFormed(const std::vector<size_t> &set, size_t n,
                      const std::string &ctx) {
  if (n == 0) {
    EXPECT_TRUE(set.empty()) << ctx;
    return;
  }
  ASSERT_FALSE(set.empty()) << ctx;
  EXPECT_EQ(set.back(), n) << ctx;
  EXPECT_TRUE(std::is_sorted(set.begin(), set.end())) << ctx;
  EXPECT_TRUE(std::adjacent_find(set.begin(), set.end()) == set.end()) << ctx;
  EXPECT_GE(set.front(), 1u) << ctx;
}

Sizes randomSizes(std::mt19937 &rng, size_t n) {
  // Several shapes: small values with many ties and zeros, wide ranges, and
  // CNN-like decreasing sizes.
  int kind = std::uniform_int_distribution<int>(0, 3)(rng);
  Sizes d(n + 1);
  for (size_t i = 0; i <= n; ++i) {
    switch (kind) {
    case 0:
      d[i] = std::uniform_int_distribution<uint64_t>(0, 4)(rng);
      break;
    case 1:
      d[i] = std::uniform_int_distribution<uint64_t>(1, 1000)(rng);
      break;
    case 2:
      d[i] = uint64_t(1) << std::uniform_int_distribution<int>(0, 12)(rng);
      break;
    default:
      d[i] = (n + 1 - i) * std::uniform_int_distribution<uint64_t>(1, 8)(rng);
      break;
    }
  }
  return d;
}

//===----------------------------------------------------------------------===//
// Differential tests against brute force
//===----------------------------------------------------------------------===//

TEST(ChainBruteForce, EveryAlgorithmReachesTheOptimumOfItsModel) {
  std::mt19937 rng(4);
  int chains = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    size_t n = std::uniform_int_distribution<size_t>(1, 12)(rng);
    Sizes d = randomSizes(rng, n);
    std::string ctx = showSizes(d);
    BruteForce best = bruteForce(d);

    // Eq. 6 (= Feng's Eq. 1): Algorithm 3 and Feng's Algorithm 1.
    ChainSolution cubic = hongCheckpointSelection(d);
    expectWellFormed(cubic.checkpoints, n, ctx + " hong-cubic");
    EXPECT_EQ(cubic.objective, best.segment) << ctx;
    EXPECT_EQ(segmentModelPeak(d, cubic.checkpoints), cubic.objective)
        << ctx << " " << show(cubic.checkpoints);
    ChainSolution feng = fengLinear(d);
    expectWellFormed(feng.checkpoints, n, ctx + " feng");
    EXPECT_EQ(feng.objective, best.segment) << ctx;
    EXPECT_EQ(segmentModelPeak(d, feng.checkpoints), feng.objective)
        << ctx << " " << show(feng.checkpoints);

    // Eqs. 9-13 (Hong's PyTorch model): Algorithms 5 and 6.
    ChainSolution quadratic = hongDynamicQuadratic(d);
    expectWellFormed(quadratic.checkpoints, n, ctx + " hong-quadratic");
    EXPECT_EQ(quadratic.objective, best.pytorch) << ctx;
    EXPECT_EQ(pytorchModelPeak(d, quadratic.checkpoints), quadratic.objective)
        << ctx << " " << show(quadratic.checkpoints);
    ChainSolution linear = hongDynamicLinear(d);
    expectWellFormed(linear.checkpoints, n, ctx + " hong-linear");
    EXPECT_EQ(linear.objective, best.pytorch) << ctx;
    EXPECT_EQ(pytorchModelPeak(d, linear.checkpoints), linear.objective)
        << ctx << " " << show(linear.checkpoints);
    ++chains;
    if (HasFailure())
      break;
  }
  EXPECT_EQ(chains, 4000);
}

TEST(ChainBruteForce, LinearAndQuadraticAgreeOnLongChains) {
  // Too long for brute force, long enough to exercise Algorithm 6's queue
  // and pointer over many crossovers and ties.
  std::mt19937 rng(6);
  for (int iter = 0; iter < 60; ++iter) {
    size_t n = std::uniform_int_distribution<size_t>(50, 700)(rng);
    Sizes d = randomSizes(rng, n);
    ChainSolution quadratic = hongDynamicQuadratic(d);
    ChainSolution linear = hongDynamicLinear(d);
    ASSERT_EQ(linear.objective, quadratic.objective) << "n=" << n;
    ASSERT_EQ(pytorchModelPeak(d, linear.checkpoints), linear.objective);
    // And the two Eq. 6 solvers agree with each other.
    if (n <= 200) {
      ChainSolution cubic = hongCheckpointSelection(d);
      ChainSolution feng = fengLinear(d);
      ASSERT_EQ(cubic.objective, feng.objective) << "n=" << n;
      ASSERT_EQ(segmentModelPeak(d, feng.checkpoints), feng.objective);
    }
  }
}

TEST(ChainModels, HandChecked) {
  // d = [1, 2, 3, 4, 5]; C = {0, 2, 4}: segments {1} and {3}.
  Sizes d = {1, 2, 3, 4, 5};
  EXPECT_EQ(segmentModelPeak(d, {2, 4}), 1u + 3 + 5 + 4);
  // m(2) = d0 + d2 + s(0,2) = 1 + 3 + (2 + max(1,2)) = 8;
  // m(4) = 1 + 3 + 5 + s(2,4) = 9 + (4 + max(3,4)) = 17.
  EXPECT_EQ(pytorchSegmentMemory(d, 0, 2), 4u);
  EXPECT_EQ(pytorchSegmentMemory(d, 2, 4), 8u);
  EXPECT_EQ(pytorchModelPeak(d, {2, 4}), 17u);
  // Every stage a checkpoint: s(h, h+1) = d_h.
  EXPECT_EQ(pytorchModelPeak(d, {1, 2, 3, 4}), 1u + 2 + 3 + 4 + 5 + 4);
  EXPECT_EQ(segmentModelPeak(d, {1, 2, 3, 4}), 15u);
  // n = 0 and n = 1.
  EXPECT_TRUE(hongDynamicLinear({7}).checkpoints.empty());
  EXPECT_EQ(hongDynamicLinear({7}).objective, 7u);
  EXPECT_EQ(hongCheckpointSelection({3, 4}).checkpoints,
            std::vector<size_t>{1});
  EXPECT_EQ(fengLinear({3, 4}).objective, 7u);
  EXPECT_EQ(hongDynamicQuadratic({3, 4}).objective, 3u + 4 + 3);
}

TEST(ChainModels, TimedOutSearchesStillReturnValidSets) {
  std::mt19937 rng(9);
  Sizes d = randomSizes(rng, 300);
  Deadline past = std::chrono::steady_clock::now();
  ChainSolution cubic = hongCheckpointSelection(d, past);
  expectWellFormed(cubic.checkpoints, 300, "hong-cubic");
  EXPECT_EQ(segmentModelPeak(d, cubic.checkpoints), cubic.objective);
  ChainSolution feng = fengLinear(d, past);
  expectWellFormed(feng.checkpoints, 300, "feng");
  EXPECT_EQ(segmentModelPeak(d, feng.checkpoints), feng.objective);
}

//===----------------------------------------------------------------------===//
// Hong et al., Table 2: VGG-19, batch 128, fp32, 224x224
//===----------------------------------------------------------------------===//

constexpr uint64_t kMiB = 1024 * 1024;

/// d_0 = the input; d_1..d_24 = the 16 conv(+ReLU), 5 max-pool and 3 linear
/// outputs of VGG-19 in order (§5.1.1, Figure 3), computed from the
/// architecture (Simonyan & Zisserman, configuration E).
Sizes vgg19Sizes(uint64_t batch) {
  const uint64_t f32 = 4;
  Sizes d = {batch * 3 * 224 * 224 * f32};
  uint64_t side = 224, channels = 3;
  const int pool = -1;
  const int config[] = {64,  64,   pool, 128,  128, pool, 256,
                        256, 256,  256,  pool, 512, 512,  512,
                        512, pool, 512,  512,  512, 512,  pool};
  for (int layer : config) {
    if (layer == pool)
      side /= 2;
    else
      channels = layer;
    d.push_back(batch * channels * side * side * f32);
  }
  for (uint64_t features : {4096, 4096, 1000})
    d.push_back(batch * features * f32);
  return d;
}

TEST(HongTable2, Vgg19Batch128) {
  Sizes d = vgg19Sizes(128);
  ASSERT_EQ(d.size(), 25u);
  EXPECT_EQ(d[1], 1568 * kMiB); // conv1_1: 128 x 64 x 224 x 224 x 4 B
  EXPECT_EQ(d[3], 392 * kMiB);  // pool1
  EXPECT_EQ(d[24], 128u * 1000 * 4);

  // Algorithm 3 (and Feng's solver, same model, Table 2's ACG column) select
  // {3, 6, 24}.
  ChainSolution cubic = hongCheckpointSelection(d);
  EXPECT_EQ(cubic.checkpoints, (std::vector<size_t>{3, 6, 24}));
  ChainSolution feng = fengLinear(d);
  EXPECT_EQ(feng.objective, cubic.objective);
  EXPECT_EQ(segmentModelPeak(d, {3, 6, 24}), cubic.objective);

  // Algorithm 6: optimal sets are not unique; the paper's set evaluates to
  // the same optimal peak as ours, and Algorithm 5 agrees.
  ChainSolution linear = hongDynamicLinear(d);
  EXPECT_EQ(hongDynamicQuadratic(d).objective, linear.objective);
  const std::vector<size_t> paper = {2, 4, 6, 9, 11, 14, 16, 19, 21, 23, 24};
  EXPECT_EQ(pytorchModelPeak(d, paper), linear.objective)
      << "ours: " << show(linear.checkpoints);
  EXPECT_EQ(pytorchModelPeak(d, linear.checkpoints), linear.objective);

  // Table 2 (measured in PyTorch): Algorithm 6 6,444 MiB, Algorithm 3 6,835
  // MiB, sqrt(n) {5,10,15,20,24} 8,404 MiB. The constant framework overhead
  // cancels in the differences: 391 MiB and 1,960 MiB.
  const std::vector<size_t> sqrtn = {5, 10, 15, 20, 24};
  EXPECT_EQ(chenSqrtNChainCheckpoints(24), sqrtn);
  double alg3 = double(pytorchModelPeak(d, cubic.checkpoints)) / kMiB;
  double alg6 = double(linear.objective) / kMiB;
  double root = double(pytorchModelPeak(d, sqrtn)) / kMiB;
  EXPECT_NEAR(alg3 - alg6, 391.0, 3.0);
  EXPECT_NEAR(root - alg6, 1960.0, 3.0);
  // The figures themselves (docs/chain-solvers.md).
  EXPECT_DOUBLE_EQ(alg6, 4777.5);
  EXPECT_DOUBLE_EQ(alg3, 5169.5);
  EXPECT_DOUBLE_EQ(root, 6737.5);

  // "the checkpoint subsets do not change when we increase the batch size"
  // (§5.5): the sizes scale with the batch.
  for (uint64_t batch : {256, 320, 384, 400}) {
    Sizes db = vgg19Sizes(batch);
    EXPECT_EQ(hongCheckpointSelection(db).checkpoints, cubic.checkpoints);
    EXPECT_EQ(hongDynamicLinear(db).objective, linear.objective / 128 * batch);
  }
}

//===----------------------------------------------------------------------===//
// Chain baselines
//===----------------------------------------------------------------------===//

TEST(ChainBaselines, Sequential) {
  // checkpoint_sequential over 10 functions in 3 segments: segment_size 3,
  // segments [1..3] and [4..6] checkpointed (their outputs 3 and 6 kept), the
  // last segment [7..10] run normally.
  EXPECT_EQ(sequentialCheckpoints(10, 3),
            (std::vector<size_t>{3, 6, 7, 8, 9, 10}));
  EXPECT_EQ(sequentialCheckpoints(10, 1),
            (std::vector<size_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(sequentialCheckpoints(4, 4), (std::vector<size_t>{1, 2, 3, 4}));
  EXPECT_EQ(sequentialCheckpoints(4, 9), (std::vector<size_t>{1, 2, 3, 4}));
  EXPECT_TRUE(sequentialCheckpoints(0, 3).empty());
}

TEST(ChainBaselines, ChenGreedyAndSqrtN) {
  Sizes d = {0, 4, 4, 4, 4, 4, 4, 4};
  // temp exceeds b = 8 at every third stage.
  EXPECT_EQ(chenGreedyCheckpoints(d, 8), (std::vector<size_t>{3, 6, 7}));
  EXPECT_EQ(chenGreedyCheckpoints(d, 0),
            (std::vector<size_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(chenGreedyCheckpoints(d, 1000), (std::vector<size_t>{7}));
  EXPECT_EQ(chenSqrtNChainCheckpoints(9), (std::vector<size_t>{3, 6, 9}));
  EXPECT_EQ(chenSqrtNChainCheckpoints(10), (std::vector<size_t>{4, 8, 10}));
  EXPECT_EQ(chenSqrtNChainCheckpoints(1), (std::vector<size_t>{1}));
}

//===----------------------------------------------------------------------===//
// Training graphs: linearization and every solver's plans
//===----------------------------------------------------------------------===//

/// The chain d_1..d_n as a training step: x (fixed) -> f_1 .. f_n, f_n the
/// loss (a step output); backward b_n .. b_1, b_i reading the gradient of
/// d_i and the activation d_{i-1} (Hong's Eqs. 4-5), producing the gradient
/// of d_{i-1} (of the size of d_{i-1}; b_1's is a step output).
TrainingGraph chainGraph(const Sizes &d) {
  TrainingGraph g;
  const size_t n = d.size() - 1;
  std::vector<ValueId> act = {
      g.addFixedValue("x", std::max<uint64_t>(d[0], 1))};
  for (size_t i = 1; i <= n; ++i) {
    NodeId f = g.addNode("f" + std::to_string(i), "op", 1, Phase::Forward,
                         {act.back()});
    act.push_back(g.addOutput(f, "a" + std::to_string(i), d[i]));
  }
  g.markOutput(act[n]);
  ValueId grad = act[n]; // the loss seeds its own gradient
  for (size_t i = n; i >= 1; --i) {
    std::vector<ValueId> inputs = {grad};
    if (act[i - 1] != grad)
      inputs.push_back(act[i - 1]);
    NodeId b =
        g.addNode("b" + std::to_string(i), "op", 2, Phase::Backward, inputs);
    grad = g.addOutput(b, "g" + std::to_string(i - 1), i == 1 ? 1 : d[i - 1]);
  }
  g.markOutput(grad);
  return g;
}

TEST(Linearize, StagesAreTheForwardNodes) {
  TrainingGraph g = chainGraph({5, 10, 20, 30});
  Chain chain = linearize(g);
  EXPECT_EQ(chain.sizes, (Sizes{0, 10, 20, 30}));
  EXPECT_EQ(chain.nodes, (std::vector<NodeId>{-1, 0, 1, 2}));
  EXPECT_EQ(chain.costs, (std::vector<double>{0, 1, 1, 1}));
  std::vector<bool> mask = chainCheckpointMask(g, chain, {2, 3});
  EXPECT_EQ(mask, (std::vector<bool>{false, true, true, false, false, false}));
}

/// The solvers of issue 4 (the baselines of Baselines.cpp as references).
const char *const kChainSolvers[] = {
    "checkpoint-all", "chen-sqrtn",  "chen-greedy", "ap-sqrtn",
    "ap-greedy",      "sequential",  "hong-cubic",  "hong-quadratic",
    "hong-linear",    "feng-linear", "feng"};

TEST(ChainSolvers, Registered) {
  for (const char *name : kChainSolvers) {
    const SolverInfo *info = findSolver(name);
    ASSERT_TRUE(info) << name;
    EXPECT_FALSE(info->description.empty());
  }
}

/// Every solver of issue 4 on `g`: a valid plan (runSolver rejects invalid
/// ones) and meetsBudget consistent with the simulated peak.
void checkAllSolvers(const TrainingGraph &g, const SolverOptions &options,
                     const std::string &ctx) {
  for (const char *name : kChainSolvers) {
    const SolverInfo &solver = *findSolver(name);
    llvm::Expected<SolverResult> r = runSolver(solver, g, options);
    ASSERT_TRUE(bool(r)) << ctx << " " << solver.name << ": "
                         << llvm::toString(r.takeError());
    ASSERT_TRUE(r->report.valid) << ctx << " " << solver.name;
    EXPECT_EQ(r->meetsBudget,
              !options.budget || r->report.peakBytes <= *options.budget);
  }
}

TEST(ChainSolvers, ValidPlansOnChainGraphs) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 150; ++iter) {
    size_t n = std::uniform_int_distribution<size_t>(1, 30)(rng);
    TrainingGraph g = chainGraph(randomSizes(rng, n));
    checkAllSolvers(g, {}, "chain " + std::to_string(iter));
    SolverOptions budgeted;
    budgeted.budget = std::uniform_int_distribution<uint64_t>(0, 4000)(rng);
    checkAllSolvers(g, budgeted, "chain " + std::to_string(iter));
    if (HasFatalFailure())
      return;
  }
}

/// A random layered DAG with a mirrored backward (residual-like extra inputs,
/// two-output nodes, a loss output).
TrainingGraph randomDag(std::mt19937 &rng) {
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  TrainingGraph g;
  std::vector<ValueId> values = {g.addFixedValue("x", uniform(1, 64))};
  std::vector<NodeId> forward;
  for (int i = 0, e = uniform(1, 14); i < e; ++i) {
    std::vector<ValueId> inputs = {values.back()};
    if (uniform(0, 2) == 0) {
      ValueId extra = values[uniform(0, int(values.size()) - 1)];
      if (extra != inputs[0])
        inputs.push_back(extra);
    }
    NodeId f = g.addNode("f" + std::to_string(i), "op", uniform(0, 9),
                         Phase::Forward, inputs);
    values.push_back(g.addOutput(f, "a" + std::to_string(i), uniform(0, 64)));
    if (uniform(0, 5) == 0)
      g.addOutput(f, "aux" + std::to_string(i), uniform(1, 16));
    forward.push_back(f);
  }
  g.markOutput(values.back());
  ValueId grad = values.back();
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    std::vector<ValueId> inputs = {grad};
    for (ValueId v : g.node(*it).inputs)
      if (v != grad && uniform(0, 3) != 0)
        inputs.push_back(v);
    for (ValueId v : g.node(*it).outputs)
      if (v != grad && !llvm::is_contained(inputs, v) && uniform(0, 2) == 0)
        inputs.push_back(v);
    NodeId b = g.addNode("b" + std::to_string(*it), "op", uniform(0, 9),
                         Phase::Backward, inputs);
    grad = g.addOutput(b, "g" + std::to_string(*it), uniform(1, 64));
  }
  g.markOutput(grad);
  return g;
}

TEST(ChainSolvers, ValidPlansOnRandomDags) {
  std::mt19937 rng(12);
  for (int iter = 0; iter < 300; ++iter) {
    TrainingGraph g = randomDag(rng);
    ASSERT_FALSE(bool(g.verify()));
    checkAllSolvers(g, {}, "dag " + std::to_string(iter));
    SolverOptions budgeted;
    budgeted.budget = std::uniform_int_distribution<uint64_t>(0, 600)(rng);
    checkAllSolvers(g, budgeted, "dag " + std::to_string(iter));
    if (HasFatalFailure())
      return;
  }
}

TEST(ChainSolvers, BudgetSearchPrefersCheapPlansThatFit) {
  // A uniform chain of 16 stages: with a generous budget the searching
  // baselines keep everything (no recomputation); in min-memory mode they
  // return their least-peak plan, below checkpoint-all's.
  TrainingGraph g = chainGraph(Sizes(17, 100));
  const SolverInfo *all = findSolver("checkpoint-all");
  llvm::Expected<SolverResult> reference = runSolver(*all, g, {});
  ASSERT_TRUE(bool(reference));
  for (const char *name : {"chen-greedy", "sequential"}) {
    const SolverInfo *solver = findSolver(name);
    SolverOptions generous;
    generous.budget = reference->report.peakBytes;
    llvm::Expected<SolverResult> cheap = runSolver(*solver, g, generous);
    ASSERT_TRUE(bool(cheap));
    EXPECT_TRUE(cheap->meetsBudget) << name;
    llvm::Expected<SolverResult> least = runSolver(*solver, g, {});
    ASSERT_TRUE(bool(least));
    EXPECT_LT(least->report.peakBytes, reference->report.peakBytes) << name;
    EXPECT_LE(cheap->report.totalCost, least->report.totalCost) << name;
    // An impossible budget: the least-peak plan, reported as not meeting it.
    SolverOptions impossible;
    impossible.budget = 1;
    llvm::Expected<SolverResult> best = runSolver(*solver, g, impossible);
    ASSERT_TRUE(bool(best));
    EXPECT_FALSE(best->meetsBudget) << name;
    EXPECT_EQ(best->report.peakBytes, least->report.peakBytes) << name;
  }
  for (const char *name :
       {"hong-cubic", "hong-quadratic", "hong-linear", "feng-linear"}) {
    llvm::Expected<SolverResult> least = runSolver(*findSolver(name), g, {});
    ASSERT_TRUE(bool(least));
    EXPECT_LT(least->report.peakBytes, reference->report.peakBytes) << name;
  }
}

//===----------------------------------------------------------------------===//
// Solvers on the structure analysis: AP sqrt(n), AP greedy, Feng's Alg. 6
//===----------------------------------------------------------------------===//

/// A random forward DAG over n ops (edges u -> w with u < w; every op but the
/// first reads its predecessor, plus some longer edges) with random sizes.
StructureGraph randomStructure(std::mt19937 &rng, unsigned n,
                               uint64_t maxBytes) {
  std::vector<std::pair<unsigned, unsigned>> edges;
  std::vector<uint64_t> bytes;
  for (unsigned w = 0; w < n; ++w) {
    bytes.push_back(std::uniform_int_distribution<uint64_t>(0, maxBytes)(rng));
    if (w > 0)
      edges.push_back({w - 1, w});
    if (w > 1 && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
      unsigned u = std::uniform_int_distribution<unsigned>(0, w - 2)(rng);
      edges.push_back({u, w});
    }
  }
  return StructureGraph(n, edges, bytes);
}

TEST(FengArbitrary, OnChainsItIsTheLinearSolver) {
  // A chain's hierarchy is one linear level over every op, between the
  // virtual source and sink (0 bytes, never stored): Algorithm 6 reduces to
  // Algorithm 1 on [0, d_1, .., d_n, 0].
  std::mt19937 rng(21);
  for (int iter = 0; iter < 500; ++iter) {
    unsigned n = std::uniform_int_distribution<unsigned>(1, 40)(rng);
    Sizes d = randomSizes(rng, n);
    std::vector<std::pair<unsigned, unsigned>> edges;
    for (unsigned w = 1; w < n; ++w)
      edges.push_back({w - 1, w});
    StructureAnalysis analysis(
        StructureGraph(n, edges, llvm::ArrayRef<uint64_t>(d).drop_front()));
    Sizes padded = d;
    padded[0] = 0;
    padded.push_back(0);
    HierarchySolution solution = fengArbitrary(analysis);
    ASSERT_EQ(solution.objective, fengLinear(padded).objective) << showSizes(d);
    ASSERT_EQ(solution.objective, solution.storedBytes + solution.maxTerm);
    // The stored vertices evaluate to the objective under Eq. 1.
    std::vector<size_t> stages(solution.stored.begin(), solution.stored.end());
    stages.push_back(n + 1);
    ASSERT_EQ(segmentModelPeak(padded, stages), solution.objective)
        << showSizes(d);
  }
}

TEST(FengArbitrary, SearchFindsTheBestMaxTerm) {
  // Algorithm 6 visits only some candidate max terms (Algorithm 1's skip);
  // its answer must still be the best over every max term m.
  std::mt19937 rng(22);
  for (int iter = 0; iter < 300; ++iter) {
    unsigned n = std::uniform_int_distribution<unsigned>(1, 14)(rng);
    StructureAnalysis analysis(randomStructure(rng, n, 9));
    HierarchySolution solution = fengArbitrary(analysis);
    uint64_t total = analysis.hierarchy.node(0).bytes;
    uint64_t best = UINT64_MAX;
    for (uint64_t m = 0; m <= total + 1; ++m) {
      HierarchySolution at = fengArbitraryAt(analysis, m);
      ASSERT_LE(at.maxTerm, m) << "iteration " << iter << ", m=" << m;
      ASSERT_EQ(at.objective, at.storedBytes + at.maxTerm);
      best = std::min(best, at.objective);
    }
    ASSERT_EQ(solution.objective, best) << "iteration " << iter;
    uint64_t stored = 0;
    for (Vertex v : solution.stored)
      stored += analysis.graph.bytes(v);
    ASSERT_EQ(stored, solution.storedBytes);
  }
}

TEST(FengArbitrary, InceptionBlock) {
  // in -> {b1, b2a -> b2b, b3a -> b3b} -> cat -> out: a linear root with the
  // splitting vertices in, cat, out and one branched segment of three
  // branches (sizes in brackets).
  //   ops: 0 in[10] 1 b1[4] 2 b2a[6] 3 b2b[6] 4 b3a[8] 5 b3b[8] 6 cat[12]
  //        7 out[1]
  std::vector<std::pair<unsigned, unsigned>> edges = {
      {0, 1}, {0, 2}, {2, 3}, {0, 4}, {4, 5}, {1, 6}, {3, 6}, {5, 6}, {6, 7}};
  StructureAnalysis analysis(
      StructureGraph(8, edges, {10, 4, 6, 6, 8, 8, 12, 1}));
  ASSERT_EQ(analysis.hierarchy.node(0).kind, HierarchyKind::Linear);
  // m = 16: the block (32 bytes) is expanded; its branches (4, 12, 16) are
  // re-forwarded whole from `in`, which is stored, as is `cat` (the block's
  // two ends). Stored 10 + 12, max term 16: 38.
  HierarchySolution at16 = fengArbitraryAt(analysis, 16);
  EXPECT_EQ(at16.stored, (std::vector<Vertex>{1, 7}));
  EXPECT_EQ(at16.maxTerm, 16u);
  EXPECT_EQ(at16.objective, 38u);
  // m = 8: the branches of 12 and 16 bytes are expanded too: their
  // linear levels store b2a and b3a (6 + 8), leaving b2b (6) and b3b (8)
  // to re-forward: 10 + 12 + 6 + 8 + 8 = 44.
  EXPECT_EQ(fengArbitraryAt(analysis, 8).objective, 44u);
  // The least over every max term.
  HierarchySolution best = fengArbitrary(analysis);
  uint64_t least = UINT64_MAX;
  for (uint64_t m = 0; m <= 60; ++m)
    least = std::min(least, fengArbitraryAt(analysis, m).objective);
  EXPECT_EQ(best.objective, least);
}

TEST(ArticulationPoints, SqrtNAndGreedyCandidates) {
  // x -> f0 -> f1 -> f2 -> f3 -> f4 (loss), f1 -> f3 (a residual edge):
  // the articulation points of the undirected forward graph are f1, f3
  // (f2 is bypassed).
  TrainingGraph g;
  ValueId x = g.addFixedValue("x", 4);
  std::vector<ValueId> acts;
  std::vector<NodeId> f;
  for (int i = 0; i < 5; ++i) {
    std::vector<ValueId> inputs = {i == 0 ? x : acts.back()};
    if (i == 3)
      inputs.push_back(acts[1]);
    f.push_back(
        g.addNode("f" + std::to_string(i), "op", 1, Phase::Forward, inputs));
    acts.push_back(g.addOutput(f.back(), "a" + std::to_string(i), 8));
  }
  g.markOutput(acts.back());
  NodeId b = g.addNode("b", "op", 1, Phase::Backward, acts);
  g.markOutput(g.addOutput(b, "g", 4));
  StructureAnalysis analysis(g);
  std::vector<NodeId> points;
  for (Vertex v : analysis.articulationPoints)
    points.push_back(analysis.graph.nodeId(v));
  EXPECT_EQ(points, (std::vector<NodeId>{f[1], f[3]}));
  // Two candidates: k = 2, the second (and last) one is checkpointed.
  std::vector<bool> sqrtn = apSqrtNCheckpoints(g, analysis);
  EXPECT_EQ(sqrtn,
            (std::vector<bool>{false, false, false, true, false, false}));
  // Greedy with b = 10: the segment reaches 16 at f1 (checkpointed), then 16
  // at f3.
  std::vector<bool> greedy = apGreedyCheckpoints(g, analysis, 10);
  EXPECT_EQ(greedy,
            (std::vector<bool>{false, true, false, true, false, false}));
  // b = 20: only f3 (the segment holds f0..f3, 32 bytes, when it is met).
  EXPECT_EQ(apGreedyCheckpoints(g, analysis, 20),
            (std::vector<bool>{false, false, false, true, false, false}));
}

} // namespace
