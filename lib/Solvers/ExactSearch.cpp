//===- ExactSearch.cpp - Optimal plans over all schedules (A*) ------------===//
//
// Best-first search over the states of a schedule. A state is (R, D): the
// values resident (holding their bytes) and the nodes computed at least once;
// a move computes one node. The simulator's rules (lib/Schedule/Simulator.cpp)
// are the rules of the moves: inputs resident, outputs not (a recomputation
// frees the old outputs first), outputs allocated, in-place updates taking
// over their input's bytes, the workspace held during the step, step outputs
// never freed, fixed values outside the count.
//
// Frees cost nothing, so the search only considers schedules in a canonical
// form, which loses no optimum:
//  - a value is freed only when a computation needs its memory, and then an
//    inclusion-minimal set is freed (keeping a value never costs anything
//    until its bytes are needed: any schedule is matched by one that frees
//    lazily, holding a superset of its values at every step);
//  - a value that nothing may read again is freed at once;
//  - a node already computed runs again only while it is an ancestor of a
//    node not yet computed (otherwise what it produces can only feed other
//    such recomputations, and dropping them all loses nothing).
//
// The estimate h(R, D) is the cost of the nodes not yet computed plus the
// cost of the computed ones that must run again: the producers of the
// non-resident inputs of nodes that must run, closed transitively. Each of
// these nodes runs at least once more, so h never overestimates (admissible),
// and the least g + h over the open states bounds every plan's cost from
// below at any time.
//
// The plan is the sequence of computations of the goal state; its frees are
// placed by insertEarlyFrees (each instance freed after its last use), which
// holds a subset of the search's resident values at every step, so its
// simulated peak is at most the search's.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/ExactSearch.h"
#include "remat/Support/Debug.h"

#include "llvm/Support/Format.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <functional>
#include <queue>

using namespace remat;

// -debug-only=remat-exact: the search's size, progress and outcome.
#define DEBUG_TYPE "remat-exact"

namespace {

using Word = uint64_t;

/// Bit sets over values or nodes, stored as `words` 64-bit words inline in a
/// larger array.
struct Bits {
  static bool test(const Word *w, size_t i) { return (w[i >> 6] >> (i & 63)) & 1; }
  static void set(Word *w, size_t i) { w[i >> 6] |= Word(1) << (i & 63); }
  static void reset(Word *w, size_t i) { w[i >> 6] &= ~(Word(1) << (i & 63)); }
};

class Search {
public:
  Search(const TrainingGraph &graph, uint64_t budget,
         std::optional<double> cutoff, size_t maxStates,
         std::optional<std::chrono::steady_clock::time_point> deadline)
      : graph(graph), budget(budget), cutoff(cutoff), maxStates(maxStates),
        deadline(deadline), endgame(graph) {
    numNodes = graph.numNodes();
    numValues = graph.numValues();
    valueWords = (numValues + 63) / 64;
    nodeWords = (numNodes + 63) / 64;
    keyWords = valueWords + nodeWords;
    inMask.assign(numNodes * valueWords, 0);
    outMask.assign(numNodes * valueWords, 0);
    readerMask.assign(numNodes * nodeWords, 0);
    userMask.assign(numValues * nodeWords, 0);
    outputValues.assign(valueWords, 0);
    pinned.assign(numNodes, 0);
    for (NodeId n = 0; n < NodeId(numNodes); ++n) {
      const Node &node = graph.node(n);
      for (ValueId in : node.inputs)
        if (!graph.value(in).isFixed())
          Bits::set(&inMask[n * valueWords], in);
      for (ValueId out : node.outputs) {
        Bits::set(&outMask[n * valueWords], out);
        if (graph.value(out).isOutput)
          pinned[n] = 1;
        for (NodeId user : graph.value(out).users)
          Bits::set(&readerMask[n * nodeWords], user);
      }
    }
    for (ValueId v = 0; v < ValueId(numValues); ++v) {
      for (NodeId user : graph.value(v).users)
        Bits::set(&userMask[v * nodeWords], user);
      if (graph.value(v).isOutput)
        Bits::set(outputValues.data(), v);
    }
    allNodes.assign(nodeWords, 0);
    for (size_t n = 0; n < numNodes; ++n)
      Bits::set(allNodes.data(), n);
    totalCost = graph.totalCost();
    inputBegin.assign(numNodes + 1, 0);
    nodeCost.assign(numNodes, 0);
    for (NodeId n = 0; n < NodeId(numNodes); ++n) {
      nodeCost[n] = graph.node(n).cost;
      inputBegin[n] = uint32_t(inputEdges.size());
      for (ValueId in : graph.node(n).inputs)
        if (!graph.value(in).isFixed())
          inputEdges.push_back({in, graph.value(in).producer});
    }
    inputBegin[numNodes] = uint32_t(inputEdges.size());
    pinnedMask.assign(nodeWords, 0);
    stepOutBytes.assign(numNodes, 0);
    outBytes.assign(numNodes, 0);
    footprint.assign(numNodes, 0);
    ancestors.assign(numNodes * nodeWords, 0);
    for (NodeId n = 0; n < NodeId(numNodes); ++n) {
      const Node &node = graph.node(n);
      if (pinned[n])
        Bits::set(pinnedMask.data(), n);
      uint64_t held = node.workspaceBytes;
      for (ValueId in : node.inputs) {
        const GraphValue &value = graph.value(in);
        if (!value.isFixed() && !value.isOutput)
          held += value.bytes;
        if (!value.isFixed()) {
          // Ancestors: the producer and its ancestors (ids are topological).
          Word *anc = &ancestors[n * nodeWords];
          const Word *up = &ancestors[value.producer * nodeWords];
          for (size_t w = 0; w < nodeWords; ++w)
            anc[w] |= up[w];
          Bits::set(anc, value.producer);
        }
      }
      for (ValueId out : node.outputs) {
        outBytes[n] += graph.value(out).bytes;
        if (graph.value(out).isOutput)
          stepOutBytes[n] += graph.value(out).bytes;
      }
      held += outBytes[n];
      for (auto [in, out] : node.reuses)
        if (!graph.value(in).isOutput)
          held -= std::min(held, graph.value(out).bytes);
      footprint[n] = held;
    }
  }

