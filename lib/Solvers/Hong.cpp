//===- Hong.cpp - Hong et al.'s checkpoint selection algorithms -----------===//
//
// Hong, Tsai, Wang, Liu, Wu, "GPU Memory Usage Optimization for Backward
// Propagation in Deep Network Training" (seeds/000_ac913870907ea453.txt):
//
//  - §3, Algorithm 3: checkpoint selection under the checkpoints + largest
//    segment model (Eq. 6) by dynamic programming over every candidate segment
//    memory s, O(n^3) (Theorem 1);
//  - §4, Algorithm 5: dynamic checkpoint selection under the model of PyTorch
//    (Algorithm 4, Eqs. 9-13), O(n^2) (Theorem 2);
//  - §4.2, Algorithm 6: the same problem in O(n) (Theorem 3).
//
// The chains are d_0 .. d_n with d_0 and d_n checkpoints (§3.1). The paper's
// Algorithms 5 and 6 index the data d_1 .. d_n and return M(1); here the
// forced first checkpoint is d_0 (the input, as in §3.1), so they return M(0):
// the same recursion shifted by one index.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Chain.h"
#include "remat/Support/Debug.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <queue>

using namespace remat;

// -debug-only=remat-hong: the chain, the optimum of each dynamic program in
// its memory model and the checkpoints it picks; Algorithm 3's search over
// the segment memory s (candidates evaluated, the best s, a timeout).
#define DEBUG_TYPE "remat-hong"

namespace {

constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();

/// Follows `choice` (the next checkpoint after each checkpoint) from 0 to n.
std::vector<size_t> followChoices(const std::vector<size_t> &choice, size_t n) {
  std::vector<size_t> checkpoints;
  for (size_t i = 0; i < n;) {
    i = choice[i];
    checkpoints.push_back(i);
  }
  return checkpoints;
}

bool expired(const Deadline &deadline) {
  return deadline && std::chrono::steady_clock::now() > *deadline;
}

//===----------------------------------------------------------------------===//
// Algorithm 3
//===----------------------------------------------------------------------===//

/// M(n, s) of Eq. 8 for one segment memory s, by the monotone queue of
/// Algorithm 3; fills `choice[i]` with the checkpoint j closest to i that
/// achieves M(i, s) when `choice` is given.
uint64_t leastCheckpointMemory(const std::vector<uint64_t> &d,
                               const std::vector<uint64_t> &prefix, uint64_t s,
                               std::vector<uint64_t> &M,
                               std::vector<size_t> *choice) {
  const size_t n = d.size() - 1;
  // value(j) = d_j + M(j - 1, s), the candidates of Eq. 8, with M(-1, s) = 0
  // so that j = 0 (the input as the closest checkpoint) is a candidate too.
  auto value = [&](size_t j) { return d[j] + (j == 0 ? 0 : M[j - 1]); };
  M[0] = d[0];
  std::deque<size_t> queue = {0};
  size_t lowest = 0; // l(i): least j with sum_{k=j+1}^{i} d_k <= s (Eq. 7)
  for (size_t i = 1; i < n; ++i) {
    // Algorithm 3 sets M(i, s) from the head of Q before adding i; with i
    // added first, j = i (d_i itself a checkpoint, an empty segment) is a
    // candidate as Eq. 8 requires, and the queue is never empty when some
    // d_i > s pushes l(i) up to i.
    uint64_t mine = value(i);
    while (!queue.empty() && value(queue.back()) > mine)
      queue.pop_back();
    queue.push_back(i);
    // The sliding window of l(i): monotone in i (§3.2).
    while (prefix[i] - prefix[lowest] > s)
      ++lowest;
    while (queue.front() < lowest)
      queue.pop_front();
    M[i] = value(queue.front());
    if (choice)
      (*choice)[i] = queue.front();
  }
  // d_n is a checkpoint (§3.1): j = n is forced for i = n.
  M[n] = d[n] + M[n - 1];
  if (choice)
    (*choice)[n] = n;
  return M[n];
}

} // namespace

