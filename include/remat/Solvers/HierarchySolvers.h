//===- HierarchySolvers.h - Solvers on the structure analysis ---*- C++ -*-===//
//
// The solvers that need the structure of the forward graph
// (remat/Structure/Structure.h) rather than its linearization:
//
//  - Checkmate's AP sqrt(n) and AP greedy (seeds/003 §6.1, appendix B.1):
//    Chen et al.'s heuristics with the articulation points of the undirected
//    forward graph as the only checkpoint candidates;
//  - Feng & Huang's arbitrary-graph solver (seeds/001 §4.2, Algorithm 6) on
//    the hierarchy of close sets (Algorithm 5).
//
// As everywhere, the chosen checkpoints become an execution plan through
// scheduleFromCheckpoints, and the simulator judges that plan.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SOLVERS_HIERARCHYSOLVERS_H
#define REMAT_SOLVERS_HIERARCHYSOLVERS_H

#include "remat/Solvers/Chain.h"
#include "remat/Structure/Structure.h"

namespace remat {

/// Chen's sqrt(n) on the articulation points (Checkmate's AP sqrt(n)): with
/// k = ceil(sqrt(#APs)), every k-th articulation point in topological order is
/// checkpointed. Returns the checkpointed-node mask of `graph`.
std::vector<bool> apSqrtNCheckpoints(const TrainingGraph &graph,
                                     const StructureAnalysis &analysis);

/// Chen's greedy with segment budget b on the articulation points
/// (Checkmate's solve_chen_greedy with use_actuation_points): every forward
/// op adds its bytes to the running segment; an articulation point where the
/// segment exceeds b is checkpointed and the segment restarts.
std::vector<bool> apGreedyCheckpoints(const TrainingGraph &graph,
                                      const StructureAnalysis &analysis,
                                      uint64_t b);

/// The answer of Feng & Huang's Algorithm 6: the vertices (forward ops) to
/// store, and the value of Eq. 1 on the hierarchy: the bytes stored plus the
/// largest re-forward.
struct HierarchySolution {
  std::vector<Vertex> stored;
  uint64_t storedBytes = 0;
  uint64_t maxTerm = 0;
  uint64_t objective = 0;
  bool timedOut = false;
};

/// Feng & Huang's arbitrary-graph solver (seeds/001 §4.2, Algorithm 6): for
/// every candidate max term m (the costs of the close sets), expand exactly
/// the sub-hierarchies whose cost exceeds m, solve the linear levels with
/// the linear solver at max term m and keep the other levels' members
/// unexpanded; keep the best total, skipping the candidates in [B, m) once a
/// solution with actual max term B is found (as Algorithm 1 does).
HierarchySolution fengArbitrary(const StructureAnalysis &analysis,
                                Deadline deadline = std::nullopt);

/// Evaluates Eq. 1 on the hierarchy for a fixed max term m (one iteration of
/// Algorithm 6's loop). Exposed for tests.
HierarchySolution fengArbitraryAt(const StructureAnalysis &analysis,
                                  uint64_t m);

llvm::Expected<Schedule> solveAPSqrtN(const TrainingGraph &graph,
                                      const SolverOptions &options);
/// AP greedy with the same search over b as solveChenGreedy.
llvm::Expected<Schedule> solveAPGreedy(const TrainingGraph &graph,
                                       const SolverOptions &options);
llvm::Expected<Schedule> solveFengArbitrary(const TrainingGraph &graph,
                                            const SolverOptions &options);

} // namespace remat

#endif // REMAT_SOLVERS_HIERARCHYSOLVERS_H
