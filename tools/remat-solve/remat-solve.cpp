//===- remat-solve.cpp - The solvers alone, on a JSON training graph ------===//
//
//   remat-solve GRAPH.json [--solver=NAME|all] [--budget=B|N%|sweep]
//               [--sweep-points=K] [--time-limit=S] [--slots=S] [--json]
//               [--progress] [--list] [-debug-only=remat-rotor,...]
//
// Reads a training graph (the project's JSON format or the NetworkX node-link
// format of the Checkmate graphs, docs/formats.md), runs the chosen solvers
// and prints, for each, the simulator's figures for its plan: peak bytes, cost
// overhead, recomputations, solve time and whether the budget is met. Every
// figure comes from the simulator (runSolver), never from a solver's own
// model (DESIGN.md §5). `--json` prints the same as a JSON document, with the
// schedules.
//
// Budgets (remat/Support/Budget.h): bytes (`123456`, `64KiB`, `1.5MiB`,
// `2GiB`, also B, TiB and KB/MB/GB/TB), `N%` of the checkpoint-all peak,
// nothing (min-memory mode: each solver's least-peak plan), or `sweep`: K
// budgets evenly spaced from the least feasible one (the least peak any of
// the chosen solvers reaches) to the checkpoint-all peak, printing each
// solver's frontier.
//
// `--progress` prints the progress lines of long searches (checkmate-ilp's
// incumbent, bound and gap) on stderr; it is on by default only when stderr
// is a terminal. `-debug` / `-debug-only=<type,...>` print the solvers'
// LLVM_DEBUG output (remat/Support/Debug.h, docs/budget-solvers.md).
//
//===----------------------------------------------------------------------===//

#include "remat/Graph/GraphIO.h"
#include "remat/Solvers/Solver.h"
#include "remat/Support/Budget.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

using namespace remat;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("remat-solve options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<graph.json>"),
                               cl::Optional, cl::cat(category));
cl::opt<std::string>
    solverOption("solver",
                 cl::desc("Solver name, or 'all' for every registered solver"),
                 cl::init("all"), cl::cat(category));
cl::opt<std::string> budgetOption(
    "budget",
    cl::desc("Memory budget: bytes (B/KB/MB/GB/TB/KiB/MiB/GiB/TiB), N% of "
             "the checkpoint-all peak, or 'sweep'; empty: least memory"),
    cl::init(""), cl::cat(category));
/// The most budgets of a sweep (each runs every chosen solver).
constexpr unsigned kMaxSweepPoints = 1000;
cl::opt<unsigned> sweepPoints("sweep-points",
                              cl::desc("Number of budgets of --budget=sweep, "
                                       "in [1, 1000]"),
                              cl::init(8), cl::cat(category));
cl::opt<double> timeLimit("time-limit",
                          cl::desc("Time limit of searching solvers (s, "
                                   "finite, >= 0; 0: no time-bounded search)"),
                          cl::init(kDefaultTimeLimitSeconds), cl::cat(category));
cl::opt<unsigned> slots("slots",
                        cl::desc("Memory slots S of rotor and revolve, in "
                                 "[1, 2^20]"),
                        cl::init(500), cl::cat(category));
cl::opt<std::string> startOrderOption(
    "start-order",
    cl::desc("The node order the solvers start from: 'program' (the graph's "
             "own), 'reordered' (the memory-minimising topological order of "
             "solver reorder) or 'best' (both, half the time limit each, the "
             "better plan)"),
    cl::init("program"), cl::cat(category));
/// --start-order, parsed before any work.
StartOrder startOrder = StartOrder::Program;
cl::opt<bool> jsonOutput("json",
                         cl::desc("Print JSON (with the schedules) instead of "
                                  "the table"),
                         cl::init(false), cl::cat(category));
