//===- bench_structure.cpp - Structure analysis time against graph size ---===//
//
// Builds synthetic training graphs shaped like ResNets (bottleneck blocks,
// projection shortcuts), DenseNets (DenseNet-201's block configuration,
// repeated) and single dense blocks of growing width, each with a mirrored
// backward part, and U-Nets of growing depth, and times the structure
// analysis of their forward graph
// (remat/Structure/Structure.h): the forward DAG, the dominator tree, the
// articulation points and the hierarchy. Prints a table, or JSON with --json.
// Not a test: it never fails on a time (bench/README.md).
//
//   remat-bench-structure [--json] [--max-ops N] [--repeat R]
//
//===----------------------------------------------------------------------===//

#include "remat/Structure/Structure.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace remat;

namespace {

/// Appends forward ops by name-less handles and mirrors them backward.
class GraphMaker {
public:
  GraphMaker() { input = graph.addFixedValue("x", 4096); }

  /// A forward op reading `inputs` (value ids; empty: the step's input).
  ValueId op(std::vector<ValueId> inputs, uint64_t bytes = 4096,
             double cost = 1000) {
    if (inputs.empty())
      inputs.push_back(input);
    NodeId id = graph.addNode("f" + std::to_string(graph.numNodes()), "op",
                              cost, Phase::Forward, inputs);
    forward.push_back(id);
    return graph.addOutput(id, "v" + std::to_string(graph.numValues()), bytes);
  }

  /// One backward node per forward node, in reverse: it reads the gradients
  /// of the node's users and the node's saved inputs (a joint graph's shape).
  TrainingGraph finish() {
    std::vector<ValueId> gradOf(graph.numValues(), -1);
    for (NodeId f : llvm::reverse(forward)) {
      std::vector<ValueId> reads;
      for (ValueId out : graph.node(f).outputs)
        for (NodeId user : graph.value(out).users)
          if (graph.node(user).phase == Phase::Forward &&
              gradOf[graph.node(user).outputs.front()] >= 0)
            reads.push_back(gradOf[graph.node(user).outputs.front()]);
      for (ValueId in : graph.node(f).inputs)
        reads.push_back(in);
      NodeId b = graph.addNode("b" + std::to_string(f), "op", 2000,
                               Phase::Backward, reads);
      gradOf[graph.node(f).outputs.front()] =
          graph.addOutput(b, "g" + std::to_string(f), 4096);
    }
    return std::move(graph);
  }

