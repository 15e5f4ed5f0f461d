//===- PropertyRun.h - Every solver on random graphs, judged twice -*- C++ -*-===//
//
// The property run behind `remat-property-check` and its GoogleTest: random
// training graphs (RandomGraphs.h) x every registered solver x random
// budgets between the node lower bound and the checkpoint-all peak; each
// plan is judged by the independent checker (IndependentChecker.h) and
// compared with what runSolver reports from the simulator: validity, peak,
// per-statement bytes, compute counts, cost, and the claim of meeting the
// budget. Corrupted copies of the plans (mutants) are judged by both the
// checker and simulate(), which must agree on validity and peak.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_UNITTESTS_PROPERTY_PROPERTYRUN_H
#define REMAT_UNITTESTS_PROPERTY_PROPERTYRUN_H

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace remat {
namespace property {

struct RunOptions {
  uint64_t seed = 1;
  /// Graph indices [start, start + graphs): graph i is the same for a seed
  /// whatever the range, so one graph can be rerun alone.
  uint64_t start = 0;
  uint64_t graphs = 1000;
  unsigned maxNodes = 24;
  /// Solver names; empty: every registered solver.
  std::vector<std::string> solvers;
  /// Time limit of every solver that searches (seconds).
  double timeLimit = 0.5;
  /// The CBC solvers (checkmate-ilp, and auto, which runs it) are slow: they
  /// run on graphs whose index is a multiple of this (0: never).
  unsigned cbcEvery = 100;
  /// Budgets drawn per graph; every solver runs under each.
  unsigned budgetsPerGraph = 1;
  /// Corrupted copies of each plan cross-checked against simulate().
  unsigned mutantsPerPlan = 1;
  /// Run the CBC solvers (checkmate-ilp, auto) in a child process, so that
  /// a crash or a hang inside CBC is counted with a reproducer instead of
  /// ending the run.
  bool isolateCbc = true;
  /// Directory for reproducers (graph, plan, solver, budget); empty: none.
  std::string dumpDir;
  /// Progress lines on stderr every this many graphs (0: none).
  uint64_t progressEvery = 0;
};

struct SolverStats {
  std::string name;
  /// Runs skipped: the solver does not apply / not this graph's turn (CBC).
  uint64_t notApplicable = 0, skipped = 0;
  uint64_t runs = 0;
  /// Plans returned and checked by the independent checker.
  uint64_t plans = 0;
  /// Plans under a budget / of those, claimed to meet it.
  uint64_t plansWithBudget = 0, claimsBudget = 0;
  /// The solver returned an error (not an invalid plan).
  uint64_t errors = 0;
  /// Isolated runs whose process died (signal, abort) or hung.
  uint64_t crashes = 0;
  /// runSolver found the plan invalid (simulator), a solver bug.
  uint64_t rejectedBySimulator = 0;
  /// The checker found the plan invalid.
  uint64_t violations = 0;
  uint64_t peakMismatches = 0, timelineMismatches = 0, countMismatches = 0;
  /// Claimed to meet the budget with a checker peak above it / claimed to
  /// miss it with a peak within it (or to miss an absent budget).
  uint64_t falseBudgetClaims = 0, wrongMissClaims = 0;
  /// Checker peak below nodeLowerBound (an accounting error somewhere).
  uint64_t belowLowerBound = 0;
  /// The plan's status (Solver.h: PlanStatus) disagrees with the checker:
  /// infeasible or no-plan for a plan within the budget, optimal, feasible
  /// or heuristic for one above it, an optimal plan costing less than its
  /// lower bound; or a budget this solver proved infeasible that another
  /// solver's plan meets; or a lower bound above the cost of another
  /// solver's plan within the budget (issue 24: bounds hold for every plan).
  uint64_t statusMismatches = 0;
  /// Lower bounds this solver reported (each checked against every other
  /// solver's plans under the same budget).
  uint64_t boundsReported = 0;
  uint64_t recomputations = 0;
  /// Reuse pairs the checker found to be in-place updates in the plans.
  uint64_t inPlaceUpdates = 0;
  double seconds = 0;
  std::map<std::string, uint64_t> errorKinds;

  uint64_t problems() const {
    return crashes + rejectedBySimulator + violations + peakMismatches +
           timelineMismatches + countMismatches + falseBudgetClaims +
           wrongMissClaims + belowLowerBound + statusMismatches;
  }
};

struct Failure {
  uint64_t graphIndex = 0;
  std::string solver;
  std::optional<uint64_t> budget;
  unsigned slots = 0;
  std::string what;
  /// Reproducer file, when written.
  std::string file;
};

struct RunStats {
  RunOptions options;
  uint64_t graphs = 0;
  std::map<std::string, uint64_t> shapes;
  uint64_t nodes = 0, maxNodesSeen = 0;
  uint64_t budgetRuns = 0, budgetsNone = 0, budgetsAtLowerBound = 0,
           budgetsBelowLowerBound = 0, budgetsAtCheckpointAll = 0,
           budgetsBetween = 0;
  /// Budgets some solver's plan met.
  uint64_t budgetsMet = 0;
  uint64_t mutants = 0, mutantsInvalid = 0, mutantsValid = 0,
           mutantDisagreements = 0;
  std::vector<SolverStats> solvers;
  std::vector<Failure> failures;
  double seconds = 0;

  uint64_t plans() const;
  uint64_t problems() const;
  bool clean() const { return problems() == 0 && mutantDisagreements == 0; }
  void print(llvm::raw_ostream &os) const;
  llvm::json::Value toJSON() const;
};

/// Runs the property check; an error for an unknown solver name.
llvm::Expected<RunStats> runProperty(const RunOptions &options);

} // namespace property
} // namespace remat

#endif // REMAT_UNITTESTS_PROPERTY_PROPERTYRUN_H
