//===- CheckmateLP.cpp - LP relaxation and two-phase rounding -------------===//
//
// `checkmate-lp`: the approximation of ../shared/seeds/003_76479834531ac838.txt
// §5. The relaxation of problem (9) (R, S, FREE in [0, 1], §5.1) is solved
// with COIN-OR CLP; its value is a lower bound on the ILP. Two-phase rounding
// (Algorithm 2, §5.2) rounds only the checkpoint matrix S* and then sets the
// fewest R that make the plan correct; as it ignores the budget, the
// relaxation is solved under (1 - epsilon) * budget (§5.3), and since the
// best epsilon varies by graph (appendix C suggests searching it), a grid of
// thresholds and allowances is searched and the cheapest plan that the
// simulator finds within the budget wins.
//
//===----------------------------------------------------------------------===//

#include "CheckmateModel.h"

#include "remat/Support/Debug.h"

#include "llvm/Support/Format.h"

#include "OsiClpSolverInterface.hpp"

#include <cmath>
#include <limits>

using namespace remat;
using namespace remat::checkmate;

// -debug-only=remat-checkmate-lp: the relaxation (its value, CLP's status),
// and per budget allowance epsilon the roundings tried, how many fit and the
// best; the LP rounding that checkmate-ilp runs for its warm start prints
// here too.
#define DEBUG_TYPE "remat-checkmate-lp"

/// Algorithm 2 for the fractional checkpoint matrix `checkpoints` and
/// threshold `threshold`. Nodes that produce step outputs are never
/// recomputed: where a constraint needs one, it stays checkpointed from its
/// own stage instead.
static StagePlan
twoPhaseRounding(const ModelGraph &model,
                 const std::vector<std::vector<double>> &checkpoints,
                 double threshold) {
  const int n = static_cast<int>(model.size());
  // Round S* deterministically; R <- I_n satisfies (8a).
  StagePlan plan = StagePlan::identity(n);
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < t; ++i)
      plan.S[t][i] = checkpoints[t][i] > threshold;
  auto keepFrom = [&](int t, int i) {
    // A pinned v_i checkpointed into stage t: checkpoint it into every
    // stage since its own, where (8a) computed it.
    for (int s = t; s > i && !plan.S[s][i]; --s)
      plan.S[s][i] = 1;
  };

  // (1c) violated: S_{t,i} > R_{t-1,i} + S_{t-1,i}. Compute v_i in stage
  // t - 1 to materialise the checkpoint. Scanning t downwards lets a pinned
  // node's checkpoint propagate back to its stage.
  for (int t = n - 1; t >= 1; --t)
    for (int i = 0; i < t; ++i) {
      if (!plan.S[t][i] || plan.R[t - 1][i] || (i < t - 1 && plan.S[t - 1][i]))
        continue;
      if (model.nodes[i].pinned)
        keepFrom(t - 1, i);
      else
        plan.R[t - 1][i] = 1;
    }
  // (1b) violated: R_{t,j} > R_{t,i} + S_{t,i}. Compute v_i as a temporary;
  // in reverse topological order within each stage (§5.2), so that the new
  // computations' own dependencies are corrected in the same scan.
  for (int t = 0; t < n; ++t)
    for (int j = t; j >= 0; --j) {
      if (!plan.R[t][j])
        continue;
      for (int i : model.nodes[j].deps) {
        if (plan.R[t][i] || plan.S[t][i])
          continue;
        if (model.nodes[i].pinned)
          keepFrom(t, i);
        else
          plan.R[t][i] = 1;
      }
    }
  return plan;
}

