//===- Feng.cpp - Feng & Huang's linear solver ----------------------------===//
//
// Feng & Huang, "Cutting Down Training Memory by Re-forwarding"
// (seeds/001_f889ea3d8317dded.txt), §3.2 and Algorithm 1: the linear
// optimisation graph v_0 .. v_n (vertices are tensors, l(v_i) their memory),
// the objective of Eq. 1
//
//     min_{V_R}  sum_{v in V_R} l(v) + max_j l(v_j, v_{j+1}),
//
// with l(v_i, v_j) = sum_{t=i+1}^{j-1} l(v_t) the re-forward cost between two
// consecutive stored vertices; v_0 (s) and v_n (t) are always stored. For a
// fixed max term C the problem is a shortest path from s to t in the
// accessibility graph G^A (an edge v_i -> v_j iff l(v_i, v_j) <= C), and every
// l(v_i, v_j) is a candidate C. The model is Hong et al.'s Eq. 6 (seeds/000
// §2.3 says so), so fengLinear and hongCheckpointSelection reach the same
// optimum by different searches.
//
// The arbitrary-graph solver (§4.2, Algorithm 6) runs the same search on the
// hierarchy of close sets that the structure analysis builds (Algorithms 2-5,
// include/remat/Structure/Structure.h).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Chain.h"
#include "remat/Solvers/HierarchySolvers.h"
#include "remat/Support/Debug.h"

#include <algorithm>
#include <deque>
#include <limits>

using namespace remat;

// -debug-only=remat-feng: the candidate max terms C (or m) the search
// visits, with each one's objective (stored bytes + max term), the optimum
// and the stored vertices.
#define DEBUG_TYPE "remat-feng"

namespace {

/// The shortest s-t path in G^A for the max term C, where a path's length is
/// the sum of l(v) over its vertices (s and t included).
struct PathResult {
  uint64_t length = 0;
  /// The actual max term B of the path: its largest l(v_i, v_j).
  uint64_t maxTerm = 0;
  std::vector<size_t> vertices; // s excluded, t included
};

PathResult shortestAccessiblePath(const std::vector<uint64_t> &l,
                                  const std::vector<uint64_t> &prefix,
                                  uint64_t C) {
  const size_t n = l.size() - 1;
  // l(v_i, v_j) = prefix[j - 1] - prefix[i] shrinks as i grows, so the
  // in-edges of v_j in G^A come from a contiguous range of vertices
  // [lowest(j), j - 1], and lowest(j) grows with j. The DAG shortest path
  // (vertices in topological order) is then a sliding-window minimum: O(n)
  // per candidate instead of one relaxation per edge of G^A (O(n^2)).
  std::vector<uint64_t> dist(n + 1);
  std::vector<size_t> pred(n + 1, 0);
  dist[0] = l[0];
  std::deque<size_t> window; // increasing dist, increasing index
  size_t lowest = 0;
  for (size_t j = 1; j <= n; ++j) {
    // v_{j-1} -> v_j always exists: l(v_{j-1}, v_j) = 0 <= C.
    while (!window.empty() && dist[window.back()] >= dist[j - 1])
      window.pop_back();
    window.push_back(j - 1);
    while (prefix[j - 1] - prefix[lowest] > C)
      ++lowest;
    while (window.front() < lowest)
      window.pop_front();
    pred[j] = window.front();
    dist[j] = l[j] + dist[pred[j]];
  }
  PathResult result;
  result.length = dist[n];
  for (size_t j = n; j > 0; j = pred[j]) {
    result.vertices.push_back(j);
    result.maxTerm = std::max(result.maxTerm, prefix[j - 1] - prefix[pred[j]]);
  }
  std::reverse(result.vertices.begin(), result.vertices.end());
  return result;
}

} // namespace

