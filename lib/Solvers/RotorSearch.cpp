//===- RotorSearch.cpp - The rotor, revolve and blocks solvers ------------===//
//
// seeds/004_12ee49cee382de08.txt §5.2-§5.3 as a solver: for a memory limit M,
// the optimal persistent sequence of a table in S slots of M / S (§5.2,
// RotorTable.cpp), judged by the simulator; revolve (§5.3) is the same
// search without chains of F_all, printed under its own debug type. Around
// the paper: the candidate stagings (one stage per forward node, or the top
// level of the linear hierarchy, the way §5.3 cuts ResNets into blocks) and
// backward placements, each mapped to a chain (RotorMapping.cpp), the
// columns above the budget the model's over-count leaves room for, the
// least-memory plan when no budget fits, and the time limit (solveMapped,
// solveRotorFamily, solveRotor, solveBlocks).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Rotor.h"

#include "RotorInternal.h"

#include "remat/Solvers/Chain.h"
#include "remat/Structure/Structure.h"
#include "remat/Support/Debug.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

using namespace remat;

// -debug-only=remat-rotor: the stagings and chains, every table built (its
// memory, slots, size and optimum), the budget retries and the plan chosen.
// Revolve runs the same code (solveRotorFamily with allowFAllChains off) and
// prints under remat-revolve.
#define DEBUG_TYPE "remat-rotor"

[[maybe_unused]] static const char *familyDebugType(const RotorDPOptions &dp) {
  return dp.allowFAllChains ? "remat-rotor" : "remat-revolve";
}
[[maybe_unused]] static const char *familyName(const RotorDPOptions &dp) {
  return dp.allowFAllChains ? "rotor" : "revolve";
}
#define FAMILY_DEBUG(dp, ...) DEBUG_WITH_TYPE(familyDebugType(dp), __VA_ARGS__)

//===----------------------------------------------------------------------===//
// The solvers
//===----------------------------------------------------------------------===//