  size_t numForward() const { return forward.size(); }

private:
  TrainingGraph graph;
  ValueId input;
  std::vector<NodeId> forward;
};

/// ResNet-50-like: bottleneck blocks of 10 ops (conv-bn-relu x2, conv-bn,
/// add, relu), a projection shortcut (conv-bn) at the start of each stage of
/// four blocks.
TrainingGraph makeResNet(unsigned blocks) {
  GraphMaker m;
  ValueId x = m.op({});
  x = m.op({x});
  x = m.op({x});
  for (unsigned b = 0; b < blocks; ++b) {
    ValueId shortcut = x;
    if (b % 4 == 0)
      shortcut = m.op({m.op({x})});
    ValueId y = m.op({m.op({m.op({x})})});
    y = m.op({m.op({m.op({y})})});
    y = m.op({m.op({y})});
    x = m.op({m.op({y, shortcut})});
  }
  m.op({m.op({m.op({x})})});
  return m.finish();
}

/// A dense block: layer k reads the concatenation of the block input and
/// every earlier layer's output (torchvision's torch.cat(prev_features)),
/// then bn-relu-conv1x1-bn-relu-conv3x3; the block output concatenates all.
ValueId denseBlock(GraphMaker &m, ValueId x0, unsigned layers) {
  std::vector<ValueId> features{x0};
  for (unsigned k = 0; k < layers; ++k) {
    ValueId in = features.size() == 1 ? x0 : m.op(features);
    ValueId y = m.op({m.op({m.op({m.op({m.op({m.op({in})})})})})});
    features.push_back(y);
  }
  return m.op(features);
}

/// DenseNet-201's configuration (blocks of 6, 12, 48, 32 layers, transitions
/// bn-relu-conv-pool), the four blocks repeated `repeats` times.
TrainingGraph makeDenseNet(unsigned repeats) {
  GraphMaker m;
  ValueId x = m.op({m.op({m.op({m.op({})})})});
  const unsigned config[] = {6, 12, 48, 32};
  for (unsigned r = 0; r < repeats; ++r)
    for (unsigned b = 0; b < 4; ++b) {
      x = denseBlock(m, x, config[b]);
      if (!(r + 1 == repeats && b == 3))
        x = m.op({m.op({m.op({m.op({x})})})});
    }
  m.op({m.op({m.op({m.op({m.op({x})})})})});
  return m.finish();
}

/// One dense block of `layers` layers: a single non-branched close set whose
/// size grows with the width (O(layers^2) edges).
TrainingGraph makeDenseBlock(unsigned layers) {
  GraphMaker m;
  ValueId x = m.op({});
  m.op({denseBlock(m, x, layers)});
  return m.finish();
}

/// A U-Net of `depth` levels: every skip connection nests a close set inside
/// the previous one, so the hierarchy is as deep as the network.
TrainingGraph makeUNet(unsigned depth) {
  GraphMaker m;
  std::vector<ValueId> down{m.op({})};
  for (unsigned k = 1; k < depth; ++k)
    down.push_back(m.op({down.back()}));
  ValueId x = m.op({down.back()});
  for (unsigned k = depth; k-- > 0;)
    x = m.op({x, down[k]});
  m.op({x});
  return m.finish();
}

struct Row {
  std::string family;
  std::string shape;
  size_t ops = 0, edges = 0, allOps = 0;
  double graphS = 0, domS = 0, apS = 0, hierarchyS = 0, totalS = 0;
  HierarchySummary summary;
  unsigned largestNonBranched = 0;
  size_t articulationPoints = 0, splittingVertices = 0;
};

double seconds(std::chrono::steady_clock::time_point a,
               std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// Times every stage `repeat` times and keeps the run with the least total.
Row measure(const std::string &family, const std::string &shape,
            const TrainingGraph &graph, unsigned repeat) {
  Row best;
  for (unsigned r = 0; r < repeat; ++r) {
    using Clock = std::chrono::steady_clock;
    Clock::time_point t0 = Clock::now();
    StructureGraph g(graph);
    Clock::time_point t1 = Clock::now();
    DominatorTree dom(g, false);
    Clock::time_point t2 = Clock::now();
    std::vector<Vertex> aps = findArticulationPoints(g);
    Clock::time_point t3 = Clock::now();
    Hierarchy h = Hierarchy::build(g, dom);
    Clock::time_point t4 = Clock::now();
    Row row;
    row.family = family;
    row.shape = shape;
    row.ops = g.numOps();
    row.edges = g.numOpEdges();
    row.allOps = graph.numNodes();
    row.graphS = seconds(t0, t1);
    row.domS = seconds(t1, t2);
    row.apS = seconds(t2, t3);
    row.hierarchyS = seconds(t3, t4);
    row.totalS = seconds(t0, t4);
    row.summary = h.summary();
    for (const HierarchyNode &node : h.getNodes())
      if (node.kind == HierarchyKind::NonBranched)
        row.largestNonBranched =
            std::max(row.largestNonBranched, node.numVertices());
    row.articulationPoints = aps.size();
    unsigned chain = 0;
    for (Vertex v = dom.idom(g.sink()); v != g.source(); v = dom.idom(v))
      ++chain;
    row.splittingVertices = chain;
    if (r == 0 || row.totalS < best.totalS)
      best = row;
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  bool json = false;
  size_t maxOps = 100000;
  unsigned repeat = 3;
  for (int k = 1; k < argc; ++k) {
    if (!std::strcmp(argv[k], "--json")) {
      json = true;
    } else if (!std::strcmp(argv[k], "--max-ops") && k + 1 < argc) {
      maxOps = std::strtoull(argv[++k], nullptr, 10);
    } else if (!std::strcmp(argv[k], "--repeat") && k + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++k]));
    } else {
      llvm::errs() << "usage: " << argv[0]
                   << " [--json] [--max-ops N] [--repeat R]\n";
      return 2;
    }
  }

