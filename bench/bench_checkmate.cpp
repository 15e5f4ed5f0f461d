//===- bench_checkmate.cpp - Checkmate's ILP and LP rounding vs the rest --===//
//
//   remat-bench-checkmate DIR|FILE... [--budgets=95%,85%,13.2GB,...]
//       [--time-limit=S] [--max-nodes=N] [--only=SUBSTRING]
//       [--least-feasible] [--json[=FILE]] [--progress]
//
// For every graph (every *.json of a directory such as
// ../shared/graphs/checkmate-mlsys20) and every budget, runs every registered
// solver (remat::allSolvers()) plus checkmate-ilp and checkmate-lp and prints
// the simulator's peak, the cost overhead (cost / cost of computing every
// node once), the solve time and the status; then, per graph, the ratio of
// LP rounding's cost to the ILP's (geometric mean over the budgets where the
// ILP is proven optimal and the rounding fits, as in seeds/003 Table 2).
// `--least-feasible` bisects the least budget the ILP meets. Benchmarks are
// not tests (DESIGN.md §7): nothing here fails on a figure.
//
//===----------------------------------------------------------------------===//

#include "remat/Graph/GraphIO.h"
#include "remat/Solvers/Checkmate.h"
#include "remat/Solvers/Solver.h"
#include "remat/Support/Budget.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

using namespace remat;
namespace cl = llvm::cl;

