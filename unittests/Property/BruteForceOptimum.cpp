//===- BruteForceOptimum.cpp - The cheapest plan by exhaustive search -----===//
//
// See BruteForceOptimum.h. States are packed into one 64-bit key: 20 bits of
// resident values, then 12 bits of computed nodes.
//
//===----------------------------------------------------------------------===//

#include "BruteForceOptimum.h"

#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

using namespace remat;
using namespace remat::property;

BruteForceResult remat::property::bruteForceOptimum(const TrainingGraph &graph,
                                                    uint64_t budget,
                                                    size_t maxStates) {
  BruteForceResult result;
  const size_t numNodes = graph.numNodes(), numValues = graph.numValues();
  if (numNodes > kBruteForceMaxNodes || numValues > kBruteForceMaxValues)
    return result;
  auto resident = [](uint64_t key, ValueId v) { return (key >> v) & 1; };
  auto computed = [](uint64_t key, NodeId n) { return (key >> (20 + n)) & 1; };
  const uint64_t allNodes = ((uint64_t(1) << numNodes) - 1) << 20;

  // Bytes held by the resident values of a key.
  auto bytesOf = [&](uint64_t key) {
    unsigned __int128 sum = 0;
    for (ValueId v = 0; v < ValueId(numValues); ++v)
      if (resident(key, v))
        sum += graph.value(v).bytes;
    return sum;
  };

  std::unordered_map<uint64_t, long double> best;
  using Item = std::pair<long double, uint64_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
  best[0] = 0;
  queue.push({0, 0});
  auto relax = [&](uint64_t key, long double cost) {
    auto it = best.find(key);
    if (it != best.end() && it->second <= cost)
      return;
    best[key] = cost;
    queue.push({cost, key});
  };
  while (!queue.empty()) {
    auto [cost, key] = queue.top();
    queue.pop();
    if (best[key] < cost)
      continue;
    if (best.size() > maxStates)
      return result;
    // Goal: every node computed; step outputs are never freed, so they are
    // all resident.
    if ((key & allNodes) == allNodes) {
      result.solved = true;
      result.optimum = cost;
      result.states = best.size();
      return result;
    }
    // Frees.
    for (ValueId v = 0; v < ValueId(numValues); ++v)
      if (resident(key, v) && !graph.value(v).isOutput)
        relax(key & ~(uint64_t(1) << v), cost);
    // Computes.
    unsigned __int128 held = bytesOf(key);
    for (NodeId n = 0; n < NodeId(numNodes); ++n) {
      const Node &node = graph.node(n);
      bool ok = true;
      for (ValueId in : node.inputs)
        ok &= graph.value(in).isFixed() || resident(key, in);
      for (ValueId out : node.outputs)
        ok &= !resident(key, out);
      if (!ok)
        continue;
      unsigned __int128 outBytes = 0;
      uint64_t next = key | (uint64_t(1) << (20 + n));
      for (ValueId out : node.outputs) {
        outBytes += graph.value(out).bytes;
        next |= uint64_t(1) << out;
      }
      // Each subset of the reuse pairs whose input can be updated in place.
      std::vector<ValueId> inPlace;
      for (auto [in, out] : node.reuses)
        if (!graph.value(in).isOutput && resident(key, in) &&
            std::find(inPlace.begin(), inPlace.end(), in) == inPlace.end())
          inPlace.push_back(in);
      for (unsigned mask = 0; mask < (1u << inPlace.size()); ++mask) {
        unsigned __int128 atStep = held + outBytes + node.workspaceBytes;
        uint64_t after = next;
        for (size_t k = 0; k < inPlace.size(); ++k)
          if ((mask >> k) & 1) {
            atStep -= graph.value(inPlace[k]).bytes;
            after &= ~(uint64_t(1) << inPlace[k]);
          }
        if (atStep <= budget)
          relax(after, cost + node.cost);
      }
    }
  }
  result.solved = true; // exhausted: no plan fits
  result.states = best.size();
  return result;
}
