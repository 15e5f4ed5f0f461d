//===- Chain.h - The chain the chain solvers see ----------------*- C++ -*-===//
//
// The chain solvers (Hong et al., seeds/000; Feng & Huang's linear solver,
// seeds/001 §3; Chen's sqrt(n) and greedy, seeds/003 §6.1 and appendix B;
// PyTorch's checkpoint_sequential, seeds/004 §5.3) all reason about a
// sequence of data d_0, ..., d_n: d_0 the input, d_i the output of layer i.
// This header holds that abstraction, the two memory models the papers
// optimise, the chain algorithms themselves (pure functions over sizes, so
// that they can be tested exhaustively) and the bridge back to a training
// graph: linearization (Checkmate appendix B.2) and the execution plan of a
// checkpoint set (scheduleFromCheckpoints), which is what gets simulated.
//
// Conventions (seeds/000 §3.1): d_0 and d_n are always checkpoints. A
// checkpoint set is written as the sorted stage indices in 1..n that are
// checkpointed; it always contains n and never lists 0 (the input is
// implicit), which is how Hong et al.'s Table 2 writes its sets.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SOLVERS_CHAIN_H
#define REMAT_SOLVERS_CHAIN_H

#include "remat/Solvers/Solver.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace remat {

/// A chain d_0 .. d_n (n = numStages()).
struct Chain {
  /// sizes[i] = d_i in bytes; sizes[0] is the input.
  std::vector<uint64_t> sizes;
  /// costs[i] = cost of computing stage i once (costs[0] = 0).
  std::vector<double> costs;
  /// nodes[i] = the forward node of stage i in the graph the chain was built
  /// from (nodes[0] = -1: the input has no node). Empty for a chain built
  /// from sizes alone.
  std::vector<NodeId> nodes;

  size_t numStages() const { return sizes.empty() ? 0 : sizes.size() - 1; }
  /// A chain from sizes alone (unit costs, no nodes).
  static Chain fromSizes(std::vector<uint64_t> sizes);
};

/// Checkmate's linearization (seeds/003 appendix B.2): the forward nodes of
/// `graph` in topological (node id) order become stages 1..n; d_i is the sum
/// of the bytes of stage i's output values. d_0 is 0: the inputs of a
/// training graph are fixed values, resident for the whole step and counted
/// apart from the peak (DESIGN.md §4), so they add the same constant to every
/// plan of the papers' models and are left out of them.
Chain linearize(const TrainingGraph &graph);

/// The checkpointed-node mask of a checkpoint set (stage indices in 1..n) of
/// a chain built by linearize().
std::vector<bool> chainCheckpointMask(const TrainingGraph &graph,
                                      const Chain &chain,
                                      const std::vector<size_t> &checkpoints);

/// The execution plan of a checkpoint set: the checkpointed forward nodes are
/// kept, everything else the backward needs is recomputed with the least set
/// of forward nodes (scheduleFromCheckpoints). This plan, not the paper's
/// objective, is what the simulator judges.
Schedule scheduleFromChainCheckpoints(const TrainingGraph &graph,
                                      const Chain &chain,
                                      const std::vector<size_t> &checkpoints);

/// For the solvers with a parameter (Chen's b, the segment count of
/// checkpoint_sequential): the plans of the checkpointed-node masks
/// `candidates` judged by the simulator; returns the cheapest plan within
/// `budget` (ties: the lower peak), or the least-peak plan (ties: the
/// cheaper) when there is no budget or none fits. Identical masks are
/// simulated once.
Schedule bestCheckpointPlan(const TrainingGraph &graph,
                            std::vector<std::vector<bool>> candidates,
                            std::optional<uint64_t> budget);

/// bestCheckpointPlan over checkpoint sets of a chain built by linearize().
Schedule bestChainPlan(const TrainingGraph &graph, const Chain &chain,
                       const std::vector<std::vector<size_t>> &candidates,
                       std::optional<uint64_t> budget);

/// The segment budgets b that the greedy searches try on stages of these
/// sizes (sizes[0], the input, is not a stage): 0, a log-spaced grid of 64
/// values from the smallest non-zero size to the total, and the total.
std::vector<uint64_t>
greedyBudgetCandidates(const std::vector<uint64_t> &sizes);

//===----------------------------------------------------------------------===//
// The papers' memory models
//===----------------------------------------------------------------------===//

/// The checkpoints + largest-segment model of Chen et al. as Hong et al. state
/// it (seeds/000 §3.1, Eq. 6) and Feng & Huang (seeds/001 §3, Eq. 1):
/// sum_{i in C} d_i + max_segment sum_{j in segment} d_j, with C including
/// d_0 and d_n and a segment the data strictly between two consecutive
/// checkpoints.
uint64_t segmentModelPeak(const std::vector<uint64_t> &sizes,
                          const std::vector<size_t> &checkpoints);

/// s(h, i) of seeds/000 Eq. 11: sum_{k=h+1}^{i-1} d_k + max_{h<=k<i} d_k (the
/// recomputed segment plus the output-gradient buffer of its largest tensor).
uint64_t pytorchSegmentMemory(const std::vector<uint64_t> &sizes, size_t h,
                              size_t i);

