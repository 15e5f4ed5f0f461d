//===- bench_memory_plan.cpp - Where each byte lives: placement, order ----===//
//
// Issue 22's benchmark of the pure core (docs/memory-plan.md): for each
// training graph given (JSON, as torch_export.py --graph or remat-opt
// --remat-export-graph write them),
//
//  1. the operator order: the peak of the program's order, of the
//     forward-then-backward order and of reorderForMemory's order (the
//     `reorder` solver), with the search's time and whether it is proven
//     optimal;
//  2. placement: for each plan (none = the program's order with early
//     frees, reorder, chen-sqrtn, rotor and auto at 60% of the
//     checkpoint-all peak), the buffers of the plan (scheduleBuffers, each
//     aligned to --alignment) placed by every heuristic and by placeBuffers
//     (heuristics, then MiniMalloc's exact search within --time-limit):
//     live peak, lower bound, arena of each, arena / live peak, whether the
//     arena is proven optimal, and the times.
//
// Not a test: it never fails on a time or a ratio (bench/README.md).
//
//  3. the solvers that recompute (chen-sqrtn, rotor, auto) started from the
//     reordered graph (solveOnReorderedGraph) next to the same solver on
//     the program's order: simulated peak and cost overhead.
//
//   remat-bench-memory-plan [--json FILE] [--alignment A] [--time-limit S]
//       [--auto-time-limit S] [--plans none,reorder,...] [--no-reordered]
//       GRAPH.json...
//
//===----------------------------------------------------------------------===//

#include "remat/Graph/GraphIO.h"
#include "remat/Schedule/MemoryPlacement.h"
#include "remat/Solvers/Reorder.h"
#include "remat/Solvers/Solver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

using namespace remat;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

double mb(uint64_t bytes) { return double(bytes) / 1e6; }

struct Options {
  std::string json;
  uint64_t alignment = 64;
  double timeLimit = 10;
  double autoTimeLimit = 10;
  bool compareReordered = true;
  std::vector<std::string> plans = {"none", "reorder", "chen-sqrtn",
                                    "rotor@60%", "auto@60%"};
  std::vector<std::string> graphs;
};

[[noreturn]] void usage(const char *message) {
  llvm::errs() << "remat-bench-memory-plan: " << message
               << "\nusage: remat-bench-memory-plan [--json FILE] "
                  "[--alignment A] [--time-limit S] [--auto-time-limit S] "
                  "[--plans none,reorder,chen-sqrtn,rotor@60%,auto@60%] "
                  "[--no-reordered] GRAPH.json...\n";
  std::exit(2);
}

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto value = [&]() -> llvm::StringRef {
      if (i + 1 >= argc)
        usage(("missing value after " + arg).str().c_str());
      return argv[++i];
    };
    if (arg == "--json")
      options.json = value().str();
    else if (arg == "--no-reordered")
      options.compareReordered = false;
    else if (arg == "--alignment") {
      if (value().getAsInteger(10, options.alignment) ||
          !llvm::isPowerOf2_64(options.alignment))
        usage("--alignment takes a power of two");
    } else if (arg == "--time-limit" || arg == "--auto-time-limit") {
      double &target =
          arg == "--time-limit" ? options.timeLimit : options.autoTimeLimit;
      if (value().getAsDouble(target) || target < 0)
        usage("a time limit takes seconds, 0 or more");
    } else if (arg == "--plans") {
      llvm::SmallVector<llvm::StringRef> parts;
      value().split(parts, ',', -1, false);
      options.plans.assign(parts.begin(), parts.end());
    } else if (arg.starts_with("-"))
      usage(("unknown option " + arg).str().c_str());
    else
      options.graphs.push_back(arg.str());
  }
  if (options.graphs.empty())
    usage("no graph given");
  return options;
}

