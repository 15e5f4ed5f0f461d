//===- bench_chain.cpp - The chain solvers of issue 4: time and memory ----===//
//
// Two tables (docs/chain-solvers.md), or one JSON document with --json:
//
//  1. The chain algorithms on random chains of growing length n: Hong et al.'s
//     Algorithm 6 (O(n), up to 10^6 stages), Algorithm 5 (O(n^2)), Algorithm
//     3 (O(n^3)) and Feng & Huang's linear solver (Algorithm 1), with the
//     objectives of each pair that optimises the same model side by side.
//  2. Every solver of issue 4 through runSolver (so: simulated) on training
//     graphs built from architectures: VGG-19 (batch 128, the chain of Hong
//     et al.'s Table 2) and a DenseNet-201-sized graph (4 dense blocks of
//     6/12/48/32 layers, batch 16, 224x224, fp32), each with a mirrored
//     backward.
//
// Not a test: it never fails on a time (bench/README.md).
//
//   remat-bench-chain [--json] [--max-n N] [--repeat R]
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Chain.h"
#include "remat/Solvers/Solver.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace remat;

namespace {

double secondsOf(const std::function<void()> &fn, int repeat) {
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    auto begin = std::chrono::steady_clock::now();
    fn();
    auto end = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(end - begin).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// CNN-like random sizes: a slowly shrinking envelope with noise, in bytes.
std::vector<uint64_t> randomChain(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> d(n + 1);
  for (size_t i = 0; i <= n; ++i) {
    double envelope = 1.0 + 15.0 * double(n - i) / double(n);
    d[i] = static_cast<uint64_t>(
        envelope *
        std::uniform_int_distribution<uint64_t>(1 << 20, 8 << 20)(rng));
  }
  return d;
}

//===----------------------------------------------------------------------===//
// Training graphs from architectures
//===----------------------------------------------------------------------===//

/// Forward ops appended in order, then a backward node per forward node in
/// reverse, reading the gradients of its users and its inputs (the shape of
/// a joint graph); the last forward op is the loss (a step output).
class GraphMaker {
public:
  explicit GraphMaker(uint64_t inputBytes) {
    input = graph.addFixedValue("x", inputBytes);
  }

  ValueId op(std::vector<ValueId> inputs, uint64_t bytes, double cost) {
    if (inputs.empty())
      inputs.push_back(input);
    NodeId id = graph.addNode("f" + std::to_string(graph.numNodes()), "op",
                              cost, Phase::Forward, inputs);
    forward.push_back(id);
    return graph.addOutput(id, "v" + std::to_string(graph.numValues()), bytes);
  }

  TrainingGraph finish() {
    graph.markOutput(graph.node(forward.back()).outputs.front());
    std::vector<ValueId> gradOf(graph.numValues(), -1);
    for (NodeId f : llvm::reverse(forward)) {
      std::vector<ValueId> reads;
      ValueId out = graph.node(f).outputs.front();
      for (NodeId user : graph.value(out).users)
        if (graph.node(user).phase == Phase::Forward) {
          ValueId g = gradOf[graph.node(user).outputs.front()];
          if (g >= 0 && !llvm::is_contained(reads, g))
            reads.push_back(g);
        }
      if (reads.empty())
        reads.push_back(out); // the loss seeds its own gradient
      for (ValueId in : graph.node(f).inputs)
        if (!llvm::is_contained(reads, in))
          reads.push_back(in);
      NodeId b = graph.addNode("b" + std::to_string(f), "op",
                               2 * graph.node(f).cost, Phase::Backward, reads);
      gradOf[out] =
          graph.addOutput(b, "g" + std::to_string(f), graph.value(out).bytes);
    }
    return std::move(graph);
  }

private:
  TrainingGraph graph;
  ValueId input;
  std::vector<NodeId> forward;
};

constexpr uint64_t kF32 = 4;

/// VGG-19 (configuration E) as the chain of Hong et al.'s Table 2.
TrainingGraph vgg19(uint64_t batch) {
  GraphMaker g(batch * 3 * 224 * 224 * kF32);
  ValueId prev = -1;
  uint64_t side = 224, channels = 3;
  const int pool = -1;
  const int config[] = {64,  64,   pool, 128,  128, pool, 256,
                        256, 256,  256,  pool, 512, 512,  512,
                        512, pool, 512,  512,  512, 512,  pool};
  for (int layer : config) {
    uint64_t in = channels;
    if (layer == pool)
      side /= 2;
    else
      channels = layer;
    double flops = layer == pool
                       ? double(side * side * channels * batch)
                       : 2.0 * 9 * in * channels * side * side * batch;
    prev = g.op(prev < 0 ? std::vector<ValueId>{} : std::vector<ValueId>{prev},
                batch * channels * side * side * kF32, flops);
  }
  uint64_t features = channels * side * side;
  for (uint64_t out : {4096, 4096, 1000}) {
    prev = g.op({prev}, batch * out * kF32, 2.0 * features * out * batch);
    features = out;
  }
  prev = g.op({prev}, kF32, double(batch * 1000)); // the loss
  return g.finish();
}

/// DenseNet-201 (growth 32, blocks 6/12/48/32, bottleneck 4k, compression
/// 0.5): per layer, the concatenation of every earlier feature map of the
/// block, BN-ReLU, 1x1 conv, BN-ReLU, 3x3 conv; transitions BN-ReLU, 1x1 conv,
/// 2x2 average pooling.
TrainingGraph densenet201(uint64_t batch) {
  GraphMaker g(batch * 3 * 224 * 224 * kF32);
  auto bytes = [&](uint64_t c, uint64_t side) {
    return batch * c * side * side * kF32;
  };
  auto conv = [&](uint64_t cin, uint64_t cout, uint64_t k, uint64_t side) {
    return 2.0 * double(cin * cout * k * k * side * side * batch);
  };
  uint64_t side = 112;
  ValueId x = g.op({}, bytes(64, side), conv(3, 64, 7, side)); // stem conv
  x = g.op({x}, bytes(64, side), double(bytes(64, side)));     // bn-relu
  side = 56;
  x = g.op({x}, bytes(64, side), double(bytes(64, side))); // max pool
  uint64_t channels = 64;
  const int blocks[] = {6, 12, 48, 32};
  const uint64_t growth = 32;
  for (int b = 0; b < 4; ++b) {
    std::vector<ValueId> features = {x};
    for (int l = 0; l < blocks[b]; ++l) {
      ValueId input = features.size() == 1
                          ? features[0]
                          : g.op(features, bytes(channels, side),
                                 double(bytes(channels, side)));
      ValueId h =
          g.op({input}, bytes(channels, side), double(bytes(channels, side)));
      h = g.op({h}, bytes(4 * growth, side),
               conv(channels, 4 * growth, 1, side));
      h = g.op({h}, bytes(4 * growth, side), double(bytes(4 * growth, side)));
      h = g.op({h}, bytes(growth, side), conv(4 * growth, growth, 3, side));
      features.push_back(h);
      channels += growth;
    }
    x = g.op(features, bytes(channels, side), double(bytes(channels, side)));
    if (b == 3)
      break;
    x = g.op({x}, bytes(channels, side), double(bytes(channels, side)));
    x = g.op({x}, bytes(channels / 2, side),
             conv(channels, channels / 2, 1, side));
    channels /= 2;
    side /= 2;
    x = g.op({x}, bytes(channels, side), double(bytes(channels, side)));
  }
  x = g.op({x}, bytes(channels, side), double(bytes(channels, side)));
  x = g.op({x}, batch * channels * kF32, double(bytes(channels, side)));
  x = g.op({x}, batch * 1000 * kF32, 2.0 * double(channels * 1000 * batch));
  g.op({x}, kF32, double(batch * 1000)); // the loss
  return g.finish();
}

const char *const kSolvers[] = {
    "checkpoint-all", "chen-sqrtn",  "chen-greedy", "ap-sqrtn",
    "ap-greedy",      "sequential",  "hong-cubic",  "hong-quadratic",
    "hong-linear",    "feng-linear", "feng"};

} // namespace

int main(int argc, char **argv) {
  bool json = false;
  size_t maxN = 1000000;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json"))
      json = true;
    else if (!std::strcmp(argv[i], "--max-n") && i + 1 < argc)
      maxN = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else {
      llvm::errs() << "usage: remat-bench-chain [--json] [--max-n N] "
                      "[--repeat R]\n";
      return 2;
    }
  }
  llvm::raw_ostream &os = llvm::outs();

