//===- CheckmateModel.cpp - Checkmate's graph, plans and formulation ------===//
//
// The parts of Checkmate (../shared/seeds/003_76479834531ac838.txt, cited as
// "003") that the ILP and the LP rounding share: the graph the MILP is built
// on, stage plans and their execution plan (Algorithm 1, §4.9), and problem
// (9) of §4.7 as a matrix.
//
// How Checkmate's model maps onto TrainingGraph (docs/checkmate.md):
// - v_i is a node; M_i is the sum of its outputs' bytes (a node's outputs
//   are kept and recomputed together), C_i its cost. Fixed values (producer
//   -1) are the constant overhead of (2), outside the budget as in the
//   simulator.
// - Step outputs are never freed (and must be resident at the end), so a node
//   producing one is computed exactly once, in its own stage, and its output
//   bytes stay allocated from then on: a constant of (2) in later stages.
// - U_{t,k} is the memory after allocating v_k's outputs and before freeing
//   its dead inputs (003 Figure 4); FREE_{t,k,k} frees v_k itself when
//   nothing later in the stage uses it and it is not checkpointed (§4.8
//   drops those variables; the issue asks for them, and they matter for
//   nodes nobody reads). A node's workspace counts while it runs:
//   U_{t,k} + W_k R_{t,k} <= budget.
// - Memory is counted in units of the gcd of all sizes, the budget floored to
//   that unit (an unfloored budget made an open-source solver report
//   infeasibility on VGG16, issue 6).
//
//===----------------------------------------------------------------------===//

#include "CheckmateModel.h"

#include "remat/Structure/Structure.h"
#include "remat/Support/Debug.h"

#include "llvm/Support/Format.h"

#include "CoinPackedMatrix.hpp"
#include "OsiSolverInterface.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

using namespace remat;
using namespace remat::checkmate;

// -debug-only=remat-checkmate-model: the coarsening (which grouping, how
// many nodes), the model graph (unit, pinned nodes, memory), the size of
// the formulation, and why a plan of another solver is not a plan of the
// model (the warm starts of checkmate-ilp).
#define DEBUG_TYPE "remat-checkmate-model"

//===----------------------------------------------------------------------===//
// The model graph
//===----------------------------------------------------------------------===//

static bool producesStepOutput(const TrainingGraph &graph, NodeId node) {
  for (ValueId out : graph.node(node).outputs)
    if (graph.value(out).isOutput)
      return true;
  return false;
}

/// Groups ordered by their largest member, or nullopt when that order is not
/// topological for the quotient graph (a member read from outside by an
/// earlier-placed group).
static std::optional<std::vector<std::vector<NodeId>>>
orderGroups(const TrainingGraph &graph,
            std::vector<std::vector<NodeId>> groups) {
  for (std::vector<NodeId> &group : groups)
    std::sort(group.begin(), group.end());
  std::sort(groups.begin(), groups.end(),
            [](const std::vector<NodeId> &a, const std::vector<NodeId> &b) {
              return a.back() < b.back();
            });
  std::vector<int> position(graph.numNodes(), -1);
  for (size_t g = 0; g < groups.size(); ++g)
    for (NodeId member : groups[g])
      position[member] = static_cast<int>(g);
  for (size_t g = 0; g < groups.size(); ++g)
    for (NodeId member : groups[g])
      for (ValueId in : graph.node(member).inputs) {
        NodeId producer = graph.value(in).producer;
        if (producer >= 0 && position[producer] > static_cast<int>(g))
          return std::nullopt;
      }
  return groups;
}

