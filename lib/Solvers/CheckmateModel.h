//===- CheckmateModel.h - Checkmate's model, shared by ILP and LP -*- C++ -*-===//
//
// Private to lib/Solvers. The graph the MILP is built on (the training graph
// or a coarser one), the formulation (9) of
// ../shared/seeds/003_76479834531ac838.txt §4.7 over it, stage plans (the
// integral R and S matrices) and their execution plan (Algorithm 1).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_LIB_SOLVERS_CHECKMATEMODEL_H
#define REMAT_LIB_SOLVERS_CHECKMATEMODEL_H

#include "remat/Solvers/Checkmate.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

class OsiSolverInterface;

namespace remat {
namespace checkmate {

/// A node v_i of Checkmate's graph: one training-graph node, or (on a coarse
/// graph) several that are always computed together, in id order.
struct ModelNode {
  std::vector<NodeId> members;
  /// C_i: the members' total cost.
  double cost = 0;
  /// M_i in memory units, split in two: `mem`, the external outputs that
  /// can be freed, and `memOut`, the step outputs, which are never freed, so
  /// the node is never recomputed (`pinned`). External outputs are the
  /// members' values read outside the node; the others live only while the
  /// node computes and count in `work`.
  uint64_t mem = 0, memOut = 0;
  /// Transient memory above M_i while the node computes (workspace and
  /// internal values), in memory units.
  uint64_t work = 0;
  bool pinned = false;
  Phase phase = Phase::Forward;
  /// DEPS[i] and USERS[i] of §4.4, sorted.
  std::vector<int> deps, users;
};

struct ModelGraph {
  const TrainingGraph *graph = nullptr;
  std::vector<ModelNode> nodes;
  /// Training-graph node -> model node.
  std::vector<int> nodeOf;
  /// Per value: read by a node of another model node, or a step output.
  std::vector<char> external;
  /// Bytes per memory unit: the gcd of all value and workspace sizes.
  uint64_t unit = 1;
  std::string level;

  size_t size() const { return nodes.size(); }
};

/// The model graph of `graph`: the graph itself when it has at most
/// `maxNodes` nodes (or maxNodes == 0), else a coarsening.
ModelGraph buildModelGraph(const TrainingGraph &graph, unsigned maxNodes);

/// A lower bound on the peak of every plan of the model, in memory units:
/// v_k's stage computes v_k with all of DEPS[k] resident (1b), next to the
/// step outputs of earlier nodes. Sets `node` to the k that attains it.
uint64_t leastPeakBound(const ModelGraph &model, int &node);

/// Integral R and S of a frontier-advancing schedule: R[t][i] for i <= t
/// (8c), S[t][i] for i < t (8b; S[t] has t+1 entries, the last one 0).
struct StagePlan {
  std::vector<std::vector<char>> R, S;
  static StagePlan identity(size_t n);
};

/// Drops computations nothing in their stage needs (the conditionally optimal
/// R of §5.2 given S) and checkpoints nothing needs, until neither changes.
/// The plan must satisfy (1b), (1c) and (8a-8c).
void normalise(const ModelGraph &model, StagePlan &plan);

/// Algorithm 1 (§4.9) into a Schedule: a row-major scan of R, each model
/// node expanded into its members, with every value freed right after its
/// last use in its stage unless S keeps its node for the next stage (the
/// deallocations FREE encodes, moved as early as §4.9 allows).
Schedule executionPlan(const ModelGraph &model, StagePlan plan);

/// The stage plan of a schedule whose computations are a topological order
/// with recomputation (the first computations in node order, each stage's
/// computations in increasing order), or nullopt.
std::optional<StagePlan> stagePlanOf(const ModelGraph &model,
                                     const Schedule &schedule);

/// Problem (9) over a model graph, as a matrix for COIN-OR's Osi interface.
class Formulation {
public:
  Formulation(const ModelGraph &model, uint64_t budgetUnits);

  /// Loads the problem (all variables continuous in [0, 1] or U >= 0).
  void load(OsiSolverInterface &solver) const;
  /// Marks R, S and FREE integral (1f, 7a).
  void markIntegers(OsiSolverInterface &solver) const;
  /// Changes the budget of a loaded problem (U <= budget and the workspace
  /// rows); used for the allowance (1 - epsilon) * budget of §5.3.
  void setBudget(OsiSolverInterface &solver, double budgetUnits) const;

  /// The full column vector of a stage plan (FREE from (5), U from (2)-(3)),
  /// or nullopt when it exceeds the budget in the model.
  std::optional<std::vector<double>> columnsOf(const StagePlan &plan) const;
  /// Objective (1a) of a stage plan, in the graph's cost unit.
  double costOf(const StagePlan &plan) const;
  /// R and S of a solution vector, rounded at `threshold`.
  StagePlan planOf(const double *columns, double threshold = 0.5) const;
  /// S* of a solution vector (the fractional checkpoint matrix).
  std::vector<std::vector<double>> checkpointsOf(const double *columns) const;

