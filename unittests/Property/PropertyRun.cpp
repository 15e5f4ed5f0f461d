//===- PropertyRun.cpp - Every solver on random graphs, judged twice ------===//
//
// See PropertyRun.h. This file, unlike IndependentChecker.cpp, uses the
// simulator: to compare its figures with the checker's.
//
//===----------------------------------------------------------------------===//

#include "PropertyRun.h"
#include "IndependentChecker.h"
#include "RandomGraphs.h"

#include "remat/Schedule/Schedule.h"
#include "remat/Solvers/Solver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <csignal>
#include <cstring>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace remat;
using namespace remat::property;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

/// The schedule of what a SolverFn returns (a Schedule, or a plan holding
/// one, depending on the version of Solver.h).
[[maybe_unused]] const Schedule &scheduleOf(const Schedule &schedule) {
  return schedule;
}
template <typename Plan> const Schedule &scheduleOf(const Plan &plan) {
  return plan.schedule;
}

bool usesCbc(const std::string &name) {
  return name == "checkmate-ilp" || name == "auto";
}

/// A corrupted copy of `plan`: a statement dropped, two swapped, a Free
/// moved earlier, a Compute repeated, a recomputation dropped, or a Free
/// inserted.
Schedule mutate(const TrainingGraph &graph, const Schedule &plan, Rng &rng) {
  Schedule m = plan;
  std::vector<Step> &s = m.steps;
  if (s.empty())
    return m;
  size_t n = s.size();
  switch (rng.below(6)) {
  case 0:
    s.erase(s.begin() + rng.below(n));
    break;
  case 1:
    if (n >= 2) {
      size_t i = rng.below(n - 1);
      std::swap(s[i], s[i + 1]);
    }
    break;
  case 2: {
    std::vector<size_t> frees;
    for (size_t i = 0; i < n; ++i)
      if (!s[i].isCompute())
        frees.push_back(i);
    if (frees.empty())
      break;
    size_t j = frees[rng.below(frees.size())];
    size_t k = rng.below(j + 1);
    std::rotate(s.begin() + k, s.begin() + j, s.begin() + j + 1);
    break;
  }
  case 3: {
    size_t i = rng.below(n);
    if (!s[i].isCompute())
      break;
    Step copy = s[i];
    s.insert(s.begin() + rng.between(i + 1, n), copy);
    break;
  }
  case 4: {
    std::vector<char> seen(graph.numNodes(), 0);
    std::vector<size_t> recomputes;
    for (size_t i = 0; i < n; ++i)
      if (s[i].isCompute()) {
        if (seen[s[i].id])
          recomputes.push_back(i);
        seen[s[i].id] = 1;
      }
    if (recomputes.empty())
      s.erase(s.begin() + rng.below(n));
    else
      s.erase(s.begin() + recomputes[rng.below(recomputes.size())]);
    break;
  }
  default: {
    if (graph.numValues() == 0)
      break;
    ValueId v = ValueId(rng.below(graph.numValues()));
    s.insert(s.begin() + rng.below(n + 1), Step::free(v));
    break;
  }
  }
  return m;
}

class Runner {
public:
  explicit Runner(const RunOptions &options) : options(options) {
    stats.options = options;
  }
  llvm::Error run();
  RunStats take() { return std::move(stats); }

private:
  void runGraph(uint64_t index);
  void checkOne(uint64_t index, const TrainingGraph &graph,
                const SolverInfo &solver, SolverStats &st,
                const SolverOptions &opts, uint64_t lowerBound, bool &met);
  /// checkOne in a child process; its counts come back through a pipe.
  void checkIsolated(uint64_t index, const TrainingGraph &graph,
                     const SolverInfo &solver, SolverStats &st,
                     const SolverOptions &opts, uint64_t lowerBound, bool &met);
  void fail(uint64_t index, const TrainingGraph &graph, const std::string &solver,
            const SolverOptions &opts, const Schedule *plan,
            const std::string &what);

