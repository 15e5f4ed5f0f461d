//===- Solver.cpp - Solver registry and the judged run --------------------===//
//
// The registry every front end (remat-opt's `solver=` option, remat-solve, the
// benchmarks) picks solvers from, and runSolver, which judges a plan by the
// simulator rather than by the solver's own model (DESIGN.md §5, §6).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Solver.h"

#include "llvm/ADT/Twine.h"

#include <chrono>

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

llvm::Expected<SolverResult> remat::runSolver(const SolverInfo &solver,
                                              const TrainingGraph &graph,
                                              const SolverOptions &options) {
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