namespace {
struct Attempt {
  Schedule schedule;
  SimulationReport report;
  RotorSolveInfo info;
  bool fits = false;
  /// The operation sequence, under -debug only (formatRotorSequence).
  std::string sequence;
};

/// Merges consecutive stages so that at most `maxStages` remain.
std::vector<std::vector<NodeId>>
coarsen(std::vector<std::vector<NodeId>> stages, unsigned maxStages) {
  if (maxStages == 0 || stages.size() <= maxStages)
    return stages;
  std::vector<std::vector<NodeId>> out(maxStages);
  size_t n = stages.size();
  for (size_t i = 0; i < n; ++i) {
    std::vector<NodeId> &bucket = out[i * maxStages / n];
    bucket.insert(bucket.end(), stages[i].begin(), stages[i].end());
  }
  return out;
}

/// Simulates the sequence the table gives at m slots.
llvm::Expected<Attempt> tryAt(const TrainingGraph &graph,
                              const RotorStageMap &map, const RotorTable &table,
                              unsigned m, const RotorDPOptions &dp) {
  llvm::Expected<RotorSequence> sequence = table.sequence(m);
  if (!sequence)
    return sequence.takeError();
  std::string text;
  FAMILY_DEBUG(dp, {
    text = formatRotorSequence(*sequence);
    if (text.size() > 240)
      text = text.substr(0, 240) + " ... (" + std::to_string(sequence->size()) +
             " operations)";
  });
  llvm::Expected<Schedule> schedule =
      scheduleFromRotorSequence(graph, map, *sequence);
  if (!schedule)
    return schedule.takeError();
  Attempt attempt;
  attempt.schedule = std::move(*schedule);
  attempt.report = simulate(graph, attempt.schedule);
  if (!attempt.report.valid)
    return makeError("rotor: converted sequence is invalid (internal "
                     "error): " +
                     attempt.report.error);
  attempt.info.length = map.chain.length();
  attempt.info.slots = table.slots();
  attempt.info.usedSlots = m;
  attempt.info.slotBytes = table.slotBytes();
  attempt.info.modelCost = table.cost(m);
  attempt.info.tableBytes = table.tableBytes();
  attempt.sequence = std::move(text);
  return std::move(attempt);
}

/// A model memory every sequence fits in: all items at once.
uint64_t allItemsBound(const RotorChain &chain) {
  uint64_t upper = 1;
  for (unsigned l = 0; l <= chain.length(); ++l)
    upper += chain.a[l] + chain.abar[l] + chain.delta[l] +
             chain.overheadF[l] + chain.overheadB[l];
  return upper;
}

bool timeLeft(const Deadline &deadline) {
  return !deadline || std::chrono::steady_clock::now() < *deadline;
}

/// Table cells (one m of one (s, s') pair) filled per second, measured on a
/// shared 2-core VM and halved: the time a table takes is predicted from
/// it. The baseline loop: densenet201, 4.5e9 cells in 2.2 s of CPU; with
/// AVX2 (RotorTable.cpp's hot loop is compiled for both): the transformer's
/// 220-stage table, 1.33e9 cells in 0.26-0.33 s.
static double tableCellsPerSecond() {
  static const double rate = __builtin_cpu_supports("avx2") ? 2.5e9 : 1e9;
  return rate;
}
/// How many memories above the budget one table answers: its columns reach
/// this many times the budget's slots. The model over-counts (a buffer held
/// by several stored items, sizes rounded up), so the optimum for more
/// memory than the budget often still fits it in the simulator.
constexpr double kColumnHeadroom = 1.5;
/// The most plans judged above the budget (each a reconstruction and a
/// simulation, no table fill).
constexpr int kProbesAboveBudget = 10;

llvm::Expected<Attempt> solveMapped(const TrainingGraph &graph,
                                    const RotorStageMap &map,
                                    const SolverOptions &options,
                                    const RotorDPOptions &dpIn,
                                    const Deadline &deadline,
                                    std::optional<uint64_t> leastMemory,
                                    bool leastMemoryOnly) {
  const std::optional<uint64_t> budget = options.budget;
  const RotorChain &chain = map.chain;
  const uint64_t upper = allItemsBound(chain);
  std::optional<Attempt> best;
  unsigned retries = 0, tables = 0;
  auto consider = [&](Attempt attempt) {
    attempt.fits = budget && attempt.report.peakBytes <= *budget;
    attempt.info.feasible = attempt.fits;
    attempt.info.retries = retries;
    // Every plan simulated is a candidate for whoever listens (`auto`
    // keeps the best for its own budget), whatever memory it was for.
    if (options.observer)
      options.observer(attempt.schedule, attempt.report);
    if (!best || betterPlan(attempt.report, best->report, budget))
      best = std::move(attempt);
  };
  auto build = [&](uint64_t memory, unsigned columns, unsigned slots) {
    ++tables;
    RotorDPOptions dp = dpIn;
    dp.columns = columns;
    dp.slots = slots;
    [[maybe_unused]] auto begin = std::chrono::steady_clock::now();
    llvm::Expected<RotorTable> table = RotorTable::build(chain, memory, dp);
    FAMILY_DEBUG(dp, {
      llvm::dbgs() << familyName(dp) << ": table " << tables
                   << ": L=" << chain.length() << " memory=" << memory
                   << " bytes, S=" << dp.slots << " slots of "
                   << llvm::format("%.1f", double(memory) / dp.slots)
                   << " bytes, " << std::max(dp.slots, columns) << " columns";
      if (table) {
        std::optional<unsigned> least = table->leastFeasibleSlots();
        llvm::dbgs() << ", " << table->tableBytes() << " table bytes, "
                     << llvm::format(
                            "%.3f",
                            std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - begin)
                                .count())
                     << " s; optimum at S: "
                     << llvm::format("%g", table->cost()) << ", least "
                     << "feasible slots: ";
        if (least)
          llvm::dbgs() << *least;
        else
          llvm::dbgs() << "none";
      }
      llvm::dbgs() << "\n";
    });
    return table;
  };
  // The optimum of column m, in the least memory that still gives it.
  auto planAt = [&](const RotorTable &table,
                    unsigned m) -> llvm::Expected<std::optional<Attempt>> {
    if (std::isinf(table.cost(m)))
      return std::nullopt;
    llvm::Expected<Attempt> attempt =
        tryAt(graph, map, table, table.leastSlotsForCost(m), dpIn);
    if (!attempt)
      return attempt.takeError();
    attempt->fits = budget && attempt->report.peakBytes <= *budget;
    return std::optional<Attempt>(std::move(*attempt));
  };

