//===- BruteForce.h - Reference structure analysis --------------*- C++ -*-===//
//
// Feng & Huang's definitions and algorithms (seeds/001 §4) taken literally,
// on explicit vertex sets and a full reachability matrix: polynomial of high
// degree, for tests only. The fast analysis (Structure.h) is checked against
// it on thousands of random DAGs.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_STRUCTURE_BRUTEFORCE_H
#define REMAT_STRUCTURE_BRUTEFORCE_H

#include "remat/Structure/Structure.h"

#include <vector>

namespace remat {
namespace brute {

/// Membership vector over the vertices of a StructureGraph.
using VertexSet = std::vector<bool>;

/// A close set s_ij (Definition 1): its vertices (v_i and v_j excluded) and
/// whether it includes the edge v_i -> v_j.
struct CloseSet {
  Vertex entry;
  Vertex exit;
  VertexSet vertices;
  bool directEdge = false;
};

class Reference {
public:
  explicit Reference(const StructureGraph &graph);

  /// A path from `from` to `to` (of length 0 when equal).
  bool reaches(Vertex from, Vertex to) const { return reach[from][to]; }
  /// An edge in either direction.
  bool adjacent(Vertex a, Vertex b) const {
    return graph.hasEdge(a, b) || graph.hasEdge(b, a);
  }
  VertexSet emptySet() const { return VertexSet(graph.numVertices(), false); }

  /// Definition 1: no vertex of `s` has an edge to a vertex outside
  /// s + {v_i, v_j}; v_i is an ancestor and v_j a descendant of all of `s`.
  /// An empty set is a close set when the edge v_i -> v_j exists.
  bool isCloseSet(Vertex i, Vertex j, const VertexSet &s) const;
  /// Algorithm 2 on the sets {v_in}, {v_out} of [s_ij] (paths and
  /// connections use the close set's own edges).
  bool isSplittingVertex(const CloseSet &s, Vertex t) const;
  /// Every vertex of `s` for which Algorithm 2 says yes, in vertex order.
  std::vector<Vertex> splittingVertices(const CloseSet &s) const;
  /// Algorithm 3 (growing a connected part from one vertex).
  bool isBranched(const CloseSet &s) const;
  /// The largest close set s_kt inside `within`: the vertices between v_k and
  /// v_t (Algorithm 4, line 2) minus, repeatedly, those with an edge leaving
  /// the set (the union of all close sets s_kt is itself one).
  VertexSet largestCloseSet(Vertex k, Vertex t, const VertexSet &within) const;
  /// Definition 6 / Algorithm 4: the maximal close sets strictly inside the
  /// non-branched `s`, and the edges of [s] that none of them contains (as
  /// empty close sets with `directEdge`).
  std::vector<CloseSet> maximalSplit(const CloseSet &s) const;
  /// Ops whose removal adds a connected component to the undirected op graph.
  std::vector<Vertex> articulationPoints() const;

private:
  const StructureGraph &graph;
  std::vector<std::vector<bool>> reach;
};

} // namespace brute
} // namespace remat

#endif // REMAT_STRUCTURE_BRUTEFORCE_H