/// A plan name: a solver, optionally at a percentage of the checkpoint-all
/// peak ("rotor@60%"), or "none" (the program's order with early frees).
llvm::Expected<SolverResult> makePlan(const TrainingGraph &graph,
                                      llvm::StringRef plan,
                                      uint64_t checkpointAllPeak,
                                      const Options &options,
                                      bool reordered = false) {
  auto [name, budgetText] = plan.split('@');
  if (name == "none") {
    std::vector<NodeId> order(graph.numNodes());
    std::iota(order.begin(), order.end(), 0);
    SolverResult result;
    result.solver = "none";
    result.schedule = insertEarlyFrees(graph, order);
    result.report = simulate(graph, result.schedule);
    return result;
  }
  const SolverInfo *solver = findSolver(name);
  if (!solver)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown solver '" + name + "'");
  SolverOptions solverOptions;
  solverOptions.timeLimitSeconds =
      name == "auto" ? options.autoTimeLimit : options.timeLimit;
  if (!budgetText.empty()) {
    double percent = 0;
    if (!budgetText.consume_back("%") || budgetText.getAsDouble(percent))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "bad budget in plan '" + plan + "'");
    solverOptions.budget =
        static_cast<uint64_t>(double(checkpointAllPeak) * percent / 100);
  }
  if (reordered)
    return solveOnReorderedGraph(graph, *solver, solverOptions);
  return runSolver(*solver, graph, solverOptions);
}


} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  llvm::json::Array orderRows, placementRows;
  llvm::raw_ostream &os = llvm::outs();

  struct OrderLine {
    std::string model;
    size_t nodes;
    ReorderResult result;
    uint64_t phased;
  };
  std::vector<OrderLine> orderLines;
  struct PlacementLine {
    std::string model, plan;
    size_t buffers;
    uint64_t peak;
    PlacementResult result;
    std::vector<uint64_t> heuristicArenas;
    double heuristicSeconds;
  };
  std::vector<PlacementLine> placementLines;
  struct StartLine {
    std::string model, plan;
    SimulationReport original, reordered;
    std::string originalSolver, reorderedSolver;
  };
  std::vector<StartLine> startLines;
  llvm::json::Array startRows;

  for (const std::string &path : options.graphs) {
    llvm::Expected<TrainingGraph> loaded = loadGraphFile(path);
    if (!loaded) {
      llvm::errs() << "remat-bench-memory-plan: " << path << ": "
                   << llvm::toString(loaded.takeError()) << "\n";
      return 1;
    }
    const TrainingGraph &graph = *loaded;
    std::string model = llvm::sys::path::stem(path).str();
    llvm::errs() << "== " << model << " (" << graph.numNodes()
                 << " nodes)\n";

    // 1. The order.
    ReorderOptions reorderOptions;
    reorderOptions.timeLimitSeconds = options.timeLimit;
    ReorderResult reordered = reorderForMemory(graph, reorderOptions);
    std::vector<NodeId> phased = graph.forwardNodes();
    for (NodeId v : graph.backwardNodes())
      phased.push_back(v);
    uint64_t phasedPeak = orderPeak(graph, phased);
    orderLines.push_back({model, graph.numNodes(), reordered, phasedPeak});
    llvm::json::Object orderJSON{{"model", model},
                                 {"nodes", int64_t(graph.numNodes())},
                                 {"phased_peak_bytes", phasedPeak}};
    orderJSON["reorder"] = reordered.toJSON();
    orderRows.push_back(std::move(orderJSON));

    // 2. Placement of each plan.
    llvm::Expected<SolverResult> all =
        runSolver(*findSolver("checkpoint-all"), graph, {});
    if (!all) {
      llvm::errs() << llvm::toString(all.takeError()) << "\n";
      return 1;
    }
    for (const std::string &plan : options.plans) {
      llvm::Expected<SolverResult> solved =
          makePlan(graph, plan, all->report.peakBytes, options);
      if (!solved) {
        llvm::errs() << "  " << plan << ": "
                     << llvm::toString(solved.takeError()) << "\n";
        continue;
      }
      // The same solver started from the reordered graph
      // (solveOnReorderedGraph), for the solvers that recompute.
      if (options.compareReordered && plan != "none" &&
          !llvm::StringRef(plan).starts_with("reorder")) {
        llvm::Expected<SolverResult> fromReordered =
            makePlan(graph, plan, all->report.peakBytes, options, true);
        if (!fromReordered) {
          llvm::errs() << "  " << plan << " on the reordered graph: "
                       << llvm::toString(fromReordered.takeError()) << "\n";
        } else {
          startLines.push_back({model, plan, solved->report,
                                fromReordered->report, solved->solver,
                                fromReordered->solver});
          startRows.push_back(llvm::json::Object{
              {"model", model},
              {"plan", plan},
              {"solver", solved->solver},
              {"reordered_solver", fromReordered->solver},
              {"peak_bytes", solved->report.peakBytes},
              {"reordered_peak_bytes", fromReordered->report.peakBytes},
              {"overhead", solved->report.overhead()},
              {"reordered_overhead", fromReordered->report.overhead()},
              {"meets_budget", solved->meetsBudget},
              {"reordered_meets_budget", fromReordered->meetsBudget}});
        }
      }
      llvm::Expected<ScheduleBuffers> buffers =
          scheduleBuffers(graph, solved->schedule, options.alignment);
      if (!buffers) {
        llvm::errs() << "  " << plan << ": "
                     << llvm::toString(buffers.takeError()) << "\n";
        continue;
      }
      PlacementLine line;
      line.model = model;
      line.plan = plan;
      line.buffers = buffers->buffers.size();
      line.peak = solved->report.peakBytes;
      Clock::time_point start = Clock::now();
      for (auto [order, fit] : placementHeuristics()) {
        std::vector<uint64_t> offsets =
            placeGreedy(buffers->buffers, order, fit);
        line.heuristicArenas.push_back(
            placementArena(buffers->buffers, offsets));
      }
      line.heuristicSeconds = secondsSince(start);
      PlacementOptions placementOptions;
      placementOptions.timeLimitSeconds = options.timeLimit;
      line.result = placeBuffers(buffers->buffers, placementOptions);
      if (llvm::Error err =
              verifyPlacement(buffers->buffers, line.result.offsets)) {
        llvm::errs() << "  " << plan << ": INVALID PLACEMENT: "
                     << llvm::toString(std::move(err)) << "\n";
        return 1;
      }
      llvm::errs() << "  " << plan << " (" << solved->solver << "): "
                   << line.buffers << " buffers, arena "
                   << line.result.arenaBytes << " / live "
                   << line.result.livePeakBytes << ", "
                   << llvm::format("%.3f", line.result.seconds) << " s\n";
      llvm::json::Object row{{"model", model},
                             {"plan", plan},
                             {"solver", solved->solver},
                             {"alignment", options.alignment},
                             {"buffers", int64_t(line.buffers)},
                             {"simulated_peak_bytes", line.peak},
                             {"heuristics_seconds", line.heuristicSeconds}};
      llvm::json::Object heuristicJSON;
      for (size_t h = 0; h < line.heuristicArenas.size(); ++h)
        heuristicJSON[placementMethodName(placementHeuristics()[h].first,
                                          placementHeuristics()[h].second)] =
            line.heuristicArenas[h];
      row["heuristics"] = std::move(heuristicJSON);
      row["placement"] = line.result.toJSON();
      placementRows.push_back(std::move(row));
      placementLines.push_back(std::move(line));
    }
  }

  os << "Operator order (peak bytes of computing every node once, early "
        "frees; MB = 10^6 bytes)\n\n";
  os << llvm::formatv("{0,-14} {1,6} {2,10} {3,10} {4,10} {5,8} {6,-8} "
                      "{7,8} {8,7}\n",
                      "model", "nodes", "program", "phased", "reorder",
                      "gain", "method", "time_s", "optimal");
  for (const OrderLine &line : orderLines) {
    const ReorderResult &r = line.result;
    double gain = r.programPeakBytes
                      ? 100.0 * (1.0 - double(r.peakBytes) /
                                           double(r.programPeakBytes))
                      : 0;
    os << llvm::formatv("{0,-14} {1,6} {2,10:F2} {3,10:F2} {4,10:F2} "
                        "{5,7:F1}% {6,-8} {7,8:F3} {8,7}\n",
                        line.model, line.nodes, mb(r.programPeakBytes),
                        mb(line.phased), mb(r.peakBytes), gain, r.method,
                        r.seconds, r.optimal ? "yes" : "no");
  }

  os << "\nPlacement (alignment " << options.alignment
     << "; live peak and arena in MB, the heuristics' arenas / live peak: "
        "best fit by size, conflicts, lifetime, area; first fit in program "
        "order; skyline by lifetime, size, area, program order, breadth; best "
        "fit by breadth)\n\n";
  os << llvm::formatv("{0,-13} {1,-11} {2,6} {3,9}", "model", "plan", "bufs",
                      "live");
  for (const char *column : {"size", "confl", "life", "area", "first",
                             "sky-life", "sky-size", "sky-area", "sky-prog",
                             "sky-brd", "breadth"})
    os << llvm::formatv(" {0,8}", column);
  os << llvm::formatv(" {0,9} {1,-16} {2,7} {3,7} {4,7} {5,7}\n", "arena",
                      "by", "ratio", "optimal", "heur_s", "total_s");
  for (const PlacementLine &line : placementLines) {
    const PlacementResult &r = line.result;
    auto ratio = [&](uint64_t arena) {
      return r.livePeakBytes ? double(arena) / double(r.livePeakBytes) : 1.0;
    };
    os << llvm::formatv("{0,-13} {1,-11} {2,6} {3,9:F3}", line.model,
                        line.plan, line.buffers, mb(r.livePeakBytes));
    for (uint64_t arena : line.heuristicArenas)
      os << llvm::formatv(" {0,8:F4}", ratio(arena));
    os << llvm::formatv(" {0,9:F3} {1,-16} {2,7:F4} {3,7} {4,7:F3} {5,7:F3}\n",
                        mb(r.arenaBytes), r.method, ratio(r.arenaBytes),
                        r.optimal ? "yes" : "no", line.heuristicSeconds,
                        r.seconds);
  }

  if (!startLines.empty()) {
    os << "\nSolvers started from the reordered graph "
          "(solveOnReorderedGraph): simulated peak (MB) and cost overhead\n\n";
    os << llvm::formatv("{0,-13} {1,-11} {2,-22} {3,10} {4,9} {5,-22} {6,10} "
                        "{7,9}\n",
                        "model", "plan", "solver", "peak", "overhead",
                        "reordered", "peak", "overhead");
    for (const StartLine &line : startLines)
      os << llvm::formatv("{0,-13} {1,-11} {2,-22} {3,10:F3} {4,9:F3} "
                          "{5,-22} {6,10:F3} {7,9:F3}\n",
                          line.model, line.plan, line.originalSolver,
                          mb(line.original.peakBytes), line.original.overhead(),
                          line.reorderedSolver, mb(line.reordered.peakBytes),
                          line.reordered.overhead());
  }

  if (!options.json.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream file(options.json, ec);
    if (ec) {
      llvm::errs() << "remat-bench-memory-plan: " << options.json << ": "
                   << ec.message() << "\n";
      return 1;
    }
    file << llvm::formatv(
        "{0:2}\n",
        llvm::json::Value(llvm::json::Object{
            {"alignment", options.alignment},
            {"time_limit_seconds", options.timeLimit},
            {"order", std::move(orderRows)},
            {"reordered_start", std::move(startRows)},
            {"placement", std::move(placementRows)}}));
  }
  return 0;
}
