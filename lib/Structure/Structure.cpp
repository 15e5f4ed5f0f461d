//===- Structure.cpp - Close sets, splitting vertices, linear hierarchy ---===//
//
// The structure analysis of seeds/001 (Feng & Huang) §4 and seeds/003
// (Checkmate) appendix B.1, computed with dominator trees instead of the
// papers' all-pairs set algorithms. The reasoning that makes this faithful:
//
//  * Every close set s_ij handled here is entered only through v_i (Definition
//    1: no vertex of s_ij has an edge to a vertex outside s_ij + {v_i, v_j},
//    and v_i is an ancestor of all of it). So the dominators of a vertex of
//    s_ij inside [s_ij] (Definition 2) are its dominators in the whole graph
//    below v_i: one global dominator tree serves every level of the hierarchy.
//  * v_t in s_ij is a splitting vertex (Definition 3; Algorithm 2) iff every
//    path v_i -> v_j inside [s_ij] passes through v_t, i.e. iff v_t dominates
//    every predecessor of v_j inside s_ij (and the close set does not include
//    the edge v_i -> v_j, which would join {v_in} and {v_out}). So the
//    splitting vertices are the dominator-tree path from the LCA of those
//    predecessors up to v_i, and by Theorem 3 they cut s_ij into segments: a
//    vertex belongs to the segment after the deepest splitting vertex that
//    dominates it.
//  * Without splitting vertex, s_ij is branched (Definition 4; Algorithm 3)
//    iff it includes the edge v_i -> v_j or its vertices form several
//    connected components once v_i and v_j are removed; the components are the
//    non-branched branches of its maximal split (Definition 7).
//  * In a non-branched s_ij without splitting vertex, the close sets s_kt
//    inside it are exactly the unions of connected components of
//    [s_ij] - {v_k, v_t} that contain neither v_i nor v_j (in a DAG whose
//    only source is v_i and only sink v_j, such a component is automatically
//    entered from one of v_k, v_t and left to the other). With the virtual
//    edge v_i - v_j, [s_ij] is biconnected, so these are the separation pairs
//    {v_k, v_t}: removing each vertex in turn and finding the articulation
//    points of what is left enumerates them. The maximal split (Definition 6,
//    Algorithm 4) is the set of maximal such close sets, which are disjoint
//    (Theorems 1, 2, 4), plus the edges that no member contains.
//
//===----------------------------------------------------------------------===//

#include "remat/Structure/Structure.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <map>
#include <tuple>

using namespace remat;

// -debug-only=remat-structure: one summary per analysis (ops, articulation
// points, splitting vertices, the hierarchy's shape) and the
// non-branched close sets, whose maximal split is the costly step.
#define DEBUG_TYPE "remat-structure"

//===----------------------------------------------------------------------===//
// StructureGraph
//===----------------------------------------------------------------------===//

StructureGraph::StructureGraph(const TrainingGraph &graph) {
  // Forward nodes in id order: TrainingGraph ids are a topological order, so
  // vertex ids are too.
  std::vector<int> vertexOfNode(graph.numNodes(), -1);
  for (NodeId id = 0; id < static_cast<NodeId>(graph.numNodes()); ++id)
    if (graph.node(id).phase == Phase::Forward) {
      vertexOfNode[id] = static_cast<int>(nodeIds.size()) + 1;
      nodeIds.push_back(id);
    }
  numOpsValue = static_cast<unsigned>(nodeIds.size());
  vertexBytes.assign(numVertices(), 0);
  vertexCost.assign(numVertices(), 0);
  std::vector<std::pair<Vertex, Vertex>> edges;
  for (unsigned op = 0; op < numOpsValue; ++op) {
    const Node &node = graph.node(nodeIds[op]);
    Vertex from = vertexOfOp(op);
    vertexCost[from] = node.cost;
    for (ValueId out : node.outputs) {
      const GraphValue &value = graph.value(out);
      vertexBytes[from] += value.bytes;
      for (NodeId user : value.users)
        if (vertexOfNode[user] >= 0)
          edges.emplace_back(from, static_cast<Vertex>(vertexOfNode[user]));
    }
  }
  build(std::move(edges));
}