ChainSolution remat::hongCheckpointSelection(const std::vector<uint64_t> &d,
                                             Deadline deadline) {
  ChainSolution solution;
  const size_t n = d.size() - 1;
  if (n == 0) {
    solution.objective = d[0];
    return solution;
  }
  std::vector<uint64_t> prefix(n + 1);
  prefix[0] = d[0];
  for (size_t i = 1; i <= n; ++i)
    prefix[i] = prefix[i - 1] + d[i];

  // The candidate segment memories: 0 and the O(n^2) sums of the segments
  // d_a .. d_b that can lie between two checkpoints (1 <= a <= b <= n - 1),
  // "obtained by enumerating the start and end points of the segments"
  // (§3.2). They are enumerated in increasing order by merging the n - 1 rows
  // a (each increasing in b, sizes being non-negative) with a heap, which
  // needs O(n) memory instead of O(n^2), and lets the loop stop as soon as
  // s + d_0 + d_n reaches the best objective: M(n, s) >= d_0 + d_n, so no
  // larger s can do better. That cut does not change the answer.
  using Entry = std::pair<uint64_t, std::pair<size_t, size_t>>; // (sum,(a,b))
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (size_t a = 1; a < n; ++a)
    heap.push({d[a], {a, a}});

  // The interior sizes in decreasing order; the first forcedCount of them
  // are those above the current s, summing to forcedSum.
  std::vector<uint64_t> interior(d.begin() + 1, d.end() - 1);
  std::sort(interior.begin(), interior.end(), std::greater<uint64_t>());
  size_t forcedCount = interior.size();
  uint64_t forcedSum = 0;
  for (uint64_t size : interior)
    forcedSum += size;

  std::vector<uint64_t> M(n + 1);
  uint64_t bestObjective = kInfinity, bestS = 0;
  uint64_t s = 0;
  bool haveS = true; // s = 0 first
  [[maybe_unused]] size_t evaluated = 0, iterations = 0;
  for (size_t iteration = 0; haveS; ++iteration) {
    iterations = iteration + 1;
    if (s + d[0] + d[n] >= bestObjective)
      break;
    if ((iteration & 63) == 63 && expired(deadline)) {
      solution.timedOut = true;
      break;
    }
    // Every d_i > s must itself be a checkpoint (Eq. 7 with j < i fails), so
    // M(n, s) >= d_0 + d_n + the sum of those: skip the O(n) pass when even
    // that bound cannot beat the best answer. Exact, like the cut above.
    while (forcedCount > 0 && interior[forcedCount - 1] <= s)
      forcedSum -= interior[--forcedCount];
    if (s + d[0] + d[n] + forcedSum < bestObjective) {
      ++evaluated;
      uint64_t objective =
          s + leastCheckpointMemory(d, prefix, s, M, nullptr);
      if (objective < bestObjective) {
        bestObjective = objective;
        bestS = s;
      }
    }
    // Next distinct candidate.
    haveS = false;
    while (!heap.empty()) {
      Entry top = heap.top();
      heap.pop();
      auto [a, b] = top.second;
      if (b + 1 < n)
        heap.push({top.first + d[b + 1], {a, b + 1}});
      if (top.first > s) {
        s = top.first;
        haveS = true;
        break;
      }
    }
  }

  // Rebuild the checkpoints of the best s (the argmin of Eq. 8 at each step).
  std::vector<size_t> choice(n + 1, 0);
  leastCheckpointMemory(d, prefix, bestS, M, &choice);
  for (size_t i = n;;) {
    size_t j = choice[i];
    solution.checkpoints.push_back(j);
    if (j == 0 || j == 1)
      break;
    i = j - 1;
    if (i == 0)
      break;
  }
  // j == 0 means the input closes the first segment: not listed.
  if (!solution.checkpoints.empty() && solution.checkpoints.back() == 0)
    solution.checkpoints.pop_back();
  std::reverse(solution.checkpoints.begin(), solution.checkpoints.end());
  solution.objective = bestObjective;
  LLVM_DEBUG(llvm::dbgs() << "hong-cubic: " << iterations
                          << " segment memories s visited, " << evaluated
                          << " evaluated in O(n)"
                          << (solution.timedOut ? " (time limit reached)" : "")
                          << "; best s " << bestS << "\n");
  return solution;
}

//===----------------------------------------------------------------------===//
// Algorithm 5
//===----------------------------------------------------------------------===//

