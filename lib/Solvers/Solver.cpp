//===- Solver.cpp - Solver registry and the judged run --------------------===//
//
// The registry every front end (remat-opt's `solver=` option, remat-solve, the
// benchmarks) picks solvers from, and runSolver, which judges a plan by the
// simulator rather than by the solver's own model (DESIGN.md §5, §6).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Solver.h"
#include "remat/Solvers/Chain.h"
#include "remat/Solvers/Checkmate.h"
#include "remat/Solvers/ExactSearch.h"
#include "remat/Solvers/HierarchySolvers.h"
#include "remat/Solvers/Join.h"
#include "remat/Solvers/Rotor.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <tuple>

using namespace remat;

// -debug-only=remat-solver: every judged run (runSolver): the solver, the
// budget, and the simulator's verdict on its plan. -debug-only=remat-auto:
// the portfolio's decisions: which solver runs with how much time, which is
// skipped and why, the bounds, and the winner.
#define DEBUG_TYPE "remat-solver"
#define AUTO_DEBUG(...) DEBUG_WITH_TYPE("remat-auto", __VA_ARGS__)

/// A Checkmate solve with what its report proves about Checkmate's model:
/// an optimum, an incumbent with CBC's (or the LP's) bound, or a budget the
/// model cannot meet. The model fixes the order of first computations
/// (seeds/003 §4.6) and may be a coarser graph, so all of it is the model's
/// (SolvedPlan::modelBound), never the graph's: a plan in another order can
/// be cheaper, or fit where the model has none (issue 24).
template <typename CheckmateSolve>
static llvm::Expected<SolvedPlan>
withCheckmateStatus(const TrainingGraph &graph, const SolverOptions &options,
                    CheckmateSolve solve) {
  CheckmateReport report;
  llvm::Expected<Schedule> schedule = solve(graph, options, &report);
  if (!schedule)
    return schedule.takeError();
  SolvedPlan plan(std::move(*schedule));
  if (report.level.empty() || llvm::StringRef(report.level).starts_with("none"))
    return plan; // no model was solved
  ModelBound bound;
  bound.model = "checkmate frontier-advancing stages in program order, " +
                report.level;
  if (report.modelNodes < report.graphNodes)
    bound.model += " (" + std::to_string(report.modelNodes) + " of " +
                   std::to_string(report.graphNodes) + " nodes)";
  bound.lowerBound = report.lowerBound;
  bound.optimal = report.status == CheckmateStatus::Optimal;
  bound.infeasible = report.status == CheckmateStatus::Infeasible;
  plan.modelBound = std::move(bound);
  return plan;
}