/// Close sets of the structure hierarchy (seeds/001 §4, include/remat/
/// Structure), smallest first, each becoming one node, until at most
/// maxNodes remain: the "hidden sub-graphs as single nodes" of issue 6.
static std::optional<std::vector<std::vector<NodeId>>>
coarsenByHierarchy(const TrainingGraph &graph, unsigned maxNodes) {
  const size_t n = graph.numNodes();
  StructureAnalysis structure(graph);
  const Hierarchy &hierarchy = structure.hierarchy;
  std::vector<int> candidates;
  for (int id = 1; id < static_cast<int>(hierarchy.size()); ++id)
    if (!hierarchy.node(id).isLeaf() && hierarchy.node(id).numVertices() > 1)
      candidates.push_back(id);
  std::stable_sort(candidates.begin(), candidates.end(), [&](int a, int b) {
    return hierarchy.node(a).numVertices() < hierarchy.node(b).numVertices();
  });
  // Union-find over training-graph nodes.
  std::vector<NodeId> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::function<NodeId(NodeId)> find = [&](NodeId x) {
    return parent[x] == x ? x : parent[x] = find(parent[x]);
  };
  size_t count = n;
  for (int id : candidates) {
    if (count <= maxNodes)
      break;
    NodeId first = -1;
    for (Vertex v : hierarchy.vertices(id)) {
      NodeId node = structure.graph.nodeId(v);
      if (node < 0)
        continue;
      if (first < 0) {
        first = find(node);
        continue;
      }
      NodeId other = find(node);
      if (other != first) {
        parent[other] = first;
        --count;
      }
    }
  }
  if (count == n)
    return std::nullopt;
  std::vector<std::vector<NodeId>> groups;
  std::vector<int> groupOf(n, -1);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i) {
    NodeId r = find(i);
    if (groupOf[r] < 0) {
      groupOf[r] = static_cast<int>(groups.size());
      groups.emplace_back();
    }
    groups[groupOf[r]].push_back(i);
  }
  return orderGroups(graph, std::move(groups));
}

/// Chains of single-user forward nodes: a forward node whose outputs are all
/// read by exactly one node, a forward one, joins that reader; only a
/// group's last member is then read from outside.
static std::vector<std::vector<NodeId>>
coarsenChains(const TrainingGraph &graph) {
  const size_t n = graph.numNodes();
  std::vector<NodeId> joins(n, -1);
  for (NodeId a = 0; a < static_cast<NodeId>(n); ++a) {
    const Node &node = graph.node(a);
    if (node.phase != Phase::Forward || node.outputs.empty() ||
        producesStepOutput(graph, a))
      continue;
    NodeId reader = -1;
    bool single = true;
    for (ValueId out : node.outputs) {
      const std::vector<NodeId> &users = graph.value(out).users;
      if (users.size() != 1 || (reader >= 0 && users[0] != reader)) {
        single = false;
        break;
      }
      reader = users[0];
    }
    if (single && reader > a && graph.node(reader).phase == Phase::Forward)
      joins[a] = reader;
  }
  std::vector<NodeId> root(n);
  for (NodeId i = static_cast<NodeId>(n) - 1; i >= 0; --i)
    root[i] = joins[i] < 0 ? i : root[joins[i]];
  std::vector<std::vector<NodeId>> groups(n);
  for (NodeId i = 0; i < static_cast<NodeId>(n); ++i)
    groups[root[i]].push_back(i);
  groups.erase(std::remove_if(groups.begin(), groups.end(),
                              [](const auto &g) { return g.empty(); }),
               groups.end());
  // Groups placed at their roots, which read everything the group exports.
  return *orderGroups(graph, std::move(groups));
}