ChainSolution remat::hongDynamicQuadratic(const std::vector<uint64_t> &d) {
  ChainSolution solution;
  const size_t n = d.size() - 1;
  if (n == 0) {
    solution.objective = d[0];
    return solution;
  }
  // M(i): the least peak from layer i to layer n given that d_i is a
  // checkpoint (§4.1); Eq. 13 with j up to n as in Algorithm 5's loop.
  std::vector<uint64_t> M(n + 1, kInfinity);
  std::vector<size_t> choice(n + 1, n);
  M[n] = d[n];
  for (size_t i = n; i-- > 0;) {
    // s(i, j) of Eq. 11, grown with j: the sum of d_{i+1} .. d_{j-1} and the
    // largest of d_i .. d_{j-1}.
    uint64_t sum = 0, largest = d[i];
    for (size_t j = i + 1; j <= n; ++j) {
      uint64_t candidate = d[i] + std::max(M[j], sum + largest + d[j]);
      if (candidate < M[i]) {
        M[i] = candidate;
        choice[i] = j;
      }
      sum += d[j];
      largest = std::max(largest, d[j]);
    }
  }
  solution.checkpoints = followChoices(choice, n);
  solution.objective = M[0];
  return solution;
}

//===----------------------------------------------------------------------===//
// Algorithm 6
//===----------------------------------------------------------------------===//

namespace {

/// Range maximum over a fixed array in O(1) per query and O(n) memory: maxima
/// within blocks of 32 (prefix and suffix) and a sparse table over the block
/// maxima. Algorithm 6 needs max_{i <= k < j} d_k for the j it visits; the
/// paper "tracks" it while j moves (proof of Theorem 3), which cannot be
/// undone in O(1) when j moves left, so the linear algorithm reads it here.
class RangeMax {
public:
  explicit RangeMax(const std::vector<uint64_t> &values)
      : values(values), prefix(values.size()), suffix(values.size()) {
    const size_t n = values.size();
    for (size_t i = 0; i < n; ++i)
      prefix[i] =
          i % kBlock == 0 ? values[i] : std::max(prefix[i - 1], values[i]);
    for (size_t i = n; i-- > 0;)
      suffix[i] = (i + 1) % kBlock == 0 || i + 1 == n
                      ? values[i]
                      : std::max(suffix[i + 1], values[i]);
    size_t blocks = (n + kBlock - 1) / kBlock;
    table.emplace_back(blocks);
    for (size_t b = 0; b < blocks; ++b)
      table[0][b] = suffix[b * kBlock];
    for (size_t k = 1; (size_t(1) << k) <= blocks; ++k) {
      const std::vector<uint64_t> &below = table[k - 1];
      std::vector<uint64_t> level(blocks - (size_t(1) << k) + 1);
      for (size_t b = 0; b < level.size(); ++b)
        level[b] = std::max(below[b], below[b + (size_t(1) << (k - 1))]);
      table.push_back(std::move(level));
    }
  }

  /// max(values[lo..hi]), lo <= hi.
  uint64_t query(size_t lo, size_t hi) const {
    size_t bl = lo / kBlock, bh = hi / kBlock;
    if (bl == bh) {
      uint64_t m = values[lo];
      for (size_t k = lo + 1; k <= hi; ++k)
        m = std::max(m, values[k]);
      return m;
    }
    uint64_t m = std::max(suffix[lo], prefix[hi]);
    if (bh > bl + 1) {
      size_t a = bl + 1, b = bh - 1;
      size_t k =
          63 - __builtin_clzll(static_cast<unsigned long long>(b - a + 1));
      m = std::max({m, table[k][a], table[k][b + 1 - (size_t(1) << k)]});
    }
    return m;
  }

private:
  static constexpr size_t kBlock = 32;
  const std::vector<uint64_t> &values;
  std::vector<uint64_t> prefix, suffix;
  std::vector<std::vector<uint64_t>> table;
};

} // namespace