const std::vector<SolverInfo> &remat::allSolvers() {
  // Baselines first: the order is the one reports and tables list them in.
  static const std::vector<SolverInfo> solvers = {
      {"checkpoint-all",
       "keep every forward value until its last backward use (no "
       "recomputation)",
       [](const TrainingGraph &graph, const SolverOptions &)
           -> llvm::Expected<Schedule> { return solveCheckpointAll(graph); }},
      {"chen-sqrtn",
       "Chen et al.'s sqrt(n) checkpoints on the topological order of the "
       "forward nodes (Checkmate's linearized sqrt(n))",
       [](const TrainingGraph &graph, const SolverOptions &)
           -> llvm::Expected<Schedule> { return solveChenSqrtN(graph); }},
      // Chain solvers on the linearized forward graph (Chain.h).
      {"chen-greedy",
       "Chen et al.'s greedy on the topological order of the forward nodes "
       "(linearized greedy), searching its segment budget b",
       solveChenGreedy},
      // Checkmate's generalisation with articulation points as candidates
      // (HierarchySolvers.h).
      {"ap-sqrtn",
       "Chen et al.'s sqrt(n) with the articulation points of the forward "
       "graph as candidates (Checkmate's AP sqrt(n))",
       solveAPSqrtN},
      {"ap-greedy",
       "Chen et al.'s greedy with the articulation points as candidates "
       "(Checkmate's AP greedy), searching its segment budget b",
       solveAPGreedy},
      {"sequential",
       "PyTorch's checkpoint_sequential on the linearized forward graph, "
       "searching its number of segments (2 .. 2 sqrt(n))",
       solveSequential},
      {"hong-cubic",
       "Hong et al.'s checkpoint selection, O(n^3) (Alg. 3): least "
       "checkpoints + largest-segment memory on the linearized chain",
       solveHongCubic},
      {"hong-quadratic",
       "Hong et al.'s dynamic checkpoint selection, O(n^2) (Alg. 5): least "
       "peak in their PyTorch memory model on the linearized chain",
       solveHongQuadratic},
      {"hong-linear",
       "Hong et al.'s dynamic checkpoint selection, O(n) (Alg. 6): least "
       "peak in their PyTorch memory model on the linearized chain",
       solveHongLinear},
      {"feng-linear",
       "Feng & Huang's linear solver (Alg. 1, accessibility graph + shortest "
       "paths): least checkpoints + largest re-forward on the linearized chain",
       solveFengLinear},
      {"feng",
       "Feng & Huang's arbitrary-graph solver (Alg. 6): the linear solver on "
       "the hierarchy of close sets, expanding what exceeds the max term",
       solveFengArbitrary},
      // Budgeted solvers: least recomputation under the budget (Rotor.h).
      {"rotor",
       "rotor's optimal persistent sequence (F_all / F_ck / F_none, Theorem 1 "
       "with S memory slots, default 500) on the chain of stages, under the "
       "budget",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         RotorOptions rotorOptions;
         rotorOptions.slots = options.memorySlots;
         return solveRotor(graph, options, rotorOptions);
       }},
      {"revolve",
       "revolve for heterogeneous chains as rotor's evaluation converts it: "
       "only stage outputs stored, each stage re-run before its backward",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         RotorOptions rotorOptions;
         rotorOptions.slots = options.memorySlots;
         return solveRevolve(graph, options, rotorOptions);
       }},
      {"join",
       "Opt_join (Beaumont et al., Theorem 3) on join graphs: k chains "
       "meeting at the loss; an error on other graphs",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         return join::solveJoin(graph, options);
       },
       [](const TrainingGraph &graph) {
         llvm::Expected<join::JoinStructure> structure =
             join::detectJoinStructure(graph);
         if (structure)
           return true;
         llvm::consumeError(structure.takeError());
         return false;
       }},
      // Optimal rematerialisation on the whole graph (Checkmate.h).
      {"checkmate-lp",
       "Checkmate's LP relaxation (CLP) with two-phase rounding, searching "
       "the rounding threshold and the budget allowance",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         return withCheckmateStatus(
             graph, options,
             [](const TrainingGraph &g, const SolverOptions &o,
                CheckmateReport *r) { return solveCheckmateLP(g, o, r); });
       }},
      {"checkmate-ilp",
       "Checkmate's MILP (frontier-advancing stages) solved with CBC, warm "
       "started from the other solvers' best plan",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         return withCheckmateStatus(
             graph, options,
             [](const TrainingGraph &g, const SolverOptions &o,
                CheckmateReport *r) { return solveCheckmateILP(g, o, r); });
       }},
      // Exact search over every schedule (ExactSearch.h): small graphs only.
      {"exact",
       "best-first search (A*) over all schedules: optimal plans, or valid "
       "lower bounds when stopped (graphs of up to 256 nodes)",
       solveExact,
       [](const TrainingGraph &graph) {
         return graph.numNodes() <= kExactSearchMaxNodes;
       }},
      // The portfolio, last: it runs the solvers above.
      {"auto",
       "the portfolio: every solver above within the time limit; the plan "
       "the simulator finds cheapest within the budget (least peak without "
       "one)",
       [](const TrainingGraph &graph,
          const SolverOptions &options) -> llvm::Expected<SolvedPlan> {
         llvm::Expected<SolverResult> best = runPortfolio(graph, options);
         if (!best)
           return best.takeError();
         SolvedPlan plan(std::move(best->schedule));
         plan.status = best->status;
         plan.costLowerBound = best->lowerBound.value_or(0);
         return plan;
       }},
  };
  return solvers;
}