/// Coarsening, used only above maxNodes (issue 6, "Scale"). A group of
/// training-graph nodes is computed together, members in id order, and is
/// placed at its largest member; groups are accepted only when that order is
/// topological for the quotient graph. First the close sets of the structure
/// hierarchy, else chains of single-user forward nodes; then, while there are
/// too many groups, the two consecutive groups of the same phase with the
/// fewest members together merge (nothing lies between them in the order, so
/// the order stays topological).
static std::vector<std::vector<NodeId>>
coarsen(const TrainingGraph &graph, unsigned maxNodes, std::string &level) {
  const size_t n = graph.numNodes();
  std::vector<std::vector<NodeId>> groups;
  if (maxNodes == 0 || n <= maxNodes) {
    for (NodeId i = 0; i < static_cast<NodeId>(n); ++i)
      groups.push_back({i});
    level = "full graph";
    return groups;
  }
  // The hierarchy's close sets, unless merging them leaves far fewer nodes
  // than allowed: on shallow hierarchies (random layered DAGs) one close set
  // holds nearly everything, and a model of a handful of nodes can neither
  // recompute nor fit a budget (a 1000-node DAG became 3 nodes).
  std::optional<std::vector<std::vector<NodeId>>> byHierarchy =
      coarsenByHierarchy(graph, maxNodes);
  LLVM_DEBUG({
    llvm::dbgs() << "checkmate model: " << n << " nodes > max-nodes "
                 << maxNodes << ": coarsen; the hierarchy's close sets give ";
    if (byHierarchy)
      llvm::dbgs() << byHierarchy->size() << " nodes"
                   << (byHierarchy->size() >= maxNodes / 2
                           ? ""
                           : " (fewer than max-nodes / 2: rejected)");
    else
      llvm::dbgs() << "no topological grouping";
    llvm::dbgs() << "\n";
  });
  if (byHierarchy && byHierarchy->size() >= maxNodes / 2) {
    groups = std::move(*byHierarchy);
    level = "coarse graph: close sets of the structure hierarchy merged";
  } else {
    groups = coarsenChains(graph);
    level = "coarse graph: chains of single-user forward nodes merged";
  }
  if (groups.size() <= maxNodes)
    return groups;

  size_t before = groups.size();
  while (groups.size() > maxNodes) {
    size_t best = groups.size();
    size_t bestSize = SIZE_MAX;
    for (size_t g = 0; g + 1 < groups.size(); ++g) {
      if (graph.node(groups[g].front()).phase !=
          graph.node(groups[g + 1].front()).phase)
        continue;
      size_t size = groups[g].size() + groups[g + 1].size();
      if (size < bestSize) {
        bestSize = size;
        best = g;
      }
    }
    if (best == groups.size())
      break; // only phase boundaries left
    std::vector<NodeId> merged = groups[best];
    merged.insert(merged.end(), groups[best + 1].begin(),
                  groups[best + 1].end());
    std::sort(merged.begin(), merged.end());
    groups[best] = std::move(merged);
    groups.erase(groups.begin() + best + 1);
  }
  level += " (" + std::to_string(before) +
           " nodes), then consecutive same-phase nodes";
  LLVM_DEBUG(llvm::dbgs() << "checkmate model: " << before
                          << " groups merged pairwise down to " << groups.size()
                          << "\n");
  return groups;
}

ModelGraph checkmate::buildModelGraph(const TrainingGraph &graph,
                                      unsigned maxNodes) {
  ModelGraph model;
  model.graph = &graph;
  std::vector<std::vector<NodeId>> groups =
      coarsen(graph, maxNodes, model.level);

  const size_t numNodes = graph.numNodes(), numValues = graph.numValues();
  model.nodeOf.assign(numNodes, -1);
  for (size_t g = 0; g < groups.size(); ++g)
    for (NodeId member : groups[g])
      model.nodeOf[member] = static_cast<int>(g);

  // The memory unit: gcd of every size the model adds or subtracts.
  uint64_t unit = 0;
  for (const GraphValue &value : graph.getValues())
    if (!value.isFixed())
      unit = std::gcd(unit, value.bytes);
  for (const Node &node : graph.getNodes())
    unit = std::gcd(unit, node.workspaceBytes);
  model.unit = unit ? unit : 1;

  model.external.assign(numValues, 0);
  for (ValueId v = 0; v < static_cast<ValueId>(numValues); ++v) {
    const GraphValue &value = graph.value(v);
    if (value.isFixed())
      continue;
    bool external = value.isOutput;
    for (NodeId user : value.users)
      external |= model.nodeOf[user] != model.nodeOf[value.producer];
    model.external[v] = external;
  }

  model.nodes.resize(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    ModelNode &mn = model.nodes[g];
    mn.members = std::move(groups[g]);
    mn.phase = graph.node(mn.members.front()).phase;
    uint64_t memBytes = 0, outBytes = 0;
    std::vector<int> deps;
    for (NodeId member : mn.members) {
      const Node &node = graph.node(member);
      mn.cost += node.cost;
      for (ValueId out : node.outputs) {
        const GraphValue &value = graph.value(out);
        if (value.isOutput)
          outBytes += value.bytes;
        else if (model.external[out])
          memBytes += value.bytes;
      }
      for (ValueId in : node.inputs) {
        NodeId producer = graph.value(in).producer;
        if (producer >= 0 && model.nodeOf[producer] != static_cast<int>(g))
          deps.push_back(model.nodeOf[producer]);
      }
    }
    mn.mem = memBytes / model.unit;
    mn.memOut = outBytes / model.unit;
    mn.pinned = outBytes > 0;
    for (NodeId member : mn.members)
      mn.pinned |= producesStepOutput(graph, member);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    mn.deps = std::move(deps);

    // The transient peak of computing the members in order, internal values
    // freed after their last internal use (what executionPlan does), above
    // the node's own outputs: the node's workspace in the model.
    uint64_t live = 0, peak = 0;
    std::vector<std::pair<ValueId, size_t>> pendingUses;
    auto remaining = [&](ValueId v) -> size_t & {
      for (auto &entry : pendingUses)
        if (entry.first == v)
          return entry.second;
      pendingUses.push_back({v, graph.value(v).users.size()});
      return pendingUses.back().second;
    };
    for (NodeId member : mn.members) {
      const Node &node = graph.node(member);
      for (ValueId out : node.outputs)
        live += graph.value(out).bytes;
      peak = std::max(peak, live + node.workspaceBytes);
      for (ValueId in : node.inputs) {
        const GraphValue &value = graph.value(in);
        if (value.isFixed() || model.external[in] ||
            model.nodeOf[value.producer] != static_cast<int>(g))
          continue;
        if (--remaining(in) == 0)
          live -= value.bytes;
      }
      for (ValueId out : node.outputs)
        if (!model.external[out] && graph.value(out).users.empty())
          live -= graph.value(out).bytes;
    }
    uint64_t own = memBytes + outBytes;
    mn.work = peak > own ? (peak - own) / model.unit : 0;
  }
  for (size_t g = 0; g < model.nodes.size(); ++g)
    for (int dep : model.nodes[g].deps)
      model.nodes[dep].users.push_back(static_cast<int>(g));
  LLVM_DEBUG({
    size_t pinned = 0, edges = 0;
    uint64_t mem = 0, work = 0;
    for (const ModelNode &mn : model.nodes) {
      pinned += mn.pinned;
      edges += mn.deps.size();
      mem += mn.mem + mn.memOut;
      work = std::max(work, mn.work);
    }
    llvm::dbgs() << "checkmate model: " << model.size() << " nodes ("
                 << model.level << ") of " << numNodes << ", " << edges
                 << " edges, " << pinned
                 << " pinned (step outputs); memory unit " << model.unit
                 << " bytes, outputs " << mem << " units, largest workspace "
                 << work << " units\n";
  });
  return model;
}

