//===- bench_rotor.cpp - Rotor's dynamic program: time and table memory ---===//
//
// Times the table of rotor's Theorem 1 (seeds/004 §4.2, Algorithm 1) on a
// heterogeneous chain shaped like the paper's largest case, ResNet-1001 cut
// into 339 stages (§5.2: "a chain of length 339 ... below 20 seconds" for the
// paper's C code), with S = 500 slots; prints how the time grows with the
// length L (O(L^3 S)) and with S (O(L^3 S)), the table's memory (triangular,
// one float per cell: L (L + 1) / 2 (S + 1) 4 bytes), revolve's table (§5.3),
// and the whole rotor solver on a training graph realising the chain
// (staging, tables, conversion, simulation). Single-threaded. Prints a table,
// or JSON with --json. Not a test: it never fails on a time
// (bench/README.md).
//
//   remat-bench-rotor [--json] [--repeat R] [--budget PERCENT]
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Rotor.h"
#include "remat/Support/Budget.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace remat;

namespace {

/// A ResNet-1001-like chain of L stages: three groups of bottleneck blocks
/// whose activations halve in bytes from group to group (channels x2,
/// pixels / 4), abar about three activations (the block's intermediates),
/// delta = a, overheads of a fraction of an activation, durations with 20%
/// noise; the last stage is the loss (tiny, pinned: it returns the loss).
RotorChain resnetLikeChain(unsigned L, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(0.8, 1.2);
  RotorChain c = RotorChain::withLength(L);
  const uint64_t base = 64ull << 20; // 64 MiB activations in the first group
  c.a[0] = base / 2;
  for (unsigned l = 1; l <= L; ++l) {
    unsigned group = std::min(2u, 3 * (l - 1) / std::max(1u, L - 1));
    uint64_t act = base >> group;
    bool loss = l == L;
    c.a[l] = loss ? 4 : uint64_t(act * noise(rng));
    c.abar[l] = loss ? 4 : c.a[l] + uint64_t(2 * act * noise(rng));
    c.delta[l] = c.a[l];
    c.overheadF[l] = loss ? 0 : uint64_t(act / 4 * noise(rng));
    c.overheadB[l] = loss ? 0 : uint64_t(act / 2 * noise(rng));
    // Every group does about the same work per block.
    c.costF[l] = loss ? 1 : 10.0 * noise(rng);
    c.costB[l] = loss ? 1 : 20.0 * noise(rng);
  }
  c.delta[L] = 0;
  c.pinned[L] = true;
  return c;
}

/// What storing everything needs: every abar plus the largest backward.
uint64_t storeAllMemory(const RotorChain &c) {
  uint64_t sum = c.a[0], extra = 0;
  for (unsigned l = 1; l <= c.length(); ++l) {
    sum += c.abar[l];
    extra = std::max(extra, c.delta[l] + c.delta[l - 1] + c.overheadB[l]);
  }
  return sum + extra;
}

double baseCost(const RotorChain &c) {
  double sum = 0;
  for (unsigned l = 1; l <= c.length(); ++l)
    sum += c.costF[l] + c.costB[l];
  return sum;
}

/// Best wall-clock and CPU seconds of `repeat` runs (CPU time is what the
/// process used: on a shared machine it is the steadier figure).
template <typename F>
std::pair<double, double> bestSeconds(unsigned repeat, F &&f) {
  double wall = 1e300, cpu = 1e300;
  for (unsigned r = 0; r < repeat; ++r) {
    auto begin = std::chrono::steady_clock::now();
    std::clock_t cpuBegin = std::clock();
    f();
    std::clock_t cpuEnd = std::clock();
    auto end = std::chrono::steady_clock::now();
    wall = std::min(wall, std::chrono::duration<double>(end - begin).count());
    cpu = std::min(cpu, double(cpuEnd - cpuBegin) / CLOCKS_PER_SEC);
  }
  return {wall, cpu};
}

struct Row {
  std::string what;
  unsigned length = 0;
  unsigned slots = 0;
  double seconds = 0;
  double cpuSeconds = 0;
  double rebuildSeconds = 0;
  unsigned tables = 1;
  size_t tableBytes = 0;
  double overhead = 0; // cost / cost of computing everything once
  bool feasible = false;
  uint64_t peak = 0;   // simulated (solver rows) or model peak
  uint64_t budget = 0;
};

/// The budget's bytes for `chain`: a percentage of storing everything.
uint64_t budgetBytes(const BudgetSpec &budget, const RotorChain &chain) {
  llvm::Expected<uint64_t> bytes = resolveBudget(budget, storeAllMemory(chain));
  if (!bytes) {
    llvm::errs() << llvm::toString(bytes.takeError()) << "\n";
    std::exit(2);
  }
  return *bytes;
}

Row tableRow(const std::string &what, unsigned L, unsigned S,
             const BudgetSpec &budget, bool allowFAllChains, unsigned repeat) {
  RotorChain chain = resnetLikeChain(L);
  uint64_t memory = budgetBytes(budget, chain);
  RotorDPOptions dp;
  dp.slots = S;
  dp.allowFAllChains = allowFAllChains;
  Row row;
  row.what = what;
  row.length = L;
  row.slots = S;
  row.budget = memory;
  std::optional<RotorTable> table;
  std::tie(row.seconds, row.cpuSeconds) = bestSeconds(repeat, [&] {
    table.reset();
    llvm::Expected<RotorTable> built = RotorTable::build(chain, memory, dp);
    if (!built) {
      llvm::errs() << llvm::toString(built.takeError()) << "\n";
      std::exit(1);
    }
    table = std::move(*built);
  });
  row.tableBytes = table->tableBytes();
  row.feasible = !std::isinf(table->cost());
  if (row.feasible) {
    row.overhead = table->cost() / baseCost(chain);
    RotorSequence seq;
    row.rebuildSeconds = bestSeconds(repeat, [&] {
                           llvm::Expected<RotorSequence> s = table->sequence();
                           seq = std::move(*s);
                         }).first;
    row.peak = simulateRotorSequence(chain, seq).peak;
  }
  return row;
}

Row solverRow(unsigned L, const BudgetSpec &budget, unsigned repeat) {
  RotorChain chain = resnetLikeChain(L);
  TrainingGraph graph = makeRotorChainGraph(chain);
  SolverOptions options;
  options.budget = budgetBytes(budget, chain);
  Row row;
  row.what = "solver rotor (graph)";
  row.length = L;
  row.slots = 500;
  row.budget = *options.budget;
  RotorSolveInfo info;
  Schedule plan;
  std::tie(row.seconds, row.cpuSeconds) = bestSeconds(repeat, [&] {
    llvm::Expected<Schedule> s = solveRotor(graph, options, {}, &info);
    if (!s) {
      llvm::errs() << llvm::toString(s.takeError()) << "\n";
      std::exit(1);
    }
    plan = std::move(*s);
  });
  SimulationReport report = simulate(graph, plan);
  row.tableBytes = info.tableBytes;
  row.tables = info.tables;
  row.feasible = report.valid && report.peakBytes <= *options.budget;
  row.overhead = report.overhead();
  row.peak = report.peakBytes;
  return row;
}

} // namespace