llvm::json::Value ModelBound::toJSON() const {
  return llvm::json::Object{{"model", model},
                            {"lower_bound", lowerBound},
                            {"optimal", optimal},
                            {"infeasible", infeasible}};
}

llvm::StringRef remat::planStatusName(PlanStatus status) {
  switch (status) {
  case PlanStatus::Optimal:
    return "optimal";
  case PlanStatus::Feasible:
    return "feasible";
  case PlanStatus::Infeasible:
    return "infeasible";
  case PlanStatus::NoPlan:
    return "no-plan";
  case PlanStatus::Heuristic:
    return "heuristic";
  }
  llvm_unreachable("unknown plan status");
}

uint64_t remat::peakLowerBound(const TrainingGraph &graph) {
  const size_t n = graph.numNodes();
  // What a node holds while it runs, step outputs among its inputs apart
  // (they are counted with the ancestors that produce them), and the bytes
  // of the step outputs it produces.
  std::vector<uint64_t> held(n, 0), stepOut(n, 0);
  for (NodeId id = 0; id < NodeId(n); ++id) {
    const Node &node = graph.node(id);
    // TrainingGraph::verify bounds all bytes by 2^63-1: no sum here wraps.
    uint64_t bytes = node.workspaceBytes;
    for (ValueId in : node.inputs)
      if (!graph.value(in).isFixed() && !graph.value(in).isOutput)
        bytes += graph.value(in).bytes;
    for (ValueId out : node.outputs) {
      bytes += graph.value(out).bytes;
      if (graph.value(out).isOutput)
        stepOut[id] += graph.value(out).bytes;
    }
    // An in-place update hands the input's buffer to the output.
    for (auto [in, out] : node.reuses)
      if (!graph.value(in).isOutput)
        bytes -= std::min(bytes, graph.value(out).bytes);
    held[id] = bytes;
  }
  // The nodes producing step outputs, and for each node which of them are
  // its ancestors (bit sets; node ids are a topological order).
  std::vector<NodeId> producers;
  for (NodeId id = 0; id < NodeId(n); ++id)
    if (stepOut[id] > 0)
      producers.push_back(id);
  const size_t words = (producers.size() + 63) / 64;
  std::vector<uint64_t> ancestors(n * words, 0);
  std::vector<int> index(n, -1);
  for (size_t k = 0; k < producers.size(); ++k)
    index[producers[k]] = int(k);
  uint64_t bound = 0, pending = 0;
  for (NodeId p : producers)
    pending += stepOut[p];
  for (NodeId id = 0; id < NodeId(n); ++id) {
    uint64_t *mine = &ancestors[id * words];
    for (ValueId in : graph.node(id).inputs) {
      NodeId p = graph.value(in).producer;
      if (p < 0)
        continue;
      const uint64_t *up = &ancestors[p * words];
      for (size_t w = 0; w < words; ++w)
        mine[w] |= up[w];
      if (index[p] >= 0)
        mine[index[p] >> 6] |= uint64_t(1) << (index[p] & 63);
    }
    // Ancestors producing step outputs ran before this node and their
    // outputs are never freed.
    uint64_t before = 0;
    for (size_t w = 0; w < words; ++w)
      for (uint64_t bits = mine[w]; bits; bits &= bits - 1)
        before += stepOut[producers[w * 64 + __builtin_ctzll(bits)]];
    bound = std::max(bound, held[id] + before);
  }
  // Whichever node producing a step output runs last holds every other step
  // output too.
  if (!producers.empty()) {
    uint64_t last = UINT64_MAX;
    for (NodeId p : producers)
      last = std::min(last, pending - stepOut[p] + held[p]);
    bound = std::max(bound, last);
  }
  return bound;
}