uint64_t checkmate::leastPeakBound(const ModelGraph &model, int &node) {
  uint64_t best = 0, outputs = 0;
  node = -1;
  for (size_t k = 0; k < model.size(); ++k) {
    const ModelNode &mn = model.nodes[k];
    // Step outputs of earlier nodes (deps' included) are always resident.
    uint64_t need = outputs + mn.mem + mn.memOut + mn.work;
    for (int i : mn.deps)
      need += model.nodes[i].mem;
    if (need > best || node < 0) {
      best = need;
      node = static_cast<int>(k);
    }
    outputs += mn.memOut;
  }
  return best;
}

//===----------------------------------------------------------------------===//
// Stage plans and the execution plan
//===----------------------------------------------------------------------===//

StagePlan StagePlan::identity(size_t n) {
  StagePlan plan;
  plan.R.resize(n);
  plan.S.resize(n);
  for (size_t t = 0; t < n; ++t) {
    plan.R[t].assign(t + 1, 0);
    plan.S[t].assign(t + 1, 0);
    plan.R[t][t] = 1; // (8a)
  }
  return plan;
}

/// The least S that (1b) and (1c) allow given R: v_i is checkpointed into
/// stage t when it is not computed there and a node computed in stage t reads
/// it, or stage t + 1 needs it checkpointed.
static void deriveCheckpoints(const ModelGraph &model, StagePlan &plan) {
  const int n = static_cast<int>(model.size());
  for (int t = n - 1; t >= 1; --t)
    for (int i = 0; i < t; ++i) {
      bool need = false;
      if (!plan.R[t][i]) {
        need = t + 1 < n && plan.S[t + 1][i];
        for (int j : model.nodes[i].users)
          need |= j <= t && plan.R[t][j];
      }
      plan.S[t][i] = need;
    }
}

