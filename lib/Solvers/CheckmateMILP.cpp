//===- CheckmateMILP.cpp - Checkmate's MILP solved with COIN-OR CBC -------===//
//
// `checkmate-ilp`: problem (9) of ../shared/seeds/003_76479834531ac838.txt
// §4.7 (built in CheckmateModel.cpp) solved with CBC, warm-started from the
// cheapest plan of the other solvers or of LP rounding, under a time limit,
// with progress lines for long searches; the solution becomes a Schedule by
// Algorithm 1 (§4.9) and is judged by the simulator.
//
//===----------------------------------------------------------------------===//

#include "CheckmateModel.h"

#include "remat/Support/Debug.h"

#include "llvm/Support/Format.h"

#include <cmath>
#include <limits>

using namespace remat;
using namespace remat::checkmate;

// -debug-only=remat-checkmate-ilp: the phases of checkmate-ilp (model, LP
// bound, warm starts offered and why one is refused, cutoff, CBC's outcome)
// and the plan returned. The session both Checkmate solvers share (the
// other solvers' plans, the budget, fallbacks) prints under remat-checkmate.
#define DEBUG_TYPE "remat-checkmate-ilp"
#define SESSION_DEBUG(...) DEBUG_WITH_TYPE("remat-checkmate", __VA_ARGS__)

llvm::StringRef remat::checkmateStatusName(CheckmateStatus status) {
  switch (status) {
  case CheckmateStatus::Optimal:
    return "proven-optimal";
  case CheckmateStatus::Feasible:
    return "feasible";
  case CheckmateStatus::Infeasible:
    return "infeasible";
  case CheckmateStatus::TimeLimit:
    return "time-limit";
  case CheckmateStatus::NotFound:
    return "not-found";
  }
  return "unknown";
}