  /// Runs the search; true when it ended (goal found or open list empty).
  bool run();

  const TrainingGraph &graph;
  uint64_t budget;
  std::optional<double> cutoff;
  size_t maxStates;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  StepOutputsEndgame endgame;

  // Results.
  std::optional<std::vector<NodeId>> order;
  double goalCost = 0;
  double lowerBound = 0;
  size_t expanded = 0;
  std::string stoppedBy;
  size_t numStates() const { return gValue.size(); }

private:
  const Word *key(uint32_t s) const { return &keys[size_t(s) * keyWords]; }
  /// Reaching the state of key `k` with cost g from `parent` by `node`:
  /// the state, added if new (its estimate computed then, once: h depends
  /// on the key only) or given the lower g. Nothing when the state is known
  /// with a g at most this one, when its estimate is infinite, or when
  /// g + h reaches the cutoff; `f` is g + h.
  std::optional<uint32_t> reach(const Word *k, double g, uint64_t mem,
                                uint32_t parent, NodeId node, double &f);
  /// Keys are a few words (3 on siamese): an inline loop, where std::equal
  /// called memcmp (13.5% of the search's time in perf, siamese at 60%).
  static bool sameKey(const Word *a, const Word *b, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if (a[i] != b[i])
        return false;
    return true;
  }
  void grow();
  void mayRun(const Word *done, Word *out) const;
  double estimate(const Word *resident, const Word *done) ;
  bool futureFits(const Word *done) const;
  void expand(uint32_t s);
  void push(uint32_t s, double f) { open.push({f, gValue[s], s}); }

  size_t numNodes, numValues, valueWords, nodeWords, keyWords;
  std::vector<Word> inMask, outMask, readerMask, userMask, outputValues,
      allNodes;
  std::vector<char> pinned;
  std::vector<Word> pinnedMask, ancestors;
  /// Per node: bytes of its step outputs, of all its outputs, and what it
  /// holds while it runs (non-fixed inputs that are not step outputs,
  /// outputs less those that may take an input's buffer, workspace).
  std::vector<uint64_t> stepOutBytes, outBytes, footprint;
  /// The non-fixed inputs of each node with their producers (CSR), and
  /// the nodes' costs: the estimate's inner loop.
  std::vector<uint32_t> inputBegin;
  std::vector<std::pair<ValueId, NodeId>> inputEdges;
  std::vector<double> nodeCost;
  double totalCost = 0;