StructureGraph::StructureGraph(
    unsigned numOps, llvm::ArrayRef<std::pair<unsigned, unsigned>> edges,
    llvm::ArrayRef<uint64_t> bytes, llvm::ArrayRef<double> costs) {
  numOpsValue = numOps;
  nodeIds.resize(numOps);
  vertexBytes.assign(numVertices(), 0);
  vertexCost.assign(numVertices(), 0);
  for (unsigned op = 0; op < numOps; ++op) {
    nodeIds[op] = static_cast<NodeId>(op);
    vertexBytes[vertexOfOp(op)] = op < bytes.size() ? bytes[op] : 1;
    vertexCost[vertexOfOp(op)] = op < costs.size() ? costs[op] : 1;
  }
  std::vector<std::pair<Vertex, Vertex>> vertexEdges;
  vertexEdges.reserve(edges.size());
  for (auto [from, to] : edges) {
    assert(from < to && to < numOps && "edges must follow a topological order");
    vertexEdges.emplace_back(vertexOfOp(from), vertexOfOp(to));
  }
  build(std::move(vertexEdges));
}

void StructureGraph::build(std::vector<std::pair<Vertex, Vertex>> edges) {
  llvm::sort(edges);
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  opEdges = edges.size();
  // The virtual source precedes every op without a predecessor, the virtual
  // sink follows every op without a successor.
  std::vector<unsigned> inDegree(numVertices(), 0), outDegree(numVertices(), 0);
  for (auto [from, to] : edges) {
    ++outDegree[from];
    ++inDegree[to];
  }
  for (Vertex v = 1; v <= numOpsValue; ++v) {
    if (inDegree[v] == 0)
      edges.emplace_back(source(), v);
    if (outDegree[v] == 0)
      edges.emplace_back(v, sink());
  }
  if (numOpsValue == 0)
    edges.emplace_back(source(), sink());
  llvm::sort(edges);

  unsigned n = numVertices();
  succBegin.assign(n + 1, 0);
  predBegin.assign(n + 1, 0);
  for (auto [from, to] : edges) {
    ++succBegin[from + 1];
    ++predBegin[to + 1];
  }
  for (unsigned v = 0; v < n; ++v) {
    succBegin[v + 1] += succBegin[v];
    predBegin[v + 1] += predBegin[v];
  }
  succList.resize(edges.size());
  predList.resize(edges.size());
  std::vector<unsigned> succFill(succBegin.begin(), succBegin.end() - 1);
  std::vector<unsigned> predFill(predBegin.begin(), predBegin.end() - 1);
  // Edges are sorted by (from, to): successor lists come out sorted; the
  // predecessors of a vertex arrive in increasing `from` order, sorted too.
  for (auto [from, to] : edges) {
    succList[succFill[from]++] = to;
    predList[predFill[to]++] = from;
  }
}

bool StructureGraph::hasEdge(Vertex from, Vertex to) const {
  llvm::ArrayRef<Vertex> out = succs(from);
  return std::binary_search(out.begin(), out.end(), to);
}

//===----------------------------------------------------------------------===//
// DominatorTree
//===----------------------------------------------------------------------===//

DominatorTree::DominatorTree(const StructureGraph &graph, bool postDominators)
    : rootVertex(postDominators ? graph.sink() : graph.source()),
      numVertices(graph.numVertices()) {
  unsigned n = numVertices;
  while ((1u << levels) < n)
    ++levels;
  depths.assign(n, 0);
  up.assign(static_cast<size_t>(levels) * n, rootVertex);
  // Vertices in a topological order of the (reversed) DAG: every predecessor
  // already has its place in the tree, so idom(v) = LCA(predecessors(v)).
  for (unsigned k = 0; k < n; ++k) {
    Vertex v = postDominators ? n - 1 - k : k;
    if (v == rootVertex)
      continue;
    llvm::ArrayRef<Vertex> in =
        postDominators ? graph.succs(v) : graph.preds(v);
    assert(!in.empty() && "every vertex is reachable from the root");
    Vertex idomV = in.front();
    for (Vertex p : in.drop_front())
      idomV = lca(idomV, p);
    depths[v] = depths[idomV] + 1;
    up[v] = idomV;
    for (unsigned level = 1; level < levels; ++level)
      up[static_cast<size_t>(level) * n + v] =
          up[static_cast<size_t>(level - 1) * n +
             up[static_cast<size_t>(level - 1) * n + v]];
  }
  // Pre/post numbers for O(1) dominance queries.
  std::vector<unsigned> childBegin(n + 1, 0);
  for (Vertex v = 0; v < n; ++v)
    if (v != rootVertex)
      ++childBegin[up[v] + 1];
  for (unsigned v = 0; v < n; ++v)
    childBegin[v + 1] += childBegin[v];
  std::vector<Vertex> children(n > 0 ? n - 1 : 0);
  std::vector<unsigned> fill(childBegin.begin(), childBegin.end() - 1);
  for (Vertex v = 0; v < n; ++v)
    if (v != rootVertex)
      children[fill[up[v]]++] = v;
  enter.assign(n, 0);
  leave.assign(n, 0);
  unsigned clock = 0;
  std::vector<std::pair<Vertex, unsigned>> stack{{rootVertex, 0}};
  enter[rootVertex] = clock++;
  while (!stack.empty()) {
    auto &[v, next] = stack.back();
    if (childBegin[v] + next < childBegin[v + 1]) {
      Vertex child = children[childBegin[v] + next++];
      enter[child] = clock++;
      stack.emplace_back(child, 0);
    } else {
      leave[v] = clock++;
      stack.pop_back();
    }
  }
}