  /// Objective coefficients are C_i / costScale (numerically safe scale).
  double costScale = 1;
  size_t numColumns() const { return numCols; }
  size_t numRows() const { return rowLower.size(); }
  size_t numIntegers() const { return numInts; }
  /// The budget in memory units: the largest memory coefficient of (9).
  uint64_t budgetUnits() const { return budget; }

private:
  int colR(int t, int i) const { return rBase + t * (t + 1) / 2 + i; }
  int colS(int t, int i) const { return sBase + t * (t - 1) / 2 + i; }
  int colU(int t, int k) const { return uBase + t * (t + 1) / 2 + k; }

  const ModelGraph &model;
  int n;
  uint64_t budget;
  int rBase = 0, sBase = 0, uBase = 0, freeBase = 0;
  size_t numCols = 0, numInts = 0;
  /// FREE_{t,i,k} columns: for each (t, k), the pairs (i, column) with i in
  /// DEPS[k] or i == k and M_i > 0.
  std::vector<std::vector<std::pair<int, int>>> freeCols;
  /// Rows with a workspace term: (t, k, row).
  std::vector<std::tuple<int, int, int>> workRows;
  std::vector<int> rowIdx, colIdx;
  std::vector<double> elements, rowLower, rowUpper, colLower, colUpper, obj;
};

/// What CBC found (CheckmateCbc.cpp).
struct CbcOutcome {
  /// Best solution, empty when none was found.
  std::vector<double> solution;
  /// Best bound, in the formulation's (scaled) objective.
  double bound = 0;
  bool optimal = false, infeasible = false;
  long long nodes = 0;
};

/// Solves `formulation` as a MILP with CBC's standard driver (CbcMain1:
/// preprocessing, cuts, heuristics), from the MIP start `start` if given,
/// pruning everything that cannot beat `cutoff` (scaled objective) if given,
/// within `seconds`; every `progressInterval` seconds (0: never) `print` gets
/// a line with the incumbent, the bound and the gap. With a cutoff, "proven
/// infeasible" means that no plan of the model is cheaper than the cutoff.
CbcOutcome runCbc(const Formulation &formulation,
                  const std::vector<double> *start,
                  std::optional<double> cutoff, double seconds,
                  double progressInterval,
                  std::chrono::steady_clock::time_point clock,
                  std::function<void(const std::string &)> print);

/// A plan of another registered solver, simulated.
struct Candidate {
  std::string name;
  Schedule schedule;
  SimulationReport simulation;
};

/// What both solvers do around the model: fix the budget, collect the other
/// registered solvers' plans (warm starts, fallbacks, and the proof that a
/// plan without recomputation fits), keep time, and fill in the report.
class Session {
public:
  Session(const TrainingGraph &graph, const SolverOptions &options,
          const CheckmateOptions &cmOptions, llvm::StringRef solverName);

  const TrainingGraph &graph;
  const CheckmateOptions &cmOptions;
  std::string solverName;
  /// The budget in bytes (the checkpoint-all peak when none was given).
  uint64_t budget = 0;
  std::vector<Candidate> candidates;
  std::chrono::steady_clock::time_point start, deadline;
  /// time-limit=0: no LP, no MILP; the warm start is returned.
  bool noSearch = false;
  CheckmateReport report;

  double elapsed() const;
  double remaining() const;
  /// A candidate within the budget that computes every node once: optimal.
  const Candidate *withoutRecomputation() const;
  const Candidate *cheapestWithinBudget() const;
  const Candidate *leastPeak() const;
  /// Simulates `schedule`, fills the report and hands it to `out`.
  Schedule finish(Schedule schedule, CheckmateStatus status,
                  CheckmateReport *out);
  /// No plan of the model: the cheapest candidate within the budget, else
  /// the least-peak one.
  Schedule fallback(CheckmateStatus status, CheckmateReport *out);
  /// Records the model's size in the report.
  void describe(const ModelGraph &model, const Formulation &formulation);
  /// True (with the report's message set) when leastPeakBound shows that the
  /// model has no plan within the budget.
  bool obviouslyInfeasible(const ModelGraph &model);
};

/// Solves the LP relaxation, then two-phase rounding over the thresholds and
/// allowances of `options`. Returns the cheapest plan whose simulated peak is
/// within `budgetBytes`, or nullopt; `lpValue` gets the relaxation's value at
/// the full budget (+inf if infeasible, -1 if CLP stopped at `lpDeadline`).
/// Stops searching at `deadline`.
struct RoundingResult {
  StagePlan plan;
  Schedule schedule;
  double cost = 0;
  double threshold = 0, allowance = 0;
};
std::optional<RoundingResult>
lpRounding(const ModelGraph &model, const Formulation &formulation,
           uint64_t budgetBytes, const CheckmateOptions &options,
           std::chrono::steady_clock::time_point lpDeadline,
           std::chrono::steady_clock::time_point deadline, double &lpValue);

} // namespace checkmate
} // namespace remat

#endif // REMAT_LIB_SOLVERS_CHECKMATEMODEL_H