  // States: key = (R, D); g; resident bytes; parent and the node computed.
  std::vector<Word> keys;
  std::vector<double> gValue, hValue;
  std::vector<uint64_t> memValue;
  std::vector<uint32_t> parentOf;
  std::vector<NodeId> nodeOf;
  std::vector<uint64_t> table; // open addressing: tag | state + 1; 0 = empty
  struct Entry {
    double f, g;
    uint32_t state;
    bool operator<(const Entry &o) const {
      // The least f first; among equal f the deepest (largest g) first.
      if (f != o.f)
        return f > o.f;
      return g < o.g;
    }
  };
  std::priority_queue<Entry> open;

  // Scratch, reused by every expansion.
  std::vector<Word> scratchNeed, resident, done, doneAfter, mayNow, mayNew,
      next;
  std::vector<NodeId> worklist;
  std::vector<ValueId> candidates, chosen;
  std::vector<uint64_t> suffix;
  std::vector<std::pair<ValueId, ValueId>> pairs;
};

uint64_t mix(uint64_t x) {
  // splitmix64's finalizer: every input bit reaches every output bit.
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hashWords(const Word *w, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < n; ++i)
    h = mix(h ^ w[i]) + i;
  return h;
}

void Search::grow() {
  std::vector<uint64_t> bigger(std::max<size_t>(1024, table.size() * 2), 0);
  size_t mask = bigger.size() - 1;
  for (uint32_t s = 0; s < gValue.size(); ++s) {
    uint64_t h = hashWords(key(s), keyWords);
    size_t i = h & mask;
    while (bigger[i])
      i = (i + 1) & mask;
    bigger[i] = ((h >> 32) << 32) | (uint64_t(s) + 1);
  }
  table.swap(bigger);
}

std::optional<uint32_t> Search::reach(const Word *k, double g, uint64_t mem,
                                     uint32_t parent, NodeId node,
                                     double &f) {
  if ((gValue.size() + 1) * 2 > table.size())
    grow();
  size_t mask = table.size() - 1;
  uint64_t hash = hashWords(k, keyWords);
  // Each slot holds the key's upper hash bits next to the state + 1, so
  // that keys are compared only when those bits agree.
  const uint64_t tag = (hash >> 32) << 32;
  size_t i = hash & mask;
  while (table[i]) {
    uint32_t s = uint32_t(table[i] & 0xffffffffu) - 1;
    if ((table[i] & ~uint64_t(0xffffffffu)) == tag &&
        sameKey(k, key(s), keyWords)) {
      if (g >= gValue[s])
        return std::nullopt;
      f = g + hValue[s];
      if (cutoff && f >= *cutoff)
        return std::nullopt;
      gValue[s] = g;
      parentOf[s] = parent;
      nodeOf[s] = node;
      return s;
    }
    i = (i + 1) & mask;
  }
  double h = estimate(k, k + valueWords);
  f = g + h;
  if (std::isinf(h) || (cutoff && f >= *cutoff))
    return std::nullopt;
  uint32_t s = uint32_t(gValue.size());
  keys.insert(keys.end(), k, k + keyWords);
  gValue.push_back(g);
  hValue.push_back(h);
  memValue.push_back(mem);
  parentOf.push_back(parent);
  nodeOf.push_back(node);
  table[i] = tag | (uint64_t(s) + 1);
  return s;
}

/// The nodes that may still run: those not computed yet and their ancestors,
/// except computed nodes producing a step output (never freed, so never
/// recomputed). Node ids are a topological order, so one reverse pass.
void Search::mayRun(const Word *done, Word *out) const {
  std::fill(out, out + nodeWords, 0);
  for (size_t n = numNodes; n-- > 0;) {
    bool isDone = Bits::test(done, n);
    bool runs = !isDone;
    if (isDone && !pinned[n]) {
      const Word *readers = &readerMask[n * nodeWords];
      for (size_t w = 0; w < nodeWords && !runs; ++w)
        runs = (readers[w] & out[w]) != 0;
    }
    if (runs)
      Bits::set(out, n);
  }
}

/// h(R, D): the nodes not computed plus the computed ones that must run
/// again, closed over missing inputs; +infinity when a node producing a step
/// output would have to run again (it cannot).
double Search::estimate(const Word *resident, const Word *done) {
  scratchNeed.assign(nodeWords, 0);
  worklist.clear();
  double h = 0;
  for (size_t w = 0; w < nodeWords; ++w) {
    Word bits = allNodes[w] & ~done[w];
    scratchNeed[w] = bits;
    while (bits) {
      NodeId n = NodeId(w * 64 + __builtin_ctzll(bits));
      bits &= bits - 1;
      worklist.push_back(n);
      h += nodeCost[n];
    }
  }
  while (!worklist.empty()) {
    NodeId w = worklist.back();
    worklist.pop_back();
    for (uint32_t e = inputBegin[w]; e < inputBegin[w + 1]; ++e) {
      auto [in, p] = inputEdges[e];
      if (Bits::test(resident, in) || Bits::test(scratchNeed.data(), p))
        continue;
      // p is computed (every node not computed is already needed).
      if (pinned[p])
        return std::numeric_limits<double>::infinity();
      Bits::set(scratchNeed.data(), p);
      worklist.push_back(p);
      h += nodeCost[p];
    }
  }
  return h;
}

/// A necessary condition for a state to lead to a plan within the budget:
/// step outputs are never freed, so every node still to run does so with
/// the step outputs computed so far and those of its ancestors still to run
/// resident, next to its own footprint; whichever node producing a step
/// output runs last does so with every other step output resident; and the
/// inputs of that last node were held since their producers last ran
/// (StepOutputsEndgame, from this state on).
bool Search::futureFits(const Word *done) const {
  uint64_t doneOutputs = 0;
  for (size_t n = 0; n < numNodes; ++n)
    if (pinned[n] && Bits::test(done, n))
      doneOutputs += stepOutBytes[n];
  for (size_t n = 0; n < numNodes; ++n) {
    if (Bits::test(done, n))
      continue;
    uint64_t ancestorsOutputs = 0;
    const Word *anc = &ancestors[n * nodeWords];
    for (size_t w = 0; w < nodeWords; ++w) {
      Word bits = anc[w] & pinnedMask[w] & ~done[w];
      while (bits) {
        ancestorsOutputs += stepOutBytes[w * 64 + __builtin_ctzll(bits)];
        bits &= bits - 1;
      }
    }
    if (doneOutputs + ancestorsOutputs + footprint[n] > budget)
      return false;
  }
  // The last step output and its inputs (StepOutputsEndgame), from here.
  // `resident` is the state's before the move: the values the move frees
  // count as held (a weaker requirement), and one it produces is only
  // missed where its producer runs now with every other step output held,
  // which the step itself must fit anyway.
  return endgame.leastPeak(
             [&](NodeId n) { return Bits::test(done, n); },
             [&](ValueId v) { return Bits::test(resident.data(), v); }) <=
         budget;
}

void Search::expand(uint32_t s) {
  ++expanded;
  const double g = gValue[s];
  const uint64_t mem = memValue[s];
  // Copies: interning may reallocate `keys`.
  resident.assign(key(s), key(s) + valueWords);
  done.assign(key(s) + valueWords, key(s) + keyWords);
  mayNow.assign(nodeWords, 0);
  mayRun(done.data(), mayNow.data());
  mayNew.assign(nodeWords, 0);
  next.assign(keyWords, 0);

  for (size_t n = 0; n < numNodes; ++n) {
    const Node &node = graph.node(n);
    bool isDone = Bits::test(done.data(), n);
    if (isDone && !Bits::test(mayNow.data(), n))
      continue;
    const Word *in = &inMask[n * valueWords];
    const Word *out = &outMask[n * valueWords];
    bool ready = true, allOut = true, outputResident = false;
    for (size_t w = 0; w < valueWords; ++w) {
      if (in[w] & ~resident[w])
        ready = false;
      if (out[w] & ~resident[w])
        allOut = false;
      if (out[w] & resident[w] & outputValues[w])
        outputResident = true;
    }
    // A recomputation that restores nothing, or one that would have to free
    // a step output, is never useful or possible.
    if (!ready || outputResident || (isDone && allOut && !node.outputs.empty()))
      continue;
    // The old outputs still resident are freed first.
    uint64_t base = mem;
    for (ValueId o : node.outputs)
      if (Bits::test(resident.data(), o))
        base -= graph.value(o).bytes;

    // The state after computing n, before evictions and in-place choices.
    doneAfter = done;
    Bits::set(doneAfter.data(), n);
    const Word *mayAfter = mayNow.data();
    if (!isDone) {
      if (!futureFits(doneAfter.data()))
        continue;
      mayRun(doneAfter.data(), mayNew.data());
      mayAfter = mayNew.data();
    }
    auto dead = [&](ValueId v) {
      if (graph.value(v).isOutput)
        return false;
      const Word *users = &userMask[v * nodeWords];
      for (size_t w = 0; w < nodeWords; ++w)
        if (users[w] & mayAfter[w])
          return false;
      return true;
    };

    // In-place choices: each reuse pair whose input is resident and not a
    // step output may be in place (the input is consumed: nothing reads it
    // again); not in place only when the input is read again later.
    pairs.clear();
    for (auto [pin, pout] : node.reuses)
      if (!graph.value(pin).isOutput && Bits::test(resident.data(), pin) &&
          llvm::none_of(pairs, [&](auto &p) { return p.first == pin; }))
        pairs.push_back({pin, pout});
    unsigned numChoices = pairs.size() > 4 ? 1 : (1u << pairs.size());
    for (unsigned choice = 0; choice < numChoices; ++choice) {
      // More than four pairs: all in place only.
      auto inPlace = [&](size_t k) {
        return pairs.size() > 4 || ((choice >> k) & 1);
      };
      bool dominated = false;
      uint64_t consumed = 0;
      for (size_t k = 0; k < pairs.size(); ++k) {
        if (inPlace(k))
          consumed += graph.value(pairs[k].first).bytes;
        else if (dead(pairs[k].first))
          dominated = true; // in place costs less and ends the same
      }
      if (dominated)
        continue;
      uint64_t after = base + outBytes[n] - consumed;
      uint64_t atStep = after + node.workspaceBytes;
      uint64_t need = atStep > budget ? atStep - budget : 0;

      // Values that may be evicted for this step, largest first.
      candidates.clear();
      if (need > 0) {
        uint64_t available = 0;
        for (size_t w = 0; w < valueWords; ++w) {
          Word bits = resident[w] & ~in[w] & ~out[w] & ~outputValues[w];
          while (bits) {
            ValueId v = ValueId(w * 64 + __builtin_ctzll(bits));
            bits &= bits - 1;
            if (graph.value(v).bytes > 0) {
              candidates.push_back(v);
              available += graph.value(v).bytes;
            }
          }
        }
        if (available < need)
          continue;
        std::sort(candidates.begin(), candidates.end(),
                  [&](ValueId a, ValueId b) {
                    return graph.value(a).bytes > graph.value(b).bytes;
                  });
        suffix.assign(candidates.size() + 1, 0);
        for (size_t i = candidates.size(); i-- > 0;)
          suffix[i] = suffix[i + 1] + graph.value(candidates[i]).bytes;
      }

      // One successor per inclusion-minimal eviction set (the empty set when
      // nothing must go).
      auto emit = [&](uint64_t freed) {
        std::copy(resident.begin(), resident.end(), next.begin());
        std::copy(doneAfter.begin(), doneAfter.end(),
                  next.begin() + valueWords);
        Word *r = next.data();
        uint64_t newMem = after - freed;
        for (ValueId v : chosen)
          Bits::reset(r, v);
        for (size_t k = 0; k < pairs.size(); ++k)
          if (inPlace(k))
            Bits::reset(r, pairs[k].first);
        for (ValueId o : node.outputs)
          Bits::set(r, o);
        // What nothing may read again goes at once.
        for (size_t w = 0; w < valueWords; ++w) {
          Word bits = r[w] & ~outputValues[w];
          while (bits) {
            ValueId v = ValueId(w * 64 + __builtin_ctzll(bits));
            bits &= bits - 1;
            if (dead(v)) {
              Bits::reset(r, v);
              newMem -= graph.value(v).bytes;
            }
          }
        }
        // New, or reached more cheaply than before (then expanded again: the
        // estimate need not be consistent).
        double f;
        if (std::optional<uint32_t> t =
                reach(r, g + node.cost, newMem, s, NodeId(n), f))
          push(*t, f);
      };
      chosen.clear();
      if (need == 0) {
        emit(0);
        continue;
      }
      // Minimal sets in decreasing-size order: a set reaches `need` only
      // with its last (smallest) element.
      std::function<void(size_t, uint64_t)> pick = [&](size_t from,
                                                       uint64_t sum) {
        for (size_t i = from; i < candidates.size(); ++i) {
          if (sum + suffix[i] < need)
            return;
          chosen.push_back(candidates[i]);
          uint64_t total = sum + graph.value(candidates[i]).bytes;
          if (total >= need)
            emit(total);
          else
            pick(i + 1, total);
          chosen.pop_back();
        }
      };
      pick(0, 0);
    }
  }
}

bool Search::run() {
  // The start: nothing resident, nothing computed.
  std::vector<Word> start(keyWords, 0);
  lowerBound = totalCost;
  double f0;
  std::optional<uint32_t> s0 = reach(start.data(), 0, 0, UINT32_MAX, -1, f0);
  // None: the start's estimate is infinite (no plan) or reaches the cutoff
  // (nothing is cheaper than the incumbent); the open list stays empty.
  if (s0)
    push(*s0, f0);
  std::vector<Word> doneAll = allNodes;
  while (!open.empty()) {
    Entry top = open.top();
    if (top.g != gValue[top.state]) {
      open.pop(); // stale: the state was reached more cheaply since
      continue;
    }
    // Every state on an optimal canonical path that is not expanded yet is
    // open with f at most the optimum: the least open f bounds every plan.
    lowerBound = std::max(lowerBound, top.f);
    const Word *k = key(top.state);
    if (std::equal(doneAll.begin(), doneAll.end(), k + valueWords)) {
      goalCost = top.g;
      std::vector<NodeId> seq;
      for (uint32_t s = top.state; s != UINT32_MAX && nodeOf[s] >= 0;
           s = parentOf[s])
        seq.push_back(nodeOf[s]);
      std::reverse(seq.begin(), seq.end());
      order = std::move(seq);
      lowerBound = goalCost;
      return true;
    }
    open.pop();
    if ((expanded & 255) == 0 && deadline &&
        std::chrono::steady_clock::now() >= *deadline) {
      open.push(top);
      stoppedBy = "time limit";
      return false;
    }
    if (numStates() >= maxStates) {
      open.push(top);
      stoppedBy = "state limit";
      return false;
    }
    expand(top.state);
  }
  // Exhausted: nothing below the cutoff exists.
  if (cutoff)
    lowerBound = std::max(lowerBound, *cutoff);
  return true;
}

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

llvm::Expected<SolvedPlan>
remat::solveExactSearch(const TrainingGraph &graph,
                        const SolverOptions &options,
                        const ExactSearchOptions &searchOptions,
                        ExactSearchReport *reportOut) {
  auto begin = std::chrono::steady_clock::now();
  ExactSearchReport report;
  report.lowerBound = graph.totalCost();
  if (graph.numNodes() > kExactSearchMaxNodes)
    return makeError("exact search: " + llvm::Twine(graph.numNodes()) +
                     " nodes, more than the " +
                     llvm::Twine(kExactSearchMaxNodes) + " it takes");
  std::optional<SimulationReport> incumbent;
  if (searchOptions.incumbent) {
    incumbent = simulate(graph, *searchOptions.incumbent);
    if (!incumbent->valid)
      return makeError("exact search: the incumbent is invalid: " +
                       incumbent->error);
  }
  auto finish = [&](Schedule schedule) -> llvm::Expected<SolvedPlan> {
    report.seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - begin)
                         .count();
    if (reportOut)
      *reportOut = report;
    SolvedPlan plan(std::move(schedule));
    if (report.infeasible)
      plan.status = PlanStatus::Infeasible;
    else if (report.optimal)
      plan.status = PlanStatus::Optimal;
    else
      plan.status = PlanStatus::Feasible;
    plan.costLowerBound = report.lowerBound;
    return plan;
  };
  if (!options.budget) {
    // Least-memory mode has no cost to minimise: nothing to search.
    if (!searchOptions.incumbent)
      return makeError("exact search: needs a budget or an incumbent plan");
    report.stoppedBy = "no budget";
    SolvedPlan plan(*searchOptions.incumbent);
    if (reportOut)
      *reportOut = report;
    return plan;
  }
  // Below the least peak of every plan (the end of every schedule searched
  // backwards, leastPeakBound): infeasible without searching.
  uint64_t leastPeak =
      searchOptions.leastPeak
          ? *searchOptions.leastPeak
          : leastPeakBound(graph,
                           leastPeakBoundSeconds(options.timeLimitSeconds));
  if (*options.budget < leastPeak) {
    report.infeasible = true;
    if (searchOptions.incumbent)
      return finish(*searchOptions.incumbent);
    return makeError("exact search: no plan fits the budget (proven: every "
                     "plan peaks above it)");
  }
  std::optional<double> cutoff;
  bool incumbentFits = incumbent && incumbent->peakBytes <= *options.budget;
  if (incumbentFits)
    cutoff = incumbent->totalCost;

  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options.timeLimitSeconds > 0)
    deadline = begin +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(
                       std::min(options.timeLimitSeconds, 1e7)));
  Search search(graph, *options.budget, cutoff, searchOptions.maxStates,
                deadline);
  bool ended = search.run();
  report.statesStored = search.numStates();
  report.statesExpanded = search.expanded;
  report.stoppedBy = search.stoppedBy;
  report.lowerBound = std::max(graph.totalCost(), search.lowerBound);
  LLVM_DEBUG(llvm::dbgs() << "exact: " << graph.numNodes() << " nodes, budget "
                          << *options.budget << ": "
                          << (ended ? "ended" : "stopped by " + search.stoppedBy)
                          << " after " << search.expanded << " expansions, "
                          << search.numStates() << " states; bound "
                          << llvm::format("%g", report.lowerBound)
                          << (search.order ? ", plan found" : "") << "\n");
  if (search.order) {
    Schedule schedule = insertEarlyFrees(graph, *search.order);
    SimulationReport simulated = simulate(graph, schedule);
    if (!simulated.valid || simulated.peakBytes > *options.budget)
      return makeError("exact search: internal error: its plan " +
                       (simulated.valid
                            ? "peaks at " + std::to_string(simulated.peakBytes)
                            : "is invalid: " + simulated.error));
    report.optimal = true;
    report.searchFoundPlan = true;
    report.lowerBound = std::min(report.lowerBound, simulated.totalCost);
    return finish(std::move(schedule));
  }
  if (ended) {
    if (cutoff) {
      // Nothing cheaper than the incumbent exists.
      report.optimal = true;
      report.lowerBound = *cutoff;
      return finish(*searchOptions.incumbent);
    }
    report.infeasible = true;
    if (searchOptions.incumbent)
      return finish(*searchOptions.incumbent);
    return makeError("exact search: no plan fits the budget (proven)");
  }
  if (searchOptions.incumbent) {
    if (cutoff)
      report.lowerBound = std::min(report.lowerBound, *cutoff);
    return finish(*searchOptions.incumbent);
  }
  return makeError("exact search: stopped (" + search.stoppedBy +
                   ") before finding a plan, and no plan was given");
}