cl::opt<bool> maxBatch(
    "max-batch",
    cl::desc("Report the largest batch size whose plan fits --device-memory: "
             "the graph's non-fixed sizes are taken to be for --batch and to "
             "scale linearly with the batch; fixed values (parameters) do "
             "not scale"),
    cl::init(false), cl::cat(category));
cl::opt<std::string>
    deviceMemory("device-memory",
                 cl::desc("Device memory for --max-batch (bytes, "
                          "B/KB/MB/GB/TB/KiB/MiB/GiB/TiB); fixed bytes count "
                          "against it"),
                 cl::init(""), cl::cat(category));
cl::opt<uint64_t> graphBatch("batch",
                             cl::desc("Batch size the graph's sizes are for "
                                      "(at least 1)"),
                             cl::init(1), cl::cat(category));
cl::opt<bool> listSolvers("list", cl::desc("List the solvers and exit"),
                          cl::init(false), cl::cat(category));
cl::opt<bool> progressOption(
    "progress",
    cl::desc("Print the progress of long searches (checkmate-ilp) on stderr "
             "(default: only when stderr is a terminal)"),
    cl::init(false), cl::cat(category));

/// Where the solvers' progress lines go (SolverOptions::progress): stderr
/// with --progress, or without the option when stderr is a terminal.
llvm::raw_ostream *progressStream() {
  bool on = progressOption.getNumOccurrences()
                ? bool(progressOption)
                : llvm::sys::Process::StandardErrIsDisplayed();
  return on ? &llvm::errs() : nullptr;
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "remat-solve: " << message << "\n";
  return 1;
}

/// One solver run at one budget.
struct Row {
  std::string solver;
  std::optional<uint64_t> budget;
  std::optional<SolverResult> result;
  std::string error;
};

llvm::json::Value rowToJSON(const Row &row) {
  llvm::json::Object object{{"solver", row.solver}};
  object["budget"] =
      row.budget ? llvm::json::Value(*row.budget) : llvm::json::Value(nullptr);
  if (!row.result) {
    object["error"] = row.error;
    return object;
  }
  const SimulationReport &report = row.result->report;
  object["peak_bytes"] = int64_t(report.peakBytes);
  object["fixed_bytes"] = int64_t(report.fixedBytes);
  object["cost_overhead"] = report.overhead();
  object["total_cost"] = report.totalCost;
  object["base_cost"] = report.baseCost;
  object["recomputations"] = int64_t(report.numRecomputations);
  object["solve_seconds"] = row.result->solveSeconds;
  object["meets_budget"] = row.result->meetsBudget;
  object["status"] = planStatusName(row.result->status);
  object["lower_bound"] = row.result->lowerBound
                              ? llvm::json::Value(*row.result->lowerBound)
                              : llvm::json::Value(nullptr);
  // What the solver proved about its own, restricted model: never the
  // graph's bound (Solver.h, ModelBound).
  if (row.result->modelBound)
    object["model_bound"] = row.result->modelBound->toJSON();
  // The same simulation object as a plan of --remat-report (one JSON style,
  // docs/formats.md); the flat figures above summarise it.
  object["simulation"] = report.toJSON(/*withTimeline=*/false);
  object["schedule"] = row.result->schedule.toJSON();
  return object;
}