Vertex DominatorTree::lca(Vertex a, Vertex b) const {
  size_t n = numVertices;
  if (depths[a] < depths[b])
    std::swap(a, b);
  unsigned diff = depths[a] - depths[b];
  for (unsigned level = 0; diff; ++level, diff >>= 1)
    if (diff & 1)
      a = up[level * n + a];
  if (a == b)
    return a;
  for (unsigned level = levels; level-- > 0;) {
    Vertex ua = up[level * n + a], ub = up[level * n + b];
    if (ua != ub) {
      a = ua;
      b = ub;
    }
  }
  return up[a];
}

//===----------------------------------------------------------------------===//
// Articulation points (seeds/003 appendix B.1)
//===----------------------------------------------------------------------===//

std::vector<Vertex> remat::findArticulationPoints(const StructureGraph &graph) {
  // Undirected adjacency of the ops, virtual vertices left out: Checkmate
  // works on "the undirected form of the forward pass data-flow graph".
  unsigned n = graph.numVertices();
  std::vector<unsigned> begin(n + 1, 0);
  for (Vertex v = 1; v + 1 < n; ++v)
    for (Vertex w : graph.succs(v))
      if (!graph.isVirtual(w)) {
        ++begin[v + 1];
        ++begin[w + 1];
      }
  for (unsigned v = 0; v < n; ++v)
    begin[v + 1] += begin[v];
  std::vector<Vertex> adjacency(begin[n]);
  std::vector<unsigned> fill(begin.begin(), begin.end() - 1);
  for (Vertex v = 1; v + 1 < n; ++v)
    for (Vertex w : graph.succs(v))
      if (!graph.isVirtual(w)) {
        adjacency[fill[v]++] = w;
        adjacency[fill[w]++] = v;
      }

  // Iterative Tarjan DFS: v is a cut vertex if it is a DFS root with two
  // children or has a child c with low(c) >= disc(v).
  constexpr unsigned unvisited = std::numeric_limits<unsigned>::max();
  std::vector<unsigned> disc(n, unvisited), low(n, 0);
  std::vector<Vertex> parent(n, 0);
  std::vector<bool> isCut(n, false);
  unsigned clock = 0;
  std::vector<std::pair<Vertex, unsigned>> stack;
  for (Vertex root = 1; root + 1 < n; ++root) {
    if (disc[root] != unvisited)
      continue;
    unsigned rootChildren = 0;
    disc[root] = low[root] = clock++;
    stack.emplace_back(root, begin[root]);
    while (!stack.empty()) {
      auto &[v, next] = stack.back();
      if (next < begin[v + 1]) {
        Vertex w = adjacency[next++];
        if (disc[w] == unvisited) {
          parent[w] = v;
          disc[w] = low[w] = clock++;
          if (v == root)
            ++rootChildren;
          stack.emplace_back(w, begin[w]);
        } else if (w != parent[v]) {
          low[v] = std::min(low[v], disc[w]);
        }
        continue;
      }
      Vertex done = v;
      stack.pop_back();
      if (done == root)
        continue;
      Vertex p = parent[done];
      low[p] = std::min(low[p], low[done]);
      if (p != root && low[done] >= disc[p])
        isCut[p] = true;
    }
    if (rootChildren >= 2)
      isCut[root] = true;
  }
  std::vector<Vertex> result;
  for (Vertex v = 1; v + 1 < n; ++v)
    if (isCut[v])
      result.push_back(v);
  return result;
}

//===----------------------------------------------------------------------===//
// Hierarchy construction (Algorithm 5, applied recursively)
//===----------------------------------------------------------------------===//

llvm::StringRef remat::hierarchyKindName(HierarchyKind kind) {
  switch (kind) {
  case HierarchyKind::Op:
    return "op";
  case HierarchyKind::Linear:
    return "linear";
  case HierarchyKind::Branched:
    return "branched";
  case HierarchyKind::NonBranched:
    return "non-branched";
  }
  return "?";
}

