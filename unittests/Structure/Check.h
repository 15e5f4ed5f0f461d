//===- Check.h - Checks of a hierarchy against the brute-force reference --===//
//
// Shared by the example tests and the random property tests: every property
// the issue asks for, checked with the literal definitions of seeds/001 §4
// (remat/Structure/BruteForce.h).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_UNITTESTS_STRUCTURE_CHECK_H
#define REMAT_UNITTESTS_STRUCTURE_CHECK_H

#include "remat/Structure/BruteForce.h"
#include "remat/Structure/Structure.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <tuple>

namespace remat {
namespace check {

inline brute::VertexSet setOf(const StructureGraph &g,
                              llvm::ArrayRef<Vertex> vertices) {
  brute::VertexSet set(g.numVertices(), false);
  for (Vertex v : vertices)
    set[v] = true;
  return set;
}

inline bool isEmpty(const brute::VertexSet &set) {
  return std::find(set.begin(), set.end(), true) == set.end();
}

/// The hierarchy as a nested string: ops by `label`, L[...] linear,
/// B[...] branched (B+[...] with the edge entry -> exit), N[...] non-branched.
inline std::string describe(const StructureAnalysis &a, int id,
                            const std::function<std::string(Vertex)> &label) {
  const HierarchyNode &node = a.hierarchy.node(id);
  if (node.kind == HierarchyKind::Op)
    return label(node.entry);
  std::string text = node.kind == HierarchyKind::Linear     ? "L["
                     : node.kind == HierarchyKind::Branched ? "B["
                                                            : "N[";
  if (node.directEdge)
    text.insert(1, "+");
  for (size_t k = 0; k < node.children.size(); ++k)
    text += (k ? "," : "") + describe(a, node.children[k], label);
  return text + "]";
}

/// Theorem 1 on two close sets: a non-trivial overlap is s_kj or s_it.
inline void expectTheorem1(const brute::Reference &ref,
                           const brute::CloseSet &a, const brute::CloseSet &b,
                           const std::string &context) {
  size_t n = a.vertices.size();
  brute::VertexSet meet(n, false);
  bool any = false, aInB = true, bInA = true;
  for (size_t v = 0; v < n; ++v) {
    meet[v] = a.vertices[v] && b.vertices[v];
    any |= meet[v];
    aInB &= !a.vertices[v] || b.vertices[v];
    bInA &= !b.vertices[v] || a.vertices[v];
  }
  if (!any || aInB || bInA)
    return;
  EXPECT_TRUE(ref.isCloseSet(b.entry, a.exit, meet) ||
              ref.isCloseSet(a.entry, b.exit, meet))
      << context << ": s_" << a.entry << "," << a.exit << " and s_" << b.entry
      << "," << b.exit;
}

/// Every close set that the reference finds in the whole graph: for each pair
/// (k, t), the largest close set s_kt and each of its connected components.
inline std::vector<brute::CloseSet> allCloseSets(const StructureGraph &g,
                                                 const brute::Reference &ref) {
  std::vector<brute::CloseSet> sets;
  brute::VertexSet ops(g.numVertices(), true);
  ops[g.source()] = ops[g.sink()] = false;
  for (Vertex k = 0; k < g.numVertices(); ++k)
    for (Vertex t = k + 1; t < g.numVertices(); ++t) {
      brute::VertexSet all = ref.largestCloseSet(k, t, ops);
      if (isEmpty(all))
        continue;
      sets.push_back({k, t, all, g.hasEdge(k, t)});
      // Components (the branches of Definition 7).
      brute::VertexSet seen(g.numVertices(), false);
      unsigned parts = 0;
      std::vector<brute::CloseSet> branches;
      for (Vertex v = 0; v < g.numVertices(); ++v) {
        if (!all[v] || seen[v])
          continue;
        brute::VertexSet part(g.numVertices(), false);
        std::vector<Vertex> stack{v};
        seen[v] = part[v] = true;
        while (!stack.empty()) {
          Vertex u = stack.back();
          stack.pop_back();
          for (Vertex w = 0; w < g.numVertices(); ++w)
            if (all[w] && !seen[w] && ref.adjacent(u, w)) {
              seen[w] = part[w] = true;
              stack.push_back(w);
            }
        }
        ++parts;
        branches.push_back({k, t, part, false});
      }
      if (parts > 1)
        sets.insert(sets.end(), branches.begin(), branches.end());
    }
  return sets;
}

/// Checks every property of the issue on `a`; `context` names the graph.
inline void checkAgainstReference(const StructureAnalysis &a,
                                  const std::string &context) {
  const StructureGraph &g = a.graph;
  const Hierarchy &h = a.hierarchy;
  brute::Reference ref(g);
  SCOPED_TRACE(context);

  // Every op in exactly one leaf; the leaf order is a topological order.
  std::vector<int> leafCount(g.numVertices(), 0);
  for (const HierarchyNode &node : h.getNodes())
    if (node.kind == HierarchyKind::Op)
      ++leafCount[node.entry];
  for (Vertex v = 1; v <= g.numOps(); ++v)
    EXPECT_EQ(leafCount[v], 1) << "vertex " << v;
  EXPECT_EQ(leafCount[g.source()] + leafCount[g.sink()], 0);
  ASSERT_EQ(h.order().size(), g.numOps());
  std::vector<unsigned> position(g.numVertices(), 0);
  for (unsigned k = 0; k < h.order().size(); ++k)
    position[h.order()[k]] = k;
  for (Vertex v = 1; v <= g.numOps(); ++v)
    for (Vertex w : g.succs(v)) {
      if (!g.isVirtual(w)) {
        EXPECT_LT(position[v], position[w]) << "edge " << v << "->" << w;
      }
    }

  std::vector<brute::CloseSet> found;
  for (int id = 0; id < static_cast<int>(h.size()); ++id) {
    const HierarchyNode &node = h.node(id);
    // Ranges, aggregates and parent links.
    uint64_t bytes = 0;
    double cost = 0;
    for (Vertex v : h.vertices(id)) {
      bytes += g.bytes(v);
      cost += g.cost(v);
    }
    EXPECT_EQ(node.bytes, bytes);
    EXPECT_DOUBLE_EQ(node.cost, cost);
    unsigned covered = 0;
    for (int child : node.children) {
      EXPECT_EQ(h.node(child).parent, id);
      EXPECT_EQ(h.node(child).depth, node.depth + 1);
      EXPECT_EQ(h.node(child).begin, node.begin + covered);
      covered += h.node(child).numVertices();
    }
    if (node.kind == HierarchyKind::Op) {
      EXPECT_EQ(node.numVertices(), 1u);
      EXPECT_EQ(node.entry, node.exit);
      continue;
    }
    EXPECT_EQ(covered, node.numVertices());
    brute::CloseSet cs{node.entry, node.exit, setOf(g, h.vertices(id)),
                       node.directEdge};
    std::string where = "node " + std::to_string(id) + " " +
                        hierarchyKindName(node.kind).str() + " s_" +
                        std::to_string(node.entry) + "," +
                        std::to_string(node.exit);
    // Definition 1.
    EXPECT_TRUE(ref.isCloseSet(node.entry, node.exit, cs.vertices)) << where;
    if (node.directEdge) {
      EXPECT_TRUE(g.hasEdge(node.entry, node.exit)) << where;
    }
    found.push_back(cs);
    // Definition 3 / Algorithm 2: the splitting vertices found are exactly
    // those of the brute force (none missed, none extra).
    std::vector<Vertex> splitting = ref.splittingVertices(cs);
    if (node.kind == HierarchyKind::Linear) {
      EXPECT_EQ(node.splittingVertices, splitting) << where;
      if (id != h.root()) {
        EXPECT_FALSE(splitting.empty()) << where;
      }
    } else {
      EXPECT_TRUE(splitting.empty()) << where;
    }

    if (node.kind == HierarchyKind::Linear) {
      // Children: close sets joined at the splitting vertices (Theorem 3).
      Vertex previous = node.entry;
      size_t next = 0;
      for (int child : node.children) {
        const HierarchyNode &c = h.node(child);
        if (c.kind == HierarchyKind::Op) {
          ASSERT_LT(next, node.splittingVertices.size()) << where;
          EXPECT_EQ(c.entry, node.splittingVertices[next]) << where;
          previous = node.splittingVertices[next++];
          continue;
        }
        Vertex expectedExit = next < node.splittingVertices.size()
                                  ? node.splittingVertices[next]
                                  : node.exit;
        EXPECT_EQ(c.entry, previous) << where;
        EXPECT_EQ(c.exit, expectedExit) << where;
        EXPECT_NE(c.kind, HierarchyKind::Linear) << where;
      }
      EXPECT_EQ(next, node.splittingVertices.size()) << where;
    } else if (node.kind == HierarchyKind::Branched) {
      // Definition 4 / Algorithm 3, and Definition 7: non-branched branches.
      EXPECT_TRUE(ref.isBranched(cs)) << where;
      EXPECT_GE(node.children.size() + (node.directEdge ? 1 : 0), 2u) << where;
      for (int child : node.children) {
        const HierarchyNode &c = h.node(child);
        brute::CloseSet branch{node.entry, node.exit,
                               setOf(g, h.vertices(child)), false};
        EXPECT_TRUE(ref.isCloseSet(node.entry, node.exit, branch.vertices))
            << where;
        EXPECT_FALSE(ref.isBranched(branch)) << where;
        if (c.kind != HierarchyKind::Op) {
          EXPECT_EQ(c.entry, node.entry) << where;
          EXPECT_EQ(c.exit, node.exit) << where;
          EXPECT_FALSE(c.directEdge) << where;
        }
      }
    } else if (node.kind == HierarchyKind::NonBranched) {
      // Definition 5, Definition 6 / Algorithm 4, Theorem 5.
      EXPECT_FALSE(ref.isBranched(cs)) << where;
      EXPECT_GT(node.split.size(), 2u) << where << " (Theorem 5)";
      std::set<std::tuple<Vertex, Vertex, std::vector<bool>>> expected, got;
      for (const brute::CloseSet &member : ref.maximalSplit(cs))
        expected.insert({member.entry, member.exit, member.vertices});
      for (const SplitMember &member : node.split) {
        brute::VertexSet vertices(g.numVertices(), false);
        if (member.node >= 0) {
          vertices = setOf(g, h.vertices(member.node));
          EXPECT_EQ(h.node(member.node).parent, id) << where;
        }
        got.insert({member.entry, member.exit, vertices});
      }
      EXPECT_EQ(got.size(), node.split.size()) << where;
      EXPECT_EQ(got, expected) << where;
    }
  }

  // Theorem 1 on every close set found, and on every close set of the graph.
  std::vector<brute::CloseSet> all = allCloseSets(g, ref);
  all.insert(all.end(), found.begin(), found.end());
  for (size_t x = 0; x < all.size(); ++x)
    for (size_t y = x + 1; y < all.size(); ++y)
      expectTheorem1(ref, all[x], all[y], context);

  // Articulation points (seeds/003 B.1) and the splitting vertices of the
  // whole graph.
  EXPECT_EQ(a.articulationPoints, ref.articulationPoints());
  brute::VertexSet ops(g.numVertices(), true);
  ops[g.source()] = ops[g.sink()] = false;
  if (g.numOps() > 0) {
    EXPECT_EQ(a.splittingVertices(),
              ref.splittingVertices({g.source(), g.sink(), ops, false}));
  }
}

} // namespace check
} // namespace remat

#endif // REMAT_UNITTESTS_STRUCTURE_CHECK_H
