//===- BruteForce.cpp - Reference structure analysis on vertex sets -------===//
//
// Literal transcriptions of seeds/001 §4 (Definitions 1, 3-6, Algorithms 2-4)
// for the tests. Nothing here is meant to be fast.
//
//===----------------------------------------------------------------------===//

#include "remat/Structure/BruteForce.h"

#include <algorithm>

using namespace remat;
using namespace remat::brute;

Reference::Reference(const StructureGraph &graph) : graph(graph) {
  unsigned n = graph.numVertices();
  reach.assign(n, std::vector<bool>(n, false));
  for (Vertex v = n; v-- > 0;) {
    reach[v][v] = true;
    for (Vertex w : graph.succs(v))
      for (Vertex u = 0; u < n; ++u)
        if (reach[w][u])
          reach[v][u] = true;
  }
}

bool Reference::isCloseSet(Vertex i, Vertex j, const VertexSet &s) const {
  if (i == j || s[i] || s[j] || !reaches(i, j))
    return false;
  bool any = false;
  for (Vertex v = 0; v < graph.numVertices(); ++v) {
    if (!s[v])
      continue;
    any = true;
    if (!reaches(i, v) || !reaches(v, j))
      return false;
    for (Vertex w : graph.succs(v))
      if (!s[w] && w != i && w != j)
        return false;
    for (Vertex w : graph.preds(v))
      if (!s[w] && w != i && w != j)
        return false;
  }
  return any || graph.hasEdge(i, j);
}

namespace {
/// The edges of the close set [s_ij] (Definition 1).
bool closeSetEdge(const StructureGraph &graph, const CloseSet &s, Vertex a,
                  Vertex b) {
  auto inClosed = [&](Vertex v) {
    return s.vertices[v] || v == s.entry || v == s.exit;
  };
  if (!inClosed(a) || !inClosed(b) || !graph.hasEdge(a, b))
    return false;
  if (a == s.entry && b == s.exit)
    return s.directEdge;
  return true;
}
} // namespace

bool Reference::isSplittingVertex(const CloseSet &s, Vertex t) const {
  if (!s.vertices[t])
    return false;
  unsigned n = graph.numVertices();
  auto inClosed = [&](Vertex v) {
    return s.vertices[v] || v == s.entry || v == s.exit;
  };
  // {v_in}: vertices of [s_ij] with a path to v_t; {v_out}: with a path from
  // v_t; both along the close set's edges (Algorithm 2, line 1).
  auto search = [&](bool forward) {
    VertexSet seen = emptySet();
    std::vector<Vertex> stack{t};
    seen[t] = true;
    while (!stack.empty()) {
      Vertex v = stack.back();
      stack.pop_back();
      for (Vertex w = 0; w < n; ++w) {
        bool edge = forward ? closeSetEdge(graph, s, v, w)
                            : closeSetEdge(graph, s, w, v);
        if (edge && !seen[w]) {
          seen[w] = true;
          stack.push_back(w);
        }
      }
    }
    seen[t] = false;
    return seen;
  };
  VertexSet in = search(false), out = search(true);
  // Algorithm 2, line 2.
  for (Vertex v = 0; v < n; ++v) {
    if (!inClosed(v) || v == t)
      continue;
    if (in[v] == out[v]) // in neither (union too small) or in both
      return false;
  }
  for (Vertex a = 0; a < n; ++a)
    for (Vertex b = 0; b < n; ++b)
      if (in[a] && out[b] &&
          (closeSetEdge(graph, s, a, b) || closeSetEdge(graph, s, b, a)))
        return false;
  return true;
}

std::vector<Vertex> Reference::splittingVertices(const CloseSet &s) const {
  std::vector<Vertex> result;
  for (Vertex v = 0; v < graph.numVertices(); ++v)
    if (s.vertices[v] && isSplittingVertex(s, v))
      result.push_back(v);
  return result;
}

bool Reference::isBranched(const CloseSet &s) const {
  unsigned n = graph.numVertices();
  Vertex first = n;
  for (Vertex v = 0; v < n && first == n; ++v)
    if (s.vertices[v])
      first = v;
  if (first == n) // Algorithm 3, line 1: no vertex
    return false;
  if (s.directEdge) // line 2
    return true;
  // Lines 5-13: grow a set from one vertex through connections inside s_ij.
  VertexSet grown = emptySet();
  grown[first] = true;
  bool added = true;
  while (added) {
    added = false;
    for (Vertex v = 0; v < n; ++v) {
      if (!s.vertices[v] || grown[v])
        continue;
      for (Vertex w = 0; w < n; ++w)
        if (grown[w] && adjacent(v, w)) {
          grown[v] = true;
          added = true;
          break;
        }
    }
  }
  return grown != s.vertices;
}

