//===- Evict.h - Rematerialisation by eviction under the budget --*- C++ -*-===//
//
// Issue 24: a plan source for large graphs at tight budgets. A start order
// (the program's, or another topological order) is run as written;
// whenever a node's outputs and workspace would not fit next to the
// resident values, resident values are evicted (freed) one at a time, the
// one with the least score first, and a value a later node reads that is
// no longer resident is recomputed on demand from whatever is resident,
// recursively. This is the policy of Dynamic Tensor
// Rematerialization (M. Kirisame, S. Lyubomirsky, A. Haan, J. Brennan,
// M. He, J. Roesch, T. Chen, Z. Tatlock, "Dynamic Tensor Rematerialization",
// ICLR 2021; not one of the seed papers) run ahead of time: its heuristic
// h(t) = c(t) / (m(t) * s(t)) weighs the cost of
// recomputing t with its evicted ancestors (the e* neighbourhood, here
// exactly: the producers of the non-resident inputs, recursively) against
// its bytes and its staleness s(t). A planner knows the future, so the
// default score replaces staleness by the distance to the value's next
// reader in the start order (Belady's choice); DTR's own staleness and
// plain cost per byte are the other two scores.
//
// The classifiers at 50-60% of their checkpoint-all peak are where this
// matters: freeing the outputs of batch norms and activations and
// recomputing them from the stored convolution outputs costs a few
// elementwise passes, which no chain model with whole stages can express.
//
// The planner counts memory as the simulator does, updates in place
// included (an input no later node of the start order reads hands its bytes
// to the output); the plan's frees are placed by insertEarlyFrees on the
// compute order, which frees every instance no later than its eviction, so
// the simulated peak never exceeds the budget the planner was given.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SOLVERS_EVICT_H
#define REMAT_SOLVERS_EVICT_H

#include "remat/Solvers/Solver.h"

namespace remat {

/// Which resident value is evicted first: the least of (a value nothing
/// needs again scores 0 under every score; one that could not be made again
/// is never evicted)
enum class EvictionScore {
  /// recomputation cost / (bytes * steps until it is needed next in the
  /// start order: read, or read to recompute an evicted value that is).
  NextUse,
  /// recomputation cost / (bytes * steps since it was last read or
  /// written): DTR's h_DTR.
  Staleness,
  /// recomputation cost / bytes.
  CostPerByte,
};

llvm::StringRef evictionScoreName(EvictionScore score);

/// The compute order of `startOrder` (a topological order of every node;
/// the node ids 0, 1, ... are the program's) run under `budget` with evictions
/// by `score`: every node at least once, in that order, recomputations on
/// demand. An error naming the node that cannot fit when no eviction makes
/// room for it, or when the run takes more than `timeLimitSeconds` of wall
/// time (0: no limit).
/// With `rerunShare` (one per node, ResidencyGuide::rerunShare) the cost of
/// recomputing a value is weighed by 1 / (share of its producer + 0.01):
/// the values the relaxation runs again go first.
llvm::Expected<std::vector<NodeId>>
evictionComputeOrder(const TrainingGraph &graph,
                     const std::vector<NodeId> &startOrder, uint64_t budget,
                     EvictionScore score, double timeLimitSeconds = 0,
                     llvm::ArrayRef<double> rerunShare = {});

/// The registered solver `evict`: from the program's order and from
/// reorder's order of least peak (Reorder.h), the next-use score at the
/// budget and at budgets up to 8% above it, then the other two scores,
/// while the time limit allows; without a budget, or when no plan meets it,
/// the least budget the next-use score fits, by bisection (the plan
/// returned is then the least-memory one). Each plan first loses the
/// recomputations it can do without (withoutNeedlessRecomputations, at the
/// user's budget when it meets it). Every plan goes to the observer; the
/// best by betterPlan is returned.
llvm::Expected<SolvedPlan> solveEvict(const TrainingGraph &graph,
                                      const SolverOptions &options);

/// The program's order with, per binding moment of `guide` (ascending), the nodes
/// unordered with it moved to the side of it where the relaxation runs
/// them, then made topological again (each node once its producers ran,
/// the earliest of those positions first).
std::vector<NodeId> guidedStartOrder(const TrainingGraph &graph,
                                     const ResidencyGuide &guide);

/// The eviction planner guided by the residency bound's relaxation
/// (residencyLowerBound's `guide`; not from the seed papers): from
/// guidedStartOrder, the next-use score weighed by the relaxation's rerun
/// shares, at the budget and up to 8% above it, as solveEvict does. The
/// relaxation says which values to recompute and where the unordered nodes
/// (weight gradients) go; the planner makes a plan of it. The transformer
/// at 50%: 1.0279x, 0.06% above the bound, where every other planner stays
/// above 1.039x (docs/solvers-at-scale.md).
/// An empty guide gives the program's order and unweighted scores.
llvm::Expected<SolvedPlan> solveEvictGuided(const TrainingGraph &graph,
                                            const SolverOptions &options,
                                            const ResidencyGuide &guide);

/// The registered solver `evict-guided`: the residency bound's relaxation
/// at the budget (residencyLowerBound, a tenth of the time limit and at
/// most 2 s), then solveEvictGuided with what is left. Without a budget, or
/// below the least peak, there is no relaxation to follow: the program's
/// order, unweighted, and the least budget it fits (as `evict`).
llvm::Expected<SolvedPlan> solveEvictGuidedByBound(const TrainingGraph &graph,
                                                   const SolverOptions &options);

} // namespace remat

#endif // REMAT_SOLVERS_EVICT_H
