//===- ChainBaselines.cpp - Chen greedy and checkpoint_sequential ---------===//
//
// The chain baselines with a parameter, generalised to DAGs by linearization
// (seeds/003 §6.1 and appendix B.2: run the heuristic on the forward nodes in
// topological order, then recompute what the chosen checkpoints require):
//
//  - Chen et al.'s greedy with its search over the segment budget b
//    (Checkmate's "Chen et al. greedy ... with search over parameter b",
//    seeds/003 §6.1 and Table 1);
//  - PyTorch's periodic checkpoint_sequential (seeds/004 §5.3, "sequential"),
//    with its number of segments searched as rotor's evaluation does;
//
// and Checkmate's other generalisation (appendix B.1): the same heuristics
// with the articulation points of the forward graph as the only candidates
// (AP sqrt(n), AP greedy), from the structure analysis.
//
// Each candidate of the search is an execution plan that the simulator judges
// (bestChainPlan); the solver returns the cheapest plan within the budget, or
// the least-peak plan in min-memory mode or when none fits.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Chain.h"
#include "remat/Solvers/HierarchySolvers.h"
#include "remat/Support/Debug.h"

#include <algorithm>
#include <cmath>

using namespace remat;

// -debug-only=remat-chain-baselines: the parameter each heuristic searches
// (b, the number of segments) and its candidates; remat-chain says which
// candidate the simulator chose.
#define DEBUG_TYPE "remat-chain-baselines"

std::vector<size_t>
remat::chenGreedyCheckpoints(const std::vector<uint64_t> &sizes, uint64_t b) {
  // Checkmate's solve_chen_greedy on G_lin: temp accumulates the sizes since
  // the last checkpoint; once it exceeds b, the current stage is checkpointed
  // and temp restarts. d_n is a checkpoint by the chain convention (seeds/000
  // §3.1); on a training graph the loss is a step output and is kept anyway.
  std::vector<size_t> checkpoints;
  const size_t n = sizes.empty() ? 0 : sizes.size() - 1;
  uint64_t temp = 0;
  for (size_t i = 1; i < n; ++i) {
    temp += sizes[i];
    if (temp > b) {
      checkpoints.push_back(i);
      temp = 0;
    }
  }
  if (n > 0)
    checkpoints.push_back(n);
  return checkpoints;
}

std::vector<size_t> remat::chenSqrtNChainCheckpoints(size_t n) {
  // As chenSqrtNCheckpoints on a graph: segments of k = ceil(sqrt(n)) stages,
  // each segment's last stage kept (Baselines.cpp).
  std::vector<size_t> checkpoints;
  if (n == 0)
    return checkpoints;
  size_t k = 1;
  while (k * k < n)
    ++k;
  for (size_t i = k; i < n; i += k)
    checkpoints.push_back(i);
  checkpoints.push_back(n);
  return checkpoints;
}

std::vector<size_t> remat::sequentialCheckpoints(size_t n, size_t segments) {
  // torch.utils.checkpoint.checkpoint_sequential(functions, segments, input):
  // segment_size = len(functions) // segments; the first segments - 1
  // segments run under checkpoint(), which keeps only the segment's input
  // (the previous segment's output) and recomputes its interior in the
  // backward; the last segment, from (segments - 1) * segment_size to the
  // end, runs normally and keeps everything its backward needs.
  std::vector<size_t> checkpoints;
  if (n == 0)
    return checkpoints;
  segments = std::clamp<size_t>(segments, 1, n);
  size_t size = n / segments;
  for (size_t k = 1; k < segments; ++k)
    checkpoints.push_back(k * size);
  for (size_t i = (segments - 1) * size + 1; i <= n; ++i)
    checkpoints.push_back(i);
  return checkpoints;
}

llvm::Expected<Schedule> remat::solveChenGreedy(const TrainingGraph &graph,
                                                const SolverOptions &options) {
  Chain chain = linearize(graph);
  const size_t n = chain.numStages();
  if (n == 0)
    return scheduleFromChainCheckpoints(graph, chain, {});
  // The search over b (greedyBudgetCandidates); different b often give the
  // same checkpoints, and bestChainPlan simulates each distinct set once.
  std::vector<std::vector<size_t>> candidates;
  std::vector<uint64_t> grid = greedyBudgetCandidates(chain.sizes);
  for (uint64_t b : grid)
    candidates.push_back(chenGreedyCheckpoints(chain.sizes, b));
  LLVM_DEBUG(llvm::dbgs() << "chen-greedy: " << n << " stages, " << grid.size()
                          << " segment budgets b from "
                          << (grid.empty() ? 0 : grid.front()) << " to "
                          << (grid.empty() ? 0 : grid.back()) << "\n");
  return bestChainPlan(graph, chain, candidates, options.budget);
}

