//===- Checkmate.h - Checkmate's MILP and LP rounding ---------*- C++ -*-===//
//
// Optimal rematerialisation on arbitrary graphs after Checkmate (Jain et al.,
// MLSys 2020; ../shared/seeds/003_76479834531ac838.txt §4-5, appendix A):
//
// - `checkmate-ilp`: the mixed integer program (9) with frontier-advancing
//   stages (8a-8c), the memory recurrence (2)-(3), the linearised FREE
//   (7a-7c) and U <= budget, solved with COIN-OR CBC; its solution becomes a
//   Schedule through the execution plan of Algorithm 1.
// - `checkmate-lp`: the LP relaxation (§5.1), solved with COIN-OR CLP, then
//   two-phase rounding (Algorithm 2) with a budget allowance epsilon (§5.3)
//   and a search over the rounding threshold and epsilon.
//
// Both minimise the total compute cost under a memory budget; the simulator
// (lib/Schedule/Simulator.cpp) judges the plans. docs/checkmate.md describes
// the model, how it maps onto TrainingGraph and the measured figures.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SOLVERS_CHECKMATE_H
#define REMAT_SOLVERS_CHECKMATE_H

#include "remat/Solvers/Solver.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace remat {

/// How a Checkmate solve ended.
enum class CheckmateStatus {
  /// Proven: no plan of the solved model is cheaper than the returned plan
  /// (CBC's search was exhausted, or the plan computes every node exactly
  /// once, which no plan can beat). The plan is usually the model's optimum;
  /// it can be another solver's plan that the simulator finds as cheap.
  Optimal,
  /// A plan within the budget, not proven optimal (the time limit was
  /// reached with an incumbent, or LP rounding, which proves nothing).
  Feasible,
  /// The model has no plan within the budget (proven: some node alone needs
  /// more with its inputs, or the LP relaxation or CBC found none). The
  /// returned plan is another solver's: the cheapest within the budget if the
  /// simulator finds one (status Feasible then), else the least-peak one.
  Infeasible,
  /// The time limit was reached before any plan within the budget was found
  /// and infeasibility was not proven. The returned plan is the fallback.
  TimeLimit,
  /// checkmate-lp: the relaxation is feasible but no rounding met the budget
  /// in the simulator; either solver: the coarse model (graphs above
  /// maxNodes) has no plan within the budget, which proves nothing about the
  /// graph. The returned plan is the fallback.
  NotFound,
};

llvm::StringRef checkmateStatusName(CheckmateStatus status);

/// Options beyond SolverOptions (budget, timeLimitSeconds).
struct CheckmateOptions {
  /// Graphs with more nodes are solved on a coarser graph of at most this many
  /// nodes and expanded (CheckmateReport::level says which). 0: never coarsen.
  unsigned maxNodes = 300;
  /// Run the other registered solvers first: their cheapest plan within the
  /// budget (or LP rounding's) is CBC's cutoff and, mapped to R and S, its
  /// MIP start (models of up to 30,000 integer columns).
  bool warmStart = true;
  /// Progress lines (incumbent, bound, gap) every this many seconds of a CBC
  /// search; 0 disables them.
  double progressIntervalSeconds = 10;
  /// Where progress lines go; nullptr means SolverOptions::progress, and
  /// when that is nullptr too, nowhere: the library never prints unasked
  /// (remat-solve passes llvm::errs() for --progress or a terminal).
  llvm::raw_ostream *progress = nullptr;
  /// Two-phase rounding search (§5.2-5.3; appendix C suggests searching
  /// epsilon): every threshold p rounds S* > p, every epsilon solves the
  /// relaxation under (1 - epsilon) * budget. The cheapest plan that the
  /// simulator finds within the budget wins.
  std::vector<double> roundingThresholds = {0.5, 0.4, 0.6, 0.3, 0.7,
                                            0.2, 0.8, 0.1, 0.9};
  std::vector<double> budgetAllowances = {0.0,  0.02, 0.05, 0.1,
                                          0.15, 0.2,  0.3,  0.5};
};

/// What a Checkmate solve found. Costs are in the graph's cost unit.
struct CheckmateReport {
  CheckmateStatus status = CheckmateStatus::NotFound;
  /// Simulated cost of the returned plan.
  double objective = 0;
  /// Proven lower bound on the optimum of the solved model: CBC's best bound
  /// for the ILP (at least the LP value), the LP value for LP rounding.
  /// Equal to `objective` when Optimal; 0 when unknown.
  double lowerBound = 0;
  /// Value of the LP relaxation (§5.1) at the budget; negative when it was
  /// not solved, infinite when it is infeasible.
  double lpBound = -1;
  /// (objective - lowerBound) / objective, 0 when Optimal, -1 when
  /// Infeasible.
  double gap = 0;
  double solveSeconds = 0;
  /// Where the time went: the other solvers' plans, the LP relaxation and
  /// rounding, CBC.
  double heuristicSeconds = 0, lpSeconds = 0, milpSeconds = 0;
  /// Peak of the returned plan in the simulator, and whether it is within
  /// the budget.
  uint64_t peakBytes = 0;
  bool meetsBudget = false;
  /// The budget the model used (bytes; floored to the memory unit).
  uint64_t budgetBytes = 0;
  /// Memory unit of the model: the gcd of the graph's tensor sizes.
  uint64_t memoryUnit = 1;
  /// Which graph the MILP was built on: "full graph", or the coarse graph
  /// (how it was obtained), with modelNodes of graphNodes nodes.
  std::string level;
  size_t modelNodes = 0, graphNodes = 0;
  size_t numVariables = 0, numIntegers = 0, numConstraints = 0;
  /// The plan CBC was seeded with ("" when none), or the rounding that won.
  std::string warmStart;
  /// checkmate-lp: the threshold and allowance of the returned rounding.
  double roundingThreshold = 0, budgetAllowance = 0;
  /// Nodes explored by CBC.
  long long nodesExplored = 0;
  std::string message;

  llvm::json::Value toJSON() const;
};

/// Checkmate's MILP (9) solved with CBC. Without a budget (least-memory
/// mode) the budget is the least peak of the other solvers' least-memory
/// plans (checkpoint-all's without a warm start), and the result is the
/// cheapest plan the model has at that memory. Without a
/// plan within the budget, the least-peak plan known is returned and the
/// report says Infeasible or TimeLimit; the error is only for input the
/// solver cannot handle.
llvm::Expected<Schedule> solveCheckmateILP(const TrainingGraph &graph,
                                           const SolverOptions &options,
                                           CheckmateReport *report = nullptr);
llvm::Expected<Schedule> solveCheckmateILP(const TrainingGraph &graph,
                                           const SolverOptions &options,
                                           const CheckmateOptions &cmOptions,
                                           CheckmateReport *report = nullptr);

/// The LP relaxation (solved with CLP) and two-phase rounding (Algorithm 2).
/// The report's lowerBound is the LP value, so every plan's gap to optimal
/// can be printed. Budget and fallback as for solveCheckmateILP.
llvm::Expected<Schedule> solveCheckmateLP(const TrainingGraph &graph,
                                          const SolverOptions &options,
                                          CheckmateReport *report = nullptr);
llvm::Expected<Schedule> solveCheckmateLP(const TrainingGraph &graph,
                                          const SolverOptions &options,
                                          const CheckmateOptions &cmOptions,
                                          CheckmateReport *report = nullptr);

} // namespace remat

#endif // REMAT_SOLVERS_CHECKMATE_H