/// Hong et al.'s model of PyTorch (seeds/000 §4, Algorithm 4, Eqs. 9-12): the
/// peak is max over checkpoints i > 0 with predecessor h of
/// m(i) = sum_{d in C(i)} d + s(h, i), C(i) the checkpoints with index <= i.
uint64_t pytorchModelPeak(const std::vector<uint64_t> &sizes,
                          const std::vector<size_t> &checkpoints);

//===----------------------------------------------------------------------===//
// Chain algorithms
//===----------------------------------------------------------------------===//

/// The answer of a peak-minimising chain algorithm: the checkpoint set it
/// selects and the value of its own objective (in its own model).
struct ChainSolution {
  std::vector<size_t> checkpoints;
  uint64_t objective = 0;
  /// True when a deadline stopped the search early: `checkpoints` is then the
  /// best set found so far (still a valid set, not necessarily optimal).
  bool timedOut = false;
};

using Deadline = std::optional<std::chrono::steady_clock::time_point>;

/// The deadline of SolverOptions::timeLimitSeconds from now (none if the limit
/// is not positive).
Deadline deadlineFrom(const SolverOptions &options);

/// Hong et al.'s checkpoint selection (seeds/000 §3.2, Algorithm 3, Eqs. 7-8):
/// for each candidate segment memory s (the O(n^2) distinct segment sums), the
/// least checkpoint memory M(n, s) by a monotone-queue dynamic program in
/// O(n); the answer is min_s s + M(n, s). O(n^3) overall. Minimises
/// segmentModelPeak.
ChainSolution hongCheckpointSelection(const std::vector<uint64_t> &sizes,
                                      Deadline deadline = std::nullopt);

/// Hong et al.'s dynamic checkpoint selection in O(n^2) (seeds/000 §4.1,
/// Algorithm 5, Eq. 13). Minimises pytorchModelPeak.
ChainSolution hongDynamicQuadratic(const std::vector<uint64_t> &sizes);

/// Hong et al.'s dynamic checkpoint selection in O(n) (seeds/000 §4.2,
/// Algorithm 6, Eqs. 15-26, Lemmas 1-4). Same optimum as
/// hongDynamicQuadratic.
ChainSolution hongDynamicLinear(const std::vector<uint64_t> &sizes);

/// Feng & Huang's linear solver (seeds/001 §3.2, Algorithm 1): for every
/// candidate max term C = l(v_i, v_j), the shortest path from v_0 to v_n in
/// the accessibility graph (edges where the re-forward cost is <= C), skipping
/// the candidates in [B, C) once a solution with actual max term B is found.
/// Minimises segmentModelPeak.
ChainSolution fengLinear(const std::vector<uint64_t> &sizes,
                         Deadline deadline = std::nullopt);

/// Chen et al.'s greedy with segment budget b, as Checkmate runs it
/// (seeds/003 §6.1): walk the stages accumulating d_i; when the sum exceeds
/// b, checkpoint the stage and restart the sum. Stage n is always added.
std::vector<size_t> chenGreedyCheckpoints(const std::vector<uint64_t> &sizes,
                                          uint64_t b);

/// Chen et al.'s sqrt(n): segments of ceil(sqrt(n)) stages, each segment's
/// last stage checkpointed (and stage n).
std::vector<size_t> chenSqrtNChainCheckpoints(size_t numStages);

/// PyTorch's checkpoint_sequential with `segments` segments (seeds/004 §5.3):
/// segments of floor(n / segments) stages; the output of each of the first
/// segments - 1 segments is kept (the input of the next), their interiors
/// are recomputed, and the last segment (the remainder) runs without
/// checkpointing, so all its stages are kept.
std::vector<size_t> sequentialCheckpoints(size_t numStages, size_t segments);

//===----------------------------------------------------------------------===//
// Solvers on training graphs (registered in Solver.cpp)
//===----------------------------------------------------------------------===//

llvm::Expected<Schedule> solveHongCubic(const TrainingGraph &graph,
                                        const SolverOptions &options);
llvm::Expected<Schedule> solveHongQuadratic(const TrainingGraph &graph,
                                            const SolverOptions &options);
llvm::Expected<Schedule> solveHongLinear(const TrainingGraph &graph,
                                         const SolverOptions &options);
llvm::Expected<Schedule> solveFengLinear(const TrainingGraph &graph,
                                         const SolverOptions &options);
/// Linearized Chen greedy with its search over b: each b of the search gives
/// a plan that the simulator judges; the cheapest plan within the budget is
/// returned (the least peak without a budget, or when none fits).
llvm::Expected<Schedule> solveChenGreedy(const TrainingGraph &graph,
                                         const SolverOptions &options);
/// checkpoint_sequential with its segment count searched over 2..ceil(2
/// sqrt(n)) (the range rotor's evaluation uses, seeds/004 §5.3), chosen as
/// solveChenGreedy chooses b.
llvm::Expected<Schedule> solveSequential(const TrainingGraph &graph,
                                         const SolverOptions &options);

} // namespace remat

#endif // REMAT_SOLVERS_CHAIN_H