namespace {

cl::list<std::string> inputs(cl::Positional, cl::desc("<dir|graph.json>..."),
                             cl::OneOrMore);
cl::opt<std::string> budgetList(
    "budgets",
    cl::desc(
        "Comma-separated budgets: N% of the checkpoint-all peak, or "
        "bytes with an optional B, KB/MB/GB/TB (10^3..) or KiB/MiB/GiB/TiB "
        "suffix"),
    cl::init("95%,85%,75%,65%,55%"));
cl::opt<double> timeLimit("time-limit",
                          cl::desc("Seconds per solve (default 60)"),
                          cl::init(60));
cl::opt<unsigned> maxNodes(
    "max-nodes",
    cl::desc("Checkmate solves graphs above this many nodes on a coarse graph"),
    cl::init(300));
cl::opt<std::string> only("only",
                          cl::desc("Only graphs whose file name contains this"),
                          cl::init(""));
cl::opt<bool> leastFeasible(
    "least-feasible",
    cl::desc("Bisect the least budget checkmate-ilp meets (to 1 MB)"),
    cl::init(false));
cl::opt<std::string>
    jsonOut("json",
            cl::desc("Write the results as JSON to a file ('-': stdout)"),
            cl::ValueOptional, cl::init(""));
cl::opt<bool> progress("progress",
                       cl::desc("Print CBC's progress lines to stderr"),
                       cl::init(false));

/// A budget of the table: as written, and in bytes for the graph at hand.
struct Budget {
  std::string label;
  uint64_t bytes;
};

std::string gb(uint64_t bytes) {
  return llvm::formatv("{0:F3}", static_cast<double>(bytes) / 1e9).str();
}

struct Row {
  std::string solver, status;
  uint64_t peak = 0;
  bool meets = false;
  double cost = 0, overhead = 0, seconds = 0;
  std::optional<CheckmateReport> checkmate;
};

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

std::vector<std::string> graphFiles() {
  std::vector<std::string> files;
  for (const std::string &input : inputs) {
    if (!llvm::sys::fs::is_directory(input)) {
      files.push_back(input);
      continue;
    }
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(input, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::StringRef(it->path()).ends_with(".json"))
        files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerDebugOptions();
  cl::ParseCommandLineOptions(
      argc, argv, "Checkmate's ILP and LP rounding next to every solver\n");
  llvm::raw_ostream &os = llvm::outs();
  llvm::json::Array graphsJson;

  CheckmateOptions cmOptions;
  cmOptions.maxNodes = maxNodes;
  cmOptions.progressIntervalSeconds = progress ? 10 : 0;
  // The library prints progress only where it is told to.
  cmOptions.progress = progress ? &llvm::errs() : nullptr;

  for (const std::string &file : graphFiles()) {
    std::string name = llvm::sys::path::filename(file).str();
    if (!only.empty() && name.find(only) == std::string::npos)
      continue;
    llvm::Expected<TrainingGraph> loaded = loadGraphFile(file);
    if (!loaded) {
      std::string error = llvm::toString(loaded.takeError());
      os << "== " << name << ": skipped: " << error << "\n\n";
      graphsJson.push_back(
          llvm::json::Object{{"graph", name}, {"error", error}});
      continue;
    }
    const TrainingGraph &graph = *loaded;
    SimulationReport all = simulate(graph, solveCheckpointAll(graph));
    size_t edges = 0;
    for (const Node &node : graph.getNodes())
      edges += node.inputs.size();
    os << "== " << name << ": " << graph.numNodes() << " nodes, " << edges
       << " edges, total cost " << graph.totalCost() << ", checkpoint-all peak "
       << gb(all.peakBytes) << " GB\n";

    std::vector<Budget> budgets;
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(budgetList).split(parts, ',', -1, false);
    for (llvm::StringRef part : parts) {
      // Percentages are of this graph's checkpoint-all peak.
      llvm::Expected<uint64_t> bytes = parseBudget(part, all.peakBytes);
      if (!bytes) {
        llvm::errs() << llvm::toString(bytes.takeError()) << "\n";
        return 2;
      }
      budgets.push_back(Budget{part.trim().str(), *bytes});
    }

    os << llvm::formatv("{0,-9} {1,10} {2,-15} {3,-14} {4,10} {5,4} {6,9} "
                        "{7,9} {8,9} {9,7}  {10}\n",
                        "budget", "budget_GB", "solver", "status", "peak_GB",
                        "fits", "overhead", "lp_bound", "gap", "time_s",
                        "model");
    llvm::json::Array budgetsJson;
    std::vector<double> ratios;
    for (const Budget &budget : budgets) {
      SolverOptions options;
      options.budget = budget.bytes;
      options.timeLimitSeconds = timeLimit;
      std::vector<Row> rows;
      for (const SolverInfo &solver : allSolvers()) {
        // Checkmate's solvers run below, with their reports; the portfolio
        // would run them again (its plan is the best row of the table).
        if (llvm::StringRef(solver.name).starts_with("checkmate") ||
            solver.name == "auto" || !solverApplies(solver, graph))
          continue;
        Row row;
        row.solver = solver.name;
        llvm::Expected<SolverResult> result = runSolver(solver, graph, options);
        if (!result) {
          row.status = "error: " + llvm::toString(result.takeError());
          rows.push_back(row);
          continue;
        }
        row.status = result->meetsBudget ? "fits" : "over budget";
        row.peak = result->report.peakBytes;
        row.meets = result->meetsBudget;
        row.cost = result->report.totalCost;
        row.overhead = result->report.overhead();
        row.seconds = result->solveSeconds;
        rows.push_back(row);
      }
      for (bool ilp : {true, false}) {
        Row row;
        row.solver = ilp ? "checkmate-ilp" : "checkmate-lp";
        CheckmateReport report;
        auto begin = std::chrono::steady_clock::now();
        llvm::Expected<Schedule> schedule =
            ilp ? solveCheckmateILP(graph, options, cmOptions, &report)
                : solveCheckmateLP(graph, options, cmOptions, &report);
        row.seconds = seconds(begin);
        if (!schedule) {
          row.status = "error: " + llvm::toString(schedule.takeError());
          rows.push_back(row);
          continue;
        }
        SimulationReport sim = simulate(graph, *schedule);
        row.status = checkmateStatusName(report.status).str();
        row.peak = sim.peakBytes;
        row.meets = sim.valid && sim.peakBytes <= budget.bytes;
        row.cost = sim.totalCost;
        row.overhead = sim.overhead();
        row.checkmate = report;
        rows.push_back(row);
      }
      // LP rounding / ILP where the ILP is proven optimal and both fit.
      const Row &ilpRow = rows[rows.size() - 2], &lpRow = rows.back();
      if (ilpRow.checkmate && lpRow.checkmate &&
          ilpRow.checkmate->status == CheckmateStatus::Optimal &&
          lpRow.checkmate->status == CheckmateStatus::Feasible &&
          ilpRow.meets && lpRow.meets && ilpRow.cost > 0)
        ratios.push_back(lpRow.cost / ilpRow.cost);

      llvm::json::Array rowsJson;
      for (const Row &row : rows) {
        std::string lp = "-", gap = "-", model = "";
        if (row.checkmate) {
          if (row.checkmate->lpBound >= 0 &&
              std::isfinite(row.checkmate->lpBound))
            lp = llvm::formatv("{0:F4}",
                               row.checkmate->lpBound / graph.totalCost())
                     .str();
          else if (std::isinf(row.checkmate->lpBound))
            lp = "infeas";
          if (row.checkmate->gap >= 0)
            gap = llvm::formatv("{0:F2}%", 100 * row.checkmate->gap).str();
          model = row.checkmate->level;
          if (row.checkmate->modelNodes)
            model += " (" + std::to_string(row.checkmate->modelNodes) + "/" +
                     std::to_string(row.checkmate->graphNodes) + ")";
          if (!row.checkmate->warmStart.empty())
            model += "; start/plan: " + row.checkmate->warmStart;
          if (row.checkmate->budgetAllowance > 0 ||
              row.checkmate->roundingThreshold > 0)
            model += llvm::formatv("; p={0} eps={1}",
                                   row.checkmate->roundingThreshold,
                                   row.checkmate->budgetAllowance)
                         .str();
          if (row.checkmate->modelNodes)
            model += llvm::formatv("; s: others {0:F1} lp {1:F1} milp {2:F1}",
                                   row.checkmate->heuristicSeconds,
                                   row.checkmate->lpSeconds,
                                   row.checkmate->milpSeconds)
                         .str();
          if (!row.checkmate->message.empty())
            model += "; " + row.checkmate->message;
        }
        os << llvm::formatv("{0,-9} {1,10} {2,-15} {3,-14} {4,10} {5,4} "
                            "{6,9:F4} {7,9} {8,9} {9,7:F2}  {10}\n",
                            budget.label, gb(budget.bytes), row.solver,
                            row.status.substr(0, 14), gb(row.peak),
                            row.meets ? "yes" : "no", row.overhead, lp, gap,
                            row.seconds, model);
        llvm::json::Object object{
            {"solver", row.solver},  {"status", row.status},
            {"peak_bytes", row.peak}, {"meets_budget", row.meets},
            {"cost", row.cost},      {"overhead", row.overhead},
            {"seconds", row.seconds}};
        if (row.checkmate)
          object["checkmate"] = row.checkmate->toJSON();
        rowsJson.push_back(std::move(object));
      }
      budgetsJson.push_back(
          llvm::json::Object{{"label", budget.label},
                             {"bytes", budget.bytes},
                             {"results", std::move(rowsJson)}});
    }

    llvm::json::Object graphJson{
        {"graph", name},
        {"nodes", static_cast<uint64_t>(graph.numNodes())},
        {"edges", static_cast<uint64_t>(edges)},
        {"total_cost", graph.totalCost()},
        {"checkpoint_all_peak_bytes", all.peakBytes},
        {"budgets", std::move(budgetsJson)}};
    if (!ratios.empty()) {
      double logSum = 0;
      for (double r : ratios)
        logSum += std::log(r);
      double geomean = std::exp(logSum / ratios.size());
      double worst = *std::max_element(ratios.begin(), ratios.end());
      os << llvm::formatv("LP rounding / ILP: geometric mean {0:F4}, max "
                          "{1:F4} over {2} budgets\n",
                          geomean, worst, ratios.size());
      graphJson["lp_rounding_ratio"] =
          llvm::json::Object{{"geomean", geomean},
                             {"max", worst},
                             {"budgets", static_cast<uint64_t>(ratios.size())}};
    } else {
      os << "LP rounding / ILP: no budget with a proven ILP optimum and a "
            "fitting rounding\n";
    }

    if (leastFeasible) {
      // Bisect on [lo, hi): hi fits (the checkpoint-all peak does), lo does
      // not. Infeasible budgets are often proven quickly.
      uint64_t lo = 0, hi = all.peakBytes;
      auto begin = std::chrono::steady_clock::now();
      int solves = 0;
      bool open = false;
      while (hi - lo > 1000000) {
        uint64_t mid = lo + (hi - lo) / 2;
        SolverOptions options;
        options.budget = mid;
        options.timeLimitSeconds = timeLimit;
        CheckmateReport report;
        llvm::Expected<Schedule> schedule =
            solveCheckmateILP(graph, options, cmOptions, &report);
        ++solves;
        if (!schedule) {
          llvm::consumeError(schedule.takeError());
          break;
        }
        if (report.meetsBudget) {
          hi = std::min<uint64_t>(mid, report.peakBytes);
        } else {
          lo = mid;
          open |= report.status != CheckmateStatus::Infeasible;
        }
      }
      os << llvm::formatv("least feasible budget (checkmate-ilp): {0} GB "
                          "({1} bytes fit; {2} bytes do not{3}); {4} "
                          "solves, {5:F1} s\n",
                          gb(hi), hi, lo,
                          open ? ", not proven: a solve hit the time limit"
                               : ", proven",
                          solves, seconds(begin));
      graphJson["least_feasible_bytes"] = hi;
      graphJson["least_feasible_proven"] = !open;
    }
    os << "\n";
    os.flush();
    graphsJson.push_back(std::move(graphJson));
  }

  if (jsonOut.getNumOccurrences()) {
    llvm::json::Value document =
        llvm::json::Object{{"time_limit_seconds", static_cast<double>(timeLimit)},
                           {"max_nodes", static_cast<uint64_t>(maxNodes)},
                           {"graphs", std::move(graphsJson)}};
    if (jsonOut.empty() || jsonOut == "-") {
      os << llvm::formatv("{0:2}", document) << "\n";
    } else {
      std::error_code ec;
      llvm::raw_fd_ostream out(jsonOut, ec);
      if (ec) {
        llvm::errs() << "cannot write " << jsonOut << ": " << ec.message()
                     << "\n";
        return 1;
      }
      out << llvm::formatv("{0:2}", document) << "\n";
    }
  }
  return 0;
}