  // 1. Chain algorithms. The slower algorithms stop growing n once they take
  // more than a few seconds.
  llvm::json::Array chainRows;
  if (!json)
    os << "chain algorithms (random CNN-like chains, median of " << repeat
       << " runs)\n"
       << llvm::left_justify("n", 9) << llvm::right_justify("alg6_s", 10)
       << llvm::right_justify("alg5_s", 10) << llvm::right_justify("alg3_s", 10)
       << llvm::right_justify("feng_s", 10) << "  alg5==alg6  alg3==feng\n";
  double limit = 5.0;
  bool runQuadratic = true, runCubic = true, runFeng = true;
  for (size_t n = 100; n <= maxN; n *= 10) {
    std::vector<uint64_t> d = randomChain(n, 42 + n);
    ChainSolution linear, quadratic, cubic, feng;
    double t6 = secondsOf([&] { linear = hongDynamicLinear(d); }, repeat);
    double t5 = -1, t3 = -1, tf = -1;
    if (runQuadratic) {
      t5 = secondsOf([&] { quadratic = hongDynamicQuadratic(d); }, 1);
      runQuadratic = t5 * 100 < limit;
    }
    if (runCubic) {
      t3 = secondsOf([&] { cubic = hongCheckpointSelection(d); }, 1);
      runCubic = t3 * 1000 < limit;
    }
    if (runFeng) {
      tf = secondsOf([&] { feng = fengLinear(d); }, 1);
      // One shortest path per visited candidate, and the number visited
      // grows with n too: more than quadratic in practice.
      runFeng = tf * 1000 < limit;
    }
    auto same = [](double t, uint64_t a, uint64_t b) -> std::string {
      return t < 0 ? "-" : (a == b ? "yes" : "NO");
    };
    std::string same56 = same(t5, quadratic.objective, linear.objective);
    std::string same3f =
        same(t3 < 0 || tf < 0 ? -1 : 0, cubic.objective, feng.objective);
    auto cell = [](double t) -> std::string {
      if (t < 0)
        return "-";
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%.6f", t);
      return buffer;
    };
    if (!json)
      os << llvm::left_justify(std::to_string(n), 9)
         << llvm::right_justify(cell(t6), 10)
         << llvm::right_justify(cell(t5), 10)
         << llvm::right_justify(cell(t3), 10)
         << llvm::right_justify(cell(tf), 10) << "  "
         << llvm::left_justify(same56, 10) << "  " << same3f << "\n";
    llvm::json::Object row{{"n", int64_t(n)},
                           {"alg6_seconds", t6},
                           {"alg6_objective", int64_t(linear.objective)}};
    if (t5 >= 0) {
      row["alg5_seconds"] = t5;
      row["alg5_objective"] = int64_t(quadratic.objective);
    }
    if (t3 >= 0) {
      row["alg3_seconds"] = t3;
      row["alg3_objective"] = int64_t(cubic.objective);
    }
    if (tf >= 0) {
      row["feng_seconds"] = tf;
      row["feng_objective"] = int64_t(feng.objective);
    }
    chainRows.push_back(std::move(row));
  }