  std::vector<Row> rows;
  auto run = [&](const std::string &family, const std::string &shape,
                 const TrainingGraph &graph) {
    size_t forward = 0;
    for (const Node &node : graph.getNodes())
      forward += node.phase == Phase::Forward;
    if (forward > maxOps)
      return false;
    rows.push_back(measure(family, shape, graph, repeat));
    return true;
  };
  // ResNet: ~10 forward ops per block.
  for (unsigned blocks : {16u, 50u, 100u, 300u, 1000u, 3000u, 9000u})
    if (!run("resnet", "blocks=" + std::to_string(blocks), makeResNet(blocks)))
      break;
  // DenseNet-201 configuration, repeated.
  for (unsigned repeats : {1u, 3u, 10u, 30u, 100u, 140u})
    if (!run("densenet", "densenet201x" + std::to_string(repeats),
             makeDenseNet(repeats)))
      break;
  // One dense block of growing width: the non-branched close set grows.
  for (unsigned layers : {12u, 24u, 48u, 96u, 192u})
    if (!run("dense-block", "layers=" + std::to_string(layers),
             makeDenseBlock(layers)))
      break;

  // U-Net: hierarchy depth grows with the network (the O(V h) term).
  for (unsigned depth : {10u, 100u, 1000u, 3000u, 10000u})
    if (!run("unet", "depth=" + std::to_string(depth), makeUNet(depth)))
      break;

  if (json) {
    llvm::json::Array array;
    for (const Row &row : rows)
      array.push_back(llvm::json::Object{
          {"family", row.family},
          {"shape", row.shape},
          {"forward_ops", static_cast<int64_t>(row.ops)},
          {"forward_edges", static_cast<int64_t>(row.edges)},
          {"all_ops", static_cast<int64_t>(row.allOps)},
          {"graph_s", row.graphS},
          {"dominators_s", row.domS},
          {"articulation_points_s", row.apS},
          {"hierarchy_s", row.hierarchyS},
          {"total_s", row.totalS},
          {"hierarchy_nodes",
           static_cast<int64_t>(row.summary.ops + row.summary.linear +
                                row.summary.branched +
                                row.summary.nonBranched)},
          {"depth", static_cast<int64_t>(row.summary.depth)},
          {"non_branched", static_cast<int64_t>(row.summary.nonBranched)},
          {"largest_non_branched",
           static_cast<int64_t>(row.largestNonBranched)},
          {"articulation_points", static_cast<int64_t>(row.articulationPoints)},
          {"splitting_vertices", static_cast<int64_t>(row.splittingVertices)}});
    llvm::outs() << llvm::formatv("{0:2}\n",
                                  llvm::json::Value(std::move(array)));
    return 0;
  }
  llvm::outs() << llvm::format(
      "%-11s %-15s %7s %7s %7s %9s %9s %9s %9s %9s %7s %5s %5s %6s\n", "family",
      "shape", "fwd_ops", "edges", "all_ops", "graph_ms", "dom_ms", "ap_ms",
      "hier_ms", "total_ms", "us/op", "depth", "nonbr", "maxnb");
  for (const Row &row : rows)
    llvm::outs() << llvm::format(
        "%-11s %-15s %7zu %7zu %7zu %9.3f %9.3f %9.3f %9.3f %9.3f %7.3f %5u "
        "%5u %6u\n",
        row.family.c_str(), row.shape.c_str(), row.ops, row.edges, row.allOps,
        row.graphS * 1e3, row.domS * 1e3, row.apS * 1e3, row.hierarchyS * 1e3,
        row.totalS * 1e3, row.totalS * 1e6 / std::max<size_t>(row.ops, 1),
        row.summary.depth, row.summary.nonBranched, row.largestNonBranched);
  return 0;
}
