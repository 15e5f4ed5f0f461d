//===- Chain.cpp - Linearization, chain models and plans -----------------===//
//
// The bridge between training graphs and the chain algorithms: Checkmate's
// linearization (seeds/003 appendix B.2), the two memory models of the chain
// papers (seeds/000 Eq. 6 = seeds/001 Eq. 1, and seeds/000 Eqs. 9-12), and
// the execution plan of a checkpoint set, which the simulator judges.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Chain.h"
#include "remat/Support/Debug.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <tuple>

using namespace remat;

// -debug-only=remat-chain: the linearized chain, and the search of every
// checkpoint-set solver (chen-greedy, ap-greedy, sequential, hong, feng):
// how many distinct sets were simulated, how many fit, the one chosen.
#define DEBUG_TYPE "remat-chain"

Chain Chain::fromSizes(std::vector<uint64_t> sizes) {
  Chain chain;
  chain.costs.assign(sizes.size(), 1.0);
  if (!chain.costs.empty())
    chain.costs[0] = 0;
  chain.sizes = std::move(sizes);
  return chain;
}

Chain remat::linearize(const TrainingGraph &graph) {
  // G_lin of seeds/003 appendix B.2: the forward nodes chained in a
  // topological order, here the program order (node ids are one). Stage i's
  // d_i is what keeping stage i as a checkpoint costs: the bytes of the
  // buffers its node allocates.
  Chain chain;
  chain.sizes.push_back(0);
  chain.costs.push_back(0);
  chain.nodes.push_back(-1);
  for (NodeId n : graph.forwardNodes()) {
    uint64_t bytes = 0;
    for (ValueId out : graph.node(n).outputs)
      bytes += graph.value(out).bytes;
    chain.sizes.push_back(bytes);
    chain.costs.push_back(graph.node(n).cost);
    chain.nodes.push_back(n);
  }
  LLVM_DEBUG({
    uint64_t total = 0, largest = 0;
    for (uint64_t size : chain.sizes) {
      total += size;
      largest = std::max(largest, size);
    }
    llvm::dbgs() << "chain: linearized " << chain.numStages()
                 << " forward nodes, " << total << " bytes (largest stage "
                 << largest << ")\n";
  });
  return chain;
}

Deadline remat::deadlineFrom(const SolverOptions &options) {
  if (!(options.timeLimitSeconds > 0))
    return std::nullopt;
  // Clamped so that a huge limit cannot overflow the clock's representation.
  double seconds = std::min(options.timeLimitSeconds, 1e7);
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

std::vector<bool>
remat::chainCheckpointMask(const TrainingGraph &graph, const Chain &chain,
                           const std::vector<size_t> &checkpoints) {
  std::vector<bool> mask(graph.numNodes(), false);
  for (size_t stage : checkpoints)
    if (stage > 0 && stage < chain.nodes.size() && chain.nodes[stage] >= 0)
      mask[chain.nodes[stage]] = true;
  return mask;
}

Schedule
remat::scheduleFromChainCheckpoints(const TrainingGraph &graph,
                                    const Chain &chain,
                                    const std::vector<size_t> &checkpoints) {
  // Checkmate's "solve for R given S" (appendix B.1): the checkpoints fix S,
  // scheduleFromCheckpoints recomputes the least set of forward nodes before
  // each backward node that needs them.
  return scheduleFromCheckpoints(
      graph, chainCheckpointMask(graph, chain, checkpoints));
}

Schedule remat::bestCheckpointPlan(const TrainingGraph &graph,
                                   std::vector<std::vector<bool>> candidates,
                                   std::optional<uint64_t> budget) {
  [[maybe_unused]] size_t offered = candidates.size();
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()),
                   candidates.end());
  [[maybe_unused]] size_t fitting = 0, invalid = 0, chosen = 0;
  // Candidates fitting the budget compare by (cost, peak), the others by
  // (peak, cost), and any fitting one beats every other; without a budget
  // nothing "fits", so all compare by peak. The first candidate (in the
  // sorted order) wins ties, which keeps the choice deterministic.
  auto better = [&](const SimulationReport &a, const SimulationReport &b) {
    bool aFits = budget && a.peakBytes <= *budget;
    bool bFits = budget && b.peakBytes <= *budget;
    if (aFits != bFits)
      return aFits;
    if (aFits)
      return std::tie(a.totalCost, a.peakBytes) <
             std::tie(b.totalCost, b.peakBytes);
    return std::tie(a.peakBytes, a.totalCost) <
           std::tie(b.peakBytes, b.totalCost);
  };
  Schedule best;
  SimulationReport bestReport;
  bool haveBest = false;
  for (const std::vector<bool> &mask : candidates) {
    Schedule schedule = scheduleFromCheckpoints(graph, mask);
    SimulationReport report = simulate(graph, schedule);
    if (!report.valid) {
      ++invalid;
      continue; // runSolver reports invalid plans; never prefer one here.
    }
    fitting += budget && report.peakBytes <= *budget;
    if (!haveBest || better(report, bestReport)) {
      best = std::move(schedule);
      bestReport = std::move(report);
      haveBest = true;
      chosen = std::count(mask.begin(), mask.end(), true);
    }
  }
  LLVM_DEBUG({
    llvm::dbgs() << "chain: " << candidates.size()
                 << " distinct checkpoint sets of " << offered
                 << " simulated, ";
    if (budget)
      llvm::dbgs() << fitting << " within the budget " << *budget;
    else
      llvm::dbgs() << "no budget (least peak)";
    if (invalid)
      llvm::dbgs() << ", " << invalid << " invalid";
    if (haveBest)
      llvm::dbgs() << "; chosen: " << chosen << " checkpoints, peak "
                   << bestReport.peakBytes << " cost "
                   << llvm::format("%g", bestReport.totalCost);
    else
      llvm::dbgs() << "; none valid: checkpoint everything";
    llvm::dbgs() << "\n";
  });
  if (!haveBest)
    return scheduleFromCheckpoints(graph,
                                   std::vector<bool>(graph.numNodes(), true));
  return best;
}