  if (!leastMemoryOnly && budget && *budget > map.reservedBytes) {
    // One table for every memory tried: S slots of (budget - reserved) / S
    // bytes, and columns up to kColumnHeadroom times that.
    const uint64_t room = *budget - map.reservedBytes;
    const unsigned S = dpIn.slots;
    double slot = double(room) / S;
    unsigned columns = unsigned(std::min<double>(
        std::ceil(kColumnHeadroom * S), std::ceil(double(upper) / slot) + 1));
    columns = std::max(columns, S);
    llvm::Expected<RotorTable> table = build(room, columns, S);
    if (!table)
      return table.takeError();
    // 1. The budget's column. The model bounds the simulated peak from
    //    above, so this plan fits; should it not, a lower column of the
    //    same table is tried (counted in `retries`, expected to stay 0).
    unsigned m = S;
    std::optional<unsigned> fitting;
    for (int round = 0; round < 6; ++round) {
      auto attempt = planAt(*table, m);
      if (!attempt)
        return attempt.takeError();
      if (!*attempt)
        break;
      uint64_t peak = (*attempt)->report.peakBytes;
      bool fits = (*attempt)->fits;
      FAMILY_DEBUG(dpIn, llvm::dbgs()
                             << familyName(dpIn) << ": plan at column " << m
                             << ": model cost "
                             << llvm::format("%g", (*attempt)->info.modelCost)
                             << ", simulated peak " << peak << " cost "
                             << llvm::format("%g", (*attempt)->report.totalCost)
                             << (fits ? " (fits)" : " (over the budget)")
                             << "\n");
      consider(std::move(**attempt));
      if (fits) {
        fitting = m;
        break;
      }
      unsigned excess = unsigned(std::ceil(double(peak - *budget) / slot));
      if (excess >= m)
        break;
      m -= excess;
      ++retries;
    }
    // 2. Columns above the budget's: the largest whose plan still fits is
    //    searched by bisection (plans are not monotone in the memory, so
    //    every probe is judged and kept if better), all in this table. When
    //    even its last column's plan fits with room to spare (the model
    //    over-counted by more than the headroom), one more table, its
    //    memory scaled by how much the model over-counted.
    bool topFits = false;
    for (int extra = 0; fitting && extra < 2; ++extra) {
      if (extra == 1) {
        if (!timeLeft(deadline) || !topFits || !best || !best->fits)
          break;
        uint64_t used = best->report.peakBytes - map.reservedBytes;
        if (used >= room - room / 50)
          break;
        double memory = double(table->columns()) * slot;
        double scaled = std::min<double>(double(upper),
                                         memory * double(room) / double(used));
        if (scaled <= memory * 1.02)
          break;
        slot = scaled / (kColumnHeadroom * S);
        llvm::Expected<RotorTable> next =
            build(uint64_t(slot * S), unsigned(std::ceil(kColumnHeadroom * S)),
                  S);
        if (!next)
          return next.takeError();
        *table = std::move(*next);
        fitting = 0;
      }
      unsigned lo = *fitting, hi = table->columns() + 1;
      for (int probe = 0; probe < kProbesAboveBudget && timeLeft(deadline);
           ++probe) {
        unsigned next = hi > table->columns() ? table->columns()
                                              : lo + (hi - lo) / 2;
        if (next <= lo || next >= hi)
          break;
        auto attempt = planAt(*table, next);
        if (!attempt)
          return attempt.takeError();
        bool fits = *attempt && (*attempt)->fits;
        FAMILY_DEBUG(dpIn, {
          llvm::dbgs() << familyName(dpIn) << ": column " << next << ": ";
          if (*attempt)
            llvm::dbgs() << "simulated peak " << (*attempt)->report.peakBytes
                         << " cost "
                         << llvm::format("%g", (*attempt)->report.totalCost)
                         << (fits ? " (fits)" : " (over the budget)");
          else
            llvm::dbgs() << "no sequence";
          llvm::dbgs() << "\n";
        });
        if (*attempt)
          consider(std::move(**attempt));
        if (next == table->columns())
          topFits = fits;
        (fits ? lo : hi) = next;
      }
    }
    // Fitting or not: the caller searches the least memory of one chain
    // only when no chain's plan fits.
    if (best) {
      best->info.tables = tables;
      return std::move(*best);
    }
  }