VertexSet Reference::largestCloseSet(Vertex k, Vertex t,
                                     const VertexSet &within) const {
  unsigned n = graph.numVertices();
  VertexSet set = emptySet();
  for (Vertex v = 0; v < n; ++v)
    set[v] = within[v] && v != k && v != t && reaches(k, v) && reaches(v, t);
  bool removed = true;
  while (removed) {
    removed = false;
    for (Vertex v = 0; v < n; ++v) {
      if (!set[v])
        continue;
      bool leaks = false;
      for (Vertex w : graph.succs(v))
        leaks |= !set[w] && w != k && w != t;
      for (Vertex w : graph.preds(v))
        leaks |= !set[w] && w != k && w != t;
      if (leaks) {
        set[v] = false;
        removed = true;
      }
    }
  }
  return set;
}

std::vector<CloseSet> Reference::maximalSplit(const CloseSet &s) const {
  unsigned n = graph.numVertices();
  auto inClosed = [&](Vertex v) {
    return s.vertices[v] || v == s.entry || v == s.exit;
  };
  auto subset = [&](const VertexSet &a, const VertexSet &b) {
    for (Vertex v = 0; v < n; ++v)
      if (a[v] && !b[v])
        return false;
    return true;
  };
  // Algorithm 4, lines 1-4: every close set strictly inside [s_ij].
  std::vector<CloseSet> candidates;
  for (Vertex k = 0; k < n; ++k)
    for (Vertex t = 0; t < n; ++t) {
      if (k == t || !inClosed(k) || !inClosed(t) || !reaches(k, t) ||
          (k == s.entry && t == s.exit))
        continue;
      VertexSet set = largestCloseSet(k, t, s.vertices);
      if (std::find(set.begin(), set.end(), true) != set.end())
        candidates.push_back({k, t, std::move(set), graph.hasEdge(k, t)});
    }
  // Lines 5-6: keep those that no other close set strictly contains.
  std::vector<CloseSet> members;
  for (size_t a = 0; a < candidates.size(); ++a) {
    bool maximal = true;
    for (size_t b = 0; b < candidates.size() && maximal; ++b)
      if (a != b && subset(candidates[a].vertices, candidates[b].vertices) &&
          candidates[a].vertices != candidates[b].vertices)
        maximal = false;
    if (maximal)
      members.push_back(candidates[a]);
  }
  // Edges of [s_ij] that no member hides, as members without vertex.
  VertexSet hidden = emptySet();
  for (const CloseSet &member : members)
    for (Vertex v = 0; v < n; ++v)
      if (member.vertices[v])
        hidden[v] = true;
  for (Vertex a = 0; a < n; ++a)
    for (Vertex b : graph.succs(a)) {
      if (!closeSetEdge(graph, s, a, b) || hidden[a] || hidden[b])
        continue;
      bool parallel = false;
      for (const CloseSet &member : members)
        parallel |= member.entry == a && member.exit == b;
      if (!parallel)
        members.push_back({a, b, emptySet(), true});
    }
  return members;
}

std::vector<Vertex> Reference::articulationPoints() const {
  unsigned n = graph.numVertices();
  auto countComponents = [&](Vertex removed) {
    VertexSet seen = emptySet();
    unsigned count = 0;
    for (Vertex start = 1; start + 1 < n; ++start) {
      if (start == removed || seen[start])
        continue;
      ++count;
      std::vector<Vertex> stack{start};
      seen[start] = true;
      while (!stack.empty()) {
        Vertex v = stack.back();
        stack.pop_back();
        for (Vertex w = 1; w + 1 < n; ++w)
          if (w != removed && !seen[w] && adjacent(v, w)) {
            seen[w] = true;
            stack.push_back(w);
          }
      }
    }
    return count;
  };
  unsigned base = countComponents(n);
  std::vector<Vertex> result;
  for (Vertex v = 1; v + 1 < n; ++v)
    if (countComponents(v) > base)
      result.push_back(v);
  return result;
}
