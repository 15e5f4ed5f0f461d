//===- Structure.h - Close sets, splitting vertices, hierarchy --*- C++ -*-===//
//
// Structure analysis of the forward graph (DESIGN.md §2 "structure"): the
// articulation points of Checkmate (seeds/003, appendix B.1) and the close
// sets, splitting vertices, branched / non-branched close sets, maximal splits
// and the multi-level hierarchy of Feng & Huang (seeds/001, §4.1 Definitions
// 1-7, Theorems 1-5; §4.2 Algorithms 2-5). The hierarchy lets a chain solver
// run on an arbitrary DAG: every node is a close set s_ij with an entry v_i and
// an exit v_j that the solver can treat as one stage with the aggregate memory
// and cost of the vertices it hides, and expand when the budget demands
// (Feng's Algorithm 6).
//
// Vertices are the forward *ops* (nodes of the TrainingGraph) and edges the
// data dependencies between them; Feng's graphs put tensors on vertices and
// ops on edges, which is the same structure once every op is identified with
// the tensors it produces. A virtual source (before every op without forward
// predecessor) and a virtual sink (after every op without forward successor)
// make the whole forward graph one close set s_source,sink (Feng Fig. 2b).
//
// Pure C++ (LLVM support only), no MLIR. docs/structure.md has the algorithms
// and their complexity.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_STRUCTURE_STRUCTURE_H
#define REMAT_STRUCTURE_STRUCTURE_H

#include "remat/Graph/TrainingGraph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace remat {

/// A vertex of a StructureGraph: 0 is the virtual source, 1..numOps() the ops
/// in topological order, numOps() + 1 the virtual sink. Vertex ids are
/// therefore themselves a topological order.
using Vertex = unsigned;

/// The DAG the structure analysis works on: the forward ops of a training
/// graph (or an explicit edge list), plus the virtual source and sink.
class StructureGraph {
public:
  /// The forward part of `graph`: one vertex per forward node, an edge u -> w
  /// when w reads a value that u produces. Function arguments (fixed values)
  /// are not vertices (DESIGN.md §4).
  explicit StructureGraph(const TrainingGraph &graph);
  /// A DAG over ops 0..numOps-1 given by its edges; every edge (u, w) must have
  /// u < w (ops numbered in a topological order). `bytes` and `costs`, when
  /// given, have one entry per op. Used by tests and benchmarks.
  StructureGraph(unsigned numOps,
                 llvm::ArrayRef<std::pair<unsigned, unsigned>> edges,
                 llvm::ArrayRef<uint64_t> bytes = {},
                 llvm::ArrayRef<double> costs = {});

  unsigned numOps() const { return numOpsValue; }
  unsigned numVertices() const { return numOpsValue + 2; }
  Vertex source() const { return 0; }
  Vertex sink() const { return numOpsValue + 1; }
  bool isVirtual(Vertex v) const { return v == 0 || v == sink(); }
  /// Number of edges between ops (edges from the source / to the sink are not
  /// counted).
  size_t numOpEdges() const { return opEdges; }

  /// Vertex of op `op` (0-based, the order of the edge-list constructor or of
  /// the forward nodes) and back.
  Vertex vertexOfOp(unsigned op) const { return op + 1; }
  unsigned opOf(Vertex v) const { return v - 1; }
  /// The TrainingGraph node of an op vertex (the op index for edge-list
  /// graphs); -1 for the virtual vertices.
  NodeId nodeId(Vertex v) const { return isVirtual(v) ? -1 : nodeIds[v - 1]; }

  /// Successors / predecessors, sorted, without duplicates.
  llvm::ArrayRef<Vertex> succs(Vertex v) const {
    return llvm::ArrayRef<Vertex>(succList).slice(
        succBegin[v], succBegin[v + 1] - succBegin[v]);
  }
  llvm::ArrayRef<Vertex> preds(Vertex v) const {
    return llvm::ArrayRef<Vertex>(predList).slice(
        predBegin[v], predBegin[v + 1] - predBegin[v]);
  }
  bool hasEdge(Vertex from, Vertex to) const;