llvm::Expected<Schedule> remat::solveSequential(const TrainingGraph &graph,
                                                const SolverOptions &options) {
  Chain chain = linearize(graph);
  const size_t n = chain.numStages();
  if (n == 0)
    return scheduleFromChainCheckpoints(graph, chain, {});
  // rotor's evaluation (seeds/004 §5.3) tries segment counts from 2 to
  // 2 sqrt(L), L the chain length; every count in that range is tried here
  // (rotor samples ten of them), within 1..n.
  size_t most =
      static_cast<size_t>(std::ceil(2.0 * std::sqrt(static_cast<double>(n))));
  most = std::min(std::max<size_t>(most, 2), n);
  std::vector<std::vector<size_t>> candidates;
  for (size_t segments = std::min<size_t>(2, n); segments <= most; ++segments)
    candidates.push_back(sequentialCheckpoints(n, segments));
  LLVM_DEBUG(llvm::dbgs() << "sequential: " << n << " stages, segment counts "
                          << std::min<size_t>(2, n) << " to " << most << "\n");
  return bestChainPlan(graph, chain, candidates, options.budget);
}

//===----------------------------------------------------------------------===//
// Articulation points as candidates (seeds/003 appendix B.1)
//===----------------------------------------------------------------------===//

std::vector<bool> remat::apSqrtNCheckpoints(const TrainingGraph &graph,
                                            const StructureAnalysis &analysis) {
  // "We apply Chen's heuristics to checkpoint a subset of these candidates":
  // sqrt(n) segments over the articulation points, cut as chenSqrtNCheckpoints
  // cuts the forward nodes (k = ceil(sqrt(n)), each segment's last candidate).
  std::vector<bool> mask(graph.numNodes(), false);
  const std::vector<Vertex> &candidates = analysis.articulationPoints;
  const size_t n = candidates.size();
  size_t k = 1;
  while (k * k < n)
    ++k;
  for (size_t i = 0; i < n; ++i)
    if ((i + 1) % k == 0 || i + 1 == n)
      mask[analysis.graph.nodeId(candidates[i])] = true;
  LLVM_DEBUG(llvm::dbgs() << "ap-sqrtn: " << n
                          << " articulation points in segments of " << k << ": "
                          << std::count(mask.begin(), mask.end(), true)
                          << " checkpointed\n");
  return mask;
}

std::vector<bool> remat::apGreedyCheckpoints(const TrainingGraph &graph,
                                             const StructureAnalysis &analysis,
                                             uint64_t b) {
  // Checkmate's solve_chen_greedy(g, b, use_actuation_points=True): the
  // segment accumulates every forward op in topological order, but only an
  // articulation point can end it.
  const StructureGraph &structure = analysis.graph;
  std::vector<char> isCandidate(structure.numVertices(), 0);
  for (Vertex v : analysis.articulationPoints)
    isCandidate[v] = 1;
  std::vector<bool> mask(graph.numNodes(), false);
  uint64_t temp = 0;
  for (unsigned op = 0; op < structure.numOps(); ++op) {
    Vertex v = structure.vertexOfOp(op);
    temp += structure.bytes(v);
    if (isCandidate[v] && temp > b) {
      mask[structure.nodeId(v)] = true;
      temp = 0;
    }
  }
  return mask;
}

llvm::Expected<Schedule> remat::solveAPSqrtN(const TrainingGraph &graph,
                                             const SolverOptions &) {
  StructureAnalysis analysis(graph);
  return scheduleFromCheckpoints(graph, apSqrtNCheckpoints(graph, analysis));
}

llvm::Expected<Schedule> remat::solveAPGreedy(const TrainingGraph &graph,
                                              const SolverOptions &options) {
  StructureAnalysis analysis(graph);
  // The same search over b as the linearized greedy, on the ops' sizes.
  std::vector<uint64_t> sizes = {0};
  for (unsigned op = 0; op < analysis.graph.numOps(); ++op)
    sizes.push_back(analysis.graph.bytes(analysis.graph.vertexOfOp(op)));
  std::vector<std::vector<bool>> candidates;
  std::vector<uint64_t> grid = greedyBudgetCandidates(sizes);
  for (uint64_t b : grid)
    candidates.push_back(apGreedyCheckpoints(graph, analysis, b));
  LLVM_DEBUG(llvm::dbgs() << "ap-greedy: " << analysis.articulationPoints.size()
                          << " articulation points of "
                          << analysis.graph.numOps() << " ops, " << grid.size()
                          << " segment budgets b\n");
  return bestCheckpointPlan(graph, std::move(candidates), options.budget);
}