  const RunOptions &options;
  RunStats stats;
  /// The solver that proved the current budget infeasible, if one did.
  SolverStats *infeasibleClaimedBy = nullptr;
  /// The lower bounds reported under the current budget (claims about
  /// every plan of the graph), and the cheapest plan within it by the
  /// checker, with its solver: no bound may exceed that plan's cost.
  std::vector<std::pair<SolverStats *, double>> boundClaims;
  std::optional<long double> cheapestFit;
  std::string cheapestBy;
  void noteBound(SolverStats &st, std::optional<double> bound,
                 std::optional<long double> fitCost);
  std::vector<const SolverInfo *> solvers;
  unsigned dumped = 0;
};

} // namespace

void Runner::fail(uint64_t index, const TrainingGraph &graph,
                  const std::string &solver, const SolverOptions &opts,
                  const Schedule *plan, const std::string &what) {
  Failure f;
  f.graphIndex = index;
  f.solver = solver;
  f.budget = opts.budget;
  f.slots = opts.memorySlots;
  f.what = what;
  if (!options.dumpDir.empty() && dumped < 50) {
    ++dumped;
    llvm::sys::fs::create_directories(options.dumpDir);
    llvm::SmallString<256> path(options.dumpDir);
    llvm::sys::path::append(path, "g" + std::to_string(index) + "-" + solver +
                                      "-" + std::to_string(dumped) + ".json");
    llvm::json::Object repro{
        {"what", what},
        {"seed", int64_t(options.seed)},
        {"graph_index", int64_t(index)},
        {"solver", solver},
        {"budget", opts.budget ? llvm::json::Value(int64_t(*opts.budget))
                               : llvm::json::Value(nullptr)},
        {"slots", int64_t(opts.memorySlots)},
        {"time_limit", opts.timeLimitSeconds},
        {"rerun", "remat-property-check --seed " + std::to_string(options.seed) +
                      " --start " + std::to_string(index) +
                      " --graphs 1 --max-nodes " +
                      std::to_string(options.maxNodes) + " --solvers " +
                      solver + " --budgets-per-graph " +
                      std::to_string(options.budgetsPerGraph) +
                      " --cbc-every 1"},
        {"graph", graph.toJSON()},
    };
    if (plan)
      repro["plan"] = plan->toJSON();
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (!ec) {
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(repro))) << "\n";
      f.file = std::string(path);
    }
  }
  if (stats.failures.size() < 200)
    stats.failures.push_back(std::move(f));
}