  // 2. Every solver of issue 4 on graphs from architectures, judged by the
  // simulator.
  llvm::json::Array graphRows;
  struct Model {
    const char *name;
    TrainingGraph graph;
  };
  Model models[] = {{"vgg19-b128", vgg19(128)},
                    {"densenet201-b16", densenet201(16)}};
  for (Model &model : models) {
    size_t forward = model.graph.forwardNodes().size();
    if (!json)
      os << "\n"
         << model.name << ": " << model.graph.numNodes() << " nodes, "
         << forward << " forward\n"
         << llvm::left_justify("solver", 16)
         << llvm::right_justify("peak_MiB", 11)
         << llvm::right_justify("overhead", 10)
         << llvm::right_justify("recomp", 8)
         << llvm::right_justify("solve_s", 10) << "\n";
    for (const char *name : kSolvers) {
      const SolverInfo *solver = findSolver(name);
      if (!solver)
        continue;
      llvm::Expected<SolverResult> result = runSolver(*solver, model.graph, {});
      if (!result) {
        os << name << ": " << llvm::toString(result.takeError()) << "\n";
        continue;
      }
      const SimulationReport &r = result->report;
      if (!json)
        os << llvm::left_justify(name, 16)
           << llvm::format("%11.1f", double(r.peakBytes) / (1 << 20))
           << llvm::format("%10.3f", r.overhead())
           << llvm::format("%8zu", r.numRecomputations)
           << llvm::format("%10.4f", result->solveSeconds) << "\n";
      graphRows.push_back(
          llvm::json::Object{{"graph", model.name},
                             {"nodes", int64_t(model.graph.numNodes())},
                             {"forward_nodes", int64_t(forward)},
                             {"solver", name},
                             {"peak_bytes", int64_t(r.peakBytes)},
                             {"cost_overhead", r.overhead()},
                             {"recomputations", int64_t(r.numRecomputations)},
                             {"solve_seconds", result->solveSeconds}});
    }
  }

  if (json)
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"chains", std::move(chainRows)},
                                     {"graphs", std::move(graphRows)}}))
       << "\n";
  return 0;
}
