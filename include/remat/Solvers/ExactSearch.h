//===- ExactSearch.h - Optimal plans over all schedules (A*) ----*- C++ -*-===//
//
// An exact solver over *every* schedule the simulator accepts (any order of
// first computations, any recomputation, any frees, in-place updates), not
// over a restricted model: best-first search (A*) over the states
// (resident values, nodes computed at least once), with an admissible
// estimate of the cost still to pay. What it proves holds for the graph:
//
//  - when the search ends, its plan is optimal (or the given incumbent is, or
//    no plan fits the budget: infeasible; a budget below leastPeakBound is
//    infeasible before any search);
//  - when it stops early (time or state limit), the least estimated total of
//    the states still open is a lower bound on the cost of every plan within
//    the budget.
//
// The paper models restrict the schedules (Checkmate fixes the order of first
// computations, seeds/003 §4.6, "This reduces the feasible set"; rotor's
// sequences are persistent chains, seeds/004 §4), so their optima and bounds
// are not bounds for the graph; this search is where the project's valid
// bounds on small graphs come from (docs/solvers-at-scale.md). Exponential:
// meant for graphs of tens of nodes (the shipped examples, the property
// checker's random graphs).
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SOLVERS_EXACTSEARCH_H
#define REMAT_SOLVERS_EXACTSEARCH_H

#include "remat/Solvers/Solver.h"

#include <cstddef>
#include <optional>
#include <string>

namespace remat {

struct ExactSearchOptions {
  /// The search stops (with a lower bound) after storing this many states.
  size_t maxStates = 4'000'000;
  /// A plan already known within the budget: the search looks only for
  /// cheaper plans (states whose estimate reaches its cost are pruned), and
  /// proves it optimal when nothing cheaper exists.
  std::optional<Schedule> incumbent;
  /// leastPeakBound(graph), when the caller has it (auto): not searched
  /// again.
  std::optional<uint64_t> leastPeak;
};

struct ExactSearchReport {
  /// The search ended: the returned plan is optimal, or (infeasible) no plan
  /// fits the budget.
  bool optimal = false;
  bool infeasible = false;
  /// A lower bound on the cost of every plan within the budget (the graph's
  /// total cost at least); equal to the plan's cost when optimal.
  double lowerBound = 0;
  /// The plan came from the search (not the incumbent).
  bool searchFoundPlan = false;
  size_t statesStored = 0, statesExpanded = 0;
  double seconds = 0;
  /// Why the search stopped early ("time limit", "state limit"), or "".
  std::string stoppedBy;
};

/// The most nodes the search takes; larger graphs are an error.
constexpr size_t kExactSearchMaxNodes = 256;
/// The largest graphs `auto` runs the search on (with a share of its time).
constexpr size_t kExactAutoNodes = 96;

/// The search under `options.budget` (required; without one there is no cost
/// to minimise and the incumbent, or an error, is returned) within
/// `options.timeLimitSeconds` (0: no time limit, only the state limit).
/// Returns the plan found or the incumbent (status and bound set from the
/// report), or an error when no plan is known at all (infeasible, or the
/// search stopped before finding one and there was no incumbent).
llvm::Expected<SolvedPlan> solveExactSearch(const TrainingGraph &graph,
                                            const SolverOptions &options,
                                            const ExactSearchOptions &search,
                                            ExactSearchReport *report = nullptr);

/// The registry's `exact`: the search with the cheapest plan of the
/// polynomial solvers (every registered solver but the Checkmate searches,
/// `auto` and this one) as its incumbent.
llvm::Expected<SolvedPlan> solveExact(const TrainingGraph &graph,
                                      const SolverOptions &options);

} // namespace remat

#endif // REMAT_SOLVERS_EXACTSEARCH_H