/// Drops computations that nothing in their stage reads and that the next
/// stage does not need checkpointed (§5.2: R set only where a constraint
/// needs it). Returns whether anything changed.
static bool pruneComputations(const ModelGraph &model, StagePlan &plan) {
  const int n = static_cast<int>(model.size());
  bool changed = false;
  for (int t = 0; t < n; ++t)
    for (int i = t - 1; i >= 0; --i) {
      if (!plan.R[t][i])
        continue;
      bool need = t + 1 < n && plan.S[t + 1][i];
      for (int j : model.nodes[i].users)
        need |= j <= t && plan.R[t][j];
      if (!need) {
        plan.R[t][i] = 0;
        changed = true;
      }
    }
  return changed;
}

void checkmate::normalise(const ModelGraph &model, StagePlan &plan) {
  const int n = static_cast<int>(model.size());
  // A node both checkpointed into a stage and computed in it is computed
  // for nothing: keep the checkpoint (the model counted both copies).
  for (int t = 1; t < n; ++t)
    for (int i = 0; i < t; ++i)
      if (plan.S[t][i])
        plan.R[t][i] = 0;
  do
    deriveCheckpoints(model, plan);
  while (pruneComputations(model, plan));
}

Schedule checkmate::executionPlan(const ModelGraph &model, StagePlan plan) {
  normalise(model, plan);
  const TrainingGraph &graph = *model.graph;
  const int n = static_cast<int>(model.size());
  const size_t numValues = graph.numValues();
  std::vector<char> resident(numValues, 0);
  for (size_t v = 0; v < numValues; ++v)
    resident[v] = graph.value(v).isFixed();
  // Last use of each value in the current stage (valid when stamp == t).
  std::vector<int> lastUse(numValues, -1), stamp(numValues, -1);

  Schedule schedule;
  std::vector<NodeId> sequence;
  for (int t = 0; t < n; ++t) {
    // Algorithm 1: a row-major scan of R; a model node's members in order.
    sequence.clear();
    for (int i = 0; i <= t; ++i)
      if (plan.R[t][i])
        sequence.insert(sequence.end(), model.nodes[i].members.begin(),
                        model.nodes[i].members.end());
    for (size_t p = 0; p < sequence.size(); ++p)
      for (ValueId in : graph.node(sequence[p]).inputs) {
        stamp[in] = t;
        lastUse[in] = static_cast<int>(p);
      }
    // Values that must survive the stage: step outputs, and the external
    // values of the nodes checkpointed into stage t + 1.
    auto keep = [&](ValueId v) {
      const GraphValue &value = graph.value(v);
      if (value.isFixed() || value.isOutput)
        return true;
      return model.external[v] && t + 1 < n &&
             plan.S[t + 1][model.nodeOf[value.producer]];
    };
    // §4.9: checkpoints unused in the stage are freed at its start.
    for (ValueId v = 0; v < static_cast<ValueId>(numValues); ++v)
      if (resident[v] && stamp[v] != t && !keep(v)) {
        schedule.steps.push_back(Step::free(v));
        resident[v] = 0;
      }
    for (size_t p = 0; p < sequence.size(); ++p) {
      const Node &node = graph.node(sequence[p]);
      schedule.steps.push_back(Step::compute(sequence[p]));
      for (ValueId out : node.outputs)
        resident[out] = 1;
      // FREE (5): inputs whose last use in the stage this was, then the
      // node's own outputs if nothing later in the stage reads them.
      for (ValueId in : node.inputs)
        if (lastUse[in] == static_cast<int>(p) && resident[in] && !keep(in)) {
          schedule.steps.push_back(Step::free(in));
          resident[in] = 0;
        }
      for (ValueId out : node.outputs)
        if ((stamp[out] != t || lastUse[out] <= static_cast<int>(p)) &&
            resident[out] && !keep(out)) {
          schedule.steps.push_back(Step::free(out));
          resident[out] = 0;
        }
    }
  }
  return schedule;
}