  FAMILY_DEBUG(dpIn, llvm::dbgs()
                         << familyName(dpIn) << ": "
                         << (budget ? "no plan within the budget"
                                    : "no budget")
                         << ": search the least-memory plan\n");
  // No budget, or none fits: the least memory. The chain's least memory is
  // known exactly (rotorLeastMemory); one table of 1.5 times that memory in
  // S / 2 slots when S >= 400 (0.6% of it each: rounding costs at most that
  // per stored item, and half the slots is half the fill) holds it, and every
  // breakpoint of its cost curve is judged by the simulator (the model's
  // least memory need not be the graph's: it over-counts buffers held by
  // several items).
  uint64_t least = leastMemory ? *leastMemory
                               : rotorLeastMemory(chain, dpIn.allowFAllChains)
                                     .value_or(upper);
  std::optional<RotorTable> table;
  uint64_t limit = std::max<uint64_t>(least + least / 2, 1);
  const unsigned slots = dpIn.slots >= 400 ? dpIn.slots / 2 : dpIn.slots;
  for (int round = 0; round < 8 && !table; ++round, limit *= 2) {
    llvm::Expected<RotorTable> built = build(limit, 0, slots);
    if (!built)
      return built.takeError();
    if (built->leastFeasibleSlots())
      table = std::move(*built);
    if (limit >= upper && !table)
      break;
  }
  if (!table)
    // Every stored item takes at least one slot, so a sequence can need
    // more slots than S whatever the memory (a^{l-1}, abar^l and delta^l
    // together during B^l): only S too small gets here.
    return makeError("rotor: no sequence is feasible with " +
                     llvm::Twine(dpIn.slots) +
                     " memory slots (each stored item takes at least one "
                     "slot); use more slots");
  unsigned leastSlots = *table->leastFeasibleSlots();
  [[maybe_unused]] unsigned judged = 0;
  // Every distinct optimum of the table at the least memory that gives it
  // (the breakpoints of the cost curve), judged by the simulator.
  for (unsigned m = leastSlots; m <= table->slots(); ++m) {
    if (m > leastSlots && !(table->cost(m) < table->cost(m - 1)))
      continue;
    llvm::Expected<Attempt> attempt = tryAt(graph, map, *table, m, dpIn);
    if (!attempt)
      return attempt.takeError();
    ++judged;
    consider(std::move(*attempt));
    if (!timeLeft(deadline))
      break;
  }
  FAMILY_DEBUG(dpIn, llvm::dbgs()
                         << familyName(dpIn) << ": least memory: model least "
                         << least << " bytes, least feasible " << leastSlots
                         << " of " << table->slots() << " slots, " << judged
                         << " breakpoints of the cost curve simulated; best "
                            "peak "
                         << best->report.peakBytes << "\n");
  best->info.tables = tables;
  return std::move(*best);
}

} // namespace