namespace {

constexpr unsigned kNone = std::numeric_limits<unsigned>::max();

/// Builds the hierarchy top-down with an explicit work list (nesting can be as
/// deep as the graph). Each task is a close set s_ij whose node id is already
/// allocated, so that children keep their order whatever the processing order.
class HierarchyBuilder {
public:
  HierarchyBuilder(const StructureGraph &graph, const DominatorTree &dom)
      : graph(graph), dom(dom), stamp(graph.numVertices(), 0),
        tag(graph.numVertices(), 0), chainStamp(graph.numVertices(), 0) {}

  std::vector<HierarchyNode> run() {
    nodes.emplace_back();
    nodes[0].kind = HierarchyKind::Linear;
    nodes[0].entry = graph.source();
    nodes[0].exit = graph.sink();
    std::vector<Vertex> all;
    all.reserve(graph.numOps());
    for (Vertex v = 1; v <= graph.numOps(); ++v)
      all.push_back(v);
    work.push_back(
        {graph.source(), graph.sink(), std::move(all), false, 0, true});
    while (!work.empty()) {
      Task task = std::move(work.back());
      work.pop_back();
      process(task);
    }
    return std::move(nodes);
  }

private:
  struct Task {
    Vertex entry, exit;
    /// The close set's vertices, in topological order.
    std::vector<Vertex> vertices;
    bool directEdge;
    int node;
    bool isRoot;
  };

  int newNode(HierarchyKind kind, Vertex entry, Vertex exit, int parent) {
    nodes.emplace_back();
    HierarchyNode &node = nodes.back();
    node.kind = kind;
    node.entry = entry;
    node.exit = exit;
    node.parent = parent;
    node.depth = nodes[parent].depth + 1;
    int id = static_cast<int>(nodes.size() - 1);
    nodes[parent].children.push_back(id);
    return id;
  }

  int addLeaf(Vertex v, int parent) {
    return newNode(HierarchyKind::Op, v, v, parent);
  }

  /// A child close set s_ij of `parent` with at least one vertex; what it
  /// becomes (linear, branched, non-branched, a single op) is decided when its
  /// task runs.
  void addCloseSet(Vertex entry, Vertex exit, std::vector<Vertex> vertices,
                   bool directEdge, int parent) {
    assert(!vertices.empty());
    int id = newNode(HierarchyKind::Linear, entry, exit, parent);
    nodes[id].directEdge = directEdge;
    work.push_back({entry, exit, std::move(vertices), directEdge, id, false});
  }

  void process(Task &task);
  void processLinear(Task &task, const std::vector<Vertex> &chain);
  void processBranched(Task &task, std::vector<std::vector<Vertex>> components);
  void processNonBranched(Task &task);
  std::vector<std::vector<Vertex>> components(const Task &task);

  bool inTask(Vertex v) const { return stamp[v] == currentStamp; }

