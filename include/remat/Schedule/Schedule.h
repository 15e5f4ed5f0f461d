//===- Schedule.h - Compute/Free schedules and their simulator --*- C++ -*-===//
//
// A schedule is an ordered list of Compute(node) / Free(value) statements, the
// execution plan of Checkmate (seeds/003, §4.4, Alg. 1) in its general form.
// The simulator is the single source of truth for a plan's peak memory, cost
// and validity (DESIGN.md §5): every solver is judged by it, and it is judged
// by the compiled program's measured peak.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SCHEDULE_SCHEDULE_H
#define REMAT_SCHEDULE_SCHEDULE_H

#include "remat/Graph/TrainingGraph.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace remat {

/// One statement of a schedule.
struct Step {
  enum class Kind { Compute, Free };
  Kind kind;
  /// A NodeId for Compute, a ValueId for Free.
  int id;

  static Step compute(NodeId node) { return {Kind::Compute, node}; }
  static Step free(ValueId value) { return {Kind::Free, value}; }
  bool isCompute() const { return kind == Kind::Compute; }
  bool operator==(const Step &other) const {
    return kind == other.kind && id == other.id;
  }
};

struct Schedule {
  std::vector<Step> steps;

  /// Number of Compute statements of nodes that were already computed before.
  size_t numRecomputations(const TrainingGraph &graph) const;
  llvm::json::Value toJSON() const;
  static llvm::Expected<Schedule> fromJSON(const llvm::json::Value &json);
};

/// Builds a schedule from a sequence of Compute statements by freeing every
/// value instance right after its last use (or right after it is produced if
/// nothing reads it), except the step's outputs, which are never freed. This is
/// the placement the early-free pass gives the compiled program.
Schedule insertEarlyFrees(const TrainingGraph &graph,
                          const std::vector<NodeId> &computeOrder);

/// The execution plan for a set of checkpointed nodes: forward nodes in order
/// (skipping a non-checkpointed forward node only when nothing in the forward
/// pass reads it and a later node will demand it anyway), then backward nodes
/// in order; nodes producing a step output are always kept, since an output is
/// never freed and so cannot be recomputed; before each backward
/// node, every input that is not resident is recomputed from the resident
/// values with the least set of forward nodes (recursively through
/// non-resident producers), and a recomputed value stays available to later
/// backward nodes. The outputs of checkpointed nodes stay resident from the
/// forward pass to their last backward use; everything else is freed early.
Schedule scheduleFromCheckpoints(const TrainingGraph &graph,
                                 const std::vector<bool> &checkpointed);

/// What the simulator finds.
struct SimulationReport {
  bool valid = true;
  /// First violation found, with the step index; empty when valid.
  std::string error;
  /// Peak bytes of non-fixed values (plus workspace) over the schedule.
  uint64_t peakBytes = 0;
  /// Bytes of fixed values (arguments), resident throughout, not in peakBytes.
  uint64_t fixedBytes = 0;
  /// Index of the step at which the peak is first reached.
  size_t peakStep = 0;
  /// Sum of the costs of all Compute statements.
  double totalCost = 0;
  /// Cost of computing every node exactly once (the graph's total cost).
  double baseCost = 0;
  size_t numComputes = 0;
  size_t numRecomputations = 0;
  /// Bytes resident after each step (workspace included at Compute steps).
  std::vector<uint64_t> timeline;

  double overhead() const { return baseCost > 0 ? totalCost / baseCost : 1.0; }
  llvm::json::Value toJSON(bool withTimeline = true) const;
};

/// Walks the schedule: a Compute requires every input resident and none of its
/// outputs resident, allocates the outputs (and transient workspace); a Free
/// requires a resident, non-fixed, non-output value. At the end every node must
/// have been computed and every step output must be resident. A node's reuse
/// pair (Node::reuses) is an in-place update when no later step reads that
/// instance of the input and it is not a step output: the output then takes
/// over the input's bytes (the input stays resident, holding nothing, until
/// its Free).
SimulationReport simulate(const TrainingGraph &graph, const Schedule &schedule);

/// For each step of `schedule`, which of its node's reuse pairs are in place
/// (see simulate); empty for Free steps and nodes without reuses.
std::vector<std::vector<char>> inPlaceUpdates(const TrainingGraph &graph,
                                              const Schedule &schedule);

/// `schedule` without its dead computations: a Compute none of whose outputs
/// is read before that instance is freed or computed again, and that is not
/// the last instance of a step output (the caller reads those after the
/// step). Frees of the instances that are no longer created go too. Removing
/// one may make the computations of its inputs dead: one pass backwards
/// finds them all. The result computes and holds a subset of what
/// `schedule` does, in the same order, so its cost and peak are at most
/// `schedule`'s. `removed` (if given) counts the Computes dropped. (Chain
/// solvers mapped to graphs, rotor's among them, can recompute a value for a
/// backward node that reads another instance; the compiled program would
/// allocate and fill a buffer nothing reads.)
Schedule withoutDeadComputes(const TrainingGraph &graph,
                             const Schedule &schedule,
                             size_t *removed = nullptr);

/// `computeOrder` without the recomputations it can do without: a Compute of
/// a node computed before is dropped when the plan without it (the earlier
/// instance held until the readers of the dropped one; insertEarlyFrees) is
/// valid and peaks within `budget` (simulate). Planners that decide under
/// memory pressure one step at a time (the eviction planner) drop values
/// that, seen from the whole plan, fit after all. The dearest first (then
/// the later); each removal is judged on the plan with the ones before it.
/// Passes repeat while one removes something and `seconds` last (0: no
/// limit). The result's cost is at most the given order's, its peak within
/// the budget when the given order's is. `removed` counts the drops.
std::vector<NodeId>
withoutNeedlessRecomputations(const TrainingGraph &graph,
                              const std::vector<NodeId> &computeOrder,
                              uint64_t budget, double seconds,
                              size_t *removed = nullptr);

/// `schedule` (simulated as `report`) without the recomputations it can do
/// without within `limit` (withoutNeedlessRecomputations, then
/// withoutDeadComputes), and its simulation; nullopt when `report` is invalid or above `limit`,
/// or nothing cheaper came out.
std::optional<std::pair<Schedule, SimulationReport>>
withoutNeedlessWork(const TrainingGraph &graph, const Schedule &schedule,
                    const SimulationReport &report, uint64_t limit,
                    double seconds);

} // namespace remat

#endif // REMAT_SCHEDULE_SCHEDULE_H