void remat::setPlanStatus(SolverResult &result, const TrainingGraph &graph,
                          std::optional<uint64_t> budget,
                          const SolvedPlan *plan) {
  result.lowerBound.reset();
  if (!budget) {
    result.status = PlanStatus::Heuristic;
    return;
  }
  const double baseCost = graph.totalCost();
  if (*budget < peakLowerBound(graph)) {
    result.status = PlanStatus::Infeasible;
    return;
  }
  // What the solver proved; Heuristic when nothing.
  PlanStatus claimed = plan && plan->status ? *plan->status
                                            : PlanStatus::Heuristic;
  if (!result.meetsBudget) {
    // The simulation overrides a claim of a plan within the budget.
    result.status = claimed == PlanStatus::Infeasible ? PlanStatus::Infeasible
                                                      : PlanStatus::NoPlan;
    return;
  }
  // Every plan computes every node at least once: one that computes each
  // exactly once is optimal, whatever solver found it.
  if (result.report.numRecomputations == 0 &&
      result.report.totalCost <= baseCost) {
    result.status = PlanStatus::Optimal;
    result.lowerBound = result.report.totalCost;
    return;
  }
  if (claimed == PlanStatus::Optimal || claimed == PlanStatus::Feasible) {
    result.status = claimed;
    result.lowerBound = std::max(baseCost, plan->costLowerBound);
    return;
  }
  result.status = PlanStatus::Heuristic;
}

const SolverInfo *remat::findSolver(llvm::StringRef name) {
  for (const SolverInfo &solver : allSolvers())
    if (solver.name == name)
      return &solver;
  return nullptr;
}

std::string remat::solverNames() {
  std::string names;
  for (const SolverInfo &solver : allSolvers()) {
    if (!names.empty())
      names += ", ";
    names += solver.name;
  }
  return names;
}

llvm::Error remat::checkTimeLimit(double seconds, llvm::StringRef name) {
  if (std::isfinite(seconds) && seconds >= 0)
    return llvm::Error::success();
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", seconds);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      name + " must be a finite number of seconds, 0 or more (0: no time-"
             "bounded search), got " + text);
}

llvm::Error remat::checkMemorySlots(uint64_t slots, llvm::StringRef name) {
  if (slots >= 1 && slots <= kMaxMemorySlots)
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 name + " must be in [1, " +
                                     llvm::Twine(kMaxMemorySlots) + "], got " +
                                     llvm::Twine(slots));
}

llvm::Error remat::checkSolverOptions(const SolverOptions &options) {
  if (llvm::Error err = checkTimeLimit(options.timeLimitSeconds))
    return err;
  return checkMemorySlots(options.memorySlots);
}

bool remat::betterPlan(const SimulationReport &a, const SimulationReport &b,
                       std::optional<uint64_t> budget) {
  bool fitsA = budget && a.peakBytes <= *budget;
  bool fitsB = budget && b.peakBytes <= *budget;
  if (fitsA != fitsB)
    return fitsA;
  if (fitsA)
    return std::tie(a.totalCost, a.peakBytes) <
           std::tie(b.totalCost, b.peakBytes);
  return std::tie(a.peakBytes, a.totalCost) <
         std::tie(b.peakBytes, b.totalCost);
}

bool remat::solverApplies(const SolverInfo &solver,
                          const TrainingGraph &graph) {
  return !solver.applies || solver.applies(graph);
}