  const StructureGraph &graph;
  const DominatorTree &dom;
  std::vector<HierarchyNode> nodes;
  std::vector<Task> work;
  /// Membership of the current task's vertices (stamp == currentStamp).
  std::vector<unsigned> stamp;
  unsigned currentStamp = 0;
  /// Scratch per vertex, valid during one task: segment / local index / DSU.
  std::vector<unsigned> tag;
  std::vector<unsigned> chainStamp;
};

void HierarchyBuilder::process(Task &task) {
  ++currentStamp;
  for (Vertex v : task.vertices)
    stamp[v] = currentStamp;
  if (task.vertices.empty()) {
    // Only the root can be empty (a graph without forward op).
    nodes[task.node].kind = HierarchyKind::Linear;
    return;
  }

  // Definition 3 / Algorithm 2 through dominators: the splitting vertices of
  // s_ij are the dominators, strictly below v_i, of every predecessor of v_j
  // inside s_ij. The edge v_i -> v_j, when the close set includes it, avoids
  // them all: then there is none.
  std::vector<Vertex> chain;
  if (!task.directEdge) {
    Vertex lowest = kNone;
    for (Vertex p : graph.preds(task.exit))
      if (inTask(p))
        lowest = lowest == kNone ? p : dom.lca(lowest, p);
    assert(lowest != kNone && "a close set reaches its exit");
    for (Vertex v = lowest; v != task.entry; v = dom.idom(v)) {
      assert(inTask(v) && "dominators inside a close set stay inside");
      chain.push_back(v);
    }
    std::reverse(chain.begin(), chain.end());
  }
  if (!chain.empty())
    return processLinear(task, chain);

  // No splitting vertex: branched (Definition 4, Algorithm 3) or not
  // (Definition 5).
  std::vector<std::vector<Vertex>> parts = components(task);
  if (task.directEdge || parts.size() >= 2)
    return processBranched(task, std::move(parts));
  processNonBranched(task);
}

/// Theorem 3: s_ij = s_i1 + s_12 + ... + s_nj + {v_1..v_n}. A vertex belongs
/// to the segment that follows the deepest splitting vertex dominating it
/// (segment 0 when none does).
void HierarchyBuilder::processLinear(Task &task,
                                     const std::vector<Vertex> &chain) {
  HierarchyNode &node = nodes[task.node];
  unsigned m = chain.size();
  if (!task.isRoot && m == 1 && task.vertices.size() == 1) {
    // A close set of one op: the op itself.
    node.kind = HierarchyKind::Op;
    node.entry = node.exit = chain[0];
    node.directEdge = false;
    return;
  }
  node.kind = HierarchyKind::Linear;
  node.splittingVertices = chain;
  for (unsigned k = 0; k < m; ++k) {
    chainStamp[chain[k]] = currentStamp;
    tag[chain[k]] = k + 1;
  }
  std::vector<std::vector<Vertex>> segments(m + 1);
  for (Vertex v : task.vertices) {
    if (chainStamp[v] == currentStamp)
      continue;
    Vertex idom = dom.idom(v);
    // Topological order: idom(v), in s_ij or v_i, was tagged before v.
    tag[v] = idom == task.entry ? 0 : tag[idom];
    segments[tag[v]].push_back(v);
  }
  int id = task.node;
  for (unsigned k = 0; k <= m; ++k) {
    Vertex from = k == 0 ? task.entry : chain[k - 1];
    Vertex to = k == m ? task.exit : chain[k];
    if (!segments[k].empty())
      addCloseSet(from, to, std::move(segments[k]), graph.hasEdge(from, to),
                  id);
    if (k < m)
      addLeaf(chain[k], id);
  }
}

/// Connected components of s_ij once v_i and v_j are removed, each in
/// topological order, ordered by their first vertex.
std::vector<std::vector<Vertex>>
HierarchyBuilder::components(const Task &task) {
  // Union-find over the task's vertices, parents stored in `tag`.
  for (Vertex v : task.vertices)
    tag[v] = v;
  auto find = [&](Vertex v) {
    while (tag[v] != v) {
      tag[v] = tag[tag[v]];
      v = tag[v];
    }
    return v;
  };
  for (Vertex u : task.vertices)
    for (Vertex w : graph.succs(u))
      if (inTask(w)) {
        Vertex a = find(u), b = find(w);
        if (a != b)
          tag[std::max(a, b)] = std::min(a, b);
      }
  // Roots are the smallest vertex of their component: ordered by first vertex.
  std::vector<std::vector<Vertex>> parts;
  llvm::DenseMap<Vertex, unsigned> index;
  for (Vertex v : task.vertices) {
    Vertex root = find(v);
    auto [it, inserted] = index.try_emplace(root, parts.size());
    if (inserted)
      parts.emplace_back();
    parts[it->second].push_back(v);
  }
  return parts;
}

/// Definition 7: the maximal split of a branched close set is its branches,
/// each non-branched; the edge v_i -> v_j, if included, is a branch without
/// vertex (kept as `directEdge`).
void HierarchyBuilder::processBranched(Task &task,
                                       std::vector<std::vector<Vertex>> parts) {
  nodes[task.node].kind = HierarchyKind::Branched;
  nodes[task.node].directEdge = task.directEdge;
  for (std::vector<Vertex> &part : parts)
    addCloseSet(task.entry, task.exit, std::move(part), false, task.node);
}

/// Definition 6 / Theorems 4-5: the maximal split of a non-branched close set
/// without splitting vertex, through the separation pairs of
/// H = [s_ij] + edge {v_i, v_j} (see the file header). O(N (N + M)) for N
/// vertices and M edges of [s_ij].
void HierarchyBuilder::processNonBranched(Task &task) {
  nodes[task.node].kind = HierarchyKind::NonBranched;
  const std::vector<Vertex> &s = task.vertices;
  LLVM_DEBUG(llvm::dbgs() << "structure: non-branched close set of " << s.size()
                          << " vertices between " << task.entry << " and "
                          << task.exit
                          << ": maximal split by separation pairs\n");
  unsigned n = s.size() + 2;
  unsigned last = n - 1;
  // Local indices: v_i = 0, s in topological order, v_j = n - 1, so that a
  // smaller local index is never a descendant of a larger one.
  std::vector<Vertex> local(n);
  local[0] = task.entry;
  local[last] = task.exit;
  for (unsigned k = 0; k < s.size(); ++k) {
    local[k + 1] = s[k];
    tag[s[k]] = k + 1;
  }
  auto localOf = [&](Vertex v) -> unsigned {
    if (v == task.entry)
      return 0;
    if (v == task.exit)
      return last;
    return inTask(v) ? tag[v] : kNone;
  };
  // Undirected adjacency of H in CSR form.
  std::vector<std::pair<unsigned, unsigned>> edges;
  for (unsigned a = 0; a < last; ++a)
    for (Vertex w : graph.succs(local[a])) {
      unsigned b = localOf(w);
      if (b != kNone && !(a == 0 && b == last))
        edges.emplace_back(a, b);
    }
  std::vector<std::pair<unsigned, unsigned>> realEdges = edges;
  edges.emplace_back(0, last); // the virtual edge v_i - v_j
  std::vector<unsigned> begin(n + 1, 0);
  for (auto [a, b] : edges) {
    ++begin[a + 1];
    ++begin[b + 1];
  }
  for (unsigned v = 0; v < n; ++v)
    begin[v + 1] += begin[v];
  std::vector<unsigned> adjacency(begin[n]);
  {
    std::vector<unsigned> fill(begin.begin(), begin.end() - 1);
    for (auto [a, b] : edges) {
      adjacency[fill[a]++] = b;
      adjacency[fill[b]++] = a;
    }
  }

  // best[v]: size and separation pair of the largest close set containing v.
  std::vector<unsigned> bestSize(n, 0);
  std::vector<std::pair<unsigned, unsigned>> bestPair(n, {kNone, kNone});
  std::vector<unsigned> disc(n), low(n), parent(n), size(n), unionSize(n),
      outer(n);
  std::vector<unsigned> preorder;
  preorder.reserve(n);
  std::vector<std::pair<unsigned, unsigned>> stack;
  // Entries worth trying. A vertex x with one predecessor u and one
  // successor inside [s_ij] lies on a chain: a close set s_xq grows into s_uq
  // by adding x, which stays proper unless {u, q} = {v_i, v_j}. So no maximal
  // member starts at such an x unless u = v_i. In a dense block this leaves
  // the concatenations and the layers' outputs, not the layers' chains.
  std::vector<unsigned> inDegree(n, 0), outDegree(n, 0), onlyPred(n, kNone);
  for (auto [a, b] : realEdges) {
    ++inDegree[b];
    ++outDegree[a];
    onlyPred[b] = a;
  }
  for (unsigned x = 0; x < last; ++x) {
    if (x != 0 && inDegree[x] == 1 && outDegree[x] == 1 && onlyPred[x] != 0)
      continue;
    // DFS of H - x from v_i (from v_j when x = v_i). Every maximal member is
    // found from its entry's side at least.
    unsigned root = x == 0 ? last : 0;
    std::fill(disc.begin(), disc.end(), kNone);
    preorder.clear();
    unsigned clock = 0;
    disc[root] = low[root] = clock++;
    parent[root] = kNone;
    preorder.push_back(root);
    stack.assign(1, {root, begin[root]});
    while (!stack.empty()) {
      auto &[v, next] = stack.back();
      if (next < begin[v + 1]) {
        unsigned w = adjacency[next++];
        if (w == x)
          continue;
        if (disc[w] == kNone) {
          parent[w] = v;
          disc[w] = low[w] = clock++;
          preorder.push_back(w);
          stack.emplace_back(w, begin[w]);
        } else {
          low[v] = std::min(low[v], disc[w]);
        }
        continue;
      }
      unsigned done = v;
      stack.pop_back();
      if (done != root)
        low[parent[done]] = std::min(low[parent[done]], low[done]);
    }
    assert(preorder.size() == n - 1 && "H is biconnected");
    for (unsigned v : preorder)
      size[v] = 1;
    for (unsigned k = preorder.size(); k-- > 1;)
      size[parent[preorder[k]]] += size[preorder[k]];
    // A child subtree c of a non-root y with low(c) >= disc(y) is a
    // component of H - {x, y} without the root, hence without v_i and v_j
    // (the virtual edge ties them; one of them is the root or x). Components
    // cut off by the root itself need no case of their own: the pair
    // {x, root} is found again from the root's side, with x as a non-root
    // articulation point of H - root.
    auto separated = [&](unsigned c) {
      unsigned y = parent[c];
      return y != root && low[c] >= disc[y];
    };
    for (unsigned v : preorder)
      unionSize[v] = 0;
    for (unsigned k = 1; k < preorder.size(); ++k)
      if (separated(preorder[k]))
        unionSize[parent[preorder[k]]] += size[preorder[k]];
    // The largest close set at pair {x, y} that contains v is the union for
    // the separating ancestor y closest to the root.
    outer[root] = kNone;
    for (unsigned k = 1; k < preorder.size(); ++k) {
      unsigned v = preorder[k], y = parent[v];
      outer[v] = outer[y] != kNone ? outer[y] : (separated(v) ? y : kNone);
      if (outer[v] != kNone && unionSize[outer[v]] > bestSize[v]) {
        bestSize[v] = unionSize[outer[v]];
        bestPair[v] = {std::min(x, outer[v]), std::max(x, outer[v])};
      }
    }
  }

  // Members: vertices grouped by their largest close set, which is unique
  // (two maximal close sets that overlap would make a splitting vertex,
  // Theorems 1-2).
  std::map<std::pair<unsigned, unsigned>, std::vector<Vertex>> members;
  std::vector<bool> hidden(n, false);
  for (unsigned v = 1; v < last; ++v)
    if (bestSize[v] > 0) {
      members[bestPair[v]].push_back(local[v]);
      hidden[v] = true;
    }
  HierarchyNode &self = nodes[task.node];
  for (auto &[pair, vertices] : members)
    self.split.push_back({local[pair.first], local[pair.second], -1});
  for (auto [a, b] : realEdges)
    if (!hidden[a] && !hidden[b] && !members.count({a, b}))
      self.split.push_back({local[a], local[b], -1});
  llvm::sort(self.split, [](const SplitMember &l, const SplitMember &r) {
    return std::tie(l.entry, l.exit) < std::tie(r.entry, r.exit);
  });

  // Children in a topological order: a vertex x before the members that
  // start at x; a member s_pq right after p (nothing between p and q outside
  // it can depend on it or feed it).
  struct Item {
    Vertex key;
    unsigned rank;
    Vertex exit;
    std::vector<Vertex> *vertices;
  };
  std::vector<Item> items;
  for (unsigned v = 1; v < last; ++v)
    if (!hidden[v])
      items.push_back({local[v], 0, local[v], nullptr});
  for (auto &[pair, vertices] : members)
    items.push_back({local[pair.first], 1, local[pair.second], &vertices});
  llvm::stable_sort(items, [](const Item &l, const Item &r) {
    return std::tie(l.key, l.rank, l.exit) < std::tie(r.key, r.rank, r.exit);
  });
  std::map<std::pair<Vertex, Vertex>, unsigned> splitIndex;
  for (unsigned k = 0; k < self.split.size(); ++k)
    splitIndex[{self.split[k].entry, self.split[k].exit}] = k;
  int id = task.node;
  for (Item &item : items) {
    if (!item.vertices) {
      addLeaf(item.key, id);
      continue;
    }
    int child = static_cast<int>(nodes.size());
    addCloseSet(item.key, item.exit, std::move(*item.vertices),
                graph.hasEdge(item.key, item.exit), id);
    nodes[id].split[splitIndex.at({item.key, item.exit})].node = child;
  }
}

} // namespace