void printTable(llvm::raw_ostream &os, const std::vector<Row> &rows,
                bool withBudget) {
  size_t width = 6;
  for (const Row &row : rows)
    width = std::max(width, row.solver.size());
  if (withBudget)
    os << llvm::left_justify("budget", 14) << "  ";
  os << llvm::left_justify("solver", width) << "  "
     << llvm::right_justify("peak_bytes", 14) << "  "
     << llvm::right_justify("overhead", 8) << "  "
     << llvm::right_justify("recomputations", 14) << "  "
     << llvm::right_justify("solve_s", 9) << "  meets_budget  "
     << llvm::left_justify("status", 10) << "  lower_bound\n";
  for (const Row &row : rows) {
    if (withBudget)
      os << llvm::left_justify(row.budget ? std::to_string(*row.budget) : "-",
                               14)
         << "  ";
    os << llvm::left_justify(row.solver, width) << "  ";
    if (!row.result) {
      os << "error: " << row.error << "\n";
      continue;
    }
    const SimulationReport &report = row.result->report;
    os << llvm::right_justify(std::to_string(report.peakBytes), 14) << "  "
       << llvm::format("%8.3f", report.overhead()) << "  "
       << llvm::right_justify(std::to_string(report.numRecomputations), 14)
       << "  " << llvm::format("%9.4f", row.result->solveSeconds) << "  "
       << llvm::left_justify(row.result->meetsBudget ? "yes" : "no", 12)
       << "  "
       << llvm::left_justify(planStatusName(row.result->status), 10) << "  ";
    if (row.result->lowerBound)
      os << llvm::format("%g", *row.result->lowerBound);
    else
      os << "-";
    os << "\n";
  }
}

/// The graph at batch `batch`, from one at batch `graphBatch`: every
/// non-fixed value scales linearly (rounded up, saturating at 2^64-1, which
/// no budget fits); fixed values do not.
TrainingGraph scaleToBatch(const TrainingGraph &graph, uint64_t batch) {
  TrainingGraph scaled = graph;
  for (ValueId v = 0; v < static_cast<ValueId>(scaled.numValues()); ++v) {
    GraphValue &value = scaled.value(v);
    if (value.isFixed())
      continue;
    unsigned __int128 bytes =
        ((unsigned __int128)value.bytes * batch + graphBatch - 1) / graphBatch;
    value.bytes = bytes > UINT64_MAX ? UINT64_MAX : uint64_t(bytes);
  }
  return scaled;
}

