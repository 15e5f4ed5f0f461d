//===- Reorder.cpp - An operator order chosen for memory ------------------===//
//
// Serenity's dynamic program (exact, small graphs), a beam search over the
// same states and local moves (large graphs), and the renumbering that lets
// every other solver start from the order found. See Reorder.h.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Reorder.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <numeric>
#include <unordered_map>

using namespace remat;

// -debug-only=remat-reorder: the peak of each order tried (program,
// phased, beam, local moves, exact) and the exact program's progress.
#define DEBUG_TYPE "remat-reorder"

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

/// A wall-clock deadline; none when the limit is 0.
struct Deadline {
  Clock::time_point at;
  bool limited = false;
  Deadline(Clock::time_point start, double seconds) : limited(seconds > 0) {
    // Clamped (as deadlineFrom does) so that a huge limit cannot overflow
    // the clock's representation.
    if (limited)
      at = start + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(std::min(seconds, 1e7)));
  }
  bool passed() const { return limited && Clock::now() > at; }
};

/// The memory model of a compute-once order with early frees (the
/// simulator's, specialised): after a set S of nodes has run, the resident
/// bytes are those of the non-fixed values produced in S that are step
/// outputs or still have a user outside S (Serenity §3.2: a function of the
/// set alone). Running node n next holds, during its step, that plus its
/// outputs and workspace, less the inputs it updates in place (an input
/// whose last reader is n and that is not a step output hands its buffer to
/// the output); afterwards the inputs whose last reader was n and the
/// outputs nobody reads are freed.
class MemoryModel {
public:
  explicit MemoryModel(const TrainingGraph &graph) : graph(graph) {
    const size_t n = graph.numNodes();
    preds.resize(n);
    succs.resize(n);
    outBytes.assign(n, 0);
    deadBytes.assign(n, 0);
    for (NodeId v = 0; v < static_cast<NodeId>(n); ++v) {
      const Node &node = graph.node(v);
      for (ValueId in : node.inputs) {
        NodeId p = graph.value(in).producer;
        if (p >= 0)
          preds[v].push_back(p);
      }
      llvm::sort(preds[v]);
      preds[v].erase(std::unique(preds[v].begin(), preds[v].end()),
                     preds[v].end());
      for (NodeId p : preds[v])
        succs[p].push_back(v);
      for (ValueId out : node.outputs) {
        const GraphValue &value = graph.value(out);
        outBytes[v] += value.bytes;
        if (value.users.empty() && !value.isOutput)
          deadBytes[v] += value.bytes;
      }
    }
    reuseInput.assign(graph.numValues(), 0);
  }

  /// The step's bytes and the resident bytes after it, for node `n` run
  /// after the nodes for which `done(u)` holds, with `mem` resident before.
  template <typename Done>
  std::pair<uint64_t, uint64_t> step(NodeId n, uint64_t mem, Done done) {
    const Node &node = graph.node(n);
    for (auto [in, out] : node.reuses)
      reuseInput[in] = 1;
    uint64_t during = mem + outBytes[n] + node.workspaceBytes;
    uint64_t released = deadBytes[n];
    for (ValueId in : node.inputs) {
      const GraphValue &value = graph.value(in);
      if (value.isFixed() || value.isOutput)
        continue;
      bool last = llvm::all_of(value.users,
                               [&](NodeId u) { return u == n || done(u); });
      if (!last)
        continue;
      if (reuseInput[in])
        during -= value.bytes; // in place: the output took its buffer
      else
        released += value.bytes;
    }
    for (auto [in, out] : node.reuses)
      reuseInput[in] = 0;
    return {during, during - node.workspaceBytes - released};
  }

  const TrainingGraph &graph;
  /// Distinct producer nodes of a node's inputs / reader nodes of its
  /// outputs.
  std::vector<std::vector<NodeId>> preds, succs;
  std::vector<uint64_t> outBytes, deadBytes;

private:
  std::vector<char> reuseInput;
};

/// The bytes of each step of `order` (a topological order).
std::vector<uint64_t> orderProfile(MemoryModel &model,
                                   const std::vector<NodeId> &order,
                                   std::vector<uint32_t> &position) {
  const TrainingGraph &graph = model.graph;
  position.assign(graph.numNodes(), UINT32_MAX);
  for (size_t i = 0; i < order.size(); ++i)
    position[order[i]] = static_cast<uint32_t>(i);
  std::vector<uint64_t> profile(order.size());
  uint64_t mem = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    uint32_t at = static_cast<uint32_t>(i);
    auto [during, after] = model.step(order[i], mem, [&](NodeId u) {
      return position[u] < at;
    });
    profile[i] = during;
    mem = after;
  }
  return profile;
}

