//===- PropertyTest.cpp - Structure analysis on thousands of random DAGs --===//
//
// Seeded random DAGs of three shapes, each analysed and checked against the
// brute-force reference (Check.h): every op in exactly one leaf, linear
// children joined at splitting vertices, splitting vertices exactly those of
// Algorithm 2, branched / non-branched per Algorithm 3, maximal splits per
// Definition 6, Theorem 1 on every close set, articulation points.
//
//===----------------------------------------------------------------------===//

#include "Check.h"

#include "gtest/gtest.h"

#include <random>

using namespace remat;

namespace {

using Edges = std::vector<std::pair<unsigned, unsigned>>;

/// Every pair u < v an edge with probability p.
Edges randomDag(std::mt19937 &rng, unsigned n, double p) {
  std::bernoulli_distribution coin(p);
  Edges edges;
  for (unsigned v = 1; v < n; ++v)
    for (unsigned u = 0; u < v; ++u)
      if (coin(rng))
        edges.emplace_back(u, v);
  return edges;
}

/// Network-like: mostly a chain, with skip connections and fan-out, the
/// shapes of residual, dense and encoder-decoder networks.
Edges networkDag(std::mt19937 &rng, unsigned n) {
  std::uniform_real_distribution<double> unit(0, 1);
  Edges edges;
  for (unsigned v = 1; v < n; ++v) {
    std::uniform_int_distribution<unsigned> earlier(0, v - 1);
    if (unit(rng) < 0.75)
      edges.emplace_back(v - 1, v);
    else
      edges.emplace_back(earlier(rng), v);
    for (int extra = 0; extra < 2; ++extra)
      if (unit(rng) < 0.3)
        edges.emplace_back(earlier(rng), v);
  }
  return edges;
}

/// Series-parallel compositions, then a few random extra edges that turn
/// some parts into non-branched close sets without splitting vertex.
Edges seriesParallelDag(std::mt19937 &rng, unsigned n, unsigned extra) {
  // Build a two-terminal SP graph on "slots" by random splits, then number
  // the vertices topologically.
  struct Edge {
    unsigned from, to;
  };
  std::vector<Edge> sp{{0, 1}};
  unsigned vertices = 2;
  std::uniform_int_distribution<int> kind(0, 2);
  while (vertices < n + 2) {
    std::uniform_int_distribution<size_t> pick(0, sp.size() - 1);
    size_t e = pick(rng);
    if (kind(rng) == 0) {
      sp.push_back(sp[e]); // parallel
    } else {
      unsigned mid = vertices++;
      sp.push_back({mid, sp[e].to}); // series
      sp[e].to = mid;
    }
  }
  // Topological numbering by DFS-based Kahn's algorithm.
  std::vector<std::vector<unsigned>> out(vertices);
  std::vector<unsigned> indegree(vertices, 0);
  for (const Edge &e : sp) {
    out[e.from].push_back(e.to);
    ++indegree[e.to];
  }
  std::vector<unsigned> order, ready{0}, position(vertices);
  while (!ready.empty()) {
    unsigned v = ready.back();
    ready.pop_back();
    position[v] = order.size();
    order.push_back(v);
    for (unsigned w : out[v])
      if (--indegree[w] == 0)
        ready.push_back(w);
  }
  // Drop the two terminals (they become the virtual source and sink).
  Edges edges;
  for (const Edge &e : sp)
    if (e.from != 0 && e.to != 1)
      edges.emplace_back(position[e.from] - 1, position[e.to] - 1);
  unsigned ops = vertices - 2;
  std::uniform_int_distribution<unsigned> any(0, ops - 1);
  for (unsigned k = 0; k < extra && ops > 1; ++k) {
    unsigned a = any(rng), b = any(rng);
    if (a != b)
      edges.emplace_back(std::min(a, b), std::max(a, b));
  }
  return edges;
}

std::string describeEdges(unsigned n, const Edges &edges) {
  std::string text = "n=" + std::to_string(n) + " edges:";
  for (auto [u, v] : edges)
    text += " " + std::to_string(u) + "->" + std::to_string(v);
  return text;
}

/// Runs the checks; stops the test at the first failing graph so that the
/// report names it.
void checkGraph(unsigned n, const Edges &edges) {
  StructureAnalysis a(StructureGraph(n, edges));
  check::checkAgainstReference(a, describeEdges(n, edges));
}

TEST(RandomDags, ErdosRenyi) {
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<unsigned> size(1, 11);
  const double densities[] = {0.15, 0.3, 0.5, 0.8};
  for (int k = 0; k < 1200 && !::testing::Test::HasFailure(); ++k) {
    unsigned n = size(rng);
    checkGraph(n, randomDag(rng, n, densities[k % 4]));
  }
}

TEST(RandomDags, NetworkShaped) {
  std::mt19937 rng(77);
  std::uniform_int_distribution<unsigned> size(2, 14);
  for (int k = 0; k < 1200 && !::testing::Test::HasFailure(); ++k) {
    unsigned n = size(rng);
    checkGraph(n, networkDag(rng, n));
  }
}

TEST(RandomDags, SeriesParallelWithNoise) {
  std::mt19937 rng(4242);
  std::uniform_int_distribution<unsigned> size(1, 13);
  std::uniform_int_distribution<unsigned> noise(0, 3);
  for (int k = 0; k < 1200 && !::testing::Test::HasFailure(); ++k) {
    unsigned n = size(rng);
    Edges edges = seriesParallelDag(rng, n, noise(rng));
    checkGraph(n, edges);
  }
}

// Fewer, larger graphs: deeper hierarchies and bigger non-branched sets.
TEST(RandomDags, LargerGraphs) {
  std::mt19937 rng(9001);
  std::uniform_int_distribution<unsigned> size(15, 28);
  for (int k = 0; k < 300 && !::testing::Test::HasFailure(); ++k) {
    unsigned n = size(rng);
    checkGraph(n, k % 3 == 0   ? randomDag(rng, n, 0.15)
                  : k % 3 == 1 ? networkDag(rng, n)
                               : seriesParallelDag(rng, n, 2));
  }
}

} // namespace