  /// Memory of a vertex (sum of the bytes of the op's outputs; 0 for the
  /// virtual vertices) and its compute cost.
  uint64_t bytes(Vertex v) const { return vertexBytes[v]; }
  double cost(Vertex v) const { return vertexCost[v]; }

private:
  void build(std::vector<std::pair<Vertex, Vertex>> edges);

  unsigned numOpsValue = 0;
  size_t opEdges = 0;
  std::vector<NodeId> nodeIds;
  std::vector<uint64_t> vertexBytes;
  std::vector<double> vertexCost;
  std::vector<unsigned> succBegin, predBegin;
  std::vector<Vertex> succList, predList;
};

/// The dominator tree of a StructureGraph rooted at the virtual source, or its
/// post-dominator tree rooted at the virtual sink. Built in one pass over the
/// topological order: the immediate dominator of a vertex of a DAG is the
/// lowest common ancestor of its predecessors in the tree built so far, found
/// by binary lifting. O((V + E) log V) time, O(V log V) memory.
class DominatorTree {
public:
  DominatorTree(const StructureGraph &graph, bool postDominators);

  Vertex root() const { return rootVertex; }
  /// Immediate (post-)dominator; the root's is the root itself.
  Vertex idom(Vertex v) const { return up[v]; }
  unsigned depth(Vertex v) const { return depths[v]; }
  /// Lowest common ancestor in the tree, O(log V).
  Vertex lca(Vertex a, Vertex b) const;
  /// True if `a` (post-)dominates `b` (reflexive), O(1).
  bool dominates(Vertex a, Vertex b) const {
    return enter[a] <= enter[b] && leave[b] <= leave[a];
  }

private:
  Vertex rootVertex;
  unsigned levels = 1;
  unsigned numVertices;
  std::vector<unsigned> depths;
  /// up[k * numVertices + v]: the 2^k-th ancestor of v.
  std::vector<Vertex> up;
  std::vector<unsigned> enter, leave;
};

/// Articulation points (cut vertices) of the undirected forward graph, virtual
/// vertices excluded: Checkmate's checkpoint candidates (seeds/003 appendix
/// B.1), by Tarjan's DFS (lowpoint), O(V + E). Sorted.
std::vector<Vertex> findArticulationPoints(const StructureGraph &graph);

/// The three categories of a close set with at least one vertex (seeds/001
/// §4.1 after Definition 5), plus single ops.
enum class HierarchyKind {
  /// One op (a leaf).
  Op,
  /// A close set with splitting vertices (Definition 3): its children are the
  /// linearly arranged segments and the splitting vertices between them
  /// (Theorem 3), in order.
  Linear,
  /// A branched close set without splitting vertex (Definition 4): its
  /// children are the branches between the same entry and exit, its maximal
  /// split (Definition 7).
  Branched,
  /// A non-branched close set without splitting vertex (Definition 5): its
  /// children are the members of its maximal split (Definition 6) that hide
  /// vertices, and the vertices between the members.
  NonBranched,
};

llvm::StringRef hierarchyKindName(HierarchyKind kind);

/// A member [s_pq] of the maximal split of a non-branched close set
/// (Definition 6).
struct SplitMember {
  Vertex entry;
  Vertex exit;
  /// The hierarchy node of s_pq, or -1 when s_pq has no vertex (the member is
  /// the single edge entry -> exit).
  int node;
};