llvm::json::Value CheckmateReport::toJSON() const {
  auto number = [](double value) -> llvm::json::Value {
    if (std::isfinite(value))
      return value;
    return nullptr; // JSON has no infinity: an infeasible relaxation
  };
  return llvm::json::Object{
      {"status", checkmateStatusName(status)},
      {"objective", objective},
      {"lower_bound", lowerBound},
      {"lp_bound", number(lpBound)},
      {"gap", gap},
      {"solve_seconds", solveSeconds},
      {"heuristic_seconds", heuristicSeconds},
      {"lp_seconds", lpSeconds},
      {"milp_seconds", milpSeconds},
      {"peak_bytes", peakBytes},
      {"meets_budget", meetsBudget},
      {"budget_bytes", budgetBytes},
      {"memory_unit", memoryUnit},
      {"level", level},
      {"model_nodes", static_cast<uint64_t>(modelNodes)},
      {"graph_nodes", static_cast<uint64_t>(graphNodes)},
      {"num_variables", static_cast<uint64_t>(numVariables)},
      {"num_integers", static_cast<uint64_t>(numIntegers)},
      {"num_constraints", static_cast<uint64_t>(numConstraints)},
      {"warm_start", warmStart},
      {"rounding_threshold", roundingThreshold},
      {"budget_allowance", budgetAllowance},
      {"nodes_explored", static_cast<int64_t>(nodesExplored)},
      {"message", message},
  };
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

Session::Session(const TrainingGraph &graph, const SolverOptions &options,
                 const CheckmateOptions &cmOptions, llvm::StringRef solverName)
    : graph(graph), cmOptions(cmOptions), solverName(solverName.str()) {
  start = std::chrono::steady_clock::now();
  // time-limit=0: no search; the warm start is the answer.
  noSearch = options.timeLimitSeconds == 0;
  double limit = noSearch ? 0 : options.timeLimitSeconds;
  // Clamped as deadlineFrom does: a huge (or infinite) limit would overflow
  // the clock's representation and put the deadline in the past.
  limit = std::min(limit, 1e7);
  deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(limit));
  report.graphNodes = graph.numNodes();

  // Checkpoint-all is always a candidate.
  Schedule all = solveCheckpointAll(graph);
  SimulationReport allReport = simulate(graph, all);
  budget = options.budget ? *options.budget : allReport.peakBytes;
  if (allReport.valid)
    candidates.push_back({"checkpoint-all", std::move(all), allReport});

  // The other registered solvers under the same budget (never this family or
  // the portfolio, which may run this one). Without a budget they minimise
  // memory, like every solver in that mode (SolverOptions::budget), and the
  // least peak among their plans becomes the budget: the Checkmate ILP
  // minimises cost under a budget, so it returns the cheapest plan at the
  // least memory known, not checkpoint-all's plan at the most.
  SolverOptions heuristic = options;
  heuristic.budget = options.budget;
  heuristic.timeLimitSeconds = noSearch ? 0 : std::max(1.0, 0.1 * limit);
  if (cmOptions.warmStart)
    for (const SolverInfo &solver : allSolvers()) {
      llvm::StringRef name = solver.name;
      if (name == "checkpoint-all" || name.starts_with("checkmate") ||
          name == "auto" || name == "exact" || !solverApplies(solver, graph))
        continue;
      // The warm starts take at most 30% of the time limit (issue 24: the
      // limit counts all of the solve); each gets what is left of that.
      if (!noSearch) {
        double left = 0.3 * limit - elapsed();
        if (left <= 0)
          break;
        heuristic.timeLimitSeconds = std::min(std::max(0.05, left),
                                              std::max(1.0, 0.1 * limit));
      }
      llvm::Expected<SolvedPlan> plan = solver.fn(graph, heuristic);
      if (!plan) {
        llvm::consumeError(plan.takeError());
        continue;
      }
      SimulationReport simulation = simulate(graph, plan->schedule);
      if (simulation.valid)
        candidates.push_back(
            {solver.name, std::move(plan->schedule), std::move(simulation)});
    }
  if (!options.budget)
    if (const Candidate *least = leastPeak())
      budget = least->simulation.peakBytes;
  report.heuristicSeconds = elapsed();
  SESSION_DEBUG({
    llvm::dbgs() << this->solverName << ": budget " << budget << " bytes"
                 << (options.budget ? "" : " (least peak of the other solvers)")
                 << ", time limit " << llvm::format("%g", limit) << " s; "
                 << candidates.size() << " plans of other solvers in "
                 << llvm::format("%.3f", report.heuristicSeconds) << " s:\n";
    for (const Candidate &c : candidates)
      llvm::dbgs() << "  " << c.name << ": peak " << c.simulation.peakBytes
                   << " cost " << llvm::format("%g", c.simulation.totalCost)
                   << (c.simulation.peakBytes <= budget ? "" : " (over)")
                   << "\n";
  });
}

double Session::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

double Session::remaining() const {
  return std::chrono::duration<double>(deadline -
                                       std::chrono::steady_clock::now())
      .count();
}

const Candidate *Session::withoutRecomputation() const {
  for (const Candidate &c : candidates)
    if (c.simulation.peakBytes <= budget &&
        c.simulation.numComputes == graph.numNodes())
      return &c;
  return nullptr;
}

const Candidate *Session::cheapestWithinBudget() const {
  const Candidate *best = nullptr;
  for (const Candidate &c : candidates)
    if (c.simulation.peakBytes <= budget &&
        (!best || c.simulation.totalCost < best->simulation.totalCost))
      best = &c;
  return best;
}

const Candidate *Session::leastPeak() const {
  const Candidate *best = nullptr;
  for (const Candidate &c : candidates)
    if (!best || c.simulation.peakBytes < best->simulation.peakBytes)
      best = &c;
  return best;
}

void Session::describe(const ModelGraph &model,
                       const Formulation &formulation) {
  report.level = model.level;
  report.modelNodes = model.size();
  report.memoryUnit = model.unit;
  report.budgetBytes = budget / model.unit * model.unit;
  report.numVariables = formulation.numColumns();
  report.numIntegers = formulation.numIntegers();
  report.numConstraints = formulation.numRows();
}

