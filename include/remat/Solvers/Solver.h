//===- Solver.h - The common solver interface --------------------*- C++ -*-===//
//
// Every checkpointing solver is a function from a training graph (and options,
// such as a memory budget) to a Schedule. Plans are judged by the simulator,
// never by a solver's own objective (DESIGN.md §5, §6).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SOLVERS_SOLVER_H
#define REMAT_SOLVERS_SOLVER_H

#include "remat/Schedule/Schedule.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <functional>
#include <optional>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace remat {

/// The defaults of every front end (remat-solve, remat-run, the pass options
/// of Passes.td, whose defaults name these constants, and the pipelines).
/// The time limit of the searching solvers is short enough that `auto`
/// finishes within it on graphs of a few hundred nodes.
constexpr double kDefaultTimeLimitSeconds = 10;
/// The memory slots S of rotor and revolve (seeds/004 §5.2).
constexpr unsigned kDefaultMemorySlots = 500;
/// The solver of remat-apply and the remat pipelines: Chen's sqrt(n)
/// segments need no budget and no search.
constexpr const char kDefaultSolverName[] = "chen-sqrtn";

/// The node order a solver starts from (issue 22, item 3). The solvers that
/// read the graph's node order (checkpoint-all's program order, the chain
/// solvers' linearisation, the baselines' forward and backward passes) see
/// the program's order by default; `Reordered` runs them on the graph
/// renumbered into reorderForMemory's order (solveOnReorderedGraph, Reorder.h)
/// and maps the plan back; `Best` runs both, each with half the time limit,
/// and keeps the better plan (betterPlan). `auto` hands the choice on to its
/// members; `none` and `reorder` are orders of their own.
enum class StartOrder { Program, Reordered, Best };

/// "program", "reordered" or "best"; an error naming `name` and the value
/// otherwise.
llvm::Expected<StartOrder> parseStartOrder(llvm::StringRef value,
                                           llvm::StringRef name = "start-order");
llvm::StringRef startOrderName(StartOrder order);

struct SolverOptions {
  /// Memory budget for non-fixed bytes; std::nullopt means "least memory".
  std::optional<uint64_t> budget;
  /// Wall-clock limit for solvers that search (seconds): finite and at least
  /// 0 (checkTimeLimit). 0 means no time-bounded search: the Checkmate
  /// solvers return their warm start (the other solvers' best plan) without
  /// solving the LP or the MILP, `auto` runs every other solver, and the
  /// polynomial searches run to the end.
  double timeLimitSeconds = kDefaultTimeLimitSeconds;
  /// S, the number of slots the memory budget is divided into by the
  /// dynamic programs that discretise memory (rotor, revolve: seeds/004
  /// §5.2). More slots round sizes less and cost O(S) more time and memory.
  unsigned memorySlots = kDefaultMemorySlots;
  /// Where the solvers that search for long (Checkmate's CBC) print their
  /// progress; nullptr (the default): nowhere. A library never prints unasked:
  /// the front ends pass llvm::errs() for `progress=true` / `--progress`.
  llvm::raw_ostream *progress = nullptr;
  /// Called with every plan a solver simulates on its way to its answer
  /// (other stagings, other memories, other segment budgets), whatever
  /// budget it was given: `auto` keeps the best of them for the user's
  /// budget (issue 24). Empty: nobody listens.
  std::function<void(const Schedule &, const SimulationReport &)> observer;
  /// The node order the solver starts from (StartOrder).
  StartOrder startOrder = StartOrder::Program;
};

/// The largest number of memory slots S (rotor's table holds S + 1 floats
/// for each of its n(n+1)/2 segments).
constexpr unsigned kMaxMemorySlots = 1u << 20;

/// Range checks of the numeric solver options, shared by every front end so
/// that a bad value is an error naming the option (`name`, as the front end
/// spells it) and the value, never a silently different plan. The time
/// limit must be a finite number of seconds, 0 or more (0: no time-bounded
/// search, SolverOptions::timeLimitSeconds); NaN compares false with
/// everything.
llvm::Error checkTimeLimit(double seconds, llvm::StringRef name = "time-limit");
/// S must be in [1, kMaxMemorySlots].
llvm::Error checkMemorySlots(uint64_t slots, llvm::StringRef name = "slots");
/// Both checks on `options` (runSolver runs it before any solver).
llvm::Error checkSolverOptions(const SolverOptions &options);