/// The incumbent of the registry's `exact`: the cheapest plan within the
/// budget of the polynomial solvers (the least peak without a budget or when
/// none fits), each judged by the simulator.
static std::optional<Schedule> incumbentOf(const TrainingGraph &graph,
                                           const SolverOptions &options) {
  std::optional<Schedule> best;
  std::optional<SimulationReport> bestReport;
  SolverOptions quick = options;
  quick.timeLimitSeconds = 0; // the polynomial searches run to the end
  for (const SolverInfo &solver : allSolvers()) {
    llvm::StringRef name = solver.name;
    if (name.starts_with("checkmate") || name == "auto" || name == "exact" ||
        !solverApplies(solver, graph))
      continue;
    llvm::Expected<SolvedPlan> plan = solver.fn(graph, quick);
    if (!plan) {
      llvm::consumeError(plan.takeError());
      continue;
    }
    SimulationReport report = simulate(graph, plan->schedule);
    if (report.valid &&
        (!bestReport || betterPlan(report, *bestReport, options.budget))) {
      best = std::move(plan->schedule);
      bestReport = report;
    }
  }
  return best;
}

llvm::Expected<SolvedPlan> remat::solveExact(const TrainingGraph &graph,
                                             const SolverOptions &options) {
  ExactSearchOptions search;
  search.incumbent = incumbentOf(graph, options);
  return solveExactSearch(graph, options, search);
}