ChainSolution remat::fengLinear(const std::vector<uint64_t> &l,
                                Deadline deadline) {
  ChainSolution solution;
  const size_t n = l.size() - 1;
  if (n == 0) {
    solution.objective = l[0];
    return solution;
  }
  // prefix[t] = l(v_0) + ... + l(v_t).
  std::vector<uint64_t> prefix(n + 1);
  prefix[0] = l[0];
  for (size_t t = 1; t <= n; ++t)
    prefix[t] = prefix[t - 1] + l[t];
  auto reforward = [&](size_t i, size_t j) {
    return prefix[j - 1] - prefix[i];
  };

  // The candidate max terms are visited in decreasing order, starting from
  // the largest, l(v_0, v_n). After solving for C with an actual max term
  // B <= C, Algorithm 1 (line 7) skips every candidate in [B, C): the path
  // found stays feasible and shortest for all of them. The next candidate is
  // therefore the largest l(v_i, v_j) < B: for each i, the last j with
  // l(v_i, v_j) < B by binary search (l(v_i, .) is non-decreasing).
  uint64_t C = reforward(0, n);
  uint64_t bestObjective = std::numeric_limits<uint64_t>::max();
  [[maybe_unused]] size_t visited = 0;
  for (;;) {
    PathResult path = shortestAccessiblePath(l, prefix, C);
    ++visited;
    uint64_t objective = path.length + path.maxTerm; // line 5
    if (objective < bestObjective) {                 // line 6
      bestObjective = objective;
      solution.checkpoints = path.vertices;
    }
    uint64_t B = path.maxTerm;
    if (B == 0)
      break; // no candidate below 0
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      solution.timedOut = true;
      break;
    }
    uint64_t next = 0;
    for (size_t i = 0; i < n; ++i) {
      // Largest j in (i, n] with prefix[j - 1] - prefix[i] < B; j = i + 1
      // always qualifies (l = 0 < B).
      auto first = prefix.begin() + i, last = prefix.begin() + n;
      auto it = std::lower_bound(first, last, prefix[i] + B);
      size_t j = static_cast<size_t>(it - prefix.begin()); // j - 1 = it - 1
      next = std::max(next, reforward(i, j));
    }
    C = next;
  }
  solution.objective = bestObjective;
  LLVM_DEBUG(llvm::dbgs() << "feng-linear: " << n << " stages, " << visited
                          << " max terms C visited"
                          << (solution.timedOut ? " (time limit reached)" : "")
                          << "; optimum " << bestObjective << " bytes with "
                          << solution.checkpoints.size() << " stored "
                          << debugList(solution.checkpoints) << "\n");
  return solution;
}

llvm::Expected<Schedule> remat::solveFengLinear(const TrainingGraph &graph,
                                                const SolverOptions &options) {
  // Minimises peak memory in its model and ignores the budget (issue 4's
  // min-memory mode); runSolver reports whether the plan meets a budget.
  Chain chain = linearize(graph);
  ChainSolution solution = fengLinear(chain.sizes, deadlineFrom(options));
  return scheduleFromChainCheckpoints(graph, chain, solution.checkpoints);
}

//===----------------------------------------------------------------------===//
// Arbitrary optimisation graphs (Algorithm 6)
//===----------------------------------------------------------------------===//