bool Session::obviouslyInfeasible(const ModelGraph &model) {
  int node = -1;
  uint64_t least = leastPeakBound(model, node);
  if (node < 0 || least <= budget / model.unit)
    return false;
  report.message = "no plan fits: node '" +
                   graph.node(model.nodes[node].members.back()).name +
                   "' needs " + std::to_string(least * model.unit) +
                   " bytes with its inputs";
  return true;
}

Schedule Session::finish(Schedule schedule, CheckmateStatus status,
                         CheckmateReport *out) {
  SimulationReport simulation = simulate(graph, schedule);
  SESSION_DEBUG(llvm::dbgs()
                << solverName << ": " << checkmateStatusName(status)
                << ": peak " << simulation.peakBytes << " cost "
                << llvm::format("%g", simulation.totalCost) << " after "
                << llvm::format("%.3f", elapsed()) << " s"
                << (report.message.empty() ? "" : "; ") << report.message
                << "\n");
  report.status = status;
  report.objective = simulation.totalCost;
  report.peakBytes = simulation.peakBytes;
  report.meetsBudget = simulation.valid && simulation.peakBytes <= budget;
  if (report.budgetBytes == 0)
    report.budgetBytes = budget;
  if (status == CheckmateStatus::Optimal)
    report.lowerBound = report.objective;
  // The bound is the solved model's; a plan the simulator finds cheaper
  // (pruned recomputations, or another solver's plan) has no gap.
  report.lowerBound = std::min(report.lowerBound, report.objective);
  report.gap = report.objective > 0
                   ? (report.objective - report.lowerBound) / report.objective
                   : 0;
  if (status == CheckmateStatus::Infeasible)
    report.gap = -1; // no optimum to be near
  report.solveSeconds = elapsed();
  if (!simulation.valid)
    report.message += (report.message.empty() ? "" : "; ") +
                      std::string("invalid plan: ") + simulation.error;
  if (out)
    *out = report;
  return schedule;
}

Schedule Session::fallback(CheckmateStatus status, CheckmateReport *out) {
  // Infeasibility of a coarse model proves nothing about the graph: its
  // nodes compute whole groups at once.
  if (status == CheckmateStatus::Infeasible &&
      report.modelNodes < report.graphNodes) {
    status = CheckmateStatus::NotFound;
    report.message = "the coarse model has no plan within the budget (" +
                     report.message + "); the full graph may have one";
  }
  const Candidate *chosen = cheapestWithinBudget();
  if (chosen)
    status = status == CheckmateStatus::NotFound ? status
                                                 : CheckmateStatus::Feasible;
  else
    chosen = leastPeak();
  SESSION_DEBUG(llvm::dbgs()
                << solverName << ": falls back to "
                << (chosen ? chosen->name : std::string("nothing"))
                << (chosen && chosen->simulation.peakBytes <= budget
                        ? " (the cheapest plan within the budget)"
                        : " (the least-peak plan)")
                << "\n");
  if (!chosen)
    return finish(Schedule(), status, out);
  report.warmStart = chosen->name;
  report.message += (report.message.empty() ? "" : "; ") +
                    std::string("returned the plan of '") + chosen->name + "'";
  return finish(chosen->schedule, status, out);
}

//===----------------------------------------------------------------------===//
// checkmate-ilp
//===----------------------------------------------------------------------===//

llvm::Expected<Schedule> remat::solveCheckmateILP(const TrainingGraph &graph,
                                                  const SolverOptions &options,
                                                  CheckmateReport *report) {
  return solveCheckmateILP(graph, options, CheckmateOptions(), report);
}

