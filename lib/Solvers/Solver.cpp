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
#include "remat/Solvers/HierarchySolvers.h"
#include "remat/Solvers/Join.h"
#include "remat/Solvers/Rotor.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <optional>
#include <tuple>

using namespace remat;

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
         return solveCheckmateLP(graph, options);
       }},
      {"checkmate-ilp",
       "Checkmate's MILP (frontier-advancing stages) solved with CBC, warm "
       "started from the other solvers' best plan",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         return solveCheckmateILP(graph, options);
       }},
      // The portfolio, last: it runs the solvers above.
      {"auto",
       "the portfolio: every solver above within the time limit; the plan "
       "the simulator finds cheapest within the budget (least peak without "
       "one)",
       [](const TrainingGraph &graph,
          const SolverOptions &options) -> llvm::Expected<Schedule> {
         llvm::Expected<SolverResult> best = runPortfolio(graph, options);
         if (!best)
           return best.takeError();
         return std::move(best->schedule);
       }},
  };
  return solvers;
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
  if (std::isfinite(seconds) && seconds > 0)
    return llvm::Error::success();
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", seconds);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      name + " must be a finite number of seconds greater than 0, got " + text);
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
  for (const SolverInfo &solver : allSolvers()) {
    if (solver.name == "auto" || !solverApplies(solver, graph))
      continue;
    double remaining = options.timeLimitSeconds - elapsed();
    // The cheap solvers always run; the searches only with time left.
    if (best && remaining <= 0)
      break;
    SolverOptions sub = options;
    sub.timeLimitSeconds = std::max(1.0, remaining);
    llvm::Expected<SolverResult> result = runSolver(solver, graph, sub);
    if (!result) {
      errors +=
          (errors.empty() ? "" : "; ") + llvm::toString(result.takeError());
      continue;
    }
    if (!best || betterPlan(result->report, best->report, options.budget))
      best = std::move(*result);
  }
  if (!best)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "auto: no solver produced a plan: " +
                                       errors);
  best->solver = "auto(" + best->solver + ")";
  best->solveSeconds = elapsed();
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
  llvm::Expected<Schedule> schedule = solver.fn(graph, options);
  auto end = std::chrono::steady_clock::now();
  if (!schedule)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "solver '" + solver.name + "': " +
                                       llvm::toString(schedule.takeError()));

  SolverResult result;
  result.solver = solver.name;
  result.solveSeconds = std::chrono::duration<double>(end - begin).count();
  result.schedule = std::move(*schedule);
  result.report = simulate(graph, result.schedule);
  // An invalid plan is a solver bug: never hand it on as a result.
  if (!result.report.valid)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "solver '" + solver.name +
            "' produced an invalid plan: " + result.report.error);
  result.meetsBudget =
      !options.budget || result.report.peakBytes <= *options.budget;
  return result;
}