llvm::Expected<SolverResult> remat::runPortfolio(const TrainingGraph &graph,
                                                 const SolverOptions &options) {
  auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         begin)
        .count();
  };
  std::optional<SolverResult> best;
  std::string errors;
  // The best proven lower bound on the cost of a plan within the budget (the
  // graph's total cost, or a Checkmate search's bound), and whether some
  // solver proved the budget infeasible.
  double bound = graph.totalCost();
  bool provenInfeasible = false;
  // Seconds of Checkmate setup per model variable (T^2 of them), measured
  // on a 2-core VM (12.4 s for both searches on 294 nodes); see below.
  constexpr double kSearchSecondsPerVariable = 1.5e-4;
  // How many times its time limit a Checkmate search took.
  double searchOverrun = 1;
  // The best plan cannot be beaten once it fits and costs no more than a
  // proven bound: the solvers still to run (the searches, last) could only
  // spend the time limit confirming it.
  auto bestIsProvenOptimal = [&] {
    return best && options.budget && best->meetsBudget &&
           best->report.totalCost <= bound;
  };
  AUTO_DEBUG({
    llvm::dbgs() << "auto: " << graph.numNodes() << " nodes, budget ";
    if (options.budget)
      llvm::dbgs() << *options.budget;
    else
      llvm::dbgs() << "none";
    llvm::dbgs() << ", time limit "
                 << llvm::format("%g", options.timeLimitSeconds) << " s\n";
  });
  for (const SolverInfo &solver : allSolvers()) {
    if (solver.name == "auto" || !solverApplies(solver, graph))
      continue;
    if (bestIsProvenOptimal()) {
      AUTO_DEBUG(llvm::dbgs()
                 << "auto: '" << best->solver << "' meets the proven bound "
                 << llvm::format("%g", bound)
                 << ": optimal, the rest is skipped\n");
      break;
    }
    // Under a budget proven infeasible the searches cannot find a plan; the
    // cheap solvers still run, for the least-peak fallback.
    if (provenInfeasible &&
        llvm::StringRef(solver.name).starts_with("checkmate")) {
      AUTO_DEBUG(llvm::dbgs() << "auto: skip " << solver.name
                              << ": the budget is proven infeasible\n");
      continue;
    }
    // time-limit=0: every solver but the Checkmate searches, each without a
    // deadline (the others are polynomial).
    if (options.timeLimitSeconds == 0) {
      if (llvm::StringRef(solver.name).starts_with("checkmate"))
        continue;
      llvm::Expected<SolverResult> result = runSolver(solver, graph, options);
      if (!result) {
        errors +=
            (errors.empty() ? "" : "; ") + llvm::toString(result.takeError());
        continue;
      }
      provenInfeasible |= result->status == PlanStatus::Infeasible;
      if (!best || betterPlan(result->report, best->report, options.budget))
        best = std::move(*result);
      continue;
    }
    double remaining = options.timeLimitSeconds - elapsed();
    // The cheap solvers always run; the searches only with time left.
    if (best && remaining <= 0) {
      AUTO_DEBUG(llvm::dbgs()
                 << "auto: out of time before " << solver.name << "\n");
      break;
    }
    SolverOptions sub = options;
    sub.timeLimitSeconds = std::max(1.0, remaining);
    // The Checkmate searches (last) run only with the time their setup
    // needs, and get shares of what remains, so that the portfolio ends
    // within its limit. Building and solving the LP of a T-node model does
    // not stop at the time limit: on a 2-core VM, U-Net's 294-node step
    // took 4.7 s (LP rounding) and 7.7 s (ILP) with limits of 0.5 s. The
    // setup grows with the T^2 variables, so each search is skipped unless
    // `kSearchSecondsPerVariable` * T^2 seconds remain (with the default 10 s
    // limit: models up to about 250 nodes), and the ILP's share is scaled by
    // how far past its limit the LP ran (the two share that setup).
    if (llvm::StringRef(solver.name).starts_with("checkmate")) {
      double modelNodes = std::min<double>(graph.numNodes(),
                                           CheckmateOptions().maxNodes);
      double setup = kSearchSecondsPerVariable * modelNodes * modelNodes;
      bool lp = solver.name == "checkmate-lp";
      double share = lp ? 0.3 * remaining : 0.9 * remaining / searchOverrun;
      if (best && (remaining < (lp ? 0.4 : 0.6) * setup || share < 0.5)) {
        AUTO_DEBUG(llvm::dbgs() << "auto: skip " << solver.name << ": "
                                << llvm::format("%.2f", remaining)
                                << " s left, its setup needs about "
                                << llvm::format("%.2f", setup) << " s (share "
                                << llvm::format("%.2f", share) << " s)\n");
        continue;
      }
      sub.timeLimitSeconds = std::max(0.5, share);
    }
    AUTO_DEBUG(llvm::dbgs()
               << "auto: run " << solver.name << " with "
               << llvm::format("%.2f", sub.timeLimitSeconds) << " s\n");
    llvm::Expected<SolverResult> result = runSolver(solver, graph, sub);
    if (!result) {
      std::string error = llvm::toString(result.takeError());
      AUTO_DEBUG(llvm::dbgs()
                 << "auto: " << solver.name << " failed: " << error << "\n");
      errors += (errors.empty() ? "" : "; ") + error;
      continue;
    }
    if (solver.name == "checkmate-lp")
      searchOverrun =
          std::max(1.0, result->solveSeconds / sub.timeLimitSeconds);
    if (result->lowerBound)
      bound = std::max(bound, *result->lowerBound);
    provenInfeasible |= result->status == PlanStatus::Infeasible;
    if (!best || betterPlan(result->report, best->report, options.budget))
      best = std::move(*result);
  }
  if (!best)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "auto: no solver produced a plan: " +
                                       errors);
  AUTO_DEBUG(
      llvm::dbgs() << "auto: winner " << best->solver << " (peak "
                   << best->report.peakBytes << ", cost "
                   << llvm::format("%g", best->report.totalCost) << "); bound "
                   << llvm::format("%g", bound)
                   << (provenInfeasible ? ", budget proven infeasible" : "")
                   << ", " << llvm::format("%.3f", elapsed()) << " s\n");
  best->solver = "auto(" + best->solver + ")";
  best->solveSeconds = elapsed();
  // The portfolio's status: the winner's, strengthened by the other
  // solvers' proofs (a Checkmate bound that the winner meets, an
  // infeasibility proof).
  if (options.budget) {
    SolvedPlan claim(Schedule{});
    claim.costLowerBound = bound;
    if (provenInfeasible)
      claim.status = PlanStatus::Infeasible;
    else if (best->meetsBudget && best->report.totalCost <= bound)
      claim.status = PlanStatus::Optimal;
    else if (bound > graph.totalCost())
      claim.status = PlanStatus::Feasible;
    setPlanStatus(*best, graph, options.budget, &claim);
  }
  return std::move(*best);
}