llvm::Expected<Schedule> remat::solveRotorFamily(
    const TrainingGraph &graph, const SolverOptions &options,
    const RotorOptions &rotorOptions, const RotorDPOptions &dp,
    RotorSolveInfo *info) {
  // Each staging and placement builds its own tables of the same sizes.
  RotorTableReuse reuse;
  if (graph.forwardNodes().empty()) {
    // Nothing to checkpoint: run the nodes in order.
    std::vector<NodeId> order(graph.numNodes());
    std::iota(order.begin(), order.end(), 0);
    return insertEarlyFrees(graph, order);
  }
  // Candidate stagings: one stage per forward node (Checkmate's
  // linearization, seeds/003 appendix B.2), and the top level of the linear
  // hierarchy (seeds/001 §4), whose stages hide branches and skip
  // connections the way rotor's own experiments cut ResNets into blocks.
  std::vector<std::pair<std::string, std::vector<std::vector<NodeId>>>>
      stagings;
  // A table fill is not interruptible: under a time limit the stages are
  // coarsened so that the first table's predicted fill takes at most half
  // of it (issue 24: a solve returns within 110% of its limit).
  unsigned maxStages = rotorOptions.maxStages;
  if (options.timeLimitSeconds > 0) {
    double columns = kColumnHeadroom * dp.slots;
    double affordable = std::cbrt(0.5 * options.timeLimitSeconds *
                                  tableCellsPerSecond() * 6 / columns);
    // Clamped before the cast: a huge limit must not overflow unsigned.
    unsigned cap = unsigned(std::min(std::max(16.0, affordable), 1e9));
    if (maxStages == 0 || cap < maxStages)
      maxStages = cap;
  }
  {
    std::vector<std::vector<NodeId>> perNode;
    for (NodeId n : graph.forwardNodes())
      perNode.push_back({n});
    stagings.emplace_back("nodes", coarsen(std::move(perNode), maxStages));
  }
  if (rotorOptions.tryHierarchy) {
    StructureAnalysis analysis(graph);
    std::vector<int> top = analysis.hierarchy.topLevelStages();
    if (top.size() > 1 && top.size() < graph.forwardNodes().size()) {
      std::vector<std::vector<NodeId>> stages;
      for (int id : top) {
        std::vector<NodeId> nodes;
        for (Vertex v : analysis.hierarchy.vertices(id))
          nodes.push_back(analysis.graph.nodeId(v));
        stages.push_back(std::move(nodes));
      }
      stagings.emplace_back("hierarchy", coarsen(std::move(stages), maxStages));
    }
  }

  const Deadline deadline = deadlineFrom(options);
  std::optional<Attempt> best;
  std::string firstError;
  FAMILY_DEBUG(dp, {
    llvm::dbgs() << familyName(dp) << ": " << graph.forwardNodes().size()
                 << " forward nodes, budget ";
    if (options.budget)
      llvm::dbgs() << *options.budget;
    else
      llvm::dbgs() << "none (least memory)";
    llvm::dbgs() << ", S=" << dp.slots << "; stagings:";
    for (auto &[name, stages] : stagings)
      llvm::dbgs() << " " << name << " (" << stages.size() << " stages)";
    llvm::dbgs() << "\n";
  });
  static const std::pair<BackwardPlacement, const char *> placements[] = {
      {BackwardPlacement::Balanced, ""},
      {BackwardPlacement::Early, "/early"},
      {BackwardPlacement::Late, "/late"}};
  // Every distinct chain: each placement of the backward nodes on each
  // staging; placements that give the same groups as an earlier one are the
  // same chain.
  struct Mapped {
    std::string name;
    RotorStageMap map;
    /// The chain's least memory (rotorLeastMemory) plus the reserved bytes.
    std::optional<uint64_t> leastMemory;
  };
  std::vector<Mapped> chains;
  for (auto &[name, stages] : stagings) {
    std::vector<std::vector<std::vector<NodeId>>> seen;
    for (auto [placement, suffix] : placements) {
      llvm::Expected<RotorStageMap> map =
          buildRotorStageMap(graph, stages, placement);
      if (!map) {
        // A staging the map rejects (not a topological partition) is
        // skipped; the per-node staging always maps.
        std::string error = llvm::toString(map.takeError());
        FAMILY_DEBUG(dp, llvm::dbgs()
                             << familyName(dp) << ": staging " << name << suffix
                             << " rejected: " << error << "\n");
        if (firstError.empty())
          firstError = std::move(error);
        break;
      }
      if (llvm::is_contained(seen, map->backward)) {
        FAMILY_DEBUG(dp, llvm::dbgs()
                             << familyName(dp) << ": staging " << name << suffix
                             << ": same backward groups as before, skipped\n");
        continue;
      }
      seen.push_back(map->backward);
      if (rotorOptions.blockOptions)
        addBlockOptions(graph, *map);
      std::optional<uint64_t> least =
          rotorLeastMemory(map->chain, dp.allowFAllChains);
      if (least)
        *least += map->reservedBytes;
      FAMILY_DEBUG(dp, {
        const RotorChain &chain = map->chain;
        uint64_t a = 0, abar = 0, delta = 0;
        unsigned pinned = 0;
        for (unsigned l = 0; l <= chain.length(); ++l) {
          a += chain.a[l];
          abar += chain.abar[l];
          delta += chain.delta[l];
          pinned += chain.isPinned(l);
        }
        llvm::dbgs() << familyName(dp) << ": staging " << name << suffix
                     << ": chain of L=" << chain.length()
                     << " stages, sum a=" << a << " abar=" << abar
                     << " delta=" << delta << " bytes, reserved "
                     << map->reservedBytes << " bytes, " << pinned
                     << " pinned stages, model least memory ";
        if (least)
          llvm::dbgs() << *least;
        else
          llvm::dbgs() << "none";
        llvm::dbgs() << "\n";
      });
      chains.push_back({name + suffix, std::move(*map), least});
    }
  }
  auto solveChain = [&](Mapped &mapped, bool leastMemoryOnly) -> llvm::Error {
    std::optional<uint64_t> least = mapped.leastMemory;
    if (least)
      *least -= mapped.map.reservedBytes;
    llvm::Expected<Attempt> attempt = solveMapped(
        graph, mapped.map, options, dp, deadline, least, leastMemoryOnly);
    if (!attempt)
      return attempt.takeError();
    attempt->info.stages = mapped.name;
    FAMILY_DEBUG(dp, llvm::dbgs()
                         << familyName(dp) << ": staging " << mapped.name
                         << ": " << attempt->info.tables << " tables, "
                         << attempt->info.retries << " retries; plan at "
                         << attempt->info.usedSlots << "/"
                         << attempt->info.slots << " slots (model cost "
                         << llvm::format("%g", attempt->info.modelCost)
                         << "): simulated peak " << attempt->report.peakBytes
                         << " cost "
                         << llvm::format("%g", attempt->report.totalCost)
                         << ", " << attempt->report.numRecomputations
                         << " recomputations"
                         << (attempt->fits ? ", fits" : "") << "\n");
    if (!best || betterPlan(attempt->report, best->report, options.budget))
      best = std::move(*attempt);
    return llvm::Error::success();
  };
  // With a budget, every chain within the time limit: one table each.
  if (options.budget)
    for (Mapped &mapped : chains) {
      if (best && !timeLeft(deadline))
        break;
      // A chain whose table would not be filled in the time left is skipped
      // (once a plan exists): the fill cannot be stopped half-way.
      if (best && deadline) {
        double cells = std::pow(double(mapped.map.chain.length()), 3) / 6 *
                       kColumnHeadroom * dp.slots;
        double left = std::chrono::duration<double>(
                          *deadline - std::chrono::steady_clock::now())
                          .count();
        if (cells / tableCellsPerSecond() > left)
          continue;
      }
      // A chain whose least memory exceeds the budget has no plan within it.
      if (mapped.leastMemory && *mapped.leastMemory > *options.budget)
        continue;
      if (llvm::Error err = solveChain(mapped, /*leastMemoryOnly=*/false))
        return std::move(err);
    }
  // Without a budget, or when no chain's plan fits: the least-memory plan
  // of the chain with the least memory in the model, one table (the table
  // fill, O(L^3 S), is the cost; the least memory of every chain, O(L^3),
  // is cheap).
  if (!best || !options.budget ||
      best->report.peakBytes > *options.budget) {
    Mapped *leastChain = nullptr;
    for (Mapped &mapped : chains)
      if (mapped.leastMemory &&
          (!leastChain || *mapped.leastMemory < *leastChain->leastMemory))
        leastChain = &mapped;
    if (!leastChain && !chains.empty())
      leastChain = &chains.front();
    if (leastChain)
      if (llvm::Error err = solveChain(*leastChain, /*leastMemoryOnly=*/true))
        return std::move(err);
  }
  if (!best)
    return makeError(firstError.empty() ? "rotor: no staging" : firstError);
  FAMILY_DEBUG(dp, llvm::dbgs() << familyName(dp) << ": chose staging "
                                << best->info.stages << ": peak "
                                << best->report.peakBytes << ", cost "
                                << llvm::format("%g", best->report.totalCost)
                                << "; sequence: " << best->sequence << "\n");
  if (info)
    *info = best->info;
  return std::move(best->schedule);
}

llvm::Expected<Schedule> remat::solveRotor(const TrainingGraph &graph,
                                           const SolverOptions &options,
                                           const RotorOptions &rotorOptions,
                                           RotorSolveInfo *info) {
  RotorDPOptions dp;
  dp.slots = rotorOptions.slots;
  dp.allowFAllChains = true;
  return solveRotorFamily(graph, options, rotorOptions, dp, info);
}

llvm::Expected<Schedule> remat::solveBlocks(const TrainingGraph &graph,
                                            const SolverOptions &options,
                                            RotorSolveInfo *info) {
  RotorOptions rotorOptions;
  rotorOptions.slots = options.memorySlots;
  rotorOptions.blockOptions = true;
  // Options multiply the F_all terms of the table: the per-node staging is
  // coarsened further than rotor's, and the hierarchy's blocks (a few dozen
  // on real models) carry most of the gain.
  rotorOptions.maxStages = 200;
  RotorDPOptions dp;
  dp.slots = options.memorySlots;
  dp.allowFAllChains = true;
  return solveRotorFamily(graph, options, rotorOptions, dp, info);
}