Schedule
remat::bestChainPlan(const TrainingGraph &graph, const Chain &chain,
                     const std::vector<std::vector<size_t>> &candidates,
                     std::optional<uint64_t> budget) {
  std::vector<std::vector<bool>> masks;
  masks.reserve(candidates.size());
  for (const std::vector<size_t> &checkpoints : candidates)
    masks.push_back(chainCheckpointMask(graph, chain, checkpoints));
  return bestCheckpointPlan(graph, std::move(masks), budget);
}

std::vector<uint64_t>
remat::greedyBudgetCandidates(const std::vector<uint64_t> &sizes) {
  // Chen et al. search b heuristically and Checkmate sweeps it to trace the
  // memory/compute trade-off (seeds/003 §6.1). b = 0 checkpoints every
  // non-empty stage, b = total none but the last; the grid covers the range
  // between at a constant ratio, which the stage sizes of real networks
  // (spanning orders of magnitude) need.
  uint64_t total = 0, smallest = 0;
  for (size_t i = 1; i < sizes.size(); ++i) {
    total += sizes[i];
    if (sizes[i] > 0 && (smallest == 0 || sizes[i] < smallest))
      smallest = sizes[i];
  }
  std::vector<uint64_t> budgets = {0, total};
  if (smallest > 0 && total > smallest) {
    const int points = 64;
    double lo = std::log(static_cast<double>(smallest));
    double hi = std::log(static_cast<double>(total));
    for (int k = 0; k < points; ++k)
      budgets.push_back(
          static_cast<uint64_t>(std::exp(lo + (hi - lo) * k / (points - 1))));
  }
  std::sort(budgets.begin(), budgets.end());
  budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
  return budgets;
}

//===----------------------------------------------------------------------===//
// Memory models
//===----------------------------------------------------------------------===//

/// {0} ∪ checkpoints ∪ {n}, sorted and without duplicates.
static std::vector<size_t> fullSet(size_t n,
                                   const std::vector<size_t> &checkpoints) {
  std::vector<size_t> set = {0};
  for (size_t c : checkpoints)
    if (c > 0 && c <= n)
      set.push_back(c);
  set.push_back(n);
  std::sort(set.begin(), set.end());
  set.erase(std::unique(set.begin(), set.end()), set.end());
  return set;
}

uint64_t remat::segmentModelPeak(const std::vector<uint64_t> &sizes,
                                 const std::vector<size_t> &checkpoints) {
  assert(!sizes.empty() && "a chain has at least d_0");
  std::vector<size_t> set = fullSet(sizes.size() - 1, checkpoints);
  // Eq. 6 of seeds/000: checkpoint memory plus the largest segment.
  uint64_t checkpointMemory = 0, largestSegment = 0;
  for (size_t t = 0; t < set.size(); ++t) {
    checkpointMemory += sizes[set[t]];
    if (t == 0)
      continue;
    uint64_t segment = 0;
    for (size_t k = set[t - 1] + 1; k < set[t]; ++k)
      segment += sizes[k];
    largestSegment = std::max(largestSegment, segment);
  }
  return checkpointMemory + largestSegment;
}

uint64_t remat::pytorchSegmentMemory(const std::vector<uint64_t> &sizes,
                                     size_t h, size_t i) {
  // Eq. 11 of seeds/000.
  uint64_t sum = 0, largest = 0;
  for (size_t k = h; k < i; ++k) {
    if (k > h)
      sum += sizes[k];
    largest = std::max(largest, sizes[k]);
  }
  return sum + largest;
}

uint64_t remat::pytorchModelPeak(const std::vector<uint64_t> &sizes,
                                 const std::vector<size_t> &checkpoints) {
  assert(!sizes.empty() && "a chain has at least d_0");
  std::vector<size_t> set = fullSet(sizes.size() - 1, checkpoints);
  // Eq. 12 of seeds/000 at every checkpoint i > 0: by the paper's argument
  // (Eq. 10) the memory only decreases between two checkpoints, so the peak
  // is reached at one of them.
  uint64_t prefix = sizes[0], peak = 0;
  for (size_t t = 1; t < set.size(); ++t) {
    prefix += sizes[set[t]];
    peak = std::max(peak,
                    prefix + pytorchSegmentMemory(sizes, set[t - 1], set[t]));
  }
  return peak;
}
