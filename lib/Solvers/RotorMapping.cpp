//===- RotorMapping.cpp - Training graphs as rotor chains and back --------===//
//
// seeds/004_12ee49cee382de08.txt §3.1 on a training graph: the stages
// ("layers or blocks of layers") are groups of forward nodes in a
// topological order, the backward nodes are placed in groups B^l, and the
// items a^l, abar^l, delta^l of Table 1 become sets of buffers whose sizes,
// with the overheads o_f, o_b and the times u_f, u_b, are read off the graph
// rather than measured as §5.1 does (buildRotorStageMap; addBlockOptions
// adds this project's per-stage options). Back from the model: an operation
// sequence of Table 1 becomes a Schedule of Compute/Free statements
// (scheduleFromRotorSequence), and a chain becomes a graph of its own
// (makeRotorChainGraph). The solvers that use both are in RotorSearch.cpp.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Rotor.h"

#include "RotorInternal.h"

#include <algorithm>
#include <limits>

using namespace remat;

//===----------------------------------------------------------------------===//
// Training graphs
//===----------------------------------------------------------------------===//

namespace {
/// Peak of the bytes a list of nodes allocates while it runs in order, each
/// produced value freed after its last reader in the list unless `keep`
/// says it stays (and never counted when reserved); inputs from elsewhere are
/// not counted. insertEarlyFrees frees at these points or earlier.
class LocalPeak {
public:
  LocalPeak(const TrainingGraph &graph, const std::vector<char> &reserved)
      : graph(graph), reserved(reserved), lastUse(graph.numValues(), -1) {}

  template <typename Keep>
  uint64_t operator()(const std::vector<NodeId> &nodes, Keep keep) {
    for (size_t i = 0; i < nodes.size(); ++i)
      for (ValueId in : graph.node(nodes[i]).inputs)
        lastUse[in] = int(i);
    uint64_t live = 0, peak = 0;
    std::vector<ValueId> produced;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node &node = graph.node(nodes[i]);
      for (ValueId out : node.outputs) {
        if (reserved[out])
          continue;
        live += graph.value(out).bytes;
        produced.push_back(out);
      }
      peak = std::max(peak, live + node.workspaceBytes);
      // Values produced by the list (this node's outputs included) that no
      // later node of the list reads are gone after this node.
      size_t kept = 0;
      for (ValueId v : produced) {
        if (lastUse[v] <= int(i) && !keep(v))
          live -= graph.value(v).bytes;
        else
          produced[kept++] = v;
      }
      produced.resize(kept);
    }
    for (size_t i = 0; i < nodes.size(); ++i)
      for (ValueId in : graph.node(nodes[i]).inputs)
        lastUse[in] = -1;
    return peak;
  }

private:
  const TrainingGraph &graph;
  const std::vector<char> &reserved;
  /// Scratch: last position in the list reading a value.
  std::vector<int> lastUse;
};
} // namespace

/// The peak of the backward nodes `nodes` of group l run with their real
/// inputs (delta^l, `abar` when given, a^{l-1}: each value once, an input
/// gone after its last reader in the list unless an earlier group reads it,
/// one nothing reads here or later not there at all): what the relief r_b^l
/// of buildRotorStageMap compares the model's count with.
static uint64_t realBackwardPeak(const TrainingGraph &graph,
                                 const RotorStageMap &map,
                                 const std::vector<unsigned> &firstReaderGroup,
                                 unsigned l, const std::vector<NodeId> &nodes,
                                 const std::vector<ValueId> *abar) {
  std::vector<int> lastReader(graph.numValues(), -1);
  std::vector<char> inSet(graph.numValues(), 0);
  {
    for (size_t i = 0; i < nodes.size(); ++i)
      for (ValueId in : graph.node(nodes[i]).inputs)
        lastReader[in] = int(i);
    auto neededLater = [&](ValueId v) { return firstReaderGroup[v] < l; };
    std::vector<ValueId> inputs;
    auto addSet = [&](const std::vector<ValueId> &set) {
      for (ValueId v : set)
        if (!inSet[v] && !map.reserved[v] &&
            (lastReader[v] >= 0 || neededLater(v))) {
          inSet[v] = 1;
          inputs.push_back(v);
        }
    };
    addSet(map.deltaValues[l]);
    if (abar)
      addSet(*abar);
    addSet(map.aValues[l - 1]);
    uint64_t live = 0;
    for (ValueId v : inputs)
      live += graph.value(v).bytes;
    uint64_t peak = live;
    std::vector<ValueId> produced;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node &node = graph.node(nodes[i]);
      for (ValueId out : node.outputs)
        if (!map.reserved[out]) {
          live += graph.value(out).bytes;
          produced.push_back(out);
        }
      peak = std::max(peak, live + node.workspaceBytes);
      size_t kept = 0;
      for (ValueId v : produced) {
        bool passesOn = firstReaderGroup[v] < l;
        if (lastReader[v] <= int(i) && !passesOn)
          live -= graph.value(v).bytes;
        else
          produced[kept++] = v;
      }
      produced.resize(kept);
      for (ValueId in : node.inputs)
        if (inSet[in] && lastReader[in] == int(i) && !neededLater(in))
          live -= graph.value(in).bytes;
    }
    for (ValueId v : inputs)
      inSet[v] = 0;
    for (NodeId n : nodes)
      for (ValueId in : graph.node(n).inputs)
        lastReader[in] = -1;
    return peak;
  }
}