namespace {

/// One linear level of the hierarchy as the linear solver sees it: the
/// vertices V_0 = v_i, V_1..V_k (the splitting vertices), V_{k+1} = v_j, and
/// between V_t and V_{t+1} the segment s_{V_t V_{t+1}} hidden as an edge
/// (Algorithm 5, line 3), whose cost is the memory of the vertices it hides.
struct LinearLevel {
  std::vector<Vertex> vertices;
  /// bytes of V_t (0 for V_0 and V_{k+1}: the level above accounts for them).
  std::vector<uint64_t> vertexBytes;
  /// The hierarchy node of segment t (between V_t and V_{t+1}), or -1.
  std::vector<int> segment;
  std::vector<uint64_t> segmentBytes;
  /// Prefix sums of the unexpanded level: l(V_i, V_j) = reach[j] - base[i]
  /// with base[i] = sum_{t<i} segmentBytes[t] + sum_{u<=i} vertexBytes[u] and
  /// reach[j] = base[j - 1] + segmentBytes[j - 1].
  std::vector<uint64_t> base, reach;
};

LinearLevel makeLevel(const StructureAnalysis &analysis, int id) {
  const Hierarchy &hierarchy = analysis.hierarchy;
  const HierarchyNode &node = hierarchy.node(id);
  LinearLevel level;
  const std::vector<Vertex> &split = node.splittingVertices;
  const size_t k = split.size();
  level.vertices.push_back(node.entry);
  level.vertices.insert(level.vertices.end(), split.begin(), split.end());
  level.vertices.push_back(node.exit);
  level.vertexBytes.assign(k + 2, 0);
  for (size_t t = 1; t <= k; ++t)
    level.vertexBytes[t] = analysis.graph.bytes(split[t - 1]);
  level.segment.assign(k + 1, -1);
  level.segmentBytes.assign(k + 1, 0);
  // Children alternate: segment (if not empty), splitting vertex, segment...
  size_t next = 0;
  for (int child : node.children) {
    const HierarchyNode &c = hierarchy.node(child);
    if (c.isLeaf() && next < k && c.entry == split[next]) {
      ++next;
      continue;
    }
    level.segment[next] = child;
    level.segmentBytes[next] = c.bytes;
  }
  level.base.assign(k + 2, 0);
  level.reach.assign(k + 2, 0);
  for (size_t t = 0; t < k + 2; ++t) {
    if (t > 0)
      level.reach[t] = level.base[t - 1] + level.segmentBytes[t - 1];
    level.base[t] = level.reach[t] + level.vertexBytes[t];
  }
  return level;
}

class ArbitrarySolver {
public:
  explicit ArbitrarySolver(const StructureAnalysis &analysis)
      : analysis(analysis), hierarchy(analysis.hierarchy),
        levels(hierarchy.size()) {
    for (int id = 0, e = static_cast<int>(hierarchy.size()); id < e; ++id) {
      const HierarchyNode &node = hierarchy.node(id);
      nodeBytes.push_back(node.bytes);
      if (node.kind == HierarchyKind::Linear)
        levels[id] = makeLevel(analysis, id);
    }
    std::sort(nodeBytes.begin(), nodeBytes.end());
  }

  /// One iteration of Algorithm 6's loop (lines 4-10) for max term m.
  HierarchySolution solveAt(uint64_t m) const;

  /// The largest candidate max term below `bound` (Algorithm 6, line 1: the
  /// costs of the close sets: every hierarchy node and every run of a linear
  /// level between two of its vertices), or nullopt.
  std::optional<uint64_t> nextCandidate(uint64_t bound) const {
    std::optional<uint64_t> best;
    auto offer = [&](uint64_t value) {
      if (value < bound && (!best || value > *best))
        best = value;
    };
    auto it = std::lower_bound(nodeBytes.begin(), nodeBytes.end(), bound);
    if (it != nodeBytes.begin())
      offer(*std::prev(it));
    for (const LinearLevel &level : levels) {
      if (level.vertices.empty())
        continue;
      const size_t last = level.vertices.size() - 1;
      for (size_t i = 0; i < last; ++i) {
        // Largest j with reach[j] - base[i] < bound (reach is
        // non-decreasing).
        if (level.reach[i + 1] - level.base[i] >= bound)
          continue;
        uint64_t limit = level.base[i] + bound;
        auto first = level.reach.begin() + i + 1;
        auto end = level.reach.end();
        auto j = std::lower_bound(first, end, limit) - 1;
        offer(*j - level.base[i]);
      }
    }
    return best;
  }

private:
  void solveLinear(int id, uint64_t m, std::vector<int> &work,
                   HierarchySolution &out) const;