std::optional<StagePlan> checkmate::stagePlanOf(const ModelGraph &model,
                                                const Schedule &schedule) {
  auto reject = [](const char *why) -> std::optional<StagePlan> {
    LLVM_DEBUG(llvm::dbgs()
               << "checkmate model: not a plan of the model: " << why << "\n");
    (void)why;
    return std::nullopt;
  };
  const int n = static_cast<int>(model.size());
  std::vector<NodeId> computes;
  for (const Step &step : schedule.steps)
    if (step.isCompute())
      computes.push_back(step.id);
  // Model nodes: each one's members must run together, in order.
  std::vector<int> sequence;
  for (size_t p = 0; p < computes.size();) {
    if (computes[p] < 0 ||
        static_cast<size_t>(computes[p]) >= model.nodeOf.size())
      return reject("computes a node outside the graph");
    int g = model.nodeOf[computes[p]];
    for (NodeId member : model.nodes[g].members) {
      if (p >= computes.size() || computes[p] != member)
        return reject("splits a coarse node's members");
      ++p;
    }
    sequence.push_back(g);
  }
  // Stage t ends with the first computation of v_t (8a); within a stage the
  // computations are in increasing order (Algorithm 1's scan).
  StagePlan plan = StagePlan::identity(n);
  std::vector<char> computed(n, 0);
  int stage = 0;
  std::vector<int> pending;
  for (int g : sequence) {
    if (!pending.empty() && pending.back() >= g)
      return reject("recomputations out of order within a stage");
    if (!computed[g]) {
      if (g != stage)
        return reject("first computations not in node order (not "
                      "frontier-advancing)");
      for (int i : pending)
        plan.R[stage][i] = 1;
      pending.clear();
      computed[g] = 1;
      ++stage;
      continue;
    }
    if (model.nodes[g].pinned)
      return reject("recomputes a node with a step output");
    pending.push_back(g);
  }
  if (stage != n)
    return reject("does not compute every node");
  // Trailing recomputations serve nothing: dropped. S is derived from R.
  do
    deriveCheckpoints(model, plan);
  while (pruneComputations(model, plan));
  return plan;
}

//===----------------------------------------------------------------------===//
// The formulation
//===----------------------------------------------------------------------===//