/// What is known of a plan besides its simulation (DESIGN.md §6). Every
/// claim is about *all* plans of the graph (any order, any recomputation):
/// a solver that optimises a restricted model (Checkmate's fixed order of
/// first computations or coarse graph, rotor's persistent chains, the block
/// solver's options) reports what it proves about that model in
/// SolvedPlan::modelBound instead (issue 24).
enum class PlanStatus {
  /// Within the budget and proven cheapest of all plans: it computes every
  /// node exactly once (no plan can cost less), or a search over every
  /// schedule (`exact`, ExactSearch.h) proved nothing cheaper fits.
  Optimal,
  /// Within the budget, with a proven lower bound on the cost of every plan
  /// within the budget above the graph's total cost (`lowerBound` says how
  /// far from optimal the plan can be).
  Feasible,
  /// No plan meets the budget, proven for every plan: some node needs more
  /// bytes with its inputs and outputs, or the step outputs held when the
  /// last of them is computed exceed it (peakLowerBound), or the exact
  /// search exhausted every schedule. The plan is the solver's fallback.
  Infeasible,
  /// The plan misses the budget and nothing is proven: a heuristic missed
  /// it, or a search ran out of time without a plan.
  NoPlan,
  /// Within the budget (or no budget was given), no optimality claim: the
  /// baselines, the dynamic programs, whose optimum is over their own chain
  /// model (rotor, revolve, feng, hong), and Checkmate, whose optimum is over
  /// its model (see ModelBound).
  Heuristic,
};

llvm::StringRef planStatusName(PlanStatus status);

/// What a solver proved about its own model, which restricts the plans it
/// considers: Checkmate's MILP fixes the order of first computations
/// (seeds/003 §4.6: "This reduces the feasible set") and may coarsen the
/// graph; rotor's sequences are persistent chains (seeds/004 §4). True of the
/// model only: a plan outside it can be cheaper, so none of this is ever
/// reported as the graph's lower bound, optimum or infeasibility.
struct ModelBound {
  /// The model, e.g. "checkmate frontier-advancing stages, full graph in
  /// program order" or "... coarse graph (300 of 897 nodes)".
  std::string model;
  /// No plan of the model within the budget costs less (0 when unknown).
  double lowerBound = 0;
  /// The plan is proven optimal for the model.
  bool optimal = false;
  /// The model has no plan within the budget.
  bool infeasible = false;

  llvm::json::Value toJSON() const;
};

/// A solver's schedule with what the solver can prove about it; a bare
/// Schedule converts to one with nothing proven.
struct SolvedPlan {
  SolvedPlan(Schedule schedule) : schedule(std::move(schedule)) {}
  Schedule schedule;
  /// Set by solvers that prove something about all plans (the exact search);
  /// else the status follows from the simulation.
  std::optional<PlanStatus> status;
  /// A proven lower bound on the cost of every plan of the graph within the
  /// budget, 0 when none.
  double costLowerBound = 0;
  /// What the solver proved about its restricted model, if anything.
  std::optional<ModelBound> modelBound;
};

struct SolverResult {
  std::string solver;
  Schedule schedule;
  /// The simulator's verdict on `schedule`.
  SimulationReport report;
  /// True when the simulated peak is within the budget (or there is none).
  bool meetsBudget = true;
  double solveSeconds = 0;
  /// See PlanStatus; set by runSolver (statusOf) from the simulation and the
  /// solver's own proof.
  PlanStatus status = PlanStatus::Heuristic;
  /// Proven lower bound on the cost of every plan of the graph within the
  /// budget, when the status is optimal or feasible: at least the graph's
  /// total cost (every node runs once), or the bound of a search over all
  /// plans when higher.
  std::optional<double> lowerBound;
  /// The solver's claim about its own model (SolvedPlan::modelBound).
  std::optional<ModelBound> modelBound;
};

/// A lower bound on the peak (non-fixed bytes) of every plan: the largest,
/// over the nodes, of what must be held while the node runs: its non-fixed
/// inputs, its outputs (less the inputs it may update in place) and its
/// workspace, plus the step outputs of its ancestors (computed before it and
/// never freed); and, since step outputs are never freed, what the last
/// nodes producing them hold (StepOutputsEndgame). A budget below it is
/// infeasible for every solver.
uint64_t peakLowerBound(const TrainingGraph &graph);

/// peakLowerBound, raised by a search of the end of every schedule, backwards
/// in time, on graphs with at most 64 nodes producing step outputs and 256
/// values (others: peakLowerBound). The events are the runs of the nodes
/// producing step outputs (each runs once) and, for every value a later
/// event reads, the last run of its producer before that read (from it to
/// the read the value stays resident). Going back from the end, a state is
/// (S: the step-output nodes that run earlier, H: the values read later
/// whose producer's last run is earlier); the next event back is the last
/// of S, y (holding the step outputs of S but y's, its own footprint and
/// H), or the producer q of values in H (the step outputs of S, its
/// footprint and the rest of H; a run allocates its outputs, so it ends all
/// of them in H); each adds its own inputs to H. Every schedule is such a
/// sequence back to the start (S and H empty), so the least over the
/// sequences of their largest requirement bounds every plan's peak: a
/// bottleneck shortest path (Dijkstra on the largest requirement so far),
/// whose least open key is still a bound when `maxStates` or `seconds` (0:
/// no time limit) stops it. Exponential in the worst case: called once per
/// solve (auto, exact) or error, not per plan.
uint64_t leastPeakBound(const TrainingGraph &graph, double seconds,
                        size_t maxStates = 100000);