  const StructureAnalysis &analysis;
  const Hierarchy &hierarchy;
  std::vector<LinearLevel> levels;
  std::vector<uint64_t> nodeBytes;
};

void ArbitrarySolver::solveLinear(int id, uint64_t m, std::vector<int> &work,
                                  HierarchySolution &out) const {
  const LinearLevel &level = levels[id];
  const size_t last = level.vertices.size() - 1;
  // Algorithm 6, lines 5-6: a segment whose cost exceeds m is expanded and
  // solved at the next level; its two ends must then be stored, so they cut
  // this level into linear runs, each solved by the linear solver at max
  // term m. An expanded segment costs nothing at this level.
  std::vector<char> forced(last + 1, 0);
  forced[0] = forced[last] = 1;
  std::vector<uint64_t> segment(level.segmentBytes);
  for (size_t t = 0; t < last; ++t)
    if (level.segment[t] >= 0 && level.segmentBytes[t] > m) {
      forced[t] = forced[t + 1] = 1;
      segment[t] = 0;
      work.push_back(level.segment[t]);
    }
  std::vector<uint64_t> base(last + 1), reach(last + 1, 0);
  for (size_t t = 0; t <= last; ++t) {
    if (t > 0)
      reach[t] = base[t - 1] + segment[t - 1];
    base[t] = reach[t] + level.vertexBytes[t];
  }
  // Shortest path from V_0 to V_last in the accessibility graph, as in
  // shortestAccessiblePath; a forced vertex cannot be jumped over.
  std::vector<uint64_t> dist(last + 1, 0);
  std::vector<size_t> pred(last + 1, 0);
  std::deque<size_t> window;
  size_t lowest = 0;
  for (size_t j = 1; j <= last; ++j) {
    size_t i = j - 1;
    if (forced[i]) {
      window.clear();
      lowest = i;
    }
    while (!window.empty() && dist[window.back()] >= dist[i])
      window.pop_back();
    window.push_back(i);
    while (reach[j] - base[lowest] > m)
      ++lowest;
    while (window.front() < lowest)
      window.pop_front();
    pred[j] = window.front();
    dist[j] = level.vertexBytes[j] + dist[pred[j]];
  }
  for (size_t j = last; j > 0; j = pred[j]) {
    out.maxTerm = std::max(out.maxTerm, reach[j] - base[pred[j]]);
    if (pred[j] > 0) {
      out.stored.push_back(level.vertices[pred[j]]);
      out.storedBytes += level.vertexBytes[pred[j]];
    }
  }
}

HierarchySolution ArbitrarySolver::solveAt(uint64_t m) const {
  HierarchySolution out;
  // The levels to solve; an explicit work list, since the hierarchy can be
  // as deep as the graph. Every level's entry and exit are stored by the
  // level above (or are the virtual source and sink).
  std::vector<int> work = {hierarchy.root()};
  while (!work.empty()) {
    int id = work.back();
    work.pop_back();
    const HierarchyNode &node = hierarchy.node(id);
    switch (node.kind) {
    case HierarchyKind::Op:
      // An expanded single op: re-forwarding it alone would exceed m.
      out.stored.push_back(node.entry);
      out.storedBytes += node.bytes;
      break;
    case HierarchyKind::Linear:
      solveLinear(id, m, work, out);
      break;
    case HierarchyKind::Branched:
      // Lines 8-9: the branches (its maximal split, Definition 7) costing
      // more than m are expanded; the others are re-forwarded whole.
      for (int child : node.children) {
        if (hierarchy.node(child).bytes > m)
          work.push_back(child);
        else
          out.maxTerm = std::max(out.maxTerm, hierarchy.node(child).bytes);
      }
      break;
    case HierarchyKind::NonBranched: {
      // Lines 8-9 on the maximal split (Definition 6): members costing more
      // than m are expanded, the others re-forwarded whole from their entry.
      // The vertices between the members are the ends the members are
      // re-forwarded from and to, so this level stores them.
      std::vector<int> members;
      for (const SplitMember &member : node.split)
        if (member.node >= 0)
          members.push_back(member.node);
      std::sort(members.begin(), members.end());
      for (int child : node.children) {
        const HierarchyNode &c = hierarchy.node(child);
        if (!std::binary_search(members.begin(), members.end(), child)) {
          out.stored.push_back(c.entry);
          out.storedBytes += c.bytes;
        } else if (c.bytes > m) {
          work.push_back(child);
        } else {
          out.maxTerm = std::max(out.maxTerm, c.bytes);
        }
      }
      break;
    }
    }
  }
  std::sort(out.stored.begin(), out.stored.end());
  out.objective = out.storedBytes + out.maxTerm;
  return out;
}

} // namespace