/// --max-batch: for each solver, the largest batch whose plan (simulated)
/// fits the device memory minus the fixed bytes, by doubling then bisection.
/// Peaks are non-decreasing in the batch for every solver here (sizes only
/// grow), which the search relies on.
int runMaxBatch(const TrainingGraph &graph,
                const std::vector<const SolverInfo *> &solvers) {
  if (llvm::StringRef(deviceMemory).trim().empty())
    return fail("--max-batch needs --device-memory=<bytes, optionally with "
                "B, KB, MB, GB, TB, KiB, MiB, GiB or TiB>");
  llvm::Expected<BudgetSpec> spec = parseBudgetSpec(deviceMemory);
  if (!spec)
    return fail("--device-memory: " + llvm::toString(spec.takeError()));
  if (spec->kind != BudgetSpec::Bytes)
    return fail("--device-memory takes bytes, not a percentage: '" +
                deviceMemory + "'");
  uint64_t device = spec->bytes;
  if (graph.fixedBytes() >= device)
    return fail("the fixed bytes (" + std::to_string(graph.fixedBytes()) +
                ") alone exceed the device memory");
  uint64_t budget = device - graph.fixedBytes();
  llvm::raw_ostream &os = llvm::outs();
  os << "max batch: device_memory=" << device
     << " fixed_bytes=" << graph.fixedBytes() << " budget=" << budget
     << " graph_batch=" << graphBatch << "\n";
  bool anyError = false;
  for (const SolverInfo *solver : solvers) {
    std::string error;
    // The plan at `batch`, or nullopt when it does not fit.
    auto fits = [&](uint64_t batch) -> std::optional<SolverResult> {
      SolverOptions options;
      options.budget = budget;
      options.timeLimitSeconds = timeLimit;
      options.memorySlots = slots;
      options.startOrder = startOrder;
      options.progress = progressStream();
      TrainingGraph scaled = scaleToBatch(graph, batch);
      // A batch whose buffers add up to more than 2^63-1 bytes has no exact
      // peak (TrainingGraph::verify rejects it; simulated, the sums would
      // wrap and a huge batch would seem to fit): it does not fit.
      if (llvm::Error err = scaled.verify()) {
        llvm::consumeError(std::move(err));
        return std::nullopt;
      }
      llvm::Expected<SolverResult> result =
          runSolver(*solver, scaled, options);
      if (!result) {
        error = llvm::toString(result.takeError());
        return std::nullopt;
      }
      if (!result->meetsBudget)
        return std::nullopt;
      return std::move(*result);
    };
    std::optional<SolverResult> best;
    uint64_t lo = 0, hi = 1;
    // Doubling: find a batch that does not fit (bounded).
    while (hi <= (uint64_t(1) << 40)) {
      std::optional<SolverResult> plan = fits(hi);
      if (!plan)
        break;
      lo = hi;
      best = std::move(plan);
      hi *= 2;
    }
    // Bisection on (lo, hi): lo fits (or is 0), hi does not.
    while (hi - lo > 1 && error.empty()) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (std::optional<SolverResult> plan = fits(mid)) {
        lo = mid;
        best = std::move(plan);
      } else {
        hi = mid;
      }
    }
    if (!error.empty()) {
      llvm::errs() << "remat-solve: " << error << "\n";
      anyError = true;
      continue;
    }
    os << llvm::left_justify(solver->name, 16) << " max_batch=" << lo;
    if (best)
      os << " peak_bytes=" << best->report.peakBytes
         << " cost_overhead=" << llvm::format("%.4f", best->report.overhead())
         << " recomputations=" << best->report.numRecomputations
         << " winner=" << best->solver;
    os << "\n";
  }
  return anyError ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerDebugOptions();
  cl::HideUnrelatedOptions({&category, &debugOptionCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "remat-solve: run checkpointing solvers on a training graph (JSON)\n");

  if (listSolvers) {
    for (const SolverInfo &solver : allSolvers())
      llvm::outs() << llvm::left_justify(solver.name, 16) << "  "
                   << solver.description << "\n";
    return 0;
  }
  if (inputFile.empty())
    return fail("no input graph (see --help)");
  // Every numeric option is range-checked before any work: a bad value is an
  // error naming it, never a silently different run.
  if (llvm::Error err = checkTimeLimit(timeLimit, "--time-limit"))
    return fail(llvm::toString(std::move(err)));
  if (llvm::Error err = checkMemorySlots(slots, "--slots"))
    return fail(llvm::toString(std::move(err)));
  if (llvm::Expected<StartOrder> order =
          parseStartOrder(startOrderOption, "--start-order"))
    startOrder = *order;
  else
    return fail(llvm::toString(order.takeError()));
  if (sweepPoints < 1 || sweepPoints > kMaxSweepPoints)
    return fail("--sweep-points must be in [1, " +
                llvm::Twine(kMaxSweepPoints) + "], got " +
                llvm::Twine(sweepPoints.getValue()));
  if (graphBatch == 0)
    return fail("--batch must be at least 1, got 0");

  llvm::Expected<TrainingGraph> graph = loadGraphFile(inputFile);
  if (!graph)
    return fail(llvm::toString(graph.takeError()));
  if (llvm::Error err = graph->verify())
    return fail("invalid graph: " + llvm::toString(std::move(err)));

  std::vector<const SolverInfo *> solvers;
  if (solverOption == "all") {
    for (const SolverInfo &solver : allSolvers())
      if (solverApplies(solver, *graph))
        solvers.push_back(&solver);
  } else {
    for (llvm::StringRef name : llvm::split(solverOption.getValue(), ',')) {
      const SolverInfo *solver = findSolver(name.trim());
      if (!solver)
        return fail("unknown solver '" + name.trim() +
                    "'; available solvers: " + solverNames());
      solvers.push_back(solver);
    }
  }

  // The reference of percentages and the top of a sweep.
  uint64_t checkpointAllPeak =
      simulate(*graph, solveCheckpointAll(*graph)).peakBytes;

  auto run = [&](const SolverInfo &solver, std::optional<uint64_t> budget) {
    SolverOptions options;
    options.budget = budget;
    options.timeLimitSeconds = timeLimit;
    options.memorySlots = slots;
    options.startOrder = startOrder;
    options.progress = progressStream();
    Row row{solver.name, budget, std::nullopt, ""};
    llvm::Expected<SolverResult> result = runSolver(solver, *graph, options);
    if (result)
      row.result = std::move(*result);
    else
      row.error = llvm::toString(result.takeError());
    return row;
  };

  if (maxBatch)
    return runMaxBatch(*graph, solvers);

  std::vector<Row> rows;
  bool sweep = budgetOption == "sweep";
  std::optional<uint64_t> budget;
  std::vector<uint64_t> budgets;
  if (sweep) {
    // The least feasible budget: the least peak the chosen solvers reach in
    // min-memory mode.
    uint64_t least = checkpointAllPeak;
    for (const SolverInfo *solver : solvers) {
      Row row = run(*solver, std::nullopt);
      if (row.result)
        least = std::min(least, row.result->report.peakBytes);
    }
    unsigned points = sweepPoints;
    for (unsigned k = 0; k < points; ++k) {
      uint64_t b = points == 1
                       ? checkpointAllPeak
                       : least + (checkpointAllPeak - least) * k / (points - 1);
      if (budgets.empty() || budgets.back() != b)
        budgets.push_back(b);
    }
    // Grouped by solver: each solver's frontier reads top to bottom.
    for (const SolverInfo *solver : solvers)
      for (uint64_t b : budgets)
        rows.push_back(run(*solver, b));
  } else {
    if (!budgetOption.empty()) {
      llvm::Expected<uint64_t> bytes =
          parseBudget(budgetOption, checkpointAllPeak);
      if (!bytes)
        return fail(llvm::toString(bytes.takeError()));
      budget = *bytes;
    }
    for (const SolverInfo *solver : solvers)
      rows.push_back(run(*solver, budget));
  }

  bool anyError =
      llvm::any_of(rows, [](const Row &row) { return !row.result; });
  const std::vector<NodeId> forward = graph->forwardNodes();
  if (jsonOutput) {
    llvm::json::Array results;
    for (const Row &row : rows)
      results.push_back(rowToJSON(row));
    llvm::json::Object document{
        {"graph",
         llvm::json::Object{
             {"file", inputFile.getValue()},
             {"nodes", int64_t(graph->numNodes())},
             {"forward_nodes", int64_t(forward.size())},
             {"values", int64_t(graph->numValues())},
             {"fixed_bytes", int64_t(graph->fixedBytes())},
             {"checkpoint_all_peak_bytes", int64_t(checkpointAllPeak)}}},
        {"results", std::move(results)}};
    if (sweep) {
      llvm::json::Array list;
      for (uint64_t b : budgets)
        list.push_back(int64_t(b));
      document["sweep"] = std::move(list);
    } else {
      document["budget"] =
          budget ? llvm::json::Value(*budget) : llvm::json::Value(nullptr);
    }
    llvm::outs() << llvm::formatv("{0:2}",
                                  llvm::json::Value(std::move(document)))
                 << "\n";
  } else {
    llvm::raw_ostream &os = llvm::outs();
    os << "graph: " << inputFile << " nodes=" << graph->numNodes()
       << " forward_nodes=" << forward.size()
       << " fixed_bytes=" << graph->fixedBytes()
       << " checkpoint_all_peak_bytes=" << checkpointAllPeak << "\n";
    if (sweep)
      os << "budget: sweep of " << budgets.size() << " budgets from "
         << budgets.front() << " to " << budgets.back() << " bytes\n";
    else if (budget)
      os << "budget: " << *budget << " bytes\n";
    else
      os << "budget: none (least memory)\n";
    printTable(os, rows, sweep);
  }
  if (anyError) {
    for (const Row &row : rows)
      if (!row.result)
        llvm::errs() << "remat-solve: " << row.error << "\n";
    return 1;
  }
  return 0;
}