/// A node of the hierarchy: a close set s_ij (Definition 1) or a single op.
struct HierarchyNode {
  HierarchyKind kind = HierarchyKind::Op;
  /// v_i and v_j of the close set; for an Op leaf, both are the op itself.
  Vertex entry = 0;
  Vertex exit = 0;
  /// The close set includes the edge v_i -> v_j (Definition 1 allows both;
  /// with vertices, such a close set is branched: Algorithm 3, line 2).
  bool directEdge = false;
  int parent = -1;
  unsigned depth = 0;
  /// Children in a topological order (for Linear: segment, splitting vertex,
  /// segment, ...; empty segments are omitted).
  std::vector<int> children;
  /// Linear: the splitting vertices of the close set, in order (each is also
  /// an Op child).
  std::vector<Vertex> splittingVertices;
  /// NonBranched: every member of the maximal split, single edges included.
  std::vector<SplitMember> split;
  /// The vertices the node hides are Hierarchy::order()[begin, end).
  unsigned begin = 0;
  unsigned end = 0;
  /// Aggregate memory (sum of the hidden ops' output bytes) and cost.
  uint64_t bytes = 0;
  double cost = 0;

  unsigned numVertices() const { return end - begin; }
  bool isLeaf() const { return kind == HierarchyKind::Op; }
};

/// Counts that summarise a hierarchy (the --remat-report "hierarchy" member).
struct HierarchySummary {
  unsigned ops = 0;
  unsigned linear = 0;
  unsigned branched = 0;
  unsigned nonBranched = 0;
  /// Depth of the deepest leaf (the root has depth 0).
  unsigned depth = 0;
  /// Members of all maximal splits of non-branched close sets.
  unsigned splitMembers = 0;
};

/// The multi-level hierarchy of Algorithm 5 applied recursively from the
/// whole forward graph s_source,sink down to single ops.
class Hierarchy {
public:
  /// Builds the hierarchy. `dominators` is the dominator tree of `graph`.
  static Hierarchy build(const StructureGraph &graph,
                         const DominatorTree &dominators);

  /// The root: the close set of the whole graph (never collapsed to a leaf).
  int root() const { return 0; }
  size_t size() const { return nodes.size(); }
  const HierarchyNode &node(int id) const { return nodes[id]; }
  const std::vector<HierarchyNode> &getNodes() const { return nodes; }
  /// Every op, leaves in tree order: a topological order of the graph in which
  /// every node's hidden vertices are contiguous.
  llvm::ArrayRef<Vertex> order() const { return leafOrder; }
  /// The vertices node `id` hides, in topological order.
  llvm::ArrayRef<Vertex> vertices(int id) const {
    return llvm::ArrayRef<Vertex>(leafOrder).slice(
        nodes[id].begin, nodes[id].end - nodes[id].begin);
  }
  /// The Op leaf of `v`.
  int leafOf(Vertex v) const { return leaves[v]; }
  /// The stages a chain solver sees at the top: the root's children when the
  /// root is linear, else the root alone.
  std::vector<int> topLevelStages() const;
  HierarchySummary summary() const;

private:
  std::vector<HierarchyNode> nodes;
  std::vector<Vertex> leafOrder;
  std::vector<int> leaves;
};

/// Everything the structure analysis computes for one forward graph.
struct StructureAnalysis {
  explicit StructureAnalysis(const TrainingGraph &graph);
  explicit StructureAnalysis(StructureGraph graph);

  StructureGraph graph;
  DominatorTree dominators;
  std::vector<Vertex> articulationPoints;
  Hierarchy hierarchy;

  /// Splitting vertices of the whole graph s_source,sink (Definition 3), in
  /// topological order: the dominators of the virtual sink.
  std::vector<Vertex> splittingVertices() const;
  /// {"ops", "linear", "branched", "non_branched", "depth", "split_members",
  ///  "articulation_points", "splitting_vertices"}.
  llvm::json::Value summaryJSON() const;
  /// Prints the hierarchy as an indented tree, one node per line; `label`
  /// names an op vertex (entries and exits), `leafLabel`, when given, the op
  /// of a leaf line.
  void printHierarchy(
      llvm::raw_ostream &os, llvm::function_ref<std::string(Vertex)> label,
      unsigned indent = 0,
      llvm::function_ref<std::string(Vertex)> leafLabel = nullptr) const;
};

} // namespace remat

#endif // REMAT_STRUCTURE_STRUCTURE_H