/// What local moves compare: the peak, then how many steps reach it, then
/// the sum over the steps (so that a move that lowers one of several steps
/// at the peak, or lowers the memory near it, counts as progress).
struct OrderScore {
  uint64_t peak = 0;
  size_t atPeak = 0;
  unsigned __int128 area = 0;
  bool operator<(const OrderScore &other) const {
    return std::tie(peak, atPeak, area) <
           std::tie(other.peak, other.atPeak, other.area);
  }
};

OrderScore scoreOf(const std::vector<uint64_t> &profile) {
  OrderScore score;
  for (uint64_t bytes : profile) {
    if (bytes > score.peak) {
      score.peak = bytes;
      score.atPeak = 0;
    }
    score.atPeak += bytes == score.peak;
    score.area += bytes;
  }
  return score;
}

uint64_t splitmix(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

//===----------------------------------------------------------------------===//
// Beam search
//===----------------------------------------------------------------------===//

/// The dynamic program of Serenity restricted to the `width` best sets of
/// each size (by peak so far, then resident bytes, then the lowest node id,
/// so that ties keep the program's order). Sets reached twice are merged by
/// a Zobrist hash of the set.
std::vector<NodeId> beamOrder(MemoryModel &model, unsigned width,
                              const Deadline &deadline) {
  const TrainingGraph &graph = model.graph;
  const size_t n = graph.numNodes();
  const size_t words = (n + 63) / 64;
  std::vector<uint64_t> zobrist(n);
  uint64_t seed = 0x5eed;
  for (uint64_t &z : zobrist)
    z = splitmix(seed);

  struct State {
    std::vector<uint64_t> set;
    std::vector<NodeId> ready;
    uint64_t mem = 0, peak = 0, hash = 0;
    uint32_t trace = UINT32_MAX;
  };
  // Every chosen (parent trace, node) pair, to read the order back.
  std::vector<std::pair<uint32_t, NodeId>> traces;
  traces.reserve(n * width);

  State root;
  root.set.assign(words, 0);
  for (NodeId v = 0; v < static_cast<NodeId>(n); ++v)
    if (model.preds[v].empty())
      root.ready.push_back(v);
  std::vector<State> beam;
  beam.push_back(std::move(root));

  struct Candidate {
    uint64_t peak, mem, hash;
    NodeId node;
    uint32_t parent;
    bool operator<(const Candidate &other) const {
      return std::tie(peak, mem, node, parent) <
             std::tie(other.peak, other.mem, other.node, other.parent);
    }
  };
  std::vector<Candidate> candidates;
  std::unordered_map<uint64_t, size_t> seen;
  for (size_t layer = 0; layer < n; ++layer) {
    candidates.clear();
    seen.clear();
    for (uint32_t s = 0; s < beam.size(); ++s) {
      const State &state = beam[s];
      for (NodeId v : state.ready) {
        auto [during, after] = model.step(v, state.mem, [&](NodeId u) {
          return (state.set[u >> 6] >> (u & 63)) & 1;
        });
        Candidate c{std::max(state.peak, during), after,
                    state.hash ^ zobrist[v], v, s};
        auto [it, inserted] = seen.emplace(c.hash, candidates.size());
        if (inserted)
          candidates.push_back(c);
        else if (c < candidates[it->second])
          candidates[it->second] = c;
      }
    }
    size_t keep = std::min<size_t>(width, candidates.size());
    // Past the deadline, finish greedily with one set per size.
    if (deadline.passed())
      keep = std::min<size_t>(keep, 1);
    std::partial_sort(candidates.begin(), candidates.begin() + keep,
                      candidates.end());
    std::vector<State> next(keep);
    for (size_t i = 0; i < keep; ++i) {
      const Candidate &c = candidates[i];
      const State &parent = beam[c.parent];
      State &state = next[i];
      state.set = parent.set;
      state.set[c.node >> 6] |= uint64_t(1) << (c.node & 63);
      state.ready.reserve(parent.ready.size() + model.succs[c.node].size());
      for (NodeId v : parent.ready)
        if (v != c.node)
          state.ready.push_back(v);
      for (NodeId succ : model.succs[c.node])
        if (llvm::all_of(model.preds[succ], [&](NodeId p) {
              return (state.set[p >> 6] >> (p & 63)) & 1;
            }))
          state.ready.push_back(succ);
      state.mem = c.mem;
      state.peak = c.peak;
      state.hash = c.hash;
      state.trace = static_cast<uint32_t>(traces.size());
      traces.push_back({parent.trace, c.node});
    }
    beam = std::move(next);
  }
  std::vector<NodeId> order;
  for (uint32_t t = beam.empty() ? UINT32_MAX : beam.front().trace;
       t != UINT32_MAX; t = traces[t].first)
    order.push_back(traces[t].second);
  std::reverse(order.begin(), order.end());
  return order;
}

//===----------------------------------------------------------------------===//
// Local moves
//===----------------------------------------------------------------------===//

/// Moves single nodes across the first step at the peak while that lowers
/// the score (OrderScore): a node run before the peak whose outputs are
/// held through it goes after it (right after the peak node, or right
/// before its first reader); a node run after it whose inputs are all ready
/// goes before it (right before the peak node, or right after its last
/// producer), which frees its inputs earlier; the peak node itself goes as
/// early or as late as its dependencies allow. Steepest descent: the best
/// move of each round is applied.
std::vector<NodeId> improveLocally(MemoryModel &model,
                                   std::vector<NodeId> order,
                                   const Deadline &deadline,
                                   size_t maxCandidates = 256) {
  const size_t n = order.size();
  std::vector<uint32_t> position;
  std::vector<uint64_t> profile, after(n);
  // Per prefix / suffix of the current order: the largest step and how many
  // steps reach it, so that a move is scored by simulating only the window
  // of steps it shifts (the resident bytes before and after the window are
  // the same, since the same nodes have run).
  std::vector<uint64_t> prefixMax(n), suffixMax(n + 1);
  std::vector<size_t> prefixCount(n), suffixCount(n + 1);
  OrderScore score;
  auto analyse = [&] {
    profile = orderProfile(model, order, position);
    uint64_t mem = 0;
    for (size_t i = 0; i < n; ++i) {
      uint32_t at = static_cast<uint32_t>(i);
      mem = model.step(order[i], mem, [&](NodeId u) {
        return position[u] < at;
      }).second;
      after[i] = mem;
    }
    for (size_t i = 0; i < n; ++i) {
      uint64_t before = i ? prefixMax[i - 1] : 0;
      size_t count = i ? prefixCount[i - 1] : 0;
      prefixMax[i] = std::max(before, profile[i]);
      prefixCount[i] = profile[i] > before    ? 1
                       : profile[i] == before ? count + 1
                                              : count;
    }
    suffixMax[n] = 0;
    suffixCount[n] = 0;
    for (size_t i = n; i-- > 0;) {
      uint64_t behind = suffixMax[i + 1];
      suffixMax[i] = std::max(behind, profile[i]);
      suffixCount[i] = profile[i] > behind    ? 1
                       : profile[i] == behind ? suffixCount[i + 1] + 1
                                              : suffixCount[i + 1];
    }
    score = scoreOf(profile);
  };
  analyse();
  std::vector<NodeId> window;
  std::vector<uint64_t> windowBytes;
  auto moved = [&](size_t from, size_t to) {
    // `to` is the index the node has in the new order; only the steps in
    // [lo, hi] change.
    const size_t lo = std::min(from, to), hi = std::max(from, to);
    window.clear();
    if (from < to) {
      window.assign(order.begin() + lo + 1, order.begin() + hi + 1);
      window.push_back(order[from]);
    } else {
      window.push_back(order[from]);
      window.insert(window.end(), order.begin() + lo, order.begin() + hi);
    }
    for (size_t k = 0; k < window.size(); ++k)
      position[window[k]] = static_cast<uint32_t>(lo + k);
    uint64_t mem = lo ? after[lo - 1] : 0;
    windowBytes.clear();
    for (size_t k = 0; k < window.size(); ++k) {
      uint32_t at = static_cast<uint32_t>(lo + k);
      auto [during, next] = model.step(window[k], mem, [&](NodeId u) {
        return position[u] < at;
      });
      windowBytes.push_back(during);
      mem = next;
    }
    for (size_t k = lo; k <= hi; ++k)
      position[order[k]] = static_cast<uint32_t>(k);
    OrderScore trial;
    trial.peak = std::max(lo ? prefixMax[lo - 1] : 0, suffixMax[hi + 1]);
    for (uint64_t bytes : windowBytes)
      trial.peak = std::max(trial.peak, bytes);
    if (lo && prefixMax[lo - 1] == trial.peak)
      trial.atPeak += prefixCount[lo - 1];
    if (suffixMax[hi + 1] == trial.peak)
      trial.atPeak += suffixCount[hi + 1];
    trial.area = score.area;
    for (size_t k = lo; k <= hi; ++k)
      trial.area -= profile[k];
    for (uint64_t bytes : windowBytes) {
      trial.area += bytes;
      trial.atPeak += bytes == trial.peak;
    }
    return trial;
  };
  while (!deadline.passed()) {
    size_t peak = std::max_element(profile.begin(), profile.end()) -
                  profile.begin();
    std::optional<std::pair<size_t, size_t>> best;
    OrderScore bestScore = score;
    size_t tried = 0;
    auto consider = [&](size_t from, size_t to) {
      if (from == to)
        return;
      OrderScore s = moved(from, to);
      ++tried;
      if (s < bestScore) {
        bestScore = s;
        best = {from, to};
      }
    };
    auto firstReader = [&](NodeId v) {
      uint32_t first = static_cast<uint32_t>(order.size());
      for (NodeId s : model.succs[v])
        first = std::min(first, position[s]);
      return first;
    };
    auto lastProducer = [&](NodeId v) {
      int64_t last = -1;
      for (NodeId p : model.preds[v])
        last = std::max<int64_t>(last, position[p]);
      return last;
    };
    // The peak node.
    {
      NodeId v = order[peak];
      consider(peak, static_cast<size_t>(lastProducer(v) + 1));
      consider(peak, firstReader(v) - 1);
    }
    // Nodes before the peak, nearest first.
    for (size_t q = peak; q-- > 0 && tried < maxCandidates;) {
      uint32_t first = firstReader(order[q]);
      if (first <= peak)
        continue;
      consider(q, peak);      // right after the peak node
      consider(q, first - 1); // right before its first reader
    }
    // Nodes after the peak whose producers all ran before it.
    size_t after = 0;
    for (size_t r = peak + 1; r < order.size() && after < maxCandidates;
         ++r) {
      int64_t last = lastProducer(order[r]);
      if (last >= static_cast<int64_t>(peak))
        continue;
      ++after;
      consider(r, peak);                          // right before the peak node
      consider(r, static_cast<size_t>(last + 1)); // right after its producers
      if (deadline.passed())
        break;
    }
    LLVM_DEBUG(llvm::dbgs() << "reorder: local round: " << tried
                            << " moves tried, peak " << score.peak << " -> "
                            << bestScore.peak << "\n");
    if (!best)
      break;
    NodeId v = order[best->first];
    order.erase(order.begin() + best->first);
    order.insert(order.begin() + best->second, v);
    analyse();
    assert(!(bestScore < score) && !(score < bestScore) &&
           "the window score differs from the whole order's");
  }
  return order;
}

//===----------------------------------------------------------------------===//
// Exact dynamic program (Serenity §3.2-3.3)
//===----------------------------------------------------------------------===//

struct ExactOutcome {
  /// An order with a peak below the bound, when one exists.
  std::optional<std::vector<NodeId>> order;
  /// The program ran to the end: `order` is optimal, or (none) no order
  /// peaks below the bound.
  bool finished = false;
  uint64_t states = 0;
};

/// Layer k holds the sets of k nodes that some order runs first with a peak
/// below `bound` (Serenity's budget: a set whose peak reaches the best known
/// order's can only lead to orders no better), each with the least peak
/// that reaches it, its resident bytes and how it was reached.
ExactOutcome exactOrder(MemoryModel &model, uint64_t bound,
                        uint64_t maxStates, const Deadline &deadline) {
  const TrainingGraph &graph = model.graph;
  const size_t n = graph.numNodes();
  const size_t words = (n + 63) / 64;
  ExactOutcome outcome;
  std::vector<uint64_t> zobrist(n);
  uint64_t seed = 0xe8ac7;
  for (uint64_t &z : zobrist)
    z = splitmix(seed);

  struct Link {
    uint32_t parent;
    NodeId node;
  };
  // Per layer: how each state was reached (kept for the read-back); the
  // sets, peaks and resident bytes only for the current and next layers.
  std::vector<std::vector<Link>> links(n + 1);
  std::vector<uint64_t> sets(words, 0), nextSets;
  std::vector<uint64_t> peaks{0}, mems{0}, hashes{0}, nextPeaks, nextMems,
      nextHashes;
  links[0].push_back({UINT32_MAX, -1});
  std::unordered_multimap<uint64_t, uint32_t> index;
  std::vector<char> inSet(n);
  for (size_t layer = 0; layer < n; ++layer) {
    nextSets.clear();
    nextPeaks.clear();
    nextMems.clear();
    nextHashes.clear();
    index.clear();
    const size_t count = peaks.size();
    for (uint32_t s = 0; s < count; ++s) {
      const uint64_t *set = &sets[s * words];
      for (size_t v = 0; v < n; ++v)
        inSet[v] = (set[v >> 6] >> (v & 63)) & 1;
      for (NodeId v = 0; v < static_cast<NodeId>(n); ++v) {
        if (inSet[v] || !llvm::all_of(model.preds[v],
                                      [&](NodeId p) { return inSet[p]; }))
          continue;
        auto [during, after] =
            model.step(v, mems[s], [&](NodeId u) { return inSet[u]; });
        uint64_t peak = std::max(peaks[s], during);
        if (peak >= bound)
          continue;
        uint64_t hash = hashes[s] ^ zobrist[v];
        // The same set reached before: keep the lower peak.
        std::optional<uint32_t> found;
        auto range = index.equal_range(hash);
        for (auto it = range.first; it != range.second && !found; ++it) {
          const uint64_t *other = &nextSets[size_t(it->second) * words];
          bool same = true;
          for (size_t w = 0; w < words && same; ++w) {
            uint64_t word = set[w];
            if (w == size_t(v) >> 6)
              word |= uint64_t(1) << (v & 63);
            same = other[w] == word;
          }
          if (same)
            found = it->second;
        }
        if (found) {
          if (peak < nextPeaks[*found]) {
            nextPeaks[*found] = peak;
            links[layer + 1][*found] = {s, v};
          }
          continue;
        }
        uint32_t id = static_cast<uint32_t>(nextPeaks.size());
        index.emplace(hash, id);
        nextSets.insert(nextSets.end(), set, set + words);
        nextSets[size_t(id) * words + (v >> 6)] |= uint64_t(1) << (v & 63);
        nextPeaks.push_back(peak);
        nextMems.push_back(after);
        nextHashes.push_back(hash);
        links[layer + 1].push_back({s, v});
      }
      if (deadline.passed())
        return outcome;
    }
    outcome.states += nextPeaks.size();
    LLVM_DEBUG(if ((layer & 15) == 15 || layer + 1 == n) llvm::dbgs()
               << "reorder: exact layer " << layer + 1 << ": "
               << nextPeaks.size() << " sets\n");
    if (nextPeaks.empty()) {
      // No order peaks below the bound.
      outcome.finished = true;
      return outcome;
    }
    if (outcome.states > maxStates)
      return outcome;
    sets.swap(nextSets);
    peaks.swap(nextPeaks);
    mems.swap(nextMems);
    hashes.swap(nextHashes);
  }
  // One set in the last layer: every node.
  std::vector<NodeId> order;
  uint32_t at = 0;
  for (size_t layer = n; layer > 0; --layer) {
    const Link &link = links[layer][at];
    order.push_back(link.node);
    at = link.parent;
  }
  std::reverse(order.begin(), order.end());
  outcome.order = std::move(order);
  outcome.finished = true;
  return outcome;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

bool remat::isTopologicalOrder(const TrainingGraph &graph,
                               const std::vector<NodeId> &order) {
  const size_t n = graph.numNodes();
  if (order.size() != n)
    return false;
  std::vector<char> done(n, 0);
  for (NodeId v : order) {
    if (v < 0 || static_cast<size_t>(v) >= n || done[v])
      return false;
    for (ValueId in : graph.node(v).inputs) {
      NodeId p = graph.value(in).producer;
      if (p >= 0 && !done[p])
        return false;
    }
    done[v] = 1;
  }
  return true;
}

uint64_t remat::orderPeak(const TrainingGraph &graph,
                          const std::vector<NodeId> &order) {
  MemoryModel model(graph);
  std::vector<uint32_t> position;
  std::vector<uint64_t> profile = orderProfile(model, order, position);
  return profile.empty() ? 0 : *std::max_element(profile.begin(), profile.end());
}

llvm::json::Value ReorderResult::toJSON() const {
  return llvm::json::Object{
      {"peak_bytes", peakBytes},
      {"program_peak_bytes", programPeakBytes},
      {"lower_bound_bytes", lowerBoundBytes},
      {"optimal", optimal},
      {"method", method},
      {"exact_states", exactStates},
      {"exact_finished", exactFinished},
      {"seconds", seconds},
  };
}

ReorderResult remat::reorderForMemory(const TrainingGraph &graph,
                                      const ReorderOptions &options) {
  const Clock::time_point start = Clock::now();
  const Deadline deadline(start, options.timeLimitSeconds);
  const size_t n = graph.numNodes();
  MemoryModel model(graph);
  std::vector<uint32_t> position;
  auto peakOf = [&](const std::vector<NodeId> &order) {
    std::vector<uint64_t> profile = orderProfile(model, order, position);
    return profile.empty() ? uint64_t(0)
                           : *std::max_element(profile.begin(), profile.end());
  };

  ReorderResult result;
  result.order.resize(n);
  std::iota(result.order.begin(), result.order.end(), 0);
  result.method = "program";
  result.peakBytes = result.programPeakBytes = peakOf(result.order);
  auto offer = [&](std::vector<NodeId> order, const char *method) {
    // Every candidate is checked: a heuristic bug must not become a plan.
    if (!isTopologicalOrder(graph, order))
      return;
    uint64_t peak = peakOf(order);
    LLVM_DEBUG(llvm::dbgs() << "reorder: " << method << " order peaks at "
                            << peak << "\n");
    if (peak < result.peakBytes) {
      result.order = std::move(order);
      result.peakBytes = peak;
      result.method = method;
    }
  };
  {
    std::vector<NodeId> phased = graph.forwardNodes();
    for (NodeId v : graph.backwardNodes())
      phased.push_back(v);
    offer(std::move(phased), "phased");
  }

  // Every order holds, while a node runs, its non-fixed inputs, outputs and
  // workspace (less in-place inputs: peakLowerBound), and at the end every
  // step output.
  uint64_t outputs = 0;
  for (const GraphValue &value : graph.getValues())
    if (value.isOutput && !value.isFixed())
      outputs += value.bytes;
  result.lowerBoundBytes = std::max(peakLowerBound(graph), outputs);

  if (result.peakBytes > result.lowerBoundBytes && n > 0) {
    std::vector<NodeId> beam =
        beamOrder(model, std::max(1u, options.beamWidth), deadline);
    std::vector<NodeId> start = result.order;
    offer(beam, "beam");
    // Local moves from the best order so far, and from the beam's when it
    // is not that one (the two often end in different local optima).
    if (options.localSearch && result.peakBytes > result.lowerBoundBytes) {
      bool beamIsBest = result.method == "beam";
      offer(improveLocally(model, result.order, deadline), "local");
      if (!beamIsBest && result.peakBytes > result.lowerBoundBytes)
        offer(improveLocally(model, beam, deadline), "local");
      else if (beamIsBest && result.peakBytes > result.lowerBoundBytes)
        offer(improveLocally(model, start, deadline), "local");
    }
    if (n <= options.maxExactNodes &&
        result.peakBytes > result.lowerBoundBytes && !deadline.passed()) {
      ExactOutcome exact = exactOrder(model, result.peakBytes,
                                      options.maxExactStates, deadline);
      result.exactStates = exact.states;
      result.exactFinished = exact.finished;
      if (exact.order)
        offer(std::move(*exact.order), "exact");
      if (exact.finished)
        result.lowerBoundBytes = result.peakBytes;
    }
  }
  result.optimal = result.peakBytes <= result.lowerBoundBytes;
  result.seconds = secondsSince(start);
  LLVM_DEBUG(llvm::dbgs() << "reorder: " << n << " nodes: " << result.method
                          << " order, peak " << result.peakBytes
                          << " (program " << result.programPeakBytes
                          << ", bound " << result.lowerBoundBytes << ")"
                          << (result.optimal ? ", optimal" : "") << ", exact "
                          << result.exactStates << " sets"
                          << (result.exactFinished ? " (finished)" : "")
                          << ", "
                          << llvm::format("%.3f", result.seconds) << " s\n");
  return result;
}

llvm::Expected<RenumberedGraph>
remat::renumberGraph(const TrainingGraph &graph,
                     const std::vector<NodeId> &order) {
  if (!isTopologicalOrder(graph, order))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "renumberGraph: the order is not a topological order of the graph's " +
            std::to_string(graph.numNodes()) + " nodes");
  RenumberedGraph result;
  const size_t n = graph.numNodes();
  result.newToOld = order;
  result.oldToNew.assign(n, -1);
  for (size_t i = 0; i < n; ++i)
    result.oldToNew[order[i]] = static_cast<NodeId>(i);
  std::vector<Node> nodes;
  nodes.reserve(n);
  for (NodeId old : order)
    nodes.push_back(graph.node(old));
  std::vector<GraphValue> values = graph.getValues();
  for (GraphValue &value : values) {
    if (value.producer >= 0)
      value.producer = result.oldToNew[value.producer];
    value.users.clear(); // fromParts derives them, in the new order
  }
  llvm::Expected<TrainingGraph> renumbered =
      TrainingGraph::fromParts(std::move(nodes), std::move(values));
  if (!renumbered)
    return renumbered.takeError();
  result.graph = std::move(*renumbered);
  return result;
}

Schedule remat::mapScheduleToOriginal(const RenumberedGraph &renumbered,
                                      const Schedule &schedule) {
  Schedule mapped = schedule;
  for (Step &step : mapped.steps)
    if (step.isCompute() && step.id >= 0 &&
        static_cast<size_t>(step.id) < renumbered.newToOld.size())
      step.id = renumbered.newToOld[step.id];
  return mapped;
}

Schedule remat::solveReorder(const TrainingGraph &graph,
                             const SolverOptions &options) {
  ReorderOptions reorderOptions;
  reorderOptions.timeLimitSeconds = options.timeLimitSeconds;
  return insertEarlyFrees(graph,
                          reorderForMemory(graph, reorderOptions).order);
}

llvm::Expected<SolverResult>
remat::solveOnReorderedGraph(const TrainingGraph &graph,
                             const SolverInfo &solver,
                             const SolverOptions &options) {
  if (llvm::Error err = graph.verify())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "solver '" + solver.name +
            "' on the reordered graph: invalid graph: " +
            llvm::toString(std::move(err)));
  const Clock::time_point start = Clock::now();
  ReorderOptions reorderOptions;
  reorderOptions.timeLimitSeconds = options.timeLimitSeconds / 5;
  ReorderResult reordered = reorderForMemory(graph, reorderOptions);
  llvm::Expected<RenumberedGraph> renumbered =
      renumberGraph(graph, reordered.order);
  if (!renumbered)
    return renumbered.takeError();
  SolverOptions rest = options;
  rest.startOrder = StartOrder::Program;
  // Plans seen on the way (auto's candidates) are plans of the original graph
  // once their ids are mapped back; the simulation is the same.
  if (options.observer)
    rest.observer = [&](const Schedule &schedule,
                        const SimulationReport &report) {
      options.observer(mapScheduleToOriginal(*renumbered, schedule), report);
    };
  if (options.timeLimitSeconds > 0)
    rest.timeLimitSeconds =
        std::max(0.1, options.timeLimitSeconds - secondsSince(start));
  llvm::Expected<SolverResult> result =
      runSolver(solver, renumbered->graph, rest);
  if (!result)
    return result.takeError();
  result->schedule = mapScheduleToOriginal(*renumbered, result->schedule);
  SimulationReport report = simulate(graph, result->schedule);
  // The two graphs are the same up to node ids: a difference is a bug.
  if (!report.valid || report.peakBytes != result->report.peakBytes ||
      report.numComputes != result->report.numComputes)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "solver '" + solver.name +
            "' on the reordered graph: the plan mapped back simulates "
            "differently (" +
            (report.valid ? "peak " + std::to_string(report.peakBytes)
                          : report.error) +
            " vs peak " + std::to_string(result->report.peakBytes) + ")");
  result->report = std::move(report);
  result->solveSeconds = secondsSince(start);
  return result;
}