void Runner::checkOne(uint64_t index, const TrainingGraph &graph,
                      const SolverInfo &solver, SolverStats &st,
                      const SolverOptions &opts, uint64_t lowerBound,
                      bool &met) {
  ++st.runs;
  auto begin = Clock::now();
  llvm::Expected<SolverResult> result = runSolver(solver, graph, opts);
  st.seconds += since(begin);
  if (!result) {
    std::string message = llvm::toString(result.takeError());
    if (message.find("invalid plan") == std::string::npos) {
      ++st.errors;
      // Group messages by their text up to the first digit.
      std::string kind = message.substr(
          0, std::min(message.find_first_of("0123456789"), size_t(80)));
      ++st.errorKinds[kind];
      return;
    }
    // The simulator rejected the plan: get it again and let the checker say
    // why (and whether it agrees).
    ++st.rejectedBySimulator;
    auto plan = solver.fn(graph, opts);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      fail(index, graph, solver.name, opts, nullptr,
           message + " (not reproducible)");
      return;
    }
    const Schedule &schedule = scheduleOf(*plan);
    CheckResult check = checkPlan(graph, schedule);
    std::string why = check.valid() ? std::string(" [checker: valid!]")
                                    : " [checker: " + check.violations[0] + "]";
    fail(index, graph, solver.name, opts, &schedule, message + why);
    return;
  }

  ++st.plans;
  const SolverResult &r = *result;
  CheckResult check = checkPlan(graph, r.schedule);
  st.recomputations += check.numRecomputations;
  st.inPlaceUpdates += check.numInPlace;
  auto problem = [&](uint64_t &counter, const std::string &what) {
    ++counter;
    fail(index, graph, solver.name, opts, &r.schedule, what);
  };
  if (!check.valid()) {
    problem(st.violations, "checker: " + check.violations[0] + " (" +
                               std::to_string(check.numViolations) +
                               " violations)");
    return;
  }
  if (check.peakBytes != r.report.peakBytes)
    problem(st.peakMismatches,
            "peak: checker " + std::to_string(check.peakBytes) +
                ", simulator " + std::to_string(r.report.peakBytes));
  else if (check.perStep != r.report.timeline)
    problem(st.timelineMismatches, "bytes per statement differ");
  if (check.numComputes != r.report.numComputes ||
      check.numRecomputations != r.report.numRecomputations ||
      std::fabs(double(check.totalCost) - r.report.totalCost) >
          1e-9 * std::max(1.0, std::fabs(r.report.totalCost)))
    problem(st.countMismatches,
            "computes/recomputations/cost: checker " +
                std::to_string(check.numComputes) + "/" +
                std::to_string(check.numRecomputations) + "/" +
                std::to_string(double(check.totalCost)) + ", simulator " +
                std::to_string(r.report.numComputes) + "/" +
                std::to_string(r.report.numRecomputations) + "/" +
                std::to_string(r.report.totalCost));
  if (check.peakBytes < lowerBound)
    problem(st.belowLowerBound, "peak " + std::to_string(check.peakBytes) +
                                    " below the node lower bound " +
                                    std::to_string(lowerBound));
  if (opts.budget) {
    ++st.plansWithBudget;
    if (r.meetsBudget) {
      ++st.claimsBudget;
      if (check.peakBytes > *opts.budget)
        problem(st.falseBudgetClaims,
                "claims the budget " + std::to_string(*opts.budget) +
                    " with peak " + std::to_string(check.peakBytes));
    } else if (check.peakBytes <= *opts.budget) {
      problem(st.wrongMissClaims, "says it misses the budget " +
                                      std::to_string(*opts.budget) +
                                      " with peak " +
                                      std::to_string(check.peakBytes));
    }
    if (check.peakBytes <= *opts.budget)
      met = true;
  } else if (!r.meetsBudget) {
    problem(st.wrongMissClaims, "says it misses a budget that does not exist");
  }
  // The status against the checker's peak (budget met or not), and the
  // lower bound of an optimal plan against its cost.
  bool withinBudget = !opts.budget || check.peakBytes <= *opts.budget;
  bool claimsMiss = r.status == PlanStatus::Infeasible ||
                    r.status == PlanStatus::NoPlan;
  if (claimsMiss == withinBudget)
    problem(st.statusMismatches,
            "status " + planStatusName(r.status).str() + " for a plan " +
                (withinBudget ? "within" : "above") + " the budget");
  if (r.status == PlanStatus::Optimal &&
      (!r.lowerBound ||
       *r.lowerBound > double(check.totalCost) * (1 + 1e-9) + 1e-9))
    problem(st.statusMismatches, "optimal with a lower bound above its cost");
  if (r.status == PlanStatus::Infeasible)
    infeasibleClaimedBy = &st;
  noteBound(st, r.lowerBound,
            withinBudget && opts.budget
                ? std::optional<long double>(check.totalCost)
                : std::nullopt);

  // Mutants: the checker and the simulator must agree on them.
  Rng rng(graphSeed(options.seed ^ 0x6d75746174696f6eull, index) ^
          std::hash<std::string>()(solver.name));
  for (unsigned k = 0; k < options.mutantsPerPlan; ++k) {
    Schedule mutant = mutate(graph, r.schedule, rng);
    CheckResult mc = checkPlan(graph, mutant);
    SimulationReport ms = simulate(graph, mutant);
    ++stats.mutants;
    std::string disagreement;
    if (mc.valid() != ms.valid)
      disagreement = std::string("mutant: checker says ") +
                     (mc.valid() ? "valid" : "invalid (" + mc.violations[0] + ")") +
                     ", simulator " +
                     (ms.valid ? "valid" : "invalid (" + ms.error + ")");
    else if (ms.valid && (mc.peakBytes != ms.peakBytes ||
                          mc.perStep != ms.timeline))
      disagreement = "mutant: peak checker " + std::to_string(mc.peakBytes) +
                     ", simulator " + std::to_string(ms.peakBytes);
    if (!disagreement.empty()) {
      ++stats.mutantDisagreements;
      fail(index, graph, solver.name + "-mutant", opts, &mutant, disagreement);
    } else if (ms.valid) {
      ++stats.mutantsValid;
    } else {
      ++stats.mutantsInvalid;
    }
  }
}

