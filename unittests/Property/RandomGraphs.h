//===- RandomGraphs.h - Random training graphs for property tests -*- C++ -*-===//
//
// Deterministic random training graphs: a forward part (a chain, a DAG with
// skip connections and multi-output nodes, or k chains joined at the loss)
// and a backward part that mirrors it (one gradient node per forward node,
// in reverse order, reading the gradients of the node's outputs and a random
// subset of its inputs and outputs; weight gradients as step outputs,
// accumulations of gradient contributions, some of them in place). Sizes mix
// zeros, small, large and huge byte counts; costs include zero. Graph `index`
// under `seed` is always the same graph, on every platform (a splitmix64
// stream, no <random> distributions).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_UNITTESTS_PROPERTY_RANDOMGRAPHS_H
#define REMAT_UNITTESTS_PROPERTY_RANDOMGRAPHS_H

#include "remat/Graph/TrainingGraph.h"

#include <cstdint>
#include <string>

namespace remat {
namespace property {

/// splitmix64: a small, fully specified generator.
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  uint64_t next();
  /// Uniform in [0, n) (n > 0; the modulo bias is irrelevant here).
  uint64_t below(uint64_t n) { return next() % n; }
  /// Uniform in [lo, hi].
  uint64_t between(uint64_t lo, uint64_t hi) {
    return lo + (hi > lo ? below(hi - lo + 1) : 0);
  }
  /// True with probability `percent`/100.
  bool chance(unsigned percent) { return below(100) < percent; }
  double unit() { return double(next() >> 11) * 0x1.0p-53; }

private:
  uint64_t state;
};

/// The seed of graph `index` of a run with `seed`.
uint64_t graphSeed(uint64_t seed, uint64_t index);

struct RandomGraph {
  TrainingGraph graph;
  /// "chain", "dag" or "join", plus "+shuffled" when the node ids are a
  /// random topological order rather than forward-then-backward.
  std::string shape;
};

/// A valid graph (TrainingGraph::verify passes) of at most about `maxNodes`
/// nodes (at least 3 are always allowed).
RandomGraph randomTrainingGraph(Rng &rng, unsigned maxNodes);

} // namespace property
} // namespace remat

#endif // REMAT_UNITTESTS_PROPERTY_RANDOMGRAPHS_H