Hierarchy Hierarchy::build(const StructureGraph &graph,
                           const DominatorTree &dominators) {
  Hierarchy h;
  h.nodes = HierarchyBuilder(graph, dominators).run();
  // Ranges of the leaf order, bytes and costs by one DFS of the tree.
  h.leaves.assign(graph.numVertices(), -1);
  h.leafOrder.reserve(graph.numOps());
  std::vector<std::pair<int, unsigned>> stack{{0, 0}};
  h.nodes[0].begin = 0;
  while (!stack.empty()) {
    auto &[id, next] = stack.back();
    HierarchyNode &node = h.nodes[id];
    if (node.kind == HierarchyKind::Op) {
      node.begin = h.leafOrder.size();
      h.leafOrder.push_back(node.entry);
      h.leaves[node.entry] = id;
      node.end = h.leafOrder.size();
      node.bytes = graph.bytes(node.entry);
      node.cost = graph.cost(node.entry);
      stack.pop_back();
      continue;
    }
    if (next == 0)
      node.begin = h.leafOrder.size();
    if (next < node.children.size()) {
      int child = node.children[next++];
      stack.emplace_back(child, 0);
      continue;
    }
    node.end = h.leafOrder.size();
    node.bytes = 0;
    node.cost = 0;
    for (int child : node.children) {
      node.bytes += h.nodes[child].bytes;
      node.cost += h.nodes[child].cost;
    }
    stack.pop_back();
  }
  assert(h.leafOrder.size() == graph.numOps() && "every op in one leaf");
  return h;
}