void Runner::noteBound(SolverStats &st, std::optional<double> bound,
                       std::optional<long double> fitCost) {
  if (bound) {
    boundClaims.push_back({&st, *bound});
    ++st.boundsReported;
  }
  if (fitCost && (!cheapestFit || *fitCost < *cheapestFit)) {
    cheapestFit = fitCost;
    cheapestBy = st.name;
  }
}

namespace {
/// The counters of SolverStats, in one order, for the pipe.
std::vector<uint64_t *> counters(SolverStats &s) {
  return {&s.notApplicable, &s.skipped, &s.runs, &s.plans,
          &s.plansWithBudget, &s.claimsBudget, &s.errors, &s.crashes,
          &s.rejectedBySimulator, &s.violations, &s.peakMismatches,
          &s.timelineMismatches, &s.countMismatches, &s.falseBudgetClaims,
          &s.wrongMissClaims, &s.belowLowerBound, &s.statusMismatches,
          &s.recomputations, &s.inPlaceUpdates, &s.boundsReported};
}
} // namespace

void Runner::checkIsolated(uint64_t index, const TrainingGraph &graph,
                           const SolverInfo &solver, SolverStats &st,
                           const SolverOptions &opts, uint64_t lowerBound,
                           bool &met) {
  llvm::outs().flush();
  llvm::errs().flush();
  int fds[2];
  if (pipe(fds) != 0) {
    checkOne(index, graph, solver, st, opts, lowerBound, met);
    return;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    checkOne(index, graph, solver, st, opts, lowerBound, met);
    return;
  }
  if (pid == 0) {
    // Child: count from zero, send the counts, exit without destructors.
    close(fds[0]);
    SolverStats local;
    local.name = st.name;
    stats.failures.clear();
    stats.mutants = stats.mutantsInvalid = stats.mutantsValid =
        stats.mutantDisagreements = 0;
    bool localMet = false;
    boundClaims.clear();
    cheapestFit.reset();
    checkOne(index, graph, solver, local, opts, lowerBound, localMet);
    llvm::json::Array numbers;
    for (uint64_t *c : counters(local))
      numbers.push_back(int64_t(*c));
    llvm::json::Object kinds;
    for (auto &[kind, n] : local.errorKinds)
      kinds[kind] = int64_t(n);
    llvm::json::Array failures;
    for (const Failure &f : stats.failures)
      failures.push_back(llvm::json::Object{{"what", f.what}, {"file", f.file}});
    llvm::json::Value message = llvm::json::Object{
        {"counters", std::move(numbers)},
        {"seconds", local.seconds},
        {"met", localMet},
        {"bound", boundClaims.empty()
                      ? llvm::json::Value(nullptr)
                      : llvm::json::Value(boundClaims.back().second)},
        {"fit_cost", cheapestFit ? llvm::json::Value(double(*cheapestFit))
                                 : llvm::json::Value(nullptr)},
        {"kinds", std::move(kinds)},
        {"failures", std::move(failures)},
        {"mutants",
         llvm::json::Array{int64_t(stats.mutants), int64_t(stats.mutantsInvalid),
                           int64_t(stats.mutantsValid),
                           int64_t(stats.mutantDisagreements)}}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << message;
    os.flush();
    const char *p = text.data();
    size_t left = text.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n <= 0)
        break;
      p += n;
      left -= size_t(n);
    }
    close(fds[1]);
    _exit(0);
  }

  // Parent: read until EOF or the deadline, then reap the child.
  close(fds[1]);
  std::string text;
  auto begin = Clock::now();
  double deadline = 30 + 20 * opts.timeLimitSeconds;
  bool hung = false;
  for (;;) {
    struct pollfd pfd = {fds[0], POLLIN, 0};
    int ready = poll(&pfd, 1, 200);
    if (ready > 0) {
      char buffer[4096];
      ssize_t n = read(fds[0], buffer, sizeof buffer);
      if (n > 0) {
        text.append(buffer, size_t(n));
        continue;
      }
      if (n == 0 || (n < 0 && errno != EINTR))
        break;
    }
    if (since(begin) > deadline) {
      hung = true;
      kill(pid, SIGKILL);
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  double seconds = since(begin);

  llvm::Expected<llvm::json::Value> parsed =
      hung ? llvm::Expected<llvm::json::Value>(llvm::createStringError(
                 llvm::inconvertibleErrorCode(), "hung"))
           : llvm::json::parse(text);
  const llvm::json::Object *object = parsed ? parsed->getAsObject() : nullptr;
  if (!parsed)
    llvm::consumeError(parsed.takeError());
  if (!object || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ++st.runs;
    ++st.crashes;
    st.seconds += seconds;
    std::string what =
        hung ? "hung: killed after " + std::to_string(int(deadline)) + " s"
        : WIFSIGNALED(status)
            ? std::string("crashed: signal ") + std::to_string(WTERMSIG(status)) +
                  " (" + strsignal(WTERMSIG(status)) + ")"
            : "child exited with status " + std::to_string(WEXITSTATUS(status));
    fail(index, graph, solver.name, opts, nullptr, what);
    return;
  }
  if (const llvm::json::Array *numbers = object->getArray("counters")) {
    std::vector<uint64_t *> mine = counters(st);
    for (size_t k = 0; k < mine.size() && k < numbers->size(); ++k)
      *mine[k] += uint64_t((*numbers)[k].getAsInteger().value_or(0));
  }
  st.seconds += object->getNumber("seconds").value_or(0);
  met |= object->getBoolean("met").value_or(false);
  // The child counted the bound already (boundsReported).
  std::optional<double> fit = object->getNumber("fit_cost");
  if (std::optional<double> bound = object->getNumber("bound"))
    boundClaims.push_back({&st, *bound});
  noteBound(st, std::nullopt,
            fit ? std::optional<long double>(*fit) : std::nullopt);
  if (const llvm::json::Object *kinds = object->getObject("kinds"))
    for (auto &[kind, n] : *kinds)
      st.errorKinds[kind.str()] += uint64_t(n.getAsInteger().value_or(0));
  if (const llvm::json::Array *m = object->getArray("mutants")) {
    uint64_t *mine[] = {&stats.mutants, &stats.mutantsInvalid,
                        &stats.mutantsValid, &stats.mutantDisagreements};
    for (size_t k = 0; k < 4 && k < m->size(); ++k)
      *mine[k] += uint64_t((*m)[k].getAsInteger().value_or(0));
  }
  if (const llvm::json::Array *failures = object->getArray("failures"))
    for (const llvm::json::Value &v : *failures) {
      const llvm::json::Object *fo = v.getAsObject();
      if (!fo || stats.failures.size() >= 200)
        continue;
      Failure f;
      f.graphIndex = index;
      f.solver = solver.name;
      f.budget = opts.budget;
      f.slots = opts.memorySlots;
      f.what = fo->getString("what").value_or("").str();
      f.file = fo->getString("file").value_or("").str();
      stats.failures.push_back(std::move(f));
    }
}

void Runner::runGraph(uint64_t index) {
  Rng rng(graphSeed(options.seed, index));
  RandomGraph rg = randomTrainingGraph(rng, options.maxNodes);
  const TrainingGraph &graph = rg.graph;
  ++stats.graphs;
  ++stats.shapes[rg.shape];
  stats.nodes += graph.numNodes();
  stats.maxNodesSeen = std::max<uint64_t>(stats.maxNodesSeen, graph.numNodes());

  uint64_t lowerBound = nodeLowerBound(graph);
  // Checkpoint-all's peak by the checker: the top of the budget range.
  CheckResult all = checkPlan(graph, solveCheckpointAll(graph));
  uint64_t top = std::max(all.peakBytes, lowerBound);

  for (unsigned b = 0; b < options.budgetsPerGraph; ++b) {
    SolverOptions opts;
    opts.timeLimitSeconds = options.timeLimit;
    opts.memorySlots =
        rng.chance(50) ? 500u : unsigned(rng.between(1, 600));
    uint64_t pick = rng.below(100);
    if (pick < 8) {
      ++stats.budgetsNone;
    } else if (pick < 16) {
      opts.budget = lowerBound;
      ++stats.budgetsAtLowerBound;
    } else if (pick < 20 && lowerBound > 0) {
      opts.budget = lowerBound - 1;
      ++stats.budgetsBelowLowerBound;
    } else if (pick < 28) {
      opts.budget = top;
      ++stats.budgetsAtCheckpointAll;
    } else {
      opts.budget = rng.between(lowerBound, top);
      ++stats.budgetsBetween;
    }
    ++stats.budgetRuns;
    bool met = false;
    infeasibleClaimedBy = nullptr;
    boundClaims.clear();
    cheapestFit.reset();
    for (size_t s = 0; s < solvers.size(); ++s) {
      const SolverInfo &solver = *solvers[s];
      SolverStats &st = stats.solvers[s];
      if (usesCbc(solver.name) &&
          (options.cbcEvery == 0 || index % options.cbcEvery != 0)) {
        ++st.skipped;
        continue;
      }
      if (!solverApplies(solver, graph)) {
        ++st.notApplicable;
        continue;
      }
      if (options.isolateCbc && usesCbc(solver.name))
        checkIsolated(index, graph, solver, st, opts, lowerBound, met);
      else
        checkOne(index, graph, solver, st, opts, lowerBound, met);
    }
    if (met && opts.budget)
      ++stats.budgetsMet;
    // "Infeasible" is a proof: no solver's plan may meet that budget.
    if (met && infeasibleClaimedBy) {
      ++infeasibleClaimedBy->statusMismatches;
      fail(index, graph, infeasibleClaimedBy->name, opts, nullptr,
           "proved the budget infeasible, and another solver's plan meets it");
    }
    // A lower bound is a claim about every plan within the budget: the
    // cheapest plan any solver found within it refutes a higher one.
    if (cheapestFit)
      for (auto [claimer, bound] : boundClaims)
        if (bound > double(*cheapestFit) * (1 + 1e-9) + 1e-9) {
          ++claimer->statusMismatches;
          fail(index, graph, claimer->name, opts, nullptr,
               "lower bound " + std::to_string(bound) + " above the cost " +
                   std::to_string(double(*cheapestFit)) + " of " + cheapestBy +
                   "'s plan within the budget");
        }
  }
}

llvm::Error Runner::run() {
  if (options.solvers.empty()) {
    for (const SolverInfo &s : allSolvers())
      solvers.push_back(&s);
  } else {
    for (const std::string &name : options.solvers) {
      const SolverInfo *s = findSolver(name);
      if (!s)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "unknown solver '" + name +
                                           "'; known: " + solverNames());
      solvers.push_back(s);
    }
  }
  for (const SolverInfo *s : solvers) {
    SolverStats st;
    st.name = s->name;
    stats.solvers.push_back(st);
  }
  auto begin = Clock::now();
  for (uint64_t i = 0; i < options.graphs; ++i) {
    runGraph(options.start + i);
    if (options.progressEvery && (i + 1) % options.progressEvery == 0) {
      stats.seconds = since(begin);
      llvm::errs() << llvm::formatv(
          "remat-property-check: {0} graphs, {1} plans, {2} problems, {3} "
          "mutant disagreements, {4:F1} s\n",
          stats.graphs, stats.plans(), stats.problems(),
          stats.mutantDisagreements, stats.seconds);
    }
  }
  stats.seconds = since(begin);
  return llvm::Error::success();
}