/// The time leastPeakBound gets within a solve of `timeLimitSeconds`: a
/// tenth, 2 s at most; 1 s when the solve has no limit (0).
inline double leastPeakBoundSeconds(double timeLimitSeconds) {
  return timeLimitSeconds > 0 ? std::min(2.0, 0.1 * timeLimitSeconds) : 1.0;
}

/// The end of every schedule, seen from the step outputs: they are never
/// freed, so a node producing one (it runs once) holds every step output
/// computed before it. Whichever such node p runs last holds every other step
/// output next to its own inputs, outputs and workspace; and each input v of
/// p (not fixed, not a step output) was produced by the last run of its
/// producer q before p and stayed resident since, so either q ran after
/// every other step output was computed (holding them all next to its own
/// footprint), or some node producing a step output ran while v was held -
/// the last of them with every step output but its own and p's. The least,
/// over the choices of p, of the largest of these requirements bounds the
/// peak of every plan from below. Producers q that produce step outputs
/// themselves count nothing (not bounded here).
class StepOutputsEndgame {
public:
  explicit StepOutputsEndgame(const TrainingGraph &graph);
  /// The bound for the plans going on from a moment where the nodes `done`
  /// says have run (their step outputs held from then on) and the values
  /// `resident` says hold their bytes; 0 when no step output is pending.
  uint64_t leastPeak(llvm::function_ref<bool(NodeId)> done,
                     llvm::function_ref<bool(ValueId)> resident) const;

private:
  struct Input {
    ValueId value;
    uint64_t bytes;
    /// What its producer holds while it runs.
    uint64_t producerHeld;
  };
  const TrainingGraph &graph;
  /// The nodes producing step outputs, their step outputs' bytes, what they
  /// hold while they run, and the inputs bounded for each.
  std::vector<NodeId> producers;
  std::vector<uint64_t> stepOut, held;
  std::vector<std::vector<Input>> inputs;
};

/// Per node, what every plan holds while the node runs for the first time:
/// its non-fixed inputs, its outputs (less in-place updates), its workspace
/// and the step outputs of its ancestors (peakLowerBound's first term).
std::vector<uint64_t> nodeFootprints(const TrainingGraph &graph);

/// A lower bound on the cost of every plan within `budget` (non-fixed
/// bytes), at least the graph's total cost: at the first computation of a
/// node x, the values produced before it (by its ancestors, and by the nodes
/// unordered with it that ran before it) for nodes that run for the first
/// time after it are resident or recomputed later, and a node recomputed
/// later needs its inputs resident or recomputed too; the linear relaxation of that
/// covering problem (COIN-OR CLP) at the `maxMoments` most demanding x,
/// and at the `jointMoments` most demanding at once (each node's cost
/// counted once), and the integer program (COIN-OR CBC's best bound) at the
/// `integerMoments` x of the highest relaxations, within about `seconds`
/// (lib/Solvers/ResidencyBound.cpp).
/// Valid for any order, recomputation and frees; polynomial, so it applies
/// to graphs of any size. Assumes `budget` >= peakLowerBound(graph).
/// Graphs above this many nodes get the total cost (the bound keeps two
/// node-by-node bit matrices). `guide`, when given, receives the optimum
/// of the highest relaxation solved (left empty when none was).
constexpr size_t kResidencyBoundMaxNodes = 16384;
struct ResidencyGuide;
/// The time `auto` and `evict-guided` give residencyLowerBound out of a time
/// limit (0: none) with `secondsLeft` of it left: a tenth, at most 2 s; 1 s
/// without a limit.
inline double residencyBoundSeconds(double timeLimitSeconds,
                                    double secondsLeft) {
  return timeLimitSeconds == 0 ? 1.0 : std::min(2.0, 0.1 * secondsLeft);
}
double residencyLowerBound(const TrainingGraph &graph, uint64_t budget,
                           double seconds, unsigned maxMoments = 4,
                           unsigned jointMoments = 8,
                           unsigned integerMoments = 1,
                           ResidencyGuide *guide = nullptr);