Formulation::Formulation(const ModelGraph &model, uint64_t budgetUnits)
    : model(model), n(static_cast<int>(model.size())), budget(budgetUnits) {
  const int tri = n * (n + 1) / 2;
  rBase = 0;
  sBase = tri;                     // S_{t,i}, i < t (8b)
  uBase = sBase + n * (n - 1) / 2; // U_{t,k}, k <= t
  freeBase = uBase + tri;          // FREE_{t,i,k}
  int col = freeBase;
  freeCols.resize(tri);
  for (int t = 0; t < n; ++t)
    for (int k = 0; k <= t; ++k) {
      // FREE only for values with freeable memory: the others change
      // nothing in (3). DEPS[k] and k itself.
      auto &list = freeCols[t * (t + 1) / 2 + k];
      for (int i : model.nodes[k].deps)
        if (model.nodes[i].mem > 0)
          list.push_back({i, col++});
      if (model.nodes[k].mem > 0)
        list.push_back({k, col++});
    }
  numCols = col;
  numInts = numCols - tri;

  // Costs in a numerically safe scale: the mean positive cost is 1.
  double sum = 0;
  int count = 0;
  for (const ModelNode &node : model.nodes)
    if (node.cost > 0) {
      sum += node.cost;
      ++count;
    }
  costScale = count ? sum / count : 1;

  colLower.assign(numCols, 0);
  colUpper.assign(numCols, 1);
  obj.assign(numCols, 0);
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i <= t; ++i) {
      obj[colR(t, i)] = model.nodes[i].cost / costScale; // (1a)
      // A node producing a step output is never recomputed (its output is
      // never freed, and the simulator computes into no live buffer).
      if (i < t && model.nodes[i].pinned)
        colUpper[colR(t, i)] = 0;
    }
    colLower[colR(t, t)] = 1; // (8a)
    for (int k = 0; k <= t; ++k) {
      colLower[colU(t, k)] = 0;                           // U in R+
      colUpper[colU(t, k)] = static_cast<double>(budget); // U <= M_budget
    }
  }

  int row = 0;
  auto add = [&](int column, double value) {
    rowIdx.push_back(row);
    colIdx.push_back(column);
    elements.push_back(value);
  };
  auto close = [&](double lower, double upper) {
    rowLower.push_back(lower);
    rowUpper.push_back(upper);
    ++row;
  };
  const double inf = COIN_DBL_MAX;
  auto M = [&](int i) {
    return static_cast<double>(model.nodes[i].mem + model.nodes[i].memOut);
  };

  for (int t = 0; t < n; ++t) {
    // (1b): R_{t,j} <= R_{t,i} + S_{t,i} for (v_i, v_j) in E.
    for (int j = 0; j <= t; ++j)
      for (int i : model.nodes[j].deps) {
        add(colR(t, j), 1);
        add(colR(t, i), -1);
        add(colS(t, i), -1);
        close(-inf, 0);
      }
    // (1c): S_{t,i} <= R_{t-1,i} + S_{t-1,i}.
    if (t >= 1)
      for (int i = 0; i < t; ++i) {
        add(colS(t, i), 1);
        add(colR(t - 1, i), -1);
        if (i < t - 1)
          add(colS(t - 1, i), -1);
        close(-inf, 0);
      }
    // (2): U_{t,0} = constant + sum_i M_i S_{t,i} + R_{t,0} M_0 (Checkmate's
    // zero-based form: U_{t,0} is after computing v_0). The constant is the
    // step outputs allocated in earlier stages.
    double constant = 0;
    for (int g = 0; g < t; ++g)
      constant += static_cast<double>(model.nodes[g].memOut);
    add(colU(t, 0), 1);
    add(colR(t, 0), -M(0));
    for (int i = 0; i < t; ++i)
      if (model.nodes[i].mem > 0)
        add(colS(t, i), -static_cast<double>(model.nodes[i].mem));
    close(constant, constant);
    // (3), (4): U_{t,k} = U_{t,k-1} - mem_freed_t(v_{k-1}) + R_{t,k} M_k.
    for (int k = 1; k <= t; ++k) {
      add(colU(t, k), 1);
      add(colU(t, k - 1), -1);
      for (auto [i, column] : freeCols[t * (t + 1) / 2 + k - 1])
        add(column, static_cast<double>(model.nodes[i].mem));
      add(colR(t, k), -M(k));
      close(0, 0);
    }
    // The workspace while v_k runs: U_{t,k} + W_k R_{t,k} <= M_budget.
    for (int k = 0; k <= t; ++k)
      if (model.nodes[k].work > 0) {
        add(colU(t, k), 1);
        add(colR(t, k), static_cast<double>(model.nodes[k].work));
        workRows.emplace_back(t, k, row);
        close(-inf, static_cast<double>(budget));
      }
    // (7b), (7c) with num_hazards(t, i, k) = (1 - R_{t,k}) + S_{t+1,i} +
    // sum_{j in USERS[i], j > k} R_{t,j} (§4.5; S_{t+1} is 0 after the last
    // stage, and R_{t,j} is 0 for j > t by (8c)).
    for (int k = 0; k <= t; ++k)
      for (auto [i, column] : freeCols[t * (t + 1) / 2 + k]) {
        std::vector<int> later;
        for (int j : model.nodes[i].users)
          if (j > k && j <= t)
            later.push_back(j);
        double kappa = 1 + (t + 1 < n ? 1 : 0) + later.size();
        // (7b): 1 - FREE <= num_hazards.
        add(column, 1);
        add(colR(t, k), -1);
        if (t + 1 < n)
          add(colS(t + 1, i), 1);
        for (int j : later)
          add(colR(t, j), 1);
        close(0, inf);
        // (7c): kappa (1 - FREE) >= num_hazards.
        add(column, -kappa);
        add(colR(t, k), 1);
        if (t + 1 < n)
          add(colS(t + 1, i), -1);
        for (int j : later)
          add(colR(t, j), -1);
        close(1 - kappa, inf);
      }
  }
  LLVM_DEBUG(llvm::dbgs() << "checkmate model: formulation of " << n
                          << " nodes: " << numCols << " columns (" << numInts
                          << " integer), " << rowLower.size() << " rows, "
                          << elements.size() << " nonzeros; budget " << budget
                          << " units, cost scale "
                          << llvm::format("%g", costScale) << "\n");
}

void Formulation::load(OsiSolverInterface &solver) const {
  CoinPackedMatrix matrix(/*colordered=*/true, rowIdx.data(), colIdx.data(),
                          elements.data(),
                          static_cast<CoinBigIndex>(elements.size()));
  // The triplet constructor sizes the matrix by the largest indices seen.
  matrix.setDimensions(static_cast<int>(rowLower.size()),
                       static_cast<int>(numCols));
  solver.loadProblem(matrix, colLower.data(), colUpper.data(), obj.data(),
                     rowLower.data(), rowUpper.data());
  solver.setObjSense(1);
}