uint64_t RunStats::plans() const {
  uint64_t n = 0;
  for (const SolverStats &s : solvers)
    n += s.plans;
  return n;
}

uint64_t RunStats::problems() const {
  uint64_t n = 0;
  for (const SolverStats &s : solvers)
    n += s.problems();
  return n;
}

void RunStats::print(llvm::raw_ostream &os) const {
  os << llvm::formatv(
      "remat-property-check: seed={0} graphs {1}..{2} max-nodes={3} "
      "time-limit={4} s budgets/graph={5} mutants/plan={6}; checkmate-ilp "
      "and auto (CBC) on every {7}th graph only\n",
      options.seed, options.start, options.start + options.graphs - 1,
      options.maxNodes, options.timeLimit, options.budgetsPerGraph,
      options.mutantsPerPlan, options.cbcEvery);
  os << "graphs: " << graphs << " (";
  bool first = true;
  for (auto &[shape, n] : shapes) {
    os << (first ? "" : ", ") << shape << " " << n;
    first = false;
  }
  os << llvm::formatv("), {0} nodes in all, largest {1}\n", nodes, maxNodesSeen);
  os << llvm::formatv(
      "budgets: {0} runs: none {1}, at the node lower bound {2}, just below "
      "it {3}, at checkpoint-all's peak {4}, in between {5}; met by some "
      "plan: {6}\n",
      budgetRuns, budgetsNone, budgetsAtLowerBound, budgetsBelowLowerBound,
      budgetsAtCheckpointAll, budgetsBetween, budgetsMet);
  os << llvm::formatv("{0,-15} {1,8} {2,8} {3,8} {4,8} {5,8} {6,8} {7,8} "
                      "{8,8} {9,8} {10,9}\n",
                      "solver", "runs", "plans", "budget", "claims", "errors",
                      "n/a", "skipped", "viol.", "peak-mm", "seconds");
  for (const SolverStats &s : solvers)
    os << llvm::formatv("{0,-15} {1,8} {2,8} {3,8} {4,8} {5,8} {6,8} {7,8} "
                        "{8,8} {9,8} {10,9:F1}\n",
                        s.name, s.runs, s.plans, s.plansWithBudget,
                        s.claimsBudget, s.errors, s.notApplicable, s.skipped,
                        s.violations + s.rejectedBySimulator +
                            s.falseBudgetClaims + s.crashes,
                        s.peakMismatches, s.seconds);
  uint64_t violations = 0, peak = 0, other = 0, claims = 0, errors = 0,
           recomputations = 0, inPlace = 0, crashes = 0, bounds = 0;
  for (const SolverStats &s : solvers) {
    recomputations += s.recomputations;
    inPlace += s.inPlaceUpdates;
    violations += s.violations + s.rejectedBySimulator +
                  s.falseBudgetClaims + s.crashes;
    crashes += s.crashes;
    peak += s.peakMismatches;
    other += s.timelineMismatches + s.countMismatches + s.wrongMissClaims +
             s.belowLowerBound + s.statusMismatches;
    claims += s.claimsBudget;
    errors += s.errors;
    bounds += s.boundsReported;
  }
  os << llvm::formatv(
      "plans checked: {0}; claiming the budget: {1}; solver errors: {2}; "
      "recomputations in them: {10}; in-place updates: {11}\n"
      "violations (invalid plans, budgets claimed but broken, crashes "
      "({12})): {3}; peak "
      "mismatches: {4}; other mismatches (timeline, counts, miss claims, "
      "below lower bound, status): {5}\n"
      "mutants: {6} (invalid by both {7}, valid by both with equal figures "
      "{8}, disagreements {9})\n"
      "lower bounds reported: {13}, each checked against every plan within "
      "its budget\n",
      plans(), claims, errors, violations, peak, other, mutants,
      mutantsInvalid, mutantsValid, mutantDisagreements, recomputations,
      inPlace, crashes, bounds);
  for (const SolverStats &s : solvers)
    for (auto &[kind, n] : s.errorKinds)
      os << "  " << s.name << " error x" << n << ": " << kind << "...\n";
  for (const Failure &f : failures)
    os << llvm::formatv("FAIL graph {0} solver {1} budget {2} slots {3}: {4}{5}\n",
                        f.graphIndex, f.solver,
                        f.budget ? std::to_string(*f.budget) : "none", f.slots,
                        f.what, f.file.empty() ? "" : " (" + f.file + ")");
  os << llvm::formatv("time: {0:F1} s; result: {1}\n", seconds,
                      clean() ? "PASS" : "FAIL");
}