llvm::Expected<RotorStageMap>
remat::buildRotorStageMap(const TrainingGraph &graph,
                          const std::vector<std::vector<NodeId>> &stagesIn,
                          BackwardPlacement placement) {
  const std::vector<NodeId> forward = graph.forwardNodes();
  const std::vector<NodeId> backward = graph.backwardNodes();
  if (forward.empty())
    return makeError("rotor: the graph has no forward node");
  std::vector<std::vector<NodeId>> stages = stagesIn;
  if (stages.empty())
    for (NodeId n : forward)
      stages.push_back({n});

  const unsigned L = unsigned(stages.size());
  const size_t numNodes = graph.numNodes(), numValues = graph.numValues();
  std::vector<unsigned> stageOf(numNodes, 0);
  for (unsigned l = 1; l <= L; ++l) {
    std::vector<NodeId> &nodes = stages[l - 1];
    if (nodes.empty())
      return makeError("rotor: stage " + llvm::Twine(l) + " is empty");
    std::sort(nodes.begin(), nodes.end());
    for (NodeId n : nodes) {
      if (n < 0 || size_t(n) >= numNodes ||
          graph.node(n).phase != Phase::Forward)
        return makeError("rotor: stage " + llvm::Twine(l) +
                         " lists a node that is not a forward node");
      if (stageOf[n])
        return makeError("rotor: node '" + graph.node(n).name +
                         "' is in two stages");
      stageOf[n] = l;
    }
  }
  for (NodeId n : forward) {
    if (!stageOf[n])
      return makeError("rotor: forward node '" + graph.node(n).name +
                       "' is in no stage");
    for (ValueId in : graph.node(n).inputs) {
      NodeId p = graph.value(in).producer;
      if (p >= 0 && stageOf[p] > stageOf[n])
        return makeError("rotor: stages are not in a topological order ('" +
                         graph.node(n).name + "' reads a later stage)");
    }
  }

  RotorStageMap map;
  map.reserved.assign(numValues, 0);
  map.producerStage.assign(numValues, 0);
  for (ValueId v = 0; v < ValueId(numValues); ++v) {
    const GraphValue &value = graph.value(v);
    map.reserved[v] = !value.isFixed() && value.isOutput;
    if (map.reserved[v])
      map.reservedBytes += value.bytes;
  }

  // f(v): the last stage that reads forward value v in the forward pass (at
  // least its producer's). A backward node reading v in any group <= f(v)
  // adds v to no cut beyond those the forward pass already needs.
  auto isForwardValue = [&](ValueId v) {
    NodeId p = graph.value(v).producer;
    return p >= 0 && graph.node(p).phase == Phase::Forward;
  };
  // Fixed values (parameters, inputs) count as produced before stage 1: a
  // backward node reading a weight belongs with the stage that reads it
  // (dW = x^T dz, dx = dz W^T), not earlier.
  std::vector<unsigned> lastForwardReader(numValues, 0);
  for (ValueId v = 0; v < ValueId(numValues); ++v) {
    bool fixed = graph.value(v).isFixed();
    if (!fixed && !isForwardValue(v))
      continue;
    unsigned f = fixed ? 0 : stageOf[graph.value(v).producer];
    for (NodeId user : graph.value(v).users)
      if (graph.node(user).phase == Phase::Forward)
        f = std::max(f, stageOf[user]);
    lastForwardReader[v] = f;
  }

  // Groups: sigma(b) must be >= the stage of every forward value b reads
  // (B^l only sees abar^l, a^{l-1} and older stored items), >= sigma of
  // every backward reader (readers run later, and groups run L, L-1, ...,
  // 1) and <= sigma of every backward producer.
  // 1. Reverse program order: lo(b), the least group b may take, is at
  //    least the stage of every forward value b reads and lo of every
  //    backward reader of b.
  std::vector<unsigned> lo(numNodes, 1);
  for (auto it = backward.rbegin(); it != backward.rend(); ++it) {
    const Node &node = graph.node(*it);
    unsigned least = 1;
    for (ValueId in : node.inputs)
      if (isForwardValue(in))
        least = std::max(least, stageOf[graph.value(in).producer]);
    for (ValueId out : node.outputs)
      for (NodeId user : graph.value(out).users)
        least = std::max(least, lo[user]);
    lo[*it] = std::min(L, least);
  }
  // 2. Program order: b must run no earlier than its backward producers, so
  //    sigma(b) <= hi(b) = min sigma(p) (L without any); lo(b) <= hi(b)
  //    because lo(p) >= lo(b) for every producer p. A node anchored to the
  //    forward pass goes, within [lo, hi], to the latest group at which what
  //    it reads is in the cut anyway (min f): its forward inputs, the weights
  //    it reads (f = the last stage reading them), and values the backward
  //    derives from weights alone (a transposed or flipped weight), which
  //    stand for their weights. An unanchored node (it reads only gradients)
  //    goes where it keeps the cuts smallest: one that frees more than it
  //    allocates (a weight gradient, a step output; a sum of gradients) runs
  //    as soon as its inputs exist, in the group of its last producer, so that
  //    those inputs are not carried through later cuts; one that allocates
  //    more (the padded copy of a gradient for a transposed convolution) runs
  //    in the group of its latest reader (pass 3), so that its output is not
  //    carried instead.
  constexpr unsigned kNone = std::numeric_limits<unsigned>::max();
  // For values the backward computes from weights alone: the stage that
  // anchors them (0: none).
  std::vector<unsigned> weightAnchor(numValues, 0);
  std::vector<unsigned> group(numNodes, 0);
  std::vector<char> late(numNodes, 0);
  for (NodeId b : backward) {
    const Node &node = graph.node(b);
    unsigned hi = L, target = kNone, anchor = kNone;
    bool weightsOnly = true;
    for (ValueId in : node.inputs) {
      const GraphValue &value = graph.value(in);
      unsigned f = 0;
      if (value.isFixed()) {
        f = lastForwardReader[in];
      } else if (isForwardValue(in)) {
        f = lastForwardReader[in];
        weightsOnly = false;
      } else {
        hi = std::min(hi, group[value.producer]);
        f = weightAnchor[in];
        weightsOnly &= f > 0;
      }
      if (f > 0)
        target = std::min(target, f);
      if (f > 0 && (value.isFixed() || weightAnchor[in] > 0))
        anchor = std::min(anchor, f);
    }
    if (weightsOnly && anchor != kNone)
      for (ValueId out : node.outputs)
        weightAnchor[out] = anchor;
    if (target == kNone) {
      uint64_t allocated = 0, released = 0;
      for (ValueId out : node.outputs)
        if (!graph.value(out).isOutput)
          allocated += graph.value(out).bytes;
      for (ValueId in : node.inputs) {
        const GraphValue &value = graph.value(in);
        if (!value.isFixed() && value.users.back() == b)
          released += value.bytes;
      }
      late[b] = placement == BackwardPlacement::Late ||
                (placement == BackwardPlacement::Balanced &&
                 allocated > released);
      target = hi;
    }
    group[b] = std::clamp(target, lo[b], std::max(lo[b], hi));
  }
  // 3. Reverse program order: a late node moves down to its latest reader's
  //    group (never below lo, never above where it is: every reader is in a
  //    group <= its own, so its readers' bounds still hold).
  for (auto it = backward.rbegin(); it != backward.rend(); ++it) {
    if (!late[*it])
      continue;
    unsigned latest = 0;
    for (ValueId out : graph.node(*it).outputs)
      for (NodeId user : graph.value(out).users)
        latest = std::max(latest, group[user]);
    if (latest > 0)
      group[*it] = std::max(lo[*it], latest);
  }

  map.chain = RotorChain::withLength(L);
  RotorChain &chain = map.chain;
  map.forward.assign(L + 1, {});
  map.backward.assign(L + 1, {});
  for (unsigned l = 1; l <= L; ++l)
    map.forward[l] = stages[l - 1];
  for (NodeId b : backward)
    map.backward[group[b]].push_back(b);

  // The sets: every value's membership is an interval of l.
  map.aValues.assign(L + 1, {});
  map.abarValues.assign(L + 1, {});
  map.deltaValues.assign(L + 1, {});
  for (ValueId v = 0; v < ValueId(numValues); ++v) {
    const GraphValue &value = graph.value(v);
    if (value.isFixed())
      continue;
    bool fwd = isForwardValue(v);
    unsigned own = fwd ? stageOf[value.producer] : group[value.producer];
    map.producerStage[v] = own;
    if (map.reserved[v])
      continue;
    if (fwd) {
      unsigned last = own;
      bool ownGroupReads = false;
      for (NodeId user : value.users) {
        bool userForward = graph.node(user).phase == Phase::Forward;
        unsigned at = userForward ? stageOf[user] : group[user];
        last = std::max(last, at);
        ownGroupReads |= !userForward && at == own;
      }
      // a^l for own <= l < last.
      for (unsigned l = own; l < last; ++l)
        map.aValues[l].push_back(v);
      if (own < last || ownGroupReads)
        map.abarValues[own].push_back(v);
    } else {
      unsigned first = own;
      for (NodeId user : value.users)
        first = std::min(first, group[user]);
      // delta^l for first <= l < own.
      for (unsigned l = first; l < own; ++l)
        map.deltaValues[l].push_back(v);
    }
  }
  // abar^l = A^l plus what group l reads of stage l: add the pass-through
  // members of A^l (produced earlier), kept sorted by id.
  for (unsigned l = 1; l <= L; ++l) {
    std::vector<ValueId> merged;
    std::set_union(map.aValues[l].begin(), map.aValues[l].end(),
                   map.abarValues[l].begin(), map.abarValues[l].end(),
                   std::back_inserter(merged));
    map.abarValues[l] = std::move(merged);
  }

  auto bytesOf = [&](const std::vector<ValueId> &values) {
    uint64_t sum = 0;
    for (ValueId v : values)
      sum += graph.value(v).bytes;
    return sum;
  };
  for (unsigned l = 0; l <= L; ++l) {
    chain.a[l] = bytesOf(map.aValues[l]);
    chain.abar[l] = l ? bytesOf(map.abarValues[l]) : 0;
    chain.delta[l] = bytesOf(map.deltaValues[l]);
  }

  // Costs and overheads. o_f^l covers both flavours: F_all keeps abar^l
  // (model: abar^l + o_f), F_none / F_ck keep a^l (model: a^l + o_f), and
  // the node allocates its outputs either way; F_none / F_ck of the last
  // stage never occur (nothing reads a^L).
  LocalPeak localPeak(graph, map.reserved);
  chain.reliefB.assign(L + 1, 0);
  // The least group of a backward reader of each value (L + 1: none).
  std::vector<unsigned> firstReaderGroup(numValues, L + 1);
  for (NodeId b : backward)
    for (ValueId in : graph.node(b).inputs)
      firstReaderGroup[in] = std::min(firstReaderGroup[in], group[b]);
  auto groupPeak = [&](unsigned l, bool withAbar) {
    return realBackwardPeak(graph, map, firstReaderGroup, l, map.backward[l],
                            withAbar ? &map.abarValues[l] : nullptr);
  };
  std::vector<char> mark(numValues, 0);
  auto markAll = [&](const std::vector<ValueId> &values, char on) {
    for (ValueId v : values)
      mark[v] = on;
  };
  auto keepMarked = [&](ValueId v) { return bool(mark[v]); };
  for (unsigned l = 1; l <= L; ++l) {
    for (NodeId n : map.forward[l]) {
      chain.costF[l] += graph.node(n).cost;
      for (ValueId out : graph.node(n).outputs)
        if (map.reserved[out])
          chain.pinned[l] = true;
    }
    for (NodeId n : map.backward[l])
      chain.costB[l] += graph.node(n).cost;
    // B^l needs F_all^l only if group l reads something stage l produced
    // (R^l, the members of Abar^l produced by stage l and read by group l).
    // The last stage always runs F_all: it must be computed once.
    bool readsOwn = false;
    for (NodeId n : map.backward[l])
      for (ValueId in : graph.node(n).inputs)
        readsOwn |= !graph.value(in).isFixed() && isForwardValue(in) &&
                    stageOf[graph.value(in).producer] == l;
    chain.backwardReadsAbar[l] = readsOwn || l == L;

    markAll(map.abarValues[l], 1);
    uint64_t peakAll = localPeak(map.forward[l], keepMarked);
    markAll(map.abarValues[l], 0);
    uint64_t over = peakAll > chain.abar[l] ? peakAll - chain.abar[l] : 0;
    if (l < L) {
      markAll(map.aValues[l], 1);
      uint64_t peakCk = localPeak(map.forward[l], keepMarked);
      markAll(map.aValues[l], 0);
      if (peakCk > chain.a[l])
        over = std::max(over, peakCk - chain.a[l]);
    }
    chain.overheadF[l] = over;

    markAll(map.deltaValues[l - 1], 1);
    uint64_t peakB = localPeak(map.backward[l], keepMarked);
    markAll(map.deltaValues[l - 1], 0);
    chain.overheadB[l] =
        peakB > chain.delta[l - 1] ? peakB - chain.delta[l - 1] : 0;

    // r_b^l: the model counts B^l's inputs (delta^l, abar^l when read,
    // a^{l-1}) for its whole run, each set in full, a value in two sets
    // twice. Run the group with its real inputs instead: each value once, an
    // input gone after its last reader in the group unless a later group
    // reads it (the model has it stored then), one nothing reads here or
    // later not there at all. The difference between the two peaks is the
    // relief.
    uint64_t counted = chain.delta[l] +
                       (chain.backwardReadsAbar[l] ? chain.abar[l] : 0) +
                       chain.a[l - 1] + chain.delta[l - 1] +
                       chain.overheadB[l];
    uint64_t real = groupPeak(l, chain.backwardReadsAbar[l]);
    chain.reliefB[l] = counted > real ? counted - real : 0;
  }
  return map;
}

