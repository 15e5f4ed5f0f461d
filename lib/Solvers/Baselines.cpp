//===- Baselines.cpp - Checkpoint-all and Chen's sqrt(n) ------------------===//
//
// The baselines of Checkmate (seeds/003 §6.1, appendix B) and rotor
// (seeds/004 §5.3). Both choose a set of checkpointed forward nodes and leave
// the execution plan (what to recompute, where to free) to
// scheduleFromCheckpoints, which is Checkmate's "solve for R given S".
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Solver.h"
#include "remat/Support/Debug.h"

#include <algorithm>
#include <numeric>

using namespace remat;

// -debug-only=remat-baselines: which order checkpoint-all keeps, and the
// segments of chen-sqrtn.
#define DEBUG_TYPE "remat-baselines"

Schedule remat::solveCheckpointAll(const TrainingGraph &graph) {
  // Every forward value stays resident until its last (backward) use, so
  // nothing is ever recomputed: the memory-hungry, cost-optimal end point.
  // Two orders recompute nothing: the frameworks' forward-then-backward
  // order, and the program's own (node ids), which a hand-written step may
  // have interleaved better (a gradient consumed as soon as it exists, a
  // forward-only value used up before the backward). The lower peak is the
  // baseline, so that no plan is judged against an order worse than the
  // one the user wrote, and percentage budgets never start from one.
  Schedule phased = scheduleFromCheckpoints(
      graph, std::vector<bool>(graph.numNodes(), true));
  std::vector<NodeId> programOrder(graph.numNodes());
  std::iota(programOrder.begin(), programOrder.end(), 0);
  Schedule program = insertEarlyFrees(graph, programOrder);
  SimulationReport phasedReport = simulate(graph, phased);
  SimulationReport programReport = simulate(graph, program);
  bool useProgram =
      programReport.valid && programReport.peakBytes < phasedReport.peakBytes;
  LLVM_DEBUG(llvm::dbgs() << "checkpoint-all: forward-then-backward peak "
                          << phasedReport.peakBytes << ", program order peak "
                          << (programReport.valid
                                  ? std::to_string(programReport.peakBytes)
                                  : "invalid (" + programReport.error + ")")
                          << ": keeps the "
                          << (useProgram ? "program order"
                                         : "forward-then-backward order")
                          << "\n");
  return useProgram ? program : phased;
}

std::vector<bool> remat::chenSqrtNCheckpoints(const TrainingGraph &graph) {
  // Chen et al. 2016 ("Training deep nets with sublinear memory cost") cut an
  // n-layer chain into sqrt(n) segments of sqrt(n) layers and store only each
  // segment's end point, recomputing a segment's interior during its
  // backward: O(sqrt(n)) memory for about one extra forward pass (as Checkmate
  // summarises it in its introduction, seeds/003_76479834531ac838.txt).
  // Checkmate's appendix B.2 ("Linearized sqrt(n)") generalises it to any DAG
  // by running it on G_lin, the forward nodes chained in a topological order
  // (here the node-id order), then solving for the recomputation R given the
  // chosen checkpoints S on the real data dependencies; here R is the
  // on-demand recomputation of scheduleFromCheckpoints.
  const std::vector<NodeId> forward = graph.forwardNodes();
  std::vector<bool> checkpointed(graph.numNodes(), false);
  const size_t n = forward.size();
  if (n == 0)
    return checkpointed;
  // k = ceil(sqrt(n)) in integers, free of floating-point rounding.
  size_t k = 1;
  while (k * k < n)
    ++k;
  for (size_t i = 0; i < n; ++i) {
    NodeId node = forward[i];
    bool endOfSegment = (i + 1) % k == 0 || i + 1 == n;
    // A node producing a step output is kept anyway (outputs are never
    // freed); marking it says so explicitly.
    bool producesOutput = false;
    for (ValueId out : graph.node(node).outputs)
      producesOutput |= graph.value(out).isOutput;
    checkpointed[node] = endOfSegment || producesOutput;
  }
  LLVM_DEBUG(
      llvm::dbgs() << "chen-sqrtn: " << n << " forward nodes in segments of "
                   << k << ", "
                   << std::count(checkpointed.begin(), checkpointed.end(), true)
                   << " checkpointed (segment ends and step outputs)\n");
  return checkpointed;
}

Schedule remat::solveChenSqrtN(const TrainingGraph &graph) {
  return scheduleFromCheckpoints(graph, chenSqrtNCheckpoints(graph));
}