int main(int argc, char **argv) {
  bool json = false;
  unsigned repeat = 3;
  // A percentage of storing everything ("35" or "35%").
  llvm::Expected<BudgetSpec> budget = parseBudgetSpec("35%");
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json"))
      json = true;
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = unsigned(std::max(1, std::atoi(argv[++i])));
    else if (!std::strcmp(argv[i], "--budget") && i + 1 < argc) {
      llvm::StringRef text = llvm::StringRef(argv[++i]).trim();
      budget =
          parseBudgetSpec(text.ends_with("%") ? text.str() : text.str() + "%");
      if (!budget) {
        llvm::errs() << llvm::toString(budget.takeError()) << "\n";
        return 2;
      }
    } else {
      llvm::errs() << "usage: remat-bench-rotor [--json] [--repeat R] "
                      "[--budget PERCENT]\n";
      return 2;
    }
  }

  std::vector<Row> rows;
  // The paper's case.
  rows.push_back(tableRow("rotor table", 339, 500, *budget, true, repeat));
  // Growth in L (S = 500) and in S (L = 339).
  for (unsigned L : {42u, 85u, 170u})
    rows.push_back(tableRow("rotor table", L, 500, *budget, true, repeat));
  for (unsigned S : {125u, 250u, 1000u})
    rows.push_back(tableRow("rotor table", 339, S, *budget, true, repeat));
  // Revolve (§5.3): the same table without chains of F_all.
  rows.push_back(tableRow("revolve table", 339, 500, *budget, false, repeat));
  // The solver end to end on a graph realising the chain.
  rows.push_back(solverRow(339, *budget, 1));

  if (json) {
    llvm::json::Array array;
    for (const Row &r : rows)
      array.push_back(llvm::json::Object{
          {"what", r.what},
          {"L", r.length},
          {"S", r.slots},
          {"seconds", r.seconds},
          {"cpu_seconds", r.cpuSeconds},
          {"tables", r.tables},
          {"rebuild_seconds", r.rebuildSeconds},
          {"table_bytes", uint64_t(r.tableBytes)},
          {"budget_bytes", r.budget},
          {"feasible", r.feasible},
          {"overhead", r.overhead},
          {"peak_bytes", r.peak},
      });
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(array)))
                 << "\n";
    return 0;
  }
  llvm::outs() << "rotor DP (seeds/004 Theorem 1), ResNet-1001-like chain, "
                  "budget "
               << budget->text << " of storing everything, best of " << repeat
               << ", single-threaded\n";
  llvm::outs() << llvm::format(
      "%-22s %5s %5s %9s %9s %7s %10s %10s %9s %5s\n", "what", "L", "S",
      "wall_s", "cpu_s", "tables", "rebuild_s", "table_MiB", "overhead",
      "fits");
  for (const Row &r : rows)
    llvm::outs() << llvm::format(
        "%-22s %5u %5u %9.3f %9.3f %7u %10.5f %10.1f %9.4f %5s\n",
        r.what.c_str(), r.length, r.slots, r.seconds, r.cpuSeconds, r.tables,
        r.rebuildSeconds, r.tableBytes / 1048576.0, r.overhead,
        r.feasible ? "yes" : "no");
  return 0;
}