llvm::Expected<SolverResult> remat::runSolver(const SolverInfo &solver,
                                              const TrainingGraph &graph,
                                              const SolverOptions &options) {
  if (llvm::Error err = checkSolverOptions(options))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "solver '" + solver.name +
                                       "': " + llvm::toString(std::move(err)));
  // The portfolio reports which solver won.
  if (solver.name == "auto")
    return runPortfolio(graph, options);
  // Solvers index the graph without checks; a malformed graph must be an
  // error here rather than a crash inside one of them.
  if (llvm::Error err = graph.verify())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "solver '" + solver.name +
            "': invalid graph: " + llvm::toString(std::move(err)));

  auto begin = std::chrono::steady_clock::now();
  llvm::Expected<SolvedPlan> plan = solver.fn(graph, options);
  auto end = std::chrono::steady_clock::now();
  if (!plan)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "solver '" + solver.name + "': " +
                                       llvm::toString(plan.takeError()));

  SolverResult result;
  result.solver = solver.name;
  result.solveSeconds = std::chrono::duration<double>(end - begin).count();
  result.schedule = std::move(plan->schedule);
  result.report = simulate(graph, result.schedule);
  // An invalid plan is a solver bug: never hand it on as a result.
  if (!result.report.valid)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "solver '" + solver.name +
            "' produced an invalid plan: " + result.report.error);
  result.meetsBudget =
      !options.budget || result.report.peakBytes <= *options.budget;
  result.modelBound = plan->modelBound;
  setPlanStatus(result, graph, options.budget, &*plan);
  LLVM_DEBUG({
    llvm::dbgs() << "solver '" << solver.name << "': budget ";
    if (options.budget)
      llvm::dbgs() << *options.budget;
    else
      llvm::dbgs() << "none";
    llvm::dbgs() << ": peak " << result.report.peakBytes << ", cost "
                 << llvm::format("%g", result.report.totalCost) << " ("
                 << result.report.numRecomputations << " recomputations), "
                 << (result.meetsBudget ? "meets the budget"
                                        : "over the budget")
                 << ", " << planStatusName(result.status) << ", "
                 << llvm::format("%.4f", result.solveSeconds) << " s\n";
  });
  return result;
}