void remat::addBlockOptions(const TrainingGraph &graph, RotorStageMap &map,
                            unsigned exhaustive, unsigned maxOptions) {
  RotorChain &chain = map.chain;
  const unsigned L = chain.length();
  const size_t numNodes = graph.numNodes(), numValues = graph.numValues();
  chain.options.assign(L + 1, {});
  map.optionRecompute.assign(L + 1, {});
  std::vector<unsigned> stageOf(numNodes, 0), groupOf(numNodes, 0);
  for (unsigned l = 1; l <= L; ++l) {
    for (NodeId n : map.forward[l])
      stageOf[n] = l;
    for (NodeId n : map.backward[l])
      groupOf[n] = l;
  }
  std::vector<unsigned> firstReaderGroup(numValues, L + 1);
  for (unsigned l = 1; l <= L; ++l)
    for (NodeId b : map.backward[l])
      for (ValueId in : graph.node(b).inputs)
        firstReaderGroup[in] = std::min(firstReaderGroup[in], l);
  LocalPeak localPeak(graph, map.reserved);
  std::vector<char> mark(numValues, 0), inAbar(numValues, 0),
      inPrev(numValues, 0), dropped(numValues, 0);
  auto bytesOf = [&](const std::vector<ValueId> &values) {
    uint64_t sum = 0;
    for (ValueId v : values)
      sum += graph.value(v).bytes;
    return sum;
  };

  for (unsigned l = 1; l <= L; ++l) {
    if (!chain.readsAbar(l) || map.forward[l].empty())
      continue;
    for (ValueId v : map.abarValues[l])
      inAbar[v] = 1;
    for (ValueId v : map.aValues[l - 1])
      inPrev[v] = 1;
    // The values stage l stores only for its own group: produced by the
    // stage, not in a^l, read by nothing but the stage and the group.
    std::vector<ValueId> internal;
    for (ValueId v : map.abarValues[l]) {
      const GraphValue &value = graph.value(v);
      if (value.isFixed() || map.reserved[v] || value.producer < 0 ||
          stageOf[value.producer] != l ||
          llvm::is_contained(map.aValues[l], v))
        continue;
      bool local = llvm::all_of(value.users, [&](NodeId u) {
        return stageOf[u] == l || groupOf[u] == l;
      });
      if (local)
        internal.push_back(v);
    }
    // The fewest forward nodes of the stage that give back `dropped` values
    // from a^{l-1} and what stays stored; nullopt when one would be a node
    // producing a step output (never run twice).
    auto closure = [&]() -> std::optional<std::vector<NodeId>> {
      std::vector<char> inClosure(numNodes, 0);
      std::vector<ValueId> work;
      for (ValueId v : internal)
        if (dropped[v])
          work.push_back(v);
      std::vector<NodeId> nodes;
      while (!work.empty()) {
        ValueId v = work.back();
        work.pop_back();
        NodeId p = graph.value(v).producer;
        if (inClosure[p])
          continue;
        if (llvm::any_of(graph.node(p).outputs,
                         [&](ValueId o) { return map.reserved[o] != 0; }))
          return std::nullopt;
        inClosure[p] = 1;
        nodes.push_back(p);
        for (ValueId u : graph.node(p).inputs) {
          const GraphValue &in = graph.value(u);
          if (in.isFixed() || inPrev[u] || (inAbar[u] && !dropped[u]))
            continue;
          if (in.producer < 0 || stageOf[in.producer] != l)
            return std::nullopt; // not available during B^l
          work.push_back(u);
        }
      }
      std::sort(nodes.begin(), nodes.end());
      return nodes;
    };
    struct Candidate {
      RotorChain::Option option;
      std::vector<NodeId> recompute;
    };
    std::vector<Candidate> candidates;
    auto evaluate = [&](const std::vector<ValueId> &drop) {
      for (ValueId v : drop)
        dropped[v] = 1;
      std::optional<std::vector<NodeId>> recompute = closure();
      if (recompute) {
        Candidate c;
        c.recompute = std::move(*recompute);
        std::vector<ValueId> stored;
        for (ValueId v : map.abarValues[l])
          if (!dropped[v])
            stored.push_back(v);
        c.option.abar = bytesOf(stored);
        c.option.costB = chain.costB[l];
        for (NodeId n : c.recompute)
          c.option.costB += graph.node(n).cost;
        // F_all^l keeping only `stored`: its peak over what it stores.
        for (ValueId v : stored)
          mark[v] = 1;
        uint64_t peakF = localPeak(map.forward[l],
                                   [&](ValueId v) { return mark[v] != 0; });
        for (ValueId v : stored)
          mark[v] = 0;
        c.option.overheadF =
            peakF > c.option.abar ? peakF - c.option.abar : 0;
        // B^l: the recomputation, then the group, as buildRotorStageMap
        // measures o_b and r_b.
        std::vector<NodeId> list = c.recompute;
        list.insert(list.end(), map.backward[l].begin(), map.backward[l].end());
        for (ValueId v : map.deltaValues[l - 1])
          mark[v] = 1;
        uint64_t peakB =
            localPeak(list, [&](ValueId v) { return mark[v] != 0; });
        for (ValueId v : map.deltaValues[l - 1])
          mark[v] = 0;
        c.option.overheadB =
            peakB > chain.delta[l - 1] ? peakB - chain.delta[l - 1] : 0;
        uint64_t counted = chain.delta[l] + c.option.abar + chain.a[l - 1] +
                           chain.delta[l - 1] + c.option.overheadB;
        uint64_t real = realBackwardPeak(graph, map, firstReaderGroup, l,
                                         list, &stored);
        c.option.reliefB = counted > real ? counted - real : 0;
        candidates.push_back(std::move(c));
      }
      for (ValueId v : drop)
        dropped[v] = 0;
    };
    // Keeping everything is always an option (the stage's own figures, but
    // F_all's overhead alone).
    evaluate({});
    if (internal.size() <= exhaustive) {
      for (unsigned mask = 1; mask < (1u << internal.size()); ++mask) {
        std::vector<ValueId> drop;
        for (size_t i = 0; i < internal.size(); ++i)
          if ((mask >> i) & 1)
            drop.push_back(internal[i]);
        evaluate(drop);
      }
    } else {
      // Nested subsets: the cheapest to recompute per byte go first.
      std::vector<ValueId> order = internal;
      std::stable_sort(order.begin(), order.end(), [&](ValueId x, ValueId y) {
        double cx = graph.node(graph.value(x).producer).cost,
               cy = graph.node(graph.value(y).producer).cost;
        return cx * double(std::max<uint64_t>(graph.value(y).bytes, 1)) <
               cy * double(std::max<uint64_t>(graph.value(x).bytes, 1));
      });
      std::vector<ValueId> drop;
      unsigned steps = std::min<unsigned>(unsigned(order.size()), 4 * maxOptions);
      for (unsigned i = 1; i <= steps; ++i) {
        size_t upTo = order.size() * i / steps;
        drop.assign(order.begin(), order.begin() + upTo);
        evaluate(drop);
      }
    }
    for (ValueId v : map.abarValues[l])
      inAbar[v] = 0;
    for (ValueId v : map.aValues[l - 1])
      inPrev[v] = 0;
    if (candidates.size() <= 1)
      continue;
    // Options another beats or equals in every figure go; the first (keep
    // everything) stays, so that option 0 is the stage's plain F_all / B.
    auto dominates = [](const RotorChain::Option &x,
                        const RotorChain::Option &y) {
      return x.abar <= y.abar && x.costB <= y.costB &&
             x.overheadF <= y.overheadF &&
             x.overheadB - std::min(x.overheadB, x.reliefB) <=
                 y.overheadB - std::min(y.overheadB, y.reliefB);
    };
    std::vector<Candidate> kept;
    for (size_t i = 0; i < candidates.size(); ++i) {
      bool beaten = false;
      for (size_t j = 0; j < candidates.size() && !beaten && i > 0; ++j)
        beaten = j != i && dominates(candidates[j].option, candidates[i].option) &&
                 (j < i || !dominates(candidates[i].option,
                                      candidates[j].option));
      if (!beaten)
        kept.push_back(std::move(candidates[i]));
    }
    // At most maxOptions, spread over the stored bytes.
    if (kept.size() > maxOptions) {
      std::sort(kept.begin() + 1, kept.end(), [](auto &x, auto &y) {
        return x.option.abar > y.option.abar;
      });
      std::vector<Candidate> spread;
      spread.push_back(std::move(kept[0]));
      size_t rest = kept.size() - 1;
      for (unsigned k = 1; k < maxOptions; ++k)
        spread.push_back(std::move(kept[1 + (rest - 1) * (k - 1) /
                                                std::max(1u, maxOptions - 2)]));
      kept = std::move(spread);
    }
    for (Candidate &c : kept) {
      chain.options[l].push_back(c.option);
      map.optionRecompute[l].push_back(std::move(c.recompute));
    }
  }
}

