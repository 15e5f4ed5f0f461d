//===- remat-property-check.cpp - Property check of every solver ----------===//
//
// remat-property-check [--graphs N] [--seed S] [--start I] [--max-nodes K]
//     [--solvers all|a,b,...] [--time-limit T] [--cbc-every M]
//     [--budgets-per-graph B] [--mutants P] [--dump-dir DIR]
//     [--isolate-cbc 0|1] [--progress N] [--json FILE|-]
//
// Random training graphs x every solver x random budgets; every plan judged
// by the independent checker (IndependentChecker.h) against the simulator's
// figures and the solver's budget claim. Prints the counts; exits 1 when any
// plan is invalid, breaks a budget it claims, or any figure disagrees.
//
//===----------------------------------------------------------------------===//

#include "PropertyRun.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace remat::property;

static void usage() {
  llvm::errs()
      << "usage: remat-property-check [--graphs N] [--seed S] [--start I]\n"
         "    [--max-nodes K] [--solvers all|NAME,NAME...] [--time-limit T]\n"
         "    [--cbc-every M] [--budgets-per-graph B] [--mutants P]\n"
         "    [--dump-dir DIR] [--isolate-cbc 0|1] [--progress N]\n"
         "    [--json FILE|-]\n";
}

int main(int argc, char **argv) {
  RunOptions options;
  options.dumpDir = "remat-property-failures";
  std::string jsonPath;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    std::string value;
    llvm::StringRef name = arg;
    if (arg.starts_with("--") && arg.contains('=')) {
      auto [n, v] = arg.split('=');
      name = n;
      value = v.str();
    } else if (arg == "--help" || arg == "-h") {
      usage();
      return 0;
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      llvm::errs() << "remat-property-check: " << arg << " needs a value\n";
      return 2;
    }
    auto number = [&](uint64_t &out) {
      if (llvm::StringRef(value).getAsInteger(10, out)) {
        llvm::errs() << "remat-property-check: " << name
                     << " expects an unsigned integer, got '" << value << "'\n";
        std::exit(2);
      }
    };
    uint64_t n = 0;
    if (name == "--graphs") {
      number(options.graphs);
    } else if (name == "--seed") {
      number(options.seed);
    } else if (name == "--start") {
      number(options.start);
    } else if (name == "--max-nodes") {
      number(n);
      options.maxNodes = unsigned(n);
    } else if (name == "--cbc-every") {
      number(n);
      options.cbcEvery = unsigned(n);
    } else if (name == "--budgets-per-graph") {
      number(n);
      options.budgetsPerGraph = unsigned(n);
    } else if (name == "--mutants") {
      number(n);
      options.mutantsPerPlan = unsigned(n);
    } else if (name == "--isolate-cbc") {
      number(n);
      options.isolateCbc = n != 0;
    } else if (name == "--progress") {
      number(options.progressEvery);
    } else if (name == "--time-limit") {
      double t = 0;
      if (llvm::StringRef(value).getAsDouble(t) || !(t > 0) || t > 1e6) {
        llvm::errs() << "remat-property-check: --time-limit expects seconds "
                        "> 0, got '"
                     << value << "'\n";
        return 2;
      }
      options.timeLimit = t;
    } else if (name == "--solvers") {
      options.solvers.clear();
      if (value != "all") {
        llvm::SmallVector<llvm::StringRef> names;
        llvm::StringRef(value).split(names, ',', -1, false);
        for (llvm::StringRef s : names)
          options.solvers.push_back(s.trim().str());
      }
    } else if (name == "--dump-dir") {
      options.dumpDir = value;
    } else if (name == "--json") {
      jsonPath = value;
    } else {
      llvm::errs() << "remat-property-check: unknown option " << name << "\n";
      usage();
      return 2;
    }
  }
  if (options.maxNodes < 3 || options.maxNodes > 400) {
    llvm::errs() << "remat-property-check: --max-nodes must be in [3, 400]\n";
    return 2;
  }
  if (options.budgetsPerGraph == 0 || options.graphs == 0) {
    llvm::errs() << "remat-property-check: --graphs and --budgets-per-graph "
                    "must be at least 1\n";
    return 2;
  }

  llvm::Expected<RunStats> stats = runProperty(options);
  if (!stats) {
    llvm::errs() << "remat-property-check: "
                 << llvm::toString(stats.takeError()) << "\n";
    return 2;
  }
  if (jsonPath == "-") {
    llvm::outs() << llvm::formatv("{0:2}", stats->toJSON()) << "\n";
  } else {
    stats->print(llvm::outs());
    if (!jsonPath.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(jsonPath, ec);
      if (ec) {
        llvm::errs() << "remat-property-check: " << jsonPath << ": "
                     << ec.message() << "\n";
        return 2;
      }
      os << llvm::formatv("{0:2}", stats->toJSON()) << "\n";
    }
  }
  return stats->clean() ? 0 : 1;
}