ChainSolution remat::hongDynamicLinear(const std::vector<uint64_t> &d) {
  ChainSolution solution;
  const size_t n = d.size() - 1;
  if (n == 0) {
    solution.objective = d[0];
    return solution;
  }
  std::vector<uint64_t> prefix(n + 1);
  prefix[0] = d[0];
  for (size_t i = 1; i <= n; ++i)
    prefix[i] = prefix[i - 1] + d[i];
  RangeMax rangeMax(d);
  // U(i, j) = s(i, j) + d_j (Eq. 15), in O(1).
  auto U = [&](size_t i, size_t j) {
    return (prefix[j - 1] - prefix[i]) + rangeMax.query(i, j - 1) + d[j];
  };

  std::vector<uint64_t> M(n + 1);
  std::vector<size_t> choice(n + 1, n);
  M[n] = d[n];
  // The monotone queue Q (Lemma 2) as a stack: queue[0] = n is its tail,
  // queue.back() its head, the smallest index. Along it from the head, the
  // indices increase and the M values strictly decrease, while U(i, .)
  // increases (Lemma 1): the minimum of max(M(j), U(i, j)) over Q (Lemma 3,
  // Eq. 23) is at the crossover of the two, on either side of it.
  std::vector<size_t> queue = {n};
  // Position in `queue` of j*(i + 1), where the search for j*(i) starts
  // (Lemma 4: j*(i) <= j*(i + 1)).
  size_t at = 0;
  for (size_t i = n; i-- > 0;) {
    // j*(i + 1) may have left Q when M(i + 1) was added: the search then
    // starts at the head, i + 1, which replaced it (see the proof in
    // docs/chain-solvers.md).
    if (at >= queue.size())
      at = queue.size() - 1;
    // Lines 8-12: move towards the head while U(i, j) >= M(j).
    while (at + 1 < queue.size() && U(i, queue[at]) >= M[queue[at]])
      ++at;
    // Line 13: the element before the crossover (j) and the one after it.
    // The paper writes the latter as j + 1; it is the next element of Q
    // towards its tail, which may be further than index j + 1 (the indices
    // between were dominated and left Q).
    uint64_t best = std::max(M[queue[at]], U(i, queue[at]));
    size_t bestAt = at;
    if (at > 0) {
      uint64_t other = std::max(M[queue[at - 1]], U(i, queue[at - 1]));
      if (other < best) {
        best = other;
        bestAt = at - 1;
      }
    }
    M[i] = d[i] + best;
    choice[i] = queue[bestAt];
    at = bestAt; // line 14
    // Lines 15-16: M values no less than M(i) leave from the head.
    while (!queue.empty() && M[queue.back()] >= M[i])
      queue.pop_back();
    queue.push_back(i);
  }
  solution.checkpoints = followChoices(choice, n);
  solution.objective = M[0];
  return solution;
}

//===----------------------------------------------------------------------===//
// Solvers on training graphs
//===----------------------------------------------------------------------===//

// The three solvers minimise peak memory in their model and ignore the
// budget: their plan is the least-peak plan they find (the min-memory mode of
// issue 4); runSolver reports whether it meets a budget.

/// The model's optimum and the chosen checkpoints (chain stages).
static void debugSolution([[maybe_unused]] const char *solver,
                          [[maybe_unused]] const Chain &chain,
                          [[maybe_unused]] const ChainSolution &solution) {
  LLVM_DEBUG(llvm::dbgs() << solver << ": " << chain.numStages()
                          << " stages; model optimum " << solution.objective
                          << " bytes with " << solution.checkpoints.size()
                          << " checkpoints " << debugList(solution.checkpoints)
                          << "\n");
}

llvm::Expected<Schedule> remat::solveHongCubic(const TrainingGraph &graph,
                                               const SolverOptions &options) {
  Chain chain = linearize(graph);
  ChainSolution solution =
      hongCheckpointSelection(chain.sizes, deadlineFrom(options));
  debugSolution("hong-cubic", chain, solution);
  return scheduleFromChainCheckpoints(graph, chain, solution.checkpoints);
}

llvm::Expected<Schedule> remat::solveHongQuadratic(const TrainingGraph &graph,
                                                   const SolverOptions &) {
  Chain chain = linearize(graph);
  ChainSolution solution = hongDynamicQuadratic(chain.sizes);
  debugSolution("hong-quadratic", chain, solution);
  return scheduleFromChainCheckpoints(graph, chain, solution.checkpoints);
}

llvm::Expected<Schedule> remat::solveHongLinear(const TrainingGraph &graph,
                                                const SolverOptions &) {
  Chain chain = linearize(graph);
  ChainSolution solution = hongDynamicLinear(chain.sizes);
  debugSolution("hong-linear", chain, solution);
  return scheduleFromChainCheckpoints(graph, chain, solution.checkpoints);
}