std::vector<int> Hierarchy::topLevelStages() const {
  if (nodes[0].kind == HierarchyKind::Linear)
    return nodes[0].children;
  return {0};
}

HierarchySummary Hierarchy::summary() const {
  HierarchySummary summary;
  for (const HierarchyNode &node : nodes) {
    switch (node.kind) {
    case HierarchyKind::Op:
      ++summary.ops;
      summary.depth = std::max(summary.depth, node.depth);
      break;
    case HierarchyKind::Linear:
      ++summary.linear;
      break;
    case HierarchyKind::Branched:
      ++summary.branched;
      break;
    case HierarchyKind::NonBranched:
      ++summary.nonBranched;
      summary.splitMembers += node.split.size();
      break;
    }
  }
  return summary;
}

//===----------------------------------------------------------------------===//
// StructureAnalysis
//===----------------------------------------------------------------------===//

StructureAnalysis::StructureAnalysis(const TrainingGraph &trainingGraph)
    : StructureAnalysis(StructureGraph(trainingGraph)) {}

StructureAnalysis::StructureAnalysis(StructureGraph structureGraph)
    : graph(std::move(structureGraph)), dominators(graph, false),
      articulationPoints(findArticulationPoints(graph)),
      hierarchy(Hierarchy::build(graph, dominators)) {
  LLVM_DEBUG({
    HierarchySummary s = hierarchy.summary();
    llvm::dbgs() << "structure: " << graph.numOps() << " forward ops, "
                 << articulationPoints.size() << " articulation points, "
                 << splittingVertices().size()
                 << " splitting vertices; hierarchy of " << hierarchy.size()
                 << " nodes (" << s.linear << " linear, " << s.branched
                 << " branched, " << s.nonBranched << " non-branched with "
                 << s.splitMembers << " split members), depth " << s.depth
                 << ", " << hierarchy.topLevelStages().size()
                 << " top-level stages\n";
  });
}