HierarchySolution remat::fengArbitraryAt(const StructureAnalysis &analysis,
                                         uint64_t m) {
  return ArbitrarySolver(analysis).solveAt(m);
}

HierarchySolution remat::fengArbitrary(const StructureAnalysis &analysis,
                                       Deadline deadline) {
  ArbitrarySolver solver(analysis);
  // Line 3: the candidate max terms in decreasing order, with Algorithm 1's
  // skip: after a solution with actual max term B at m, the candidates in
  // [B, m) give the same solution (no sub-hierarchy changes between expanded
  // and not: one that costs more than B would have been expanded, and the
  // linear levels' paths stay feasible and shortest).
  HierarchySolution best = solver.solveAt(std::numeric_limits<uint64_t>::max());
  LLVM_DEBUG(llvm::dbgs() << "feng: hierarchy of " << analysis.hierarchy.size()
                          << " nodes; m = inf: stored " << best.storedBytes
                          << " + max term " << best.maxTerm << "\n");
  std::optional<uint64_t> m = solver.nextCandidate(best.maxTerm);
  [[maybe_unused]] size_t visited = 1;
  [[maybe_unused]] std::optional<uint64_t> bestM;
  while (m) {
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      best.timedOut = true;
      LLVM_DEBUG(llvm::dbgs() << "feng: time limit reached\n");
      break;
    }
    HierarchySolution solution = solver.solveAt(*m);
    ++visited;
    if (solution.objective < best.objective)
      bestM = *m;
    if (solution.objective < best.objective)
      best = std::move(solution);
    // The next candidate lies below this solution's actual max term.
    m = solver.nextCandidate(std::min(*m, solution.maxTerm));
  }
  LLVM_DEBUG({
    llvm::dbgs() << "feng: " << visited
                 << " max terms m visited; optimum at m = ";
    if (bestM)
      llvm::dbgs() << *bestM;
    else
      llvm::dbgs() << "inf";
    llvm::dbgs() << ": stored " << best.storedBytes << " + max term "
                 << best.maxTerm << " = " << best.objective << "\n";
  });
  return best;
}

llvm::Expected<Schedule>
remat::solveFengArbitrary(const TrainingGraph &graph,
                          const SolverOptions &options) {
  // The forward graph's hierarchy (Algorithm 5, structure analysis), then
  // Algorithm 6; the stored vertices are the checkpointed forward nodes.
  StructureAnalysis analysis(graph);
  HierarchySolution solution = fengArbitrary(analysis, deadlineFrom(options));
  std::vector<bool> mask(graph.numNodes(), false);
  for (Vertex v : solution.stored)
    mask[analysis.graph.nodeId(v)] = true;
  LLVM_DEBUG({
    std::vector<std::string> names;
    for (Vertex v : solution.stored)
      names.push_back(graph.node(analysis.graph.nodeId(v)).name);
    llvm::dbgs() << "feng: optimum " << solution.objective << " bytes, "
                 << names.size() << " stored nodes " << debugList(names)
                 << "\n";
  });
  return scheduleFromCheckpoints(graph, mask);
}