llvm::Expected<Schedule> remat::solveCheckmateILP(
    const TrainingGraph &graph, const SolverOptions &options,
    const CheckmateOptions &cmOptions, CheckmateReport *report) {
  if (llvm::Error err = graph.verify())
    return std::move(err);
  Session session(graph, options, cmOptions, "checkmate-ilp");

  // Every plan computes every node at least once (8a), so a plan within the
  // budget that computes each exactly once is optimal: no search needed (in
  // particular without a budget, which is the checkpoint-all peak).
  if (const Candidate *c = session.withoutRecomputation()) {
    LLVM_DEBUG(llvm::dbgs() << "checkmate-ilp: '" << c->name
                            << "' fits without recomputation: optimal, no "
                               "search\n");
    session.report.level = "none (a plan without recomputation fits)";
    session.report.warmStart = c->name;
    return session.finish(c->schedule, CheckmateStatus::Optimal, report);
  }
  if (session.noSearch) {
    session.report.message = "time-limit=0: the MILP was not solved";
    return session.fallback(CheckmateStatus::NotFound, report);
  }

  if (session.remaining() <= 0) {
    session.report.message = "the time limit was spent on the warm starts";
    return session.fallback(CheckmateStatus::TimeLimit, report);
  }
  ModelGraph model = buildModelGraph(graph, cmOptions.maxNodes);
  Formulation formulation(model, session.budget / model.unit);
  session.describe(model, formulation);
  LLVM_DEBUG(llvm::dbgs() << "checkmate-ilp: model of " << model.size()
                          << " nodes (" << model.level << "), "
                          << formulation.numColumns() << " columns ("
                          << formulation.numIntegers() << " integer), "
                          << formulation.numRows() << " rows; budget "
                          << formulation.budgetUnits() << " units of "
                          << model.unit << " bytes\n");
  if (session.obviouslyInfeasible(model)) {
    LLVM_DEBUG(llvm::dbgs() << "checkmate-ilp: infeasible before any solve: "
                            << session.report.message << "\n");
    return session.fallback(CheckmateStatus::Infeasible, report);
  }

  // The relaxation (its value is a lower bound) and LP rounding, a warm
  // start and a cutoff, within half the time: under a second on graphs of
  // tens of nodes; on large ones (MobileNet, 185 nodes) the rounding search
  // found better plans than CBC did in the same time.
  auto roundingDeadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(0.5 * session.remaining()));
  double lpValue = -1;
  auto lpStart = std::chrono::steady_clock::now();
  std::optional<RoundingResult> rounding =
      lpRounding(model, formulation, session.budget, cmOptions,
                 session.deadline, roundingDeadline, lpValue);
  session.report.lpSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - lpStart)
          .count();
  session.report.lpBound = lpValue;
  // The rounding is a plan like the other solvers': a warm start, and a
  // candidate answer if CBC finds nothing better in time.
  if (rounding)
    session.candidates.push_back({"lp-rounding", rounding->schedule,
                                  simulate(graph, rounding->schedule)});
  LLVM_DEBUG({
    llvm::dbgs() << "checkmate-ilp: LP relaxation ";
    if (lpValue < 0)
      llvm::dbgs() << "not solved in time";
    else
      llvm::dbgs() << "bound " << llvm::format("%g", lpValue);
    llvm::dbgs() << " in " << llvm::format("%.3f", session.report.lpSeconds)
                 << " s; rounding: ";
    if (rounding)
      llvm::dbgs() << "cost " << llvm::format("%g", rounding->cost)
                   << " (threshold " << llvm::format("%g", rounding->threshold)
                   << ", allowance " << llvm::format("%g", rounding->allowance)
                   << ")";
    else
      llvm::dbgs() << "no plan within the budget";
    llvm::dbgs() << "\n";
  });
  if (std::isinf(lpValue)) {
    session.report.message = "the LP relaxation is infeasible at this budget";
    return session.fallback(CheckmateStatus::Infeasible, report);
  }
  if (lpValue >= 0)
    session.report.lowerBound = lpValue;

  // The MIP start (issue 6: "warm start from the best heuristic plan"): the
  // cheapest plan, as R and S, that the model accepts (U within the budget).
  // Its completion by CbcMain1 (a reduced search) costs about one root
  // solve, cheap on small models and minutes on large ones, where the cutoff
  // below does the same work.
  std::optional<std::vector<double>> start;
  std::optional<StagePlan> startPlan;
  double startCost = std::numeric_limits<double>::infinity();
  auto offer = [&](const StagePlan &plan, const std::string &name) {
    StagePlan normal = plan;
    normalise(model, normal);
    double cost = formulation.costOf(normal);
    if (cost >= startCost) {
      LLVM_DEBUG(llvm::dbgs() << "checkmate-ilp: MIP start '" << name
                              << "': model cost " << llvm::format("%g", cost)
                              << ", not below the start so far\n");
      return;
    }
    if (std::optional<std::vector<double>> x = formulation.columnsOf(normal)) {
      LLVM_DEBUG(llvm::dbgs()
                 << "checkmate-ilp: MIP start '" << name << "': model cost "
                 << llvm::format("%g", cost) << ", the start so far\n");
      start = std::move(x);
      startPlan = std::move(normal);
      startCost = cost;
      session.report.warmStart = name;
    } else {
      LLVM_DEBUG(llvm::dbgs() << "checkmate-ilp: MIP start '" << name
                              << "' refused: over the budget in the model\n");
    }
  };
  constexpr size_t kMipStartIntegers = 30000;
  if (cmOptions.warmStart && formulation.numIntegers() <= kMipStartIntegers) {
    for (const Candidate &c : session.candidates) {
      if (std::optional<StagePlan> plan = stagePlanOf(model, c.schedule))
        offer(*plan, c.name);
      else
        LLVM_DEBUG(llvm::dbgs() << "checkmate-ilp: MIP start '" << c.name
                                << "' refused: not a stage plan of the model "
                                   "(remat-checkmate-model says why)\n");
    }
    if (rounding)
      offer(rounding->plan, "lp-rounding");
    offer(StagePlan::identity(model.size()), "no-recomputation");
  }
  // The cutoff: the cheapest plan known within the budget, in the simulator
  // (every plan returned is judged there), or the MIP start's model cost.
  const Candidate *incumbent =
      cmOptions.warmStart ? session.cheapestWithinBudget() : nullptr;
  std::optional<double> cutoff;
  if (incumbent)
    cutoff = incumbent->simulation.totalCost;
  if (start && (!cutoff || startCost < *cutoff))
    cutoff = startCost;
  if (cutoff && session.report.warmStart.empty())
    session.report.warmStart = incumbent ? incumbent->name : "";
  LLVM_DEBUG({
    llvm::dbgs() << "checkmate-ilp: CBC with "
                 << llvm::format("%.2f", session.remaining())
                 << " s left, MIP start "
                 << (start ? session.report.warmStart : std::string("none"))
                 << ", cutoff ";
    if (cutoff)
      llvm::dbgs() << llvm::format("%g", *cutoff);
    else
      llvm::dbgs() << "none";
    llvm::dbgs() << "\n";
  });

  auto milpStart = std::chrono::steady_clock::now();
  // Progress lines only where the caller asked for them (never by default:
  // a library does not write to stderr unasked).
  llvm::raw_ostream *progress =
      cmOptions.progress ? cmOptions.progress : options.progress;
  std::function<void(const std::string &)> print;
  if (progress) {
    print = [progress](const std::string &line) {
      *progress << "checkmate-ilp: " << line << "\n";
      progress->flush();
    };
    // A line when the search starts and one when it ends, whatever its
    // length; lines in between every progressIntervalSeconds.
    *progress << "checkmate-ilp: " << llvm::format("%.1fs", session.elapsed())
              << " CBC search: " << model.size() << " nodes, "
              << formulation.numIntegers() << " integer variables, "
              << llvm::format("%.1f", std::max(0.0, session.remaining()))
              << " s left, incumbent ";
    if (cutoff)
      *progress << llvm::format("%.6g", *cutoff);
    else
      *progress << "none";
    *progress << "\n";
    progress->flush();
  }
  CbcOutcome outcome = runCbc(
      formulation, start ? &*start : nullptr,
      cutoff ? std::optional<double>(*cutoff / formulation.costScale)
             : std::nullopt,
      session.remaining(), progress ? cmOptions.progressIntervalSeconds : 0,
      session.start, std::move(print));
  session.report.milpSeconds = std::chrono::duration<double>(
                                   std::chrono::steady_clock::now() - milpStart)
                                   .count();
  session.report.nodesExplored = outcome.nodes;
  if (progress) {
    *progress << "checkmate-ilp: " << llvm::format("%.1fs", session.elapsed())
              << " CBC search done: "
              << (outcome.optimal      ? "optimal"
                  : outcome.infeasible ? "nothing below the incumbent"
                                       : "stopped")
              << " nodes=" << outcome.nodes << "\n";
    progress->flush();
  }
  LLVM_DEBUG(
      llvm::dbgs() << "checkmate-ilp: CBC "
                   << (outcome.optimal      ? "proved optimality"
                       : outcome.infeasible ? "proved infeasibility"
                                            : "stopped")
                   << " after " << outcome.nodes << " nodes, "
                   << llvm::format("%.3f", session.report.milpSeconds) << " s: "
                   << (outcome.solution.empty() ? "no solution" : "a solution")
                   << ", bound "
                   << llvm::format("%g", outcome.bound * formulation.costScale)
                   << "\n");

  // Without a solution, CBC reports an exhausted search as infeasible or as
  // optimal depending on where the cutoff pruned the last node.
  bool exhausted = outcome.infeasible || outcome.optimal;
  if (outcome.solution.empty()) {
    if (!cutoff) {
      if (exhausted) {
        session.report.message = "CBC proved the model infeasible";
        return session.fallback(CheckmateStatus::Infeasible, report);
      }
      session.report.message = "no plan of the model found in time";
      return session.fallback(CheckmateStatus::TimeLimit, report);
    }
    // Nothing beats the cutoff: with a proof, the plan that set it is
    // optimal for the model (or better, when the simulator finds it cheaper
    // than the model would count it).
    Schedule best = incumbent && incumbent->simulation.totalCost <= startCost
                        ? incumbent->schedule
                        : executionPlan(model, *startPlan);
    double bound = outcome.bound * formulation.costScale;
    if (!exhausted && std::isfinite(bound) && bound <= *cutoff)
      session.report.lowerBound = std::max(session.report.lowerBound, bound);
    session.report.message =
        exhausted ? "CBC proved that no plan of the model is cheaper"
                  : "CBC found no cheaper plan of the model in time";
    return session.finish(std::move(best),
                          exhausted ? CheckmateStatus::Optimal
                                    : CheckmateStatus::Feasible,
                          report);
  }

  double bound = outcome.bound * formulation.costScale;
  if (std::isfinite(bound))
    session.report.lowerBound = std::max(session.report.lowerBound, bound);
  Schedule schedule =
      executionPlan(model, formulation.planOf(outcome.solution.data()));
  SimulationReport simulation = simulate(graph, schedule);
  CheckmateStatus status =
      outcome.optimal ? CheckmateStatus::Optimal : CheckmateStatus::Feasible;
  if (!simulation.valid || simulation.peakBytes > session.budget) {
    // The model bounds the simulator's peak (docs/checkmate.md); this would
    // be a bug, reported rather than hidden.
    session.report.message =
        "the model's plan does not fit in the simulator (" +
        (simulation.valid ? std::to_string(simulation.peakBytes) + " bytes"
                          : simulation.error) +
        ")";
    return session.fallback(CheckmateStatus::Feasible, report);
  }
  // Never worse than the other solvers: their plans are in the model's
  // search space only when they are frontier-advancing (and on the full
  // graph); a cheaper one within the budget is returned instead.
  if (const Candidate *c = session.cheapestWithinBudget())
    if (c->simulation.totalCost < simulation.totalCost) {
      session.report.message =
          "the plan of '" + c->name + "' is cheaper than CBC's" +
          (outcome.optimal ? " optimum of the model" : " best plan");
      return session.finish(c->schedule, status, report);
    }
  return session.finish(std::move(schedule), status, report);
}