std::vector<Vertex> StructureAnalysis::splittingVertices() const {
  std::vector<Vertex> chain;
  for (Vertex v = dominators.idom(graph.sink()); v != graph.source();
       v = dominators.idom(v))
    chain.push_back(v);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

llvm::json::Value StructureAnalysis::summaryJSON() const {
  HierarchySummary s = hierarchy.summary();
  return llvm::json::Object{
      {"ops", static_cast<int64_t>(s.ops)},
      {"linear", static_cast<int64_t>(s.linear)},
      {"branched", static_cast<int64_t>(s.branched)},
      {"non_branched", static_cast<int64_t>(s.nonBranched)},
      {"depth", static_cast<int64_t>(s.depth)},
      {"split_members", static_cast<int64_t>(s.splitMembers)},
      {"articulation_points", static_cast<int64_t>(articulationPoints.size())},
      {"splitting_vertices", static_cast<int64_t>(splittingVertices().size())}};
}

void StructureAnalysis::printHierarchy(
    llvm::raw_ostream &os, llvm::function_ref<std::string(Vertex)> label,
    unsigned indent, llvm::function_ref<std::string(Vertex)> leafLabel) const {
  auto name = [&](Vertex v) -> std::string {
    if (v == graph.source())
      return "source";
    if (v == graph.sink())
      return "sink";
    return label(v);
  };
  std::vector<int> stack{hierarchy.root()};
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    const HierarchyNode &node = hierarchy.node(id);
    os.indent(indent + 2 * node.depth) << hierarchyKindName(node.kind) << " ";
    if (node.kind == HierarchyKind::Op) {
      os << (leafLabel ? leafLabel(node.entry) : name(node.entry));
    } else {
      os << name(node.entry) << " -> " << name(node.exit);
      if (node.directEdge)
        os << " +edge";
      os << " hides=" << node.numVertices();
      if (node.kind == HierarchyKind::NonBranched)
        os << " split=" << node.split.size();
    }
    os << " bytes=" << node.bytes << " cost=" << llvm::format("%g", node.cost)
       << "\n";
    for (int child : llvm::reverse(node.children))
      stack.push_back(child);
  }
}