llvm::Expected<Schedule>
remat::scheduleFromRotorSequence(const TrainingGraph &graph,
                                 const RotorStageMap &map,
                                 const RotorSequence &sequence) {
  const unsigned L = map.chain.length();
  if (map.forward.size() != L + 1 || map.backward.size() != L + 1 ||
      map.reserved.size() != graph.numValues())
    return makeError("rotor: the stage map does not belong to this graph");
  // The operations' compute order, checked against the items of Table 1 as
  // simulateRotorSequence does; the frees are then placed by
  // insertEarlyFrees: every buffer right after its last use. A stored item
  // holds only buffers that a later operation reads (or none later: then it
  // is freed sooner), so the plan's memory never exceeds the model's.
  std::vector<char> haveA(L + 1, 0), haveAbar(L + 1, 0), haveDelta(L + 1, 0);
  std::vector<unsigned> storedOption(L + 1, 0);
  haveA[0] = 1;
  haveDelta[L] = 1;
  std::vector<NodeId> order;
  for (size_t i = 0; i < sequence.size(); ++i) {
    const RotorOp &op = sequence[i];
    const unsigned l = op.stage;
    auto bad = [&](const std::string &why) {
      return makeError("rotor: op " + llvm::Twine(i) + " (" +
                       formatRotorSequence({op}) + "): " + why);
    };
    if (l < 1 || l > L)
      return bad("stage out of range");
    if (op.option >= map.chain.numOptions(l))
      return bad("no such option");
    bool inputStored = haveA[l - 1] || (l > 1 && haveAbar[l - 1]);
    switch (op.kind) {
    case RotorOp::Kind::Drop:
      if (haveA[l])
        haveA[l] = 0;
      else if (haveAbar[l])
        haveAbar[l] = 0;
      else
        return bad("nothing of the stage is stored");
      continue;
    case RotorOp::Kind::FNone:
    case RotorOp::Kind::FCk:
    case RotorOp::Kind::FAll:
      if (op.kind == RotorOp::Kind::FNone ? !haveA[l - 1] : !inputStored)
        return bad("its input is not stored");
      if (haveA[l] || haveAbar[l])
        return bad("its output is already stored");
      order.insert(order.end(), map.forward[l].begin(), map.forward[l].end());
      (op.kind == RotorOp::Kind::FAll ? haveAbar : haveA)[l] = 1;
      if (op.kind == RotorOp::Kind::FAll)
        storedOption[l] = op.option;
      if (op.kind == RotorOp::Kind::FNone)
        haveA[l - 1] = 0;
      continue;
    case RotorOp::Kind::B:
      if (!haveDelta[l] ||
          (map.chain.readsAbar(l) &&
           (!haveAbar[l] || storedOption[l] != op.option)) ||
          !inputStored || haveDelta[l - 1])
        return bad("its inputs are not stored");
      // An option's recomputation first, from a^{l-1} and what F_all^l
      // stored: insertEarlyFrees then frees the values F_all^l did not keep
      // after their last forward use.
      if (l < map.optionRecompute.size() &&
          op.option < map.optionRecompute[l].size())
        order.insert(order.end(), map.optionRecompute[l][op.option].begin(),
                     map.optionRecompute[l][op.option].end());
      order.insert(order.end(), map.backward[l].begin(),
                   map.backward[l].end());
      haveDelta[l - 1] = 1;
      haveDelta[l] = 0;
      haveAbar[l] = 0;
      haveA[l - 1] = 0;
      continue;
    }
  }
  return insertEarlyFrees(graph, order);
}