std::optional<RoundingResult>
checkmate::lpRounding(const ModelGraph &model, const Formulation &formulation,
                      uint64_t budgetBytes, const CheckmateOptions &options,
                      std::chrono::steady_clock::time_point lpDeadline,
                      std::chrono::steady_clock::time_point deadline,
                      double &lpValue) {
  const TrainingGraph &graph = *model.graph;
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  formulation.load(solver);
  auto secondsUntil = [](std::chrono::steady_clock::time_point when) {
    return std::chrono::duration<double>(when -
                                         std::chrono::steady_clock::now())
        .count();
  };
  // CLP's own limit is CPU time: a wall-clock limit is what the user set
  // (issue 24: a 10 s limit ran 18 s on a loaded machine), so both are set.
  auto limit = [&](std::chrono::steady_clock::time_point when) {
    double seconds = std::max(0.01, secondsUntil(when));
    solver.getModelPtr()->setMaximumSeconds(seconds);
    solver.getModelPtr()->setMaximumWallSeconds(seconds);
  };
  if (secondsUntil(lpDeadline) <= 0) {
    lpValue = -1;
    return std::nullopt;
  }
  // The relaxation itself may use all the time left; the search over
  // allowances stops at `deadline`.
  limit(lpDeadline);
  solver.initialSolve();
  if (!solver.isProvenOptimal()) {
    lpValue = solver.isProvenPrimalInfeasible()
                  ? std::numeric_limits<double>::infinity()
                  : -1;
    LLVM_DEBUG(llvm::dbgs()
               << "checkmate lp: the relaxation is "
               << (std::isinf(lpValue) ? "infeasible"
                                       : "unsolved (CLP stopped at its limit)")
               << "\n");
    return std::nullopt;
  }
  lpValue = solver.getObjValue() * formulation.costScale;
  LLVM_DEBUG(llvm::dbgs() << "checkmate lp: relaxation value "
                          << llvm::format("%g", lpValue) << " (a lower bound), "
                          << solver.getIterationCount() << " iterations\n");

  const double units = static_cast<double>(budgetBytes / model.unit);
  std::optional<RoundingResult> best;
  std::vector<double> allowances = options.budgetAllowances;
  if (allowances.empty())
    allowances.push_back(0.1); // §5.3: "epsilon = 0.1 works well"
  std::vector<double> thresholds = options.roundingThresholds;
  if (thresholds.empty())
    thresholds.push_back(0.5);
  for (size_t a = 0; a < allowances.size(); ++a) {
    double epsilon = allowances[a];
    if (a > 0 && std::chrono::steady_clock::now() > deadline)
      break;
    if (a > 0 || epsilon > 0) {
      // U_{t,k} <= (1 - epsilon) M_budget, warm-started from the last basis.
      formulation.setBudget(solver, std::floor((1 - epsilon) * units));
      limit(deadline);
      solver.resolve();
      if (!solver.isProvenOptimal()) {
        LLVM_DEBUG(llvm::dbgs()
                   << "checkmate lp: epsilon " << llvm::format("%g", epsilon)
                   << ": relaxation not solved ("
                   << (solver.isProvenPrimalInfeasible() ? "infeasible"
                                                         : "stopped")
                   << ")\n");
        continue;
      }
    }
    [[maybe_unused]] unsigned tried = 0, fitting = 0, invalid = 0;
    std::vector<std::vector<double>> checkpoints =
        formulation.checkpointsOf(solver.getColSolution());
    std::vector<std::vector<char>> previous;
    for (double threshold : thresholds) {
      StagePlan plan = twoPhaseRounding(model, checkpoints, threshold);
      if (plan.S == previous)
        continue; // the same rounding as the last threshold
      previous = plan.S;
      // "Evaluate FREE by simulating execution": the execution plan, judged
      // by the simulator.
      Schedule schedule = executionPlan(model, plan);
      SimulationReport simulation = simulate(graph, schedule);
      ++tried;
      if (!simulation.valid)
        ++invalid;
      if (!simulation.valid || simulation.peakBytes > budgetBytes)
        continue;
      ++fitting;
      if (!best || simulation.totalCost < best->cost)
        best = RoundingResult{std::move(plan), std::move(schedule),
                              simulation.totalCost, threshold, epsilon};
    }
    LLVM_DEBUG({
      llvm::dbgs() << "checkmate lp: epsilon " << llvm::format("%g", epsilon)
                   << ": relaxation "
                   << llvm::format("%g",
                                   solver.getObjValue() * formulation.costScale)
                   << ", " << tried << " distinct roundings, " << fitting
                   << " within the budget";
      if (invalid)
        llvm::dbgs() << ", " << invalid << " invalid";
      if (best)
        llvm::dbgs() << "; best so far cost " << llvm::format("%g", best->cost)
                     << " (threshold " << llvm::format("%g", best->threshold)
                     << ", epsilon " << llvm::format("%g", best->allowance)
                     << ")";
      llvm::dbgs() << "\n";
    });
  }
  return best;
}