/// What the optimum of residencyLowerBound's highest linear relaxation (the
/// joint moments', or the best single moment's) does, for planners to
/// follow (solveEvictGuided, Evict.h): which nodes it runs again after its
/// moments, and on which side of each moment it runs the nodes unordered
/// with it. A relaxation's point, not a plan: its shares may be fractional
/// and its moments' orders need not agree.
struct ResidencyGuide {
  /// Per node, R_a clipped to [0, 1]: how much of a run after the moments
  /// the relaxation gives it (0: kept, or never needed again).
  std::vector<double> rerunShare;
  struct MomentOrder {
    NodeId node = -1;
    /// Whether the moment's memory binds (its row's dual is not 0): the
    /// relaxation's choices at a moment that does not are arbitrary.
    bool binding = false;
    /// The nodes unordered with `node` that the relaxation runs (before_z
    /// >= 1/2) before it, and those it runs after it; ascending ids.
    std::vector<NodeId> before, after;
  };
  /// Per moment of that relaxation, in ascending node order.
  std::vector<MomentOrder> moments;
  bool empty() const { return rerunShare.empty(); }
};

/// The status and lower bound of a simulated plan at `budget` (nullopt: no
/// budget, where plans minimise memory and every status is heuristic), from
/// the solver's own claim in `plan` (may be null).
void setPlanStatus(SolverResult &result, const TrainingGraph &graph,
                   std::optional<uint64_t> budget, const SolvedPlan *plan);

/// A solver computes a schedule; it may ignore the budget (the baselines) or
/// use it. It returns an error only for input it cannot handle.
using SolverFn = std::function<llvm::Expected<SolvedPlan>(
    const TrainingGraph &, const SolverOptions &)>;

struct SolverInfo {
  std::string name;
  std::string description;
  SolverFn fn;
  /// Whether the solver handles `graph` at all (`join`: join graphs only);
  /// empty: every graph. Lists of every solver ("all", the portfolio) skip
  /// a solver that does not apply; asked for by name, it says why.
  std::function<bool(const TrainingGraph &)> applies = nullptr;
};

/// The order every "keep the best plan" choice uses: a plan within `budget`
/// beats one above it; between plans within it, the lower cost (then the
/// lower peak); otherwise, and without a budget, the lower peak (then the
/// lower cost).
bool betterPlan(const SimulationReport &a, const SimulationReport &b,
                std::optional<uint64_t> budget);

/// True if `solver` handles `graph` (SolverInfo::applies).
bool solverApplies(const SolverInfo &solver, const TrainingGraph &graph);

/// All registered solvers, in a stable order.
const std::vector<SolverInfo> &allSolvers();
/// The solver named `name`, or nullptr.
const SolverInfo *findSolver(llvm::StringRef name);
/// Comma-separated list of solver names, for diagnostics.
std::string solverNames();

/// Runs `solver`, simulates its plan and checks the budget. A plan that the
/// simulator rejects is an error (a solver bug), never a silent result.
llvm::Expected<SolverResult> runSolver(const SolverInfo &solver,
                                       const TrainingGraph &graph,
                                       const SolverOptions &options);

/// The `auto` solver: runs every other registered solver while
/// `options.timeLimitSeconds` lasts (the solvers are listed cheapest first;
/// each gets the time that remains) and returns the plan the simulator finds
/// best: within the budget and cheapest, or, without a budget or when no plan
/// fits, the least peak. `solver` reads "auto(<winner>)".
llvm::Expected<SolverResult> runPortfolio(const TrainingGraph &graph,
                                          const SolverOptions &options);

//===----------------------------------------------------------------------===//
// Baselines (seeds/003 §6.1 and appendix B; seeds/004 §5.3)
//===----------------------------------------------------------------------===//

/// No recomputation: every forward value stays resident until its last use.
/// Of the two orders that recompute nothing, forward-then-backward
/// (scheduleFromCheckpoints with every node checkpointed) and the program's
/// own (node ids, with early frees), the one with the lower peak; the
/// forward-then-backward one on a tie.
Schedule solveCheckpointAll(const TrainingGraph &graph);

/// Chen et al.'s √n strategy on the topological order of the forward nodes
/// ("linearized √n", Checkmate appendix B.2): the forward nodes are cut into
/// segments of ceil(sqrt(n)) nodes and the last node of each segment is
/// checkpointed; everything else the backward needs is recomputed.
Schedule solveChenSqrtN(const TrainingGraph &graph);

/// The checkpointed-node mask used by solveChenSqrtN (exposed for tests).
std::vector<bool> chenSqrtNCheckpoints(const TrainingGraph &graph);

} // namespace remat

#endif // REMAT_SOLVERS_SOLVER_H
