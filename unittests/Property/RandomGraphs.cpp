//===- RandomGraphs.cpp - Random training graphs for property tests -------===//
//
// See RandomGraphs.h. The graph is first built as a plain description (nodes
// with inputs, outputs and reuse pairs over abstract values), then emitted
// through the TrainingGraph API in program order or in a random topological
// order.
//
//===----------------------------------------------------------------------===//

#include "RandomGraphs.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

using namespace remat;
using namespace remat::property;

uint64_t Rng::next() {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t remat::property::graphSeed(uint64_t seed, uint64_t index) {
  Rng rng(seed ^ (index * 0xd1b54a32d192ed03ull));
  rng.next();
  return rng.next() ^ index;
}

namespace {

struct AValue {
  std::string name;
  uint64_t bytes = 0;
  int producer = -1; // abstract node, -1 for fixed
  bool output = false;
};

struct ANode {
  std::string name, op;
  double cost = 0;
  Phase phase = Phase::Forward;
  std::vector<int> inputs, outputs;
  std::vector<std::pair<int, int>> reuses;
  uint64_t workspace = 0;
};

class Builder {
public:
  Builder(Rng &rng, unsigned maxNodes) : rng(rng), maxNodes(maxNodes) {}
  RandomGraph build();

private:
  uint64_t size();
  double cost();
  int fixed(const std::string &name, uint64_t bytes) {
    values.push_back({name, bytes, -1, false});
    return int(values.size()) - 1;
  }
  int node(const std::string &name, const std::string &op, Phase phase,
           std::vector<int> inputs) {
    ANode n;
    n.name = name;
    n.op = op;
    n.phase = phase;
    n.cost = cost();
    for (int in : inputs)
      if (std::find(n.inputs.begin(), n.inputs.end(), in) == n.inputs.end())
        n.inputs.push_back(in);
    if (rng.chance(12))
      n.workspace = rng.chance(50) ? size() : rng.between(1, 4096);
    nodes.push_back(std::move(n));
    return int(nodes.size()) - 1;
  }
  int output(int n, const std::string &name, uint64_t bytes) {
    values.push_back({name, bytes, n, false});
    int v = int(values.size()) - 1;
    nodes[n].outputs.push_back(v);
    return v;
  }
  /// Makes `out` an in-place update of `in` (same bytes) when allowed.
  void maybeReuse(int n, int in, int out, unsigned percent) {
    if (values[in].producer < 0 || !rng.chance(percent))
      return;
    for (auto [i, o] : nodes[n].reuses)
      if (i == in || o == out)
        return;
    values[out].bytes = values[in].bytes;
    nodes[n].reuses.push_back({in, out});
  }
  void forwardChain(int x);
  void forwardDag(int x);
  void forwardJoin();
  void backward();
  TrainingGraph emit(bool shuffle);

  Rng &rng;
  unsigned maxNodes;
  unsigned sizeClass = 0;
  uint64_t uniformBytes = 0;
  unsigned costClass = 0;
  std::vector<AValue> values;
  std::vector<ANode> nodes;
  /// Fixed values that are weights (their gradients are step outputs).
  std::vector<int> weights;
  unsigned numForward = 0;
  int lossValue = -1;
};

} // namespace

uint64_t Builder::size() {
  if (rng.chance(5))
    return 0;
  switch (sizeClass) {
  case 0: // tiny
    return rng.between(0, 16);
  case 1: { // mixed, as real steps: bytes to a few MiB
    static const uint64_t scale[] = {1, 1024, 1u << 20};
    return rng.between(1, 4096) * scale[rng.below(3)];
  }
  case 2: // large: up to 2^40
    return rng.between(1, 1u << 20) << rng.between(0, 20);
  case 3: // huge: up to 2^52 (the graph's total stays below 2^63)
    return rng.between(1, 1u << 22) << rng.between(20, 30);
  default: // homogeneous chains: one size, a few variations
    return rng.chance(85) ? uniformBytes : uniformBytes * rng.between(1, 4);
  }
}

double Builder::cost() {
  if (rng.chance(10))
    return 0;
  switch (costClass) {
  case 0:
    return 1;
  case 1:
    return double(rng.between(1, 1000));
  default:
    return rng.unit() * 1e9;
  }
}

void Builder::forwardChain(int x) {
  int prev = x;
  for (unsigned i = 0; i < numForward; ++i) {
    std::vector<int> in{prev};
    if (rng.chance(60)) {
      int w = fixed("w" + std::to_string(i), size());
      weights.push_back(w);
      in.push_back(w);
    }
    int n = node("f" + std::to_string(i), "layer", Phase::Forward, in);
    int a = output(n, "a" + std::to_string(i), size());
    maybeReuse(n, prev, a, 10);
    prev = a;
  }
}

void Builder::forwardDag(int x) {
  std::vector<int> produced; // forward values so far
  for (unsigned i = 0; i < numForward; ++i) {
    std::vector<int> in;
    if (produced.empty())
      in.push_back(x);
    else if (rng.chance(80))
      in.push_back(produced.back());
    else
      in.push_back(produced[rng.below(produced.size())]);
    if (!produced.empty() && rng.chance(30))
      in.push_back(produced[rng.below(produced.size())]);
    if (rng.chance(10))
      in.push_back(x);
    if (rng.chance(50)) {
      // A new weight, or one shared with an earlier node (its gradient is
      // then a sum of contributions).
      if (!weights.empty() && rng.chance(20)) {
        in.push_back(weights[rng.below(weights.size())]);
      } else {
        int w = fixed("w" + std::to_string(i), size());
        weights.push_back(w);
        in.push_back(w);
      }
    }
    int n = node("f" + std::to_string(i), rng.chance(50) ? "op" : "layer",
                 Phase::Forward, in);
    unsigned numOut = rng.chance(15) ? 2 : 1;
    for (unsigned k = 0; k < numOut; ++k)
      produced.push_back(output(
          n, "a" + std::to_string(i) + (k ? "_" + std::to_string(k) : ""),
          size()));
    // relu_-like in-place update of a non-fixed input.
    int first = nodes[n].inputs[0];
    maybeReuse(n, first, nodes[n].outputs[0], 12);
  }
}

void Builder::forwardJoin() {
  unsigned k = unsigned(rng.between(2, 4));
  unsigned perBranch = std::max(1u, (numForward - 2) / k);
  std::vector<int> lasts;
  for (unsigned b = 0; b < k; ++b) {
    std::string br = std::to_string(b);
    int prev = fixed("x" + br, size());
    unsigned len = unsigned(rng.between(1, perBranch));
    for (unsigned i = 0; i < len; ++i) {
      std::string id = br + "_" + std::to_string(i);
      std::vector<int> in{prev};
      if (rng.chance(70)) {
        int w = fixed("w" + id, size());
        weights.push_back(w);
        in.push_back(w);
      }
      int n = node("f" + id, "layer", Phase::Forward, in);
      int a = output(n, "a" + id, size());
      maybeReuse(n, prev, a, 8);
      prev = a;
    }
    lasts.push_back(prev);
  }
  int j = node("join", "join", Phase::Forward, lasts);
  output(j, "p", size());
}

void Builder::backward() {
  // The gradient seed: an argument (tangent), a constant node, or a node
  // reading the loss.
  int seed;
  unsigned seedKind = unsigned(rng.below(3));
  if (seedKind == 0) {
    seed = fixed("dloss", values[lossValue].bytes);
  } else {
    int n = node("seed", "seed", Phase::Backward,
                 seedKind == 1 ? std::vector<int>{} : std::vector<int>{lossValue});
    seed = output(n, "dloss", values[lossValue].bytes);
  }

  // Gradient contributions to each forward value and weight.
  std::map<int, std::vector<int>> contributions;
  contributions[lossValue].push_back(seed);
  auto gradientOf = [&](int v) -> int {
    std::vector<int> &parts = contributions[v];
    if (parts.empty())
      return -1;
    if (parts.size() == 1)
      return parts[0];
    // Sum the parts: one node, or a chain of in-place accumulations.
    if (rng.chance(50)) {
      int n = node("acc_" + values[v].name, "add", Phase::Backward, parts);
      int g = output(n, "g_" + values[v].name, values[v].bytes);
      for (int p : parts)
        if (values[p].bytes == values[g].bytes) {
          maybeReuse(n, p, g, 60);
          break;
        }
      parts = {g};
      return g;
    }
    int acc = parts[0];
    for (size_t k = 1; k < parts.size(); ++k) {
      int n = node("acc_" + values[v].name + "_" + std::to_string(k), "add",
                   Phase::Backward, {acc, parts[k]});
      int g = output(n, "g_" + values[v].name + "_" + std::to_string(k),
                     values[v].bytes);
      if (values[acc].bytes == values[g].bytes)
        maybeReuse(n, acc, g, 60);
      acc = g;
    }
    parts = {acc};
    return acc;
  };

  for (int f = int(numForward) - 1; f >= 0; --f) {
    const ANode fwd = nodes[f];
    std::vector<int> in;
    for (int out : fwd.outputs) {
      int g = gradientOf(out);
      if (g >= 0)
        in.push_back(g);
    }
    std::vector<int> gradIns = in;
    for (int v : fwd.inputs)
      if (rng.chance(values[v].producer < 0 ? 70 : 50))
        in.push_back(v);
    for (int v : fwd.outputs)
      if (rng.chance(40))
        in.push_back(v);
    if (in.empty())
      in.push_back(seed);
    int b = node("b_" + fwd.name, "grad", Phase::Backward, in);
    for (int v : fwd.inputs) {
      bool isWeight =
          std::find(weights.begin(), weights.end(), v) != weights.end();
      if (values[v].producer >= 0) {
        int g = output(b, "d" + values[v].name + "_" + fwd.name,
                       values[v].bytes);
        contributions[v].push_back(g);
        if (!gradIns.empty())
          maybeReuse(b, gradIns[rng.below(gradIns.size())], g, 25);
      } else if (isWeight && rng.chance(85)) {
        int g = output(b, "d" + values[v].name + "_" + fwd.name,
                       values[v].bytes);
        contributions[v].push_back(g);
      }
    }
    if (nodes[b].outputs.empty()) {
      int g = output(b, "d_" + fwd.name, size());
      if (rng.chance(50))
        values[g].output = true;
    }
  }
  // Weight gradients are the step's results.
  for (int w : weights) {
    int g = gradientOf(w);
    if (g >= 0)
      values[g].output = true;
  }
  // Rarely, an input gradient or an activation is a result too.
  for (int v = 0; v < int(values.size()); ++v) {
    if (values[v].producer < 0)
      continue;
    if (rng.chance(2))
      values[v].output = true;
  }
  if (rng.chance(50))
    values[lossValue].output = true;
}

TrainingGraph Builder::emit(bool shuffle) {
  std::vector<int> order;
  if (!shuffle) {
    // Forward nodes first, then backward, each in creation order.
    for (int n = 0; n < int(nodes.size()); ++n)
      if (nodes[n].phase == Phase::Forward)
        order.push_back(n);
    for (int n = 0; n < int(nodes.size()); ++n)
      if (nodes[n].phase == Phase::Backward)
        order.push_back(n);
  } else {
    // A random topological order (Kahn, random ready node).
    std::vector<int> missing(nodes.size(), 0);
    std::vector<std::vector<int>> readers(nodes.size());
    for (int n = 0; n < int(nodes.size()); ++n)
      for (int in : nodes[n].inputs)
        if (values[in].producer >= 0) {
          ++missing[n];
          readers[values[in].producer].push_back(n);
        }
    std::vector<int> ready;
    for (int n = 0; n < int(nodes.size()); ++n)
      if (!missing[n])
        ready.push_back(n);
    while (!ready.empty()) {
      size_t k = rng.below(ready.size());
      int n = ready[k];
      ready.erase(ready.begin() + k);
      order.push_back(n);
      for (int r : readers[n])
        if (--missing[r] == 0)
          ready.push_back(r);
    }
  }

  TrainingGraph graph;
  std::vector<ValueId> id(values.size(), -1);
  for (int v = 0; v < int(values.size()); ++v)
    if (values[v].producer < 0)
      id[v] = graph.addFixedValue(values[v].name, values[v].bytes);
  for (int n : order) {
    const ANode &a = nodes[n];
    std::vector<ValueId> inputs;
    for (int in : a.inputs)
      inputs.push_back(id[in]);
    NodeId node = graph.addNode(a.name, a.op, a.cost, a.phase, inputs);
    for (int out : a.outputs)
      id[out] = graph.addOutput(node, values[out].name, values[out].bytes);
    graph.node(node).workspaceBytes = a.workspace;
    for (auto [in, out] : a.reuses)
      graph.node(node).reuses.push_back({id[in], id[out]});
  }
  for (int v = 0; v < int(values.size()); ++v)
    if (values[v].output)
      graph.markOutput(id[v]);
  return graph;
}

RandomGraph Builder::build() {
  sizeClass = unsigned(rng.below(5));
  uniformBytes = rng.between(1, 1u << 16) << (4 * rng.below(4));
  costClass = unsigned(rng.below(3));
  unsigned shape = unsigned(rng.below(10)); // 0-2 chain, 3-7 dag, 8-9 join
  // About 2.5 nodes per forward node once the backward is added.
  unsigned maxForward = std::max(3u, unsigned(maxNodes / 2.5));
  numForward = unsigned(rng.between(1, maxForward));
  RandomGraph result;
  int x = -1;
  if (shape <= 7)
    x = fixed("x", size());
  if (shape <= 2) {
    result.shape = "chain";
    forwardChain(x);
  } else if (shape <= 7) {
    result.shape = "dag";
    forwardDag(x);
  } else {
    result.shape = "join";
    numForward = std::max(numForward, 4u);
    forwardJoin();
  }
  // The loss reads the last forward value (and maybe a label).
  int last = nodes.back().outputs[0];
  std::vector<int> lossIn{last};
  if (rng.chance(50))
    lossIn.push_back(fixed("label", size()));
  int l = node("loss", "loss", Phase::Forward, lossIn);
  lossValue = output(l, "loss", rng.chance(80) ? 4 : size());
  numForward = unsigned(nodes.size());
  backward();
  bool shuffle = rng.chance(15);
  if (shuffle)
    result.shape += "+shuffled";
  result.graph = emit(shuffle);
  return result;
}

RandomGraph remat::property::randomTrainingGraph(Rng &rng, unsigned maxNodes) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    RandomGraph g = Builder(rng, std::max(3u, maxNodes)).build();
    if (llvm::Error err = g.graph.verify()) {
      // Only the 63-bit bound on the bytes may reject a graph; try again.
      std::string message = llvm::toString(std::move(err));
      if (message.find("2^63-1") == std::string::npos) {
        std::fprintf(stderr, "random graph generator built an invalid graph: %s\n",
                     message.c_str());
        std::abort();
      }
      continue;
    }
    return g;
  }
  std::fprintf(stderr, "random graph generator: 100 graphs over 2^63 bytes\n");
  std::abort();
}