llvm::Expected<Schedule> remat::solveCheckmateLP(const TrainingGraph &graph,
                                                 const SolverOptions &options,
                                                 CheckmateReport *report) {
  return solveCheckmateLP(graph, options, CheckmateOptions(), report);
}

llvm::Expected<Schedule> remat::solveCheckmateLP(
    const TrainingGraph &graph, const SolverOptions &options,
    const CheckmateOptions &cmOptions, CheckmateReport *report) {
  if (llvm::Error err = graph.verify())
    return std::move(err);
  // LP rounding needs no warm start; the other solvers' plans are only the
  // fallback when no rounding fits.
  Session session(graph, options, cmOptions, "checkmate-lp");
  if (const Candidate *c = session.withoutRecomputation()) {
    session.report.level = "none (a plan without recomputation fits)";
    session.report.warmStart = c->name;
    return session.finish(c->schedule, CheckmateStatus::Optimal, report);
  }
  if (session.noSearch) {
    session.report.message = "time-limit=0: the LP was not solved";
    return session.fallback(CheckmateStatus::NotFound, report);
  }

  if (session.remaining() <= 0) {
    session.report.message = "the time limit was spent on the warm starts";
    return session.fallback(CheckmateStatus::TimeLimit, report);
  }
  ModelGraph model = buildModelGraph(graph, cmOptions.maxNodes);
  Formulation formulation(model, session.budget / model.unit);
  session.describe(model, formulation);
  LLVM_DEBUG(llvm::dbgs() << "checkmate-lp: model of " << model.size()
                          << " nodes (" << model.level << "), "
                          << formulation.numColumns() << " columns, "
                          << formulation.numRows() << " rows; budget "
                          << formulation.budgetUnits() << " units of "
                          << model.unit << " bytes\n");
  if (session.obviouslyInfeasible(model)) {
    LLVM_DEBUG(llvm::dbgs() << "checkmate-lp: infeasible before any solve: "
                            << session.report.message << "\n");
    return session.fallback(CheckmateStatus::Infeasible, report);
  }
  double lpValue = -1;
  auto lpStart = std::chrono::steady_clock::now();
  std::optional<RoundingResult> rounding =
      lpRounding(model, formulation, session.budget, cmOptions,
                 session.deadline, session.deadline, lpValue);
  session.report.lpSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - lpStart)
          .count();
  session.report.lpBound = lpValue;
  if (std::isinf(lpValue)) {
    session.report.message = "the LP relaxation is infeasible at this budget";
    return session.fallback(CheckmateStatus::Infeasible, report);
  }
  if (lpValue >= 0)
    session.report.lowerBound = lpValue;
  if (!rounding) {
    session.report.message = lpValue < 0 ? "CLP did not solve the relaxation"
                                         : "no rounding fits the budget";
    return session.fallback(CheckmateStatus::NotFound, report);
  }
  session.report.warmStart = "lp-rounding";
  session.report.roundingThreshold = rounding->threshold;
  session.report.budgetAllowance = rounding->allowance;
  return session.finish(std::move(rounding->schedule),
                        CheckmateStatus::Feasible, report);
}