void Formulation::markIntegers(OsiSolverInterface &solver) const {
  for (int c = 0; c < uBase; ++c)
    solver.setInteger(c);
  for (int c = freeBase; c < static_cast<int>(numCols); ++c)
    solver.setInteger(c);
}

void Formulation::setBudget(OsiSolverInterface &solver,
                            double budgetUnits) const {
  for (int t = 0; t < n; ++t)
    for (int k = 0; k <= t; ++k)
      solver.setColUpper(colU(t, k), budgetUnits);
  for (auto [t, k, row] : workRows)
    solver.setRowUpper(row, budgetUnits);
}

double Formulation::costOf(const StagePlan &plan) const {
  double cost = 0;
  for (int t = 0; t < n; ++t)
    for (int i = 0; i <= t; ++i)
      if (plan.R[t][i])
        cost += model.nodes[i].cost;
  return cost;
}

std::optional<std::vector<double>>
Formulation::columnsOf(const StagePlan &plan) const {
  std::vector<double> x(numCols, 0);
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i <= t; ++i) {
      x[colR(t, i)] = plan.R[t][i];
      if (i < t)
        x[colS(t, i)] = plan.S[t][i];
      if (plan.R[t][i] && (x[colR(t, i)] > colUpper[colR(t, i)])) {
        LLVM_DEBUG(llvm::dbgs() << "checkmate model: plan rejected: stage " << t
                                << " recomputes pinned node " << i << "\n");
        return std::nullopt;
      }
    }
    if (!plan.R[t][t]) {
      LLVM_DEBUG(llvm::dbgs() << "checkmate model: plan rejected: stage " << t
                              << " does not compute node " << t << "\n");
      return std::nullopt;
    }
  }
  const double bound = static_cast<double>(budget);
  for (int t = 0; t < n; ++t) {
    // (5): FREE_{t,i,k} = R_{t,k} (1 - S_{t+1,i}) prod_{j > k} (1 - R_{t,j}).
    for (int k = 0; k <= t; ++k)
      for (auto [i, column] : freeCols[t * (t + 1) / 2 + k]) {
        bool free = plan.R[t][k] && !(t + 1 < n && plan.S[t + 1][i]);
        for (int j : model.nodes[i].users)
          free &= !(j > k && j <= t && plan.R[t][j]);
        x[column] = free;
      }
    // (2), (3) and the budget.
    double u = 0;
    for (int g = 0; g < t; ++g)
      u += static_cast<double>(model.nodes[g].memOut);
    for (int i = 0; i < t; ++i)
      u += plan.S[t][i] * static_cast<double>(model.nodes[i].mem);
    for (int k = 0; k <= t; ++k) {
      if (k > 0)
        for (auto [i, column] : freeCols[t * (t + 1) / 2 + k - 1])
          u -= x[column] * static_cast<double>(model.nodes[i].mem);
      u += plan.R[t][k] *
           static_cast<double>(model.nodes[k].mem + model.nodes[k].memOut);
      if (u < -0.5) {
        // A double free: not a plan of the model.
        LLVM_DEBUG(llvm::dbgs() << "checkmate model: plan rejected: a double "
                                   "free in stage "
                                << t << "\n");
        return std::nullopt;
      }
      x[colU(t, k)] = u;
      double work = plan.R[t][k] ? static_cast<double>(model.nodes[k].work) : 0;
      if (u + work > bound + 1e-9) {
        LLVM_DEBUG(llvm::dbgs()
                   << "checkmate model: plan rejected: stage " << t << " needs "
                   << llvm::format("%.0f", u + work) << " units at node " << k
                   << ", over the budget of " << budget << "\n");
        return std::nullopt;
      }
    }
  }
  return x;
}

StagePlan Formulation::planOf(const double *columns, double threshold) const {
  StagePlan plan = StagePlan::identity(n);
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < t; ++i) {
      plan.R[t][i] = columns[colR(t, i)] > threshold;
      plan.S[t][i] = columns[colS(t, i)] > threshold;
    }
  return plan;
}

std::vector<std::vector<double>>
Formulation::checkpointsOf(const double *columns) const {
  std::vector<std::vector<double>> s(n);
  for (int t = 0; t < n; ++t) {
    s[t].assign(t + 1, 0);
    for (int i = 0; i < t; ++i)
      s[t][i] = columns[colS(t, i)];
  }
  return s;
}
