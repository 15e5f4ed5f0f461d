//===- Reorder.h - An operator order chosen for memory -----------*- C++ -*-===//
//
// Issue 22, item 3: reorder the nodes of a training graph within their
// dependencies so that computing each node once, with every value freed
// after its last use (insertEarlyFrees), peaks lower than the program's own
// order, without recomputing anything. This is the problem of Serenity
// (B. H. Ahn et al., "Ordering Chaos: Memory-Aware Scheduling of Irregularly
// Wired Neural Networks for Edge Devices", MLSys 2020) and of OLLA's
// scheduling half (B. Steiner et al., "OLLA: Optimizing the Lifetime and
// Location of Arrays to Reduce the Memory Usage of Neural Networks", 2022).
//
// Exact on small graphs: Serenity's dynamic program over the sets of
// scheduled nodes (§3.2: the memory after a set is scheduled depends on the
// set only, so the least peak reaching a set is a function of the set), with
// its budget pruning (§3.3: states whose peak reaches the best known order's
// are dropped). On large graphs: a beam search over the same states (the
// best few sets of each size) followed by local moves of single nodes across
// the peak. The order is judged by the simulator's memory model, which this
// file reproduces in O(nodes + edges) (orderPeak) and the tests check
// against simulate().
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SOLVERS_REORDER_H
#define REMAT_SOLVERS_REORDER_H

#include "remat/Solvers/Solver.h"

namespace remat {

struct ReorderOptions {
  /// Wall-clock limit of the whole search (seconds); 0: none (the exact
  /// program is still bounded by maxExactStates, the rest is polynomial).
  double timeLimitSeconds = 10;
  /// The exact dynamic program runs on graphs of at most this many nodes
  /// and gives up (keeping the heuristic's order) past maxExactStates sets.
  unsigned maxExactNodes = 400;
  uint64_t maxExactStates = uint64_t(1) << 20;
  /// Sets of each size the beam search keeps.
  unsigned beamWidth = 32;
  /// Local moves after the beam search.
  bool localSearch = true;
};

struct ReorderResult {
  /// A topological order of every node of the graph.
  std::vector<NodeId> order;
  /// orderPeak of `order` (= the simulated peak of insertEarlyFrees).
  uint64_t peakBytes = 0;
  /// orderPeak of the program's order (node ids).
  uint64_t programPeakBytes = 0;
  /// A proven lower bound on the peak of every order that computes each
  /// node once: the largest bytes a node holds while it runs, the step
  /// outputs (all resident at the end), or the optimum when proven.
  uint64_t lowerBoundBytes = 0;
  /// Whether `order` is proven to have the least peak of all orders that
  /// compute each node once (the exact program finished, or the peak meets
  /// the lower bound).
  bool optimal = false;
  /// Which method found `order`: "program" (the node ids), "phased"
  /// (forward nodes, then backward), "beam", "local", "exact".
  std::string method;
  /// States the exact program visited (0 when it did not run).
  uint64_t exactStates = 0;
  /// Whether the exact program ran to the end.
  bool exactFinished = false;
  double seconds = 0;

  llvm::json::Value toJSON() const;
};

/// True if `order` lists every node of `graph` once, each after the
/// producers of its inputs.
bool isTopologicalOrder(const TrainingGraph &graph,
                        const std::vector<NodeId> &order);

/// The peak of computing the nodes once in `order` (a topological order)
/// with every value freed after its last use: exactly
/// simulate(graph, insertEarlyFrees(graph, order)).peakBytes, in
/// O(nodes + edges).
uint64_t orderPeak(const TrainingGraph &graph, const std::vector<NodeId> &order);

/// The order of every node with the least peak this search finds (see the
/// file comment); never worse than the program's order or the
/// forward-then-backward order.
ReorderResult reorderForMemory(const TrainingGraph &graph,
                               const ReorderOptions &options = {});

/// A graph whose node ids follow another topological order: node i of
/// `graph` is node newToOld[i] of the original (same name, op, cost, phase,
/// inputs, outputs, workspace, reuses); value ids are unchanged (only the
/// producers and the users lists follow the new node ids).
struct RenumberedGraph {
  TrainingGraph graph;
  std::vector<NodeId> newToOld;
  std::vector<NodeId> oldToNew;
};

/// Renumbers `graph` into `order` (which must be a topological order: an
/// error otherwise).
llvm::Expected<RenumberedGraph>
renumberGraph(const TrainingGraph &graph, const std::vector<NodeId> &order);

/// A schedule of the renumbered graph as a schedule of the original one
/// (Compute ids mapped back; Free ids are value ids, unchanged): it
/// simulates the same on both.
Schedule mapScheduleToOriginal(const RenumberedGraph &renumbered,
                               const Schedule &schedule);

/// The `reorder` solver: every node computed once in reorderForMemory's
/// order (options.timeLimitSeconds bounds the search), each value freed
/// after its last use.
Schedule solveReorder(const TrainingGraph &graph, const SolverOptions &options);

/// Runs `solver` on the graph renumbered into reorderForMemory's order (so
/// that the solvers that read the node order, such as the chain solvers'
/// linearisation and checkpoint-all's program order, start from it), maps
/// its schedule back to `graph`'s ids and judges it there (runSolver's
/// checks: a plan the simulator rejects is an error). The reordering's time
/// comes out of options.timeLimitSeconds (at most a fifth of it when
/// limited). The result names the solver unchanged; its solveSeconds
/// include the reordering.
llvm::Expected<SolverResult>
solveOnReorderedGraph(const TrainingGraph &graph, const SolverInfo &solver,
                      const SolverOptions &options);

} // namespace remat

#endif // REMAT_SOLVERS_REORDER_H