llvm::json::Value RunStats::toJSON() const {
  llvm::json::Array solverArray;
  for (const SolverStats &s : solvers) {
    llvm::json::Object errors;
    for (auto &[kind, n] : s.errorKinds)
      errors[kind] = int64_t(n);
    solverArray.push_back(llvm::json::Object{
        {"name", s.name},
        {"runs", int64_t(s.runs)},
        {"not_applicable", int64_t(s.notApplicable)},
        {"skipped", int64_t(s.skipped)},
        {"plans_checked", int64_t(s.plans)},
        {"plans_with_budget", int64_t(s.plansWithBudget)},
        {"claims_budget", int64_t(s.claimsBudget)},
        {"errors", int64_t(s.errors)},
        {"crashes", int64_t(s.crashes)},
        {"error_kinds", std::move(errors)},
        {"rejected_by_simulator", int64_t(s.rejectedBySimulator)},
        {"violations", int64_t(s.violations)},
        {"false_budget_claims", int64_t(s.falseBudgetClaims)},
        {"wrong_miss_claims", int64_t(s.wrongMissClaims)},
        {"peak_mismatches", int64_t(s.peakMismatches)},
        {"timeline_mismatches", int64_t(s.timelineMismatches)},
        {"count_mismatches", int64_t(s.countMismatches)},
        {"below_lower_bound", int64_t(s.belowLowerBound)},
        {"status_mismatches", int64_t(s.statusMismatches)},
        {"bounds_reported", int64_t(s.boundsReported)},
        {"recomputations", int64_t(s.recomputations)},
        {"in_place_updates", int64_t(s.inPlaceUpdates)},
        {"seconds", s.seconds},
    });
  }
  llvm::json::Object shapeObject;
  for (auto &[shape, n] : shapes)
    shapeObject[shape] = int64_t(n);
  llvm::json::Array failureArray;
  for (const Failure &f : failures)
    failureArray.push_back(llvm::json::Object{
        {"graph_index", int64_t(f.graphIndex)},
        {"solver", f.solver},
        {"budget", f.budget ? llvm::json::Value(int64_t(*f.budget))
                            : llvm::json::Value(nullptr)},
        {"slots", int64_t(f.slots)},
        {"what", f.what},
        {"file", f.file},
    });
  return llvm::json::Object{
      {"seed", int64_t(options.seed)},
      {"start", int64_t(options.start)},
      {"graphs", int64_t(graphs)},
      {"max_nodes", int64_t(options.maxNodes)},
      {"time_limit", options.timeLimit},
      {"cbc_every", int64_t(options.cbcEvery)},
      {"isolate_cbc", options.isolateCbc},
      {"budgets_per_graph", int64_t(options.budgetsPerGraph)},
      {"shapes", std::move(shapeObject)},
      {"nodes", int64_t(nodes)},
      {"budgets",
       llvm::json::Object{{"runs", int64_t(budgetRuns)},
                          {"none", int64_t(budgetsNone)},
                          {"at_lower_bound", int64_t(budgetsAtLowerBound)},
                          {"below_lower_bound", int64_t(budgetsBelowLowerBound)},
                          {"at_checkpoint_all", int64_t(budgetsAtCheckpointAll)},
                          {"between", int64_t(budgetsBetween)},
                          {"met_by_some_plan", int64_t(budgetsMet)}}},
      {"plans_checked", int64_t(plans())},
      {"problems", int64_t(problems())},
      {"mutants",
       llvm::json::Object{{"total", int64_t(mutants)},
                          {"invalid_by_both", int64_t(mutantsInvalid)},
                          {"valid_by_both", int64_t(mutantsValid)},
                          {"disagreements", int64_t(mutantDisagreements)}}},
      {"solvers", std::move(solverArray)},
      {"failures", std::move(failureArray)},
      {"seconds", seconds},
      {"pass", clean()},
  };
}

llvm::Expected<RunStats>
remat::property::runProperty(const RunOptions &options) {
  Runner runner(options);
  if (llvm::Error err = runner.run())
    return std::move(err);
  return runner.take();
}