TrainingGraph remat::makeRotorChainGraph(const RotorChain &chain) {
  TrainingGraph g;
  const unsigned L = chain.length();
  std::vector<ValueId> acts(L + 1, -1), extra(L + 1, -1);
  acts[0] = g.addFixedValue("a0", chain.a[0]);
  for (unsigned l = 1; l <= L; ++l) {
    std::string id = std::to_string(l);
    NodeId f = g.addNode("F" + id, "rotor.forward", chain.costF[l],
                         Phase::Forward, {acts[l - 1]});
    acts[l] = g.addOutput(f, "a" + id, chain.a[l]);
    uint64_t more = chain.abar[l] - chain.a[l];
    if (more > 0)
      extra[l] = g.addOutput(f, "abar" + id, more);
    // The node allocates abar^l - a^l even in an F_none, where the model
    // counts it in o_f^l: the workspace is what remains of o_f^l. (F^L only
    // ever runs as F_all.)
    uint64_t overhead = chain.overheadF[l];
    g.node(f).workspaceBytes =
        l < L ? overhead - std::min(overhead, more) : overhead;
  }
  ValueId grad = g.addFixedValue("delta" + std::to_string(L), chain.delta[L]);
  for (unsigned l = L; l >= 1; --l) {
    std::vector<ValueId> inputs = {grad, acts[l]};
    if (extra[l] >= 0)
      inputs.push_back(extra[l]);
    inputs.push_back(acts[l - 1]);
    NodeId b = g.addNode("B" + std::to_string(l), "rotor.backward",
                         chain.costB[l], Phase::Backward, inputs);
    grad = g.addOutput(b, "delta" + std::to_string(l - 1), chain.delta[l - 1]);
    g.node(b).workspaceBytes = chain.overheadB[l];
  }
  g.markOutput(grad);
  return g;
}
