//===- Solver.cpp - Solver registry and the judged run --------------------===//
//
// The registry every front end (remat-opt's `solver=` option, remat-solve, the
// benchmarks) picks solvers from, and runSolver, which judges a plan by the
// simulator rather than by the solver's own model (DESIGN.md §5, §6).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Solver.h"
#include "remat/Solvers/Chain.h"
#include "remat/Solvers/Checkmate.h"
#include "remat/Solvers/Evict.h"
#include "remat/Solvers/ExactSearch.h"
#include "remat/Solvers/HierarchySolvers.h"
#include "remat/Solvers/Join.h"
#include "remat/Solvers/Reorder.h"
#include "remat/Solvers/Rotor.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <algorithm>
#include <chrono>
#include <queue>
#include <unordered_map>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

using namespace remat;

// -debug-only=remat-solver: every judged run (runSolver): the solver, the
// budget, and the simulator's verdict on its plan. -debug-only=remat-auto:
// the portfolio's decisions: which solver runs with how much time, which is
// skipped and why, the bounds, and the winner.
#define DEBUG_TYPE "remat-solver"
#define AUTO_DEBUG(...) DEBUG_WITH_TYPE("remat-auto", __VA_ARGS__)

/// A Checkmate solve with what its report proves about Checkmate's model:
/// an optimum, an incumbent with CBC's (or the LP's) bound, or a budget the
/// model cannot meet. The model fixes the order of first computations
/// (seeds/003 §4.6) and may be a coarser graph, so all of it is the model's
/// (SolvedPlan::modelBound), never the graph's: a plan in another order can
/// be cheaper, or fit where the model has none (issue 24).
template <typename CheckmateSolve>
static llvm::Expected<SolvedPlan>
withCheckmateStatus(const TrainingGraph &graph, const SolverOptions &options,
                    CheckmateSolve solve) {
  CheckmateReport report;
  llvm::Expected<Schedule> schedule = solve(graph, options, &report);
  if (!schedule)
    return schedule.takeError();
  SolvedPlan plan(std::move(*schedule));
  if (report.level.empty() || llvm::StringRef(report.level).starts_with("none"))
    return plan; // no model was solved
  ModelBound bound;
  bound.model = "checkmate frontier-advancing stages in program order, " +
                report.level;
  if (report.modelNodes < report.graphNodes)
    bound.model += " (" + std::to_string(report.modelNodes) + " of " +
                   std::to_string(report.graphNodes) + " nodes)";
  bound.lowerBound = report.lowerBound;
  bound.optimal = report.status == CheckmateStatus::Optimal;
  bound.infeasible = report.status == CheckmateStatus::Infeasible;
  plan.modelBound = std::move(bound);
  return plan;
}

const std::vector<SolverInfo> &remat::allSolvers() {
  // Baselines first: the order is the one reports and tables list them in.
  static const std::vector<SolverInfo> solvers = {
      {"checkpoint-all",
       "keep every forward value until its last backward use (no "
       "recomputation)",
       [](const TrainingGraph &graph, const SolverOptions &)
           -> llvm::Expected<Schedule> { return solveCheckpointAll(graph); }},
      {"chen-sqrtn",
       "Chen et al.'s sqrt(n) checkpoints on the topological order of the "
       "forward nodes (Checkmate's linearized sqrt(n))",
       [](const TrainingGraph &graph, const SolverOptions &)
           -> llvm::Expected<Schedule> { return solveChenSqrtN(graph); }},
      // Chain solvers on the linearized forward graph (Chain.h).
      {"chen-greedy",
       "Chen et al.'s greedy on the topological order of the forward nodes "
       "(linearized greedy), searching its segment budget b",
       solveChenGreedy},
      // Checkmate's generalisation with articulation points as candidates
      // (HierarchySolvers.h).
      {"ap-sqrtn",
       "Chen et al.'s sqrt(n) with the articulation points of the forward "
       "graph as candidates (Checkmate's AP sqrt(n))",
       solveAPSqrtN},
      {"ap-greedy",
       "Chen et al.'s greedy with the articulation points as candidates "
       "(Checkmate's AP greedy), searching its segment budget b",
       solveAPGreedy},
      {"sequential",
       "PyTorch's checkpoint_sequential on the linearized forward graph, "
       "searching its number of segments (2 .. 2 sqrt(n))",
       solveSequential},
      {"hong-cubic",
       "Hong et al.'s checkpoint selection, O(n^3) (Alg. 3): least "
       "checkpoints + largest-segment memory on the linearized chain",
       solveHongCubic},
      {"hong-quadratic",
       "Hong et al.'s dynamic checkpoint selection, O(n^2) (Alg. 5): least "
       "peak in their PyTorch memory model on the linearized chain",
       solveHongQuadratic},
      {"hong-linear",
       "Hong et al.'s dynamic checkpoint selection, O(n) (Alg. 6): least "
       "peak in their PyTorch memory model on the linearized chain",
       solveHongLinear},
      {"feng-linear",
       "Feng & Huang's linear solver (Alg. 1, accessibility graph + shortest "
       "paths): least checkpoints + largest re-forward on the linearized chain",
       solveFengLinear},
      {"feng",
       "Feng & Huang's arbitrary-graph solver (Alg. 6): the linear solver on "
       "the hierarchy of close sets, expanding what exceeds the max term",
       solveFengArbitrary},
      // Budgeted solvers: least recomputation under the budget (Rotor.h).
      {"rotor",
       "rotor's optimal persistent sequence (F_all / F_ck / F_none, Theorem 1 "
       "with S memory slots, default 500) on the chain of stages, under the "
       "budget",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         RotorOptions rotorOptions;
         rotorOptions.slots = options.memorySlots;
         return solveRotor(graph, options, rotorOptions);
       }},
      {"revolve",
       "revolve for heterogeneous chains as rotor's evaluation converts it: "
       "only stage outputs stored, each stage re-run before its backward",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         RotorOptions rotorOptions;
         rotorOptions.slots = options.memorySlots;
         return solveRevolve(graph, options, rotorOptions);
       }},
      {"join",
       "Opt_join (Beaumont et al., Theorem 3) on join graphs: k chains "
       "meeting at the loss; an error on other graphs",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         return join::solveJoin(graph, options);
       },
       [](const TrainingGraph &graph) {
         llvm::Expected<join::JoinStructure> structure =
             join::detectJoinStructure(graph);
         if (structure)
           return true;
         llvm::consumeError(structure.takeError());
         return false;
       }},
      // Issue 22: no recomputation, the node order chosen for memory.
      {"reorder",
       "compute every node once in the order with the least peak found "
       "(Serenity's dynamic program on small graphs, beam search and local "
       "moves on large ones), every value freed after its last use",
       [](const TrainingGraph &graph, const SolverOptions &options)
           -> llvm::Expected<Schedule> { return solveReorder(graph, options); }},
      // Issue 24: recomputation on demand under the budget (Evict.h).
      {"evict",
       "the program's order (and reorder's) under the budget, evicting the "
       "resident value with the least recomputation cost per byte and per "
       "step to its next use and recomputing on demand (DTR's policy "
       "planned ahead)",
       solveEvict},
      {"evict-guided",
       "evict's planner guided by the residency bound's linear relaxation: "
       "values it runs again are evicted first, and the nodes it orders "
       "around a moment where memory binds start on that side",
       solveEvictGuidedByBound},
      // Optimal rematerialisation on the whole graph (Checkmate.h).
      {"checkmate-lp",
       "Checkmate's LP relaxation (CLP) with two-phase rounding, searching "
       "the rounding threshold and the budget allowance",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         return withCheckmateStatus(
             graph, options,
             [](const TrainingGraph &g, const SolverOptions &o,
                CheckmateReport *r) { return solveCheckmateLP(g, o, r); });
       }},
      {"checkmate-ilp",
       "Checkmate's MILP (frontier-advancing stages) solved with CBC, warm "
       "started from the other solvers' best plan",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         return withCheckmateStatus(
             graph, options,
             [](const TrainingGraph &g, const SolverOptions &o,
                CheckmateReport *r) { return solveCheckmateILP(g, o, r); });
       }},
      // Rotor's program over the hierarchy's blocks, each with options of
      // what it stores for its backward (Rotor.h, after Rockmate).
      {"blocks",
       "rotor's dynamic program over the blocks of the structure hierarchy, "
       "each block with the subsets of its stored values as options "
       "(after Rockmate), under the budget",
       [](const TrainingGraph &graph, const SolverOptions &options) {
         return solveBlocks(graph, options);
       }},
      // Exact search over every schedule (ExactSearch.h): small graphs only.
      {"exact",
       "best-first search (A*) over all schedules: optimal plans, or valid "
       "lower bounds when stopped (graphs of up to 256 nodes)",
       solveExact,
       [](const TrainingGraph &graph) {
         return graph.numNodes() <= kExactSearchMaxNodes;
       }},
      // The portfolio, last: it runs the solvers above.
      {"auto",
       "the portfolio: every solver above within the time limit; the plan "
       "the simulator finds cheapest within the budget (least peak without "
       "one)",
       [](const TrainingGraph &graph,
          const SolverOptions &options) -> llvm::Expected<SolvedPlan> {
         llvm::Expected<SolverResult> best = runPortfolio(graph, options);
         if (!best)
           return best.takeError();
         SolvedPlan plan(std::move(best->schedule));
         plan.status = best->status;
         plan.costLowerBound = best->lowerBound.value_or(0);
         return plan;
       }},
  };
  return solvers;
}

llvm::json::Value ModelBound::toJSON() const {
  return llvm::json::Object{{"model", model},
                            {"lower_bound", lowerBound},
                            {"optimal", optimal},
                            {"infeasible", infeasible}};
}

llvm::StringRef remat::planStatusName(PlanStatus status) {
  switch (status) {
  case PlanStatus::Optimal:
    return "optimal";
  case PlanStatus::Feasible:
    return "feasible";
  case PlanStatus::Infeasible:
    return "infeasible";
  case PlanStatus::NoPlan:
    return "no-plan";
  case PlanStatus::Heuristic:
    return "heuristic";
  }
  llvm_unreachable("unknown plan status");
}

/// Per node: what it holds while it runs, step outputs among its inputs
/// apart (counted with the ancestors that produce them), and the bytes of
/// the step outputs it produces.
static void nodeHoldings(const TrainingGraph &graph,
                         std::vector<uint64_t> &held,
                         std::vector<uint64_t> &stepOut) {
  const size_t n = graph.numNodes();
  held.assign(n, 0);
  stepOut.assign(n, 0);
  for (NodeId id = 0; id < NodeId(n); ++id) {
    const Node &node = graph.node(id);
    // TrainingGraph::verify bounds all bytes by 2^63-1: no sum here wraps.
    uint64_t bytes = node.workspaceBytes;
    for (ValueId in : node.inputs)
      if (!graph.value(in).isFixed() && !graph.value(in).isOutput)
        bytes += graph.value(in).bytes;
    for (ValueId out : node.outputs) {
      bytes += graph.value(out).bytes;
      if (graph.value(out).isOutput)
        stepOut[id] += graph.value(out).bytes;
    }
    // An in-place update hands the input's buffer to the output.
    for (auto [in, out] : node.reuses)
      if (!graph.value(in).isOutput)
        bytes -= std::min(bytes, graph.value(out).bytes);
    held[id] = bytes;
  }
}

std::vector<uint64_t> remat::nodeFootprints(const TrainingGraph &graph) {
  const size_t n = graph.numNodes();
  std::vector<uint64_t> held, stepOut;
  nodeHoldings(graph, held, stepOut);
  // The nodes producing step outputs, and for each node which of them are
  // its ancestors (bit sets; node ids are a topological order).
  std::vector<NodeId> producers;
  for (NodeId id = 0; id < NodeId(n); ++id)
    if (stepOut[id] > 0)
      producers.push_back(id);
  const size_t words = (producers.size() + 63) / 64;
  std::vector<uint64_t> ancestors(n * words, 0);
  std::vector<int> index(n, -1);
  for (size_t k = 0; k < producers.size(); ++k)
    index[producers[k]] = int(k);
  std::vector<uint64_t> footprint(n, 0);
  for (NodeId id = 0; id < NodeId(n); ++id) {
    // data(): no producer at all leaves `ancestors` empty (words == 0).
    uint64_t *mine = ancestors.data() + id * words;
    for (ValueId in : graph.node(id).inputs) {
      NodeId p = graph.value(in).producer;
      if (p < 0)
        continue;
      const uint64_t *up = ancestors.data() + p * words;
      for (size_t w = 0; w < words; ++w)
        mine[w] |= up[w];
      if (index[p] >= 0)
        mine[index[p] >> 6] |= uint64_t(1) << (index[p] & 63);
    }
    // Ancestors producing step outputs ran before this node and their
    // outputs are never freed.
    uint64_t before = 0;
    for (size_t w = 0; w < words; ++w)
      for (uint64_t bits = mine[w]; bits; bits &= bits - 1)
        before += stepOut[producers[w * 64 + __builtin_ctzll(bits)]];
    footprint[id] = held[id] + before;
  }
  return footprint;
}

uint64_t remat::peakLowerBound(const TrainingGraph &graph) {
  uint64_t bound = 0;
  for (uint64_t bytes : nodeFootprints(graph))
    bound = std::max(bound, bytes);
  uint64_t end = StepOutputsEndgame(graph).leastPeak(
      [](NodeId) { return false; }, [](ValueId) { return false; });
  return std::max(bound, end);
}

namespace {
/// A state of leastPeakBound's search: S (bits over the step-output nodes)
/// then H (bits over the values), in a fixed number of words.
constexpr size_t kEndgameKeyWords = 5;
using EndgameKey = std::array<uint64_t, kEndgameKeyWords>;
struct EndgameKeyHash {
  size_t operator()(const EndgameKey &k) const {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint64_t w : k) {
      h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h *= 0xbf58476d1ce4e5b9ull;
    }
    return size_t(h ^ (h >> 31));
  }
};
} // namespace

uint64_t remat::leastPeakBound(const TrainingGraph &graph, double seconds,
                               size_t maxStates) {
  const auto begin = std::chrono::steady_clock::now();
  auto outOfTime = [&] {
    return seconds > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         begin)
                   .count() >= seconds;
  };
  const uint64_t cheap = peakLowerBound(graph);
  std::vector<uint64_t> held, stepOut;
  nodeHoldings(graph, held, stepOut);
  std::vector<NodeId> producers;
  std::vector<int> producerIndex(graph.numNodes(), -1);
  for (NodeId id = 0; id < NodeId(graph.numNodes()); ++id)
    if (stepOut[id] > 0) {
      producerIndex[id] = int(producers.size());
      producers.push_back(id);
    }
  // Small graphs only: S in one word, H in the rest.
  if (producers.empty() || producers.size() > 64 ||
      graph.numValues() > 64 * (kEndgameKeyWords - 1))
    return cheap;
  const size_t words = (graph.numValues() + 63) / 64;
  auto setH = [&](EndgameKey &k, ValueId v, bool on) {
    if (on)
      k[1 + v / 64] |= uint64_t(1) << (v % 64);
    else
      k[1 + v / 64] &= ~(uint64_t(1) << (v % 64));
  };
  auto sBytes = [&](uint64_t sBits) {
    uint64_t bytes = 0;
    for (size_t k = 0; k < producers.size(); ++k)
      if ((sBits >> k) & 1)
        bytes += stepOut[producers[k]];
    return bytes;
  };
  // Adds the inputs `node` reads to H; false when one is produced by a
  // step-output node that runs later, which no schedule does.
  auto openInputs = [&](EndgameKey &k, NodeId node) {
    for (ValueId in : graph.node(node).inputs) {
      const GraphValue &value = graph.value(in);
      if (value.isFixed() || value.isOutput)
        continue;
      int pi = producerIndex[value.producer];
      if (pi >= 0 && !((k[0] >> pi) & 1))
        return false;
      setH(k, in, true);
    }
    return true;
  };
  // The bytes of H that the event's own footprint does not count.
  auto heldBesides = [&](const EndgameKey &k, NodeId node) {
    uint64_t bytes = 0;
    const Node &n = graph.node(node);
    for (size_t w = 0; w < words; ++w)
      for (uint64_t bits = k[1 + w]; bits; bits &= bits - 1) {
        ValueId v = ValueId(w * 64 + __builtin_ctzll(bits));
        if (!llvm::is_contained(n.inputs, v) &&
            !llvm::is_contained(n.outputs, v))
          bytes += graph.value(v).bytes;
      }
    return bytes;
  };

  std::unordered_map<EndgameKey, uint32_t, EndgameKeyHash> index;
  std::vector<EndgameKey> states;
  std::vector<uint64_t> keyOf; // the least largest requirement reaching it
  using Entry = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> open;
  auto reach = [&](const EndgameKey &next, uint64_t key) {
    auto [it, inserted] = index.try_emplace(next, uint32_t(states.size()));
    if (inserted) {
      states.push_back(next);
      keyOf.push_back(key);
    } else if (keyOf[it->second] <= key) {
      return;
    } else {
      keyOf[it->second] = key;
    }
    open.push({key, it->second});
  };
  EndgameKey start{};
  start[0] = producers.size() == 64 ? ~uint64_t(0)
                                    : (uint64_t(1) << producers.size()) - 1;
  reach(start, 0);
  size_t pops = 0;
  while (!open.empty()) {
    auto [key, id] = open.top();
    open.pop();
    if (keyOf[id] != key)
      continue; // reached with a lower key since
    const EndgameKey state = states[id];
    if (std::all_of(state.begin(), state.end(),
                    [](uint64_t w) { return w == 0; }))
      return std::max(cheap, key);
    if (states.size() > maxStates || ((++pops & 63) == 0 && outOfTime()))
      return std::max(cheap, key); // every sequence needs at least this
    const uint64_t before = sBytes(state[0]);
    // The last step-output node of S.
    for (size_t k = 0; k < producers.size(); ++k) {
      if (!((state[0] >> k) & 1))
        continue;
      NodeId y = producers[k];
      EndgameKey next = state;
      next[0] &= ~(uint64_t(1) << k);
      uint64_t need = before - stepOut[y] + held[y] + heldBesides(state, y);
      for (ValueId out : graph.node(y).outputs)
        setH(next, out, false);
      if (openInputs(next, y))
        reach(next, std::max(key, need));
    }
    // The last run of the producer of values in H (once per producer).
    llvm::SmallVector<NodeId, 8> tried;
    for (size_t w = 0; w < words; ++w)
      for (uint64_t bits = state[1 + w]; bits; bits &= bits - 1) {
        NodeId q = graph.value(ValueId(w * 64 + __builtin_ctzll(bits))).producer;
        if (producerIndex[q] >= 0 || llvm::is_contained(tried, q))
          continue; // a step-output node's run is the event above
        tried.push_back(q);
        EndgameKey next = state;
        for (ValueId out : graph.node(q).outputs)
          setH(next, out, false);
        uint64_t need = before + held[q] + heldBesides(state, q);
        if (openInputs(next, q))
          reach(next, std::max(key, need));
      }
  }
  // No sequence at all: not for a valid graph (checkpoint-all is a
  // schedule, and its events are a sequence).
  return cheap;
}

StepOutputsEndgame::StepOutputsEndgame(const TrainingGraph &graph)
    : graph(graph) {
  std::vector<uint64_t> allHeld, allStepOut;
  nodeHoldings(graph, allHeld, allStepOut);
  for (NodeId id = 0; id < NodeId(graph.numNodes()); ++id) {
    if (allStepOut[id] == 0)
      continue;
    producers.push_back(id);
    stepOut.push_back(allStepOut[id]);
    held.push_back(allHeld[id]);
    std::vector<Input> &mine = inputs.emplace_back();
    for (ValueId in : graph.node(id).inputs) {
      const GraphValue &value = graph.value(in);
      if (value.isFixed() || value.isOutput || value.producer < 0 ||
          allStepOut[value.producer] > 0 ||
          llvm::any_of(mine, [&](const Input &i) { return i.value == in; }))
        continue;
      mine.push_back({in, value.bytes, allHeld[value.producer]});
    }
  }
}

uint64_t
StepOutputsEndgame::leastPeak(llvm::function_ref<bool(NodeId)> done,
                              llvm::function_ref<bool(ValueId)> resident) const {
  uint64_t doneBytes = 0, pendingBytes = 0;
  llvm::SmallVector<size_t, 16> pending;
  for (size_t k = 0; k < producers.size(); ++k) {
    if (done(producers[k])) {
      doneBytes += stepOut[k];
    } else {
      pendingBytes += stepOut[k];
      pending.push_back(k);
    }
  }
  if (pending.empty())
    return 0;
  // Each sum below counts distinct values and one workspace, which
  // TrainingGraph::verify bounds by 2^63-1: none wraps.
  uint64_t least = UINT64_MAX;
  for (size_t p : pending) {
    // p last: every other step output is held while it runs.
    const uint64_t others = doneBytes + pendingBytes - stepOut[p];
    uint64_t need = others + held[p];
    for (const Input &in : inputs[p]) {
      // Held since the last run of its producer: nothing more to require
      // when it is resident now and no other step output is pending.
      if (pending.size() == 1 && resident(in.value))
        continue;
      // Its producer runs after every other step output is computed...
      uint64_t cheapest = others + in.producerHeld;
      // ...or the last node producing a step output before p runs while v
      // is held (its footprint counts v when it reads v).
      for (size_t y : pending) {
        if (y == p)
          continue;
        const std::vector<ValueId> &yIn = graph.node(producers[y]).inputs;
        uint64_t extra = llvm::is_contained(yIn, in.value) ? 0 : in.bytes;
        cheapest = std::min(cheapest, others - stepOut[y] + held[y] + extra);
      }
      need = std::max(need, cheapest);
    }
    least = std::min(least, need);
  }
  return least;
}

void remat::setPlanStatus(SolverResult &result, const TrainingGraph &graph,
                          std::optional<uint64_t> budget,
                          const SolvedPlan *plan) {
  result.lowerBound.reset();
  if (!budget) {
    result.status = PlanStatus::Heuristic;
    return;
  }
  const double baseCost = graph.totalCost();
  if (*budget < peakLowerBound(graph)) {
    result.status = PlanStatus::Infeasible;
    return;
  }
  // What the solver proved; Heuristic when nothing.
  PlanStatus claimed = plan && plan->status ? *plan->status
                                            : PlanStatus::Heuristic;
  if (!result.meetsBudget) {
    // The simulation overrides a claim of a plan within the budget.
    result.status = claimed == PlanStatus::Infeasible ? PlanStatus::Infeasible
                                                      : PlanStatus::NoPlan;
    return;
  }
  // Every plan computes every node at least once: one that computes each
  // exactly once is optimal, whatever solver found it.
  if (result.report.numRecomputations == 0 &&
      result.report.totalCost <= baseCost) {
    result.status = PlanStatus::Optimal;
    result.lowerBound = result.report.totalCost;
    return;
  }
  if (claimed == PlanStatus::Optimal || claimed == PlanStatus::Feasible) {
    result.status = claimed;
    result.lowerBound = std::max(baseCost, plan->costLowerBound);
    return;
  }
  result.status = PlanStatus::Heuristic;
}

const SolverInfo *remat::findSolver(llvm::StringRef name) {
  for (const SolverInfo &solver : allSolvers())
    if (solver.name == name)
      return &solver;
  return nullptr;
}

std::string remat::solverNames() {
  std::string names;
  for (const SolverInfo &solver : allSolvers()) {
    if (!names.empty())
      names += ", ";
    names += solver.name;
  }
  return names;
}

llvm::Error remat::checkTimeLimit(double seconds, llvm::StringRef name) {
  if (std::isfinite(seconds) && seconds >= 0)
    return llvm::Error::success();
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", seconds);
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      name + " must be a finite number of seconds, 0 or more (0: no time-"
             "bounded search), got " + text);
}

llvm::Error remat::checkMemorySlots(uint64_t slots, llvm::StringRef name) {
  if (slots >= 1 && slots <= kMaxMemorySlots)
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 name + " must be in [1, " +
                                     llvm::Twine(kMaxMemorySlots) + "], got " +
                                     llvm::Twine(slots));
}

llvm::Error remat::checkSolverOptions(const SolverOptions &options) {
  if (llvm::Error err = checkTimeLimit(options.timeLimitSeconds))
    return err;
  return checkMemorySlots(options.memorySlots);
}

bool remat::betterPlan(const SimulationReport &a, const SimulationReport &b,
                       std::optional<uint64_t> budget) {
  bool fitsA = budget && a.peakBytes <= *budget;
  bool fitsB = budget && b.peakBytes <= *budget;
  if (fitsA != fitsB)
    return fitsA;
  if (fitsA)
    return std::tie(a.totalCost, a.peakBytes) <
           std::tie(b.totalCost, b.peakBytes);
  return std::tie(a.peakBytes, a.totalCost) <
         std::tie(b.peakBytes, b.totalCost);
}

bool remat::solverApplies(const SolverInfo &solver,
                          const TrainingGraph &graph) {
  return !solver.applies || solver.applies(graph);
}

namespace {
/// The portfolio's state: the best plan any member simulated for the user's
/// budget (whatever budget the member was given), the proofs, the clock.
class Portfolio {
public:
  Portfolio(const TrainingGraph &graph, const SolverOptions &options)
      : graph(graph), options(options),
        begin(std::chrono::steady_clock::now()), bound(graph.totalCost()) {
    if (options.budget) {
      leastPeak = leastPeakBound(
          graph, leastPeakBoundSeconds(options.timeLimitSeconds));
      provenInfeasible = *options.budget < leastPeak;
    }
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         begin)
        .count();
  }
  /// Seconds left of the time limit (+infinity without one). The members
  /// are planned against 90% of it: a table fill or a CBC event may run a
  /// little past what it was given, and the caller still has to simulate
  /// and report the plan (densenet201 at 50% took 11.7 s with 10 s when
  /// planned against all of it).
  double remaining() const {
    if (options.timeLimitSeconds == 0)
      return std::numeric_limits<double>::infinity();
    return 0.9 * options.timeLimitSeconds - elapsed();
  }
  bool provenOptimal() const {
    return best && options.budget && best->meetsBudget &&
           best->report.totalCost <= bound;
  }

  /// Every simulated plan: kept when it is the best for the user's budget.
  void observe(const Schedule &schedule, const SimulationReport &report,
               llvm::StringRef origin) {
    if (!report.valid)
      return;
    if (best && !betterPlan(report, best->report, options.budget))
      return;
    SolverResult r;
    r.solver = origin.str();
    r.schedule = schedule;
    r.report = report;
    r.meetsBudget = !options.budget || report.peakBytes <= *options.budget;
    best = std::move(r);
  }
  /// The options a member runs with: the observer and `seconds` of time
  /// (0: none).
  SolverOptions sub(double seconds, std::optional<uint64_t> budget) {
    // A new member: the plans kept for pruning are its own (the exact
    // search's, which nothing prunes, are not left to the next member).
    keptPlans.clear();
    SolverOptions o = options;
    o.budget = budget;
    o.timeLimitSeconds = seconds;
    std::string *origin = &current;
    o.observer = [this, origin](const Schedule &schedule,
                                const SimulationReport &report) {
      observe(schedule, report, *origin);
      keepForPruning(schedule, report);
    };
    return o;
  }
  /// Runs a registered solver at `budget` with `seconds`; its plan and what
  /// it proves about all plans (never its model's claims) are kept.
  void run(const SolverInfo &solver, double seconds,
           std::optional<uint64_t> budget, llvm::StringRef label = "") {
    current = label.empty() ? solver.name : label.str();
    AUTO_DEBUG(llvm::dbgs() << "auto: run " << current << " with "
                            << llvm::format("%.2f", seconds) << " s"
                            << (budget != options.budget ? " (given budget "
                                                         : "");
               if (budget != options.budget) {
                 if (budget)
                   llvm::dbgs() << *budget << ")";
                 else
                   llvm::dbgs() << "none)";
               } llvm::dbgs()
               << "\n");
    llvm::Expected<SolverResult> result =
        runSolver(solver, graph, sub(seconds, budget));
    if (!result) {
      std::string error = llvm::toString(result.takeError());
      AUTO_DEBUG(llvm::dbgs()
                 << "auto: " << current << " failed: " << error << "\n");
      errors += (errors.empty() ? "" : "; ") + error;
      return;
    }
    observe(result->schedule, result->report, current);
    keepForPruning(result->schedule, result->report);
    pruneKeptPlans();
    // Proofs count only at the user's budget.
    if (budget == options.budget) {
      if (result->lowerBound)
        bound = std::max(bound, *result->lowerBound);
      provenInfeasible |= result->status == PlanStatus::Infeasible;
    }
  }
  /// A solver function outside the registry (rotor at another granularity).
  void runFunction(llvm::StringRef label, double seconds,
                   std::optional<uint64_t> budget,
                   llvm::function_ref<llvm::Expected<Schedule>(
                       const SolverOptions &)>
                       solve) {
    current = label.str();
    AUTO_DEBUG(llvm::dbgs() << "auto: run " << current << "\n");
    llvm::Expected<Schedule> schedule = solve(sub(seconds, budget));
    if (!schedule) {
      std::string error = llvm::toString(schedule.takeError());
      errors += (errors.empty() ? "" : "; ") + error;
      return;
    }
    SimulationReport report = simulate(graph, *schedule);
    observe(*schedule, report, current);
    keepForPruning(*schedule, report);
    pruneKeptPlans();
  }
  /// Keeps `schedule` when it is among the kKeptForPruning cheapest plans
  /// within the user's budget the current member simulated (one per cost).
  /// Which of a member's plans is cheapest once pruned is not which is
  /// cheapest before: on the transformer at 50%, rotor at 400 stages
  /// simulates its hierarchy staging's plan at 1.1560x (1.1189x pruned) and
  /// its per-node staging's at 1.1556x (1.0394x pruned); the latter was
  /// found only when it happened to be the one returned.
  void keepForPruning(const Schedule &schedule,
                      const SimulationReport &report) {
    if (!report.valid || !options.budget ||
        report.peakBytes > *options.budget)
      return;
    for (const auto &kept : keptPlans)
      if (kept.second.totalCost == report.totalCost)
        return;
    if (keptPlans.size() == kKeptForPruning &&
        keptPlans.back().second.totalCost <= report.totalCost)
      return;
    keptPlans.emplace_back(schedule, report);
    std::stable_sort(keptPlans.begin(), keptPlans.end(),
                     [](const auto &x, const auto &y) {
                       return x.second.totalCost < y.second.totalCost;
                     });
    if (keptPlans.size() > kKeptForPruning)
      keptPlans.pop_back();
  }
  /// Every kept plan of the member, pruned (observeWithoutNeedlessWork).
  void pruneKeptPlans() {
    std::vector<std::pair<Schedule, SimulationReport>> plans;
    plans.swap(keptPlans);
    for (const auto &plan : plans)
      observeWithoutNeedlessWork(plan.first, plan.second);
  }

  /// A member's plan within the user's budget without the recomputations
  /// it can do without (withoutNeedlessWork), with a tenth of the time
  /// left: the chain programs recompute whole stages, of which much fits
  /// (rotor's plan for the transformer at 50% with its own 10 s: 1.156x,
  /// 1.039x without them, in 13 ms). Not without a time limit, where only
  /// the winner is pruned.
  void observeWithoutNeedlessWork(const Schedule &schedule,
                                  const SimulationReport &report) {
    if (options.timeLimitSeconds == 0 || !options.budget)
      return;
    double seconds = std::max(0.01, 0.1 * remaining());
    double started = elapsed();
    auto pruned = withoutNeedlessWork(graph, schedule, report,
                                      *options.budget, seconds);
    AUTO_DEBUG(llvm::dbgs() << "auto: " << current << " pruned in "
                            << llvm::format("%.3f", elapsed() - started)
                            << " of " << llvm::format("%.3f", seconds)
                            << " s: cost "
                            << llvm::format("%g", report.totalCost) << " -> "
                            << (pruned ? llvm::formatv(
                                             "{0:E5}", pruned->second.totalCost)
                                             .str()
                                       : std::string("unchanged"))
                            << "\n");
    if (pruned)
      observe(pruned->first, pruned->second, current + ", pruned");
  }

  const TrainingGraph &graph;
  const SolverOptions &options;
  std::chrono::steady_clock::time_point begin;
  std::optional<SolverResult> best;
  /// The best proven lower bound on the cost of every plan within the
  /// budget: the graph's total cost, the residency bound, or a search over
  /// all plans' bound.
  double bound;
  bool provenInfeasible = false;
  /// leastPeakBound (with a budget; else 0), handed to the exact search.
  uint64_t leastPeak = 0;
  std::string errors, current;
  /// The current member's cheapest plans within the budget, to be pruned.
  static constexpr size_t kKeptForPruning = 4;
  std::vector<std::pair<Schedule, SimulationReport>> keptPlans;
};
} // namespace

llvm::Expected<SolverResult> remat::runPortfolio(const TrainingGraph &graph,
                                                 const SolverOptions &options) {
  Portfolio p(graph, options);
  // The chain programs run 20-30 times here on chains of the same lengths:
  // their tables' storage is reused from one run to the next.
  RotorTableReuse reuse;
  const std::optional<uint64_t> budget = options.budget;
  const bool noSearch = options.timeLimitSeconds == 0;
  AUTO_DEBUG({
    llvm::dbgs() << "auto: " << graph.numNodes() << " nodes, budget ";
    if (budget)
      llvm::dbgs() << *budget;
    else
      llvm::dbgs() << "none";
    llvm::dbgs() << ", time limit "
                 << llvm::format("%g", options.timeLimitSeconds) << " s\n";
  });
  // 0. A bound on every plan's cost at the budget that holds on graphs of
  //    any size (residencyLowerBound): polynomial, at most a tenth of the
  //    limit, at most 2 s (1 s with a limit of 0, where nothing searches).
  ResidencyGuide guide;
  if (budget && !p.provenInfeasible) {
    double seconds =
        residencyBoundSeconds(options.timeLimitSeconds, p.remaining());
    double residency = residencyLowerBound(graph, *budget, seconds,
                                           /*maxMoments=*/4,
                                           /*jointMoments=*/8,
                                           /*integerMoments=*/1, &guide);
    AUTO_DEBUG(llvm::dbgs() << "auto: residency bound "
                            << llvm::format("%g", residency) << " ("
                            << llvm::format("%.4f",
                                            residency / graph.totalCost())
                            << "x), " << llvm::format("%.3f", p.elapsed())
                            << " s\n");
    p.bound = std::max(p.bound, residency);
  }
  auto isSearch = [](llvm::StringRef name) {
    return name.starts_with("checkmate") || name == "exact";
  };
  auto isChainProgram = [](llvm::StringRef name) {
    return name == "rotor" || name == "revolve" || name == "blocks";
  };
  // The share of the time left a member may use.
  auto share = [&](double fraction) {
    return noSearch ? 0.0 : std::max(0.05, fraction * p.remaining());
  };

  // 1. The polynomial solvers, every one, at the budget: cheap, and their
  //    plans are the incumbents of everything after. The eviction planner
  //    (evict) is the best plan source at tight budgets on large graphs
  //    (resnet50 at 50%: 1.021x where the chain programs give 1.13x) and
  //    runs its budgets until its share is spent (0.1-0.5 s a run on
  //    densenet201): a quarter of the time left, first (after the others,
  //    on densenet201, whose other polynomial solvers take 7 of its 10 s,
  //    it had 0.2 s left and its plan, the best at 70%, came or not with
  //    the machine's load).
  std::vector<const SolverInfo *> polynomial;
  for (const SolverInfo &solver : allSolvers()) {
    llvm::StringRef name = solver.name;
    // evict-guided runs below, from the relaxation already solved.
    if (name == "auto" || name == "evict-guided" || isSearch(name) ||
        isChainProgram(name) || !solverApplies(solver, graph))
      continue;
    polynomial.push_back(&solver);
  }
  std::stable_partition(
      polynomial.begin(), polynomial.end(),
      [](const SolverInfo *solver) { return solver->name == "evict"; });
  for (const SolverInfo *solver : polynomial)
    p.run(*solver, share(solver->name == "evict" ? 0.25 : 0.5), budget);
  // The eviction planner guided by the bound's relaxation (solveEvictGuided:
  // its rerun shares and its orders of the unordered nodes): the
  // transformer at 50%, 1.0279x where every other member stays above
  // 1.039x. Its runs take what one evict run takes, at six budgets.
  if (!guide.empty())
    p.runFunction("evict-guided", share(0.1), budget,
                  [&](const SolverOptions &o) -> llvm::Expected<Schedule> {
                    llvm::Expected<SolvedPlan> plan =
                        solveEvictGuided(graph, o, guide);
                    if (!plan)
                      return plan.takeError();
                    return std::move(plan->schedule);
                  });

  // 2. The chain programs. On graphs of more than ~100 nodes the blocks of
  //    the structure hierarchy with their options come first (the default
  //    member there); the per-node chains are coarsened to 100 stages,
  //    where a table costs milliseconds. Finer chains (200, 400 stages) come
  //    after the retries below, while the time allows.
  const bool large = graph.numNodes() > 100;
  // The slowest chain program at 100 stages: an O(L^3 S) fill grows 8x per
  // doubling of L, which predicts the finer ones.
  double chainSeconds100 = 0;
  auto chainProgram = [&](llvm::StringRef label, unsigned maxStages,
                          bool blockOptions, bool allowFAllChains,
                          std::optional<uint64_t> given) {
    auto start = std::chrono::steady_clock::now();
    p.runFunction(label, share(0.9), given, [&](const SolverOptions &o) {
      RotorOptions ro;
      ro.slots = o.memorySlots;
      ro.maxStages = maxStages;
      ro.blockOptions = blockOptions;
      RotorDPOptions dp;
      dp.slots = o.memorySlots;
      dp.allowFAllChains = allowFAllChains;
      return solveRotorFamily(graph, o, ro, dp);
    });
    double took = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
    if (maxStages == 100)
      chainSeconds100 = std::max(chainSeconds100, took);
    return true;
  };
  const bool hasForward = !graph.forwardNodes().empty();
  const unsigned retryStages = large ? 100 : 400;
  if (hasForward) {
    if (large) {
      chainProgram("blocks@100", 100, true, true, budget);
      chainProgram("rotor@100", 100, false, true, budget);
      chainProgram("revolve@100", 100, false, false, budget);
    } else {
      for (const SolverInfo &solver : allSolvers())
        if (isChainProgram(solver.name) && solverApplies(solver, graph))
          p.run(solver, share(0.5), budget);
    }
  }

  // 3. The chain programs' models over-count memory, so the plan they give
  //    for a larger budget often still fits the user's: they run again at
  //    given budgets above it (bisection on the budget given, not on the
  //    one they must meet: the given budget whose plans still fit, and the
  //    first whose do not, bracket it), and once below it; every plan they
  //    simulate, at any budget, is judged against the user's by the
  //    observer.
  if (budget && !p.provenInfeasible && hasForward) {
    // True when the given budget's plans improved the best plan within the
    // user's budget.
    auto probe = [&](double factor) {
      double before = p.best && p.best->meetsBudget
                          ? p.best->report.totalCost
                          : std::numeric_limits<double>::infinity();
      uint64_t given = uint64_t(double(*budget) * factor);
      std::string at = "@" + std::to_string(retryStages) + " given " +
                       llvm::formatv("{0:F3}", factor).str() + "x";
      chainProgram("rotor" + at, retryStages, false, true, given);
      chainProgram("blocks" + at, retryStages, true, true, given);
      return p.best && p.best->meetsBudget && p.best->report.totalCost < before;
    };
    auto timeFor = [&] {
      return noSearch || 2 * chainSeconds100 < 0.4 * p.remaining() ||
             !large;
    };
    // Below it too: a plan for a tighter budget leaves room that dropping
    // its needless recomputations fills (observeWithoutNeedlessWork; the
    // transformer at 50%: blocks given 0.9x, 1.128x, is 1.041x without
    // them, the best plan of any member).
    if (timeFor())
      probe(0.9);
    double lo = 1.0, hi = 0;
    for (double factor : {1.1, 1.25, 1.5, 2.0}) {
      if (!timeFor())
        break;
      if (probe(factor))
        lo = factor;
      else if (hi == 0)
        hi = factor;
    }
    for (int step = 0; step < 3 && hi > lo && timeFor(); ++step) {
      double mid = 0.5 * (lo + hi);
      (probe(mid) ? lo : hi) = mid;
    }
  }

  // Finer chains while the time allows: each coarsens its stages so that
  // its first table fits half the time it is given and skips the chains
  // that would not end in time (RotorSearch.cpp), so each may run while a
  // second is left. rotor's first: on the transformer at 50% its per-node
  // chain at 220 stages gives the best plan (1.0394x pruned), while blocks'
  // finer chains, 2 s each there, give blocks@100's plan again.
  if (large && hasForward)
    for (bool blockOptions : {false, true})
      for (unsigned stages : {200u, 400u}) {
        if (graph.forwardNodes().size() <= stages / 2 || p.provenOptimal())
          break;
        std::string at = "@" + std::to_string(stages);
        if (noSearch || p.remaining() > 1)
          chainProgram((blockOptions ? "blocks" : "rotor") + at, stages,
                       blockOptions, true, budget);
      }

  // 4. The exact search over every plan on small graphs (ExactSearch.h),
  //    with the best plan so far as its incumbent: an optimum, or a valid
  //    bound on every plan. It gets most of the time left: Checkmate's
  //    searches after it only look for plans in program order (their
  //    optimum bounds nothing), while the exact search's bound rises with
  //    its time (siamese at 60%: 1.108x after 3 s, 1.143x after 6 s, 1.178x
  //    after 7.5 s; auto's plan there, 1.215x, is proven optimal by the
  //    search alone in 27 s).
  if (budget && !noSearch && !p.provenOptimal() && !p.provenInfeasible &&
      graph.numNodes() <= kExactAutoNodes && p.remaining() > 0.1) {
    p.current = "exact";
    ExactSearchOptions search;
    if (p.best)
      search.incumbent = p.best->schedule;
    search.leastPeak = p.leastPeak;
    SolverOptions o = p.sub(std::max(0.1, 0.85 * p.remaining()), budget);
    AUTO_DEBUG(llvm::dbgs() << "auto: run exact with "
                            << llvm::format("%.2f", o.timeLimitSeconds)
                            << " s\n");
    ExactSearchReport report;
    llvm::Expected<SolvedPlan> plan =
        solveExactSearch(graph, o, search, &report);
    if (plan) {
      p.observe(plan->schedule, simulate(graph, plan->schedule), "exact");
      p.bound = std::max(p.bound, report.lowerBound);
      p.provenInfeasible |= report.infeasible;
    } else {
      llvm::consumeError(plan.takeError());
      p.provenInfeasible |= report.infeasible;
    }
    AUTO_DEBUG(llvm::dbgs() << "auto: exact: "
                            << (report.optimal      ? "optimal"
                                : report.infeasible ? "infeasible"
                                                    : report.stoppedBy)
                            << ", bound " << llvm::format("%g", report.lowerBound)
                            << "\n");
  }

  // 5. Checkmate's searches with the time that remains, each only when it
  //    covers its setup (building and solving the LP of a T-node model does
  //    not stop at the time limit; 1.5e-4 s per model variable, T^2 of them,
  //    measured on a 2-core VM). Their optimum is their model's: it counts
  //    here only as a plan.
  constexpr double kSearchSecondsPerVariable = 1.5e-4;
  for (const SolverInfo &solver : allSolvers()) {
    llvm::StringRef name = solver.name;
    if (!name.starts_with("checkmate") || noSearch || !solverApplies(solver, graph))
      continue;
    if (p.provenOptimal()) {
      AUTO_DEBUG(llvm::dbgs() << "auto: '" << p.best->solver
                              << "' meets the proven bound "
                              << llvm::format("%g", p.bound)
                              << ": optimal, the rest is skipped\n");
      break;
    }
    if (p.provenInfeasible) {
      AUTO_DEBUG(llvm::dbgs() << "auto: skip " << name
                              << ": the budget is proven infeasible\n");
      continue;
    }
    double modelNodes =
        std::min<double>(graph.numNodes(), CheckmateOptions().maxNodes);
    double setup = kSearchSecondsPerVariable * modelNodes * modelNodes;
    bool lp = name == "checkmate-lp";
    double left = p.remaining();
    double time = lp ? 0.3 * left : 0.9 * left;
    if (left < (lp ? 0.4 : 0.6) * setup || time < 0.5) {
      AUTO_DEBUG(llvm::dbgs() << "auto: skip " << name << ": "
                              << llvm::format("%.2f", left)
                              << " s left, its setup needs about "
                              << llvm::format("%.2f", setup) << " s\n");
      continue;
    }
    p.run(solver, time, budget);
  }

  if (!p.best)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "auto: no solver produced a plan: " +
                                       p.errors);
  // 6. The winner without the recomputations it can do without
  //    (withoutNeedlessWork), within the user's budget or, where no plan
  //    meets one, its own peak; with the time up to the limit (the tenth
  //    the members were not planned against).
  if (!noSearch || graph.numNodes() <= 1024) {
    SolverResult &winner = *p.best;
    uint64_t limit = budget && winner.meetsBudget ? *budget
                                                  : winner.report.peakBytes;
    double seconds =
        noSearch ? 0.0
                 : std::max(0.01, 0.97 * options.timeLimitSeconds - p.elapsed());
    if (auto pruned = withoutNeedlessWork(graph, winner.schedule,
                                          winner.report, limit, seconds)) {
      AUTO_DEBUG(llvm::dbgs() << "auto: the winner without needless "
                                 "recomputations: cost "
                              << llvm::format("%g", winner.report.totalCost)
                              << " -> "
                              << llvm::format("%g", pruned->second.totalCost)
                              << "\n");
      winner.schedule = std::move(pruned->first);
      winner.report = std::move(pruned->second);
      if (!llvm::StringRef(winner.solver).ends_with(", pruned"))
        winner.solver += ", pruned";
    }
  }
  SolverResult best = std::move(*p.best);
  AUTO_DEBUG(llvm::dbgs() << "auto: winner " << best.solver << " (peak "
                          << best.report.peakBytes << ", cost "
                          << llvm::format("%g", best.report.totalCost)
                          << "); bound " << llvm::format("%g", p.bound)
                          << (p.provenInfeasible
                                  ? ", budget proven infeasible"
                                  : "")
                          << ", " << llvm::format("%.3f", p.elapsed())
                          << " s\n");
  best.solver = "auto(" + best.solver + ")";
  best.solveSeconds = p.elapsed();
  // The portfolio's status: what was proven about every plan (the total
  // cost, the exact search's bound or optimum, an infeasibility proof).
  SolvedPlan claim(Schedule{});
  claim.costLowerBound = p.bound;
  if (p.provenInfeasible)
    claim.status = PlanStatus::Infeasible;
  else if (budget && best.meetsBudget && best.report.totalCost <= p.bound)
    claim.status = PlanStatus::Optimal;
  else if (p.bound > graph.totalCost())
    claim.status = PlanStatus::Feasible;
  setPlanStatus(best, graph, budget, &claim);
  return std::move(best);
}

/// Every plan loses the computations whose results nothing reads
/// (withoutDeadComputes): a chain solver mapped to a graph (rotor, revolve)
/// can recompute a value for a backward node that then reads another
/// instance; the compiled program would fill a buffer for nothing. Costs and
/// peaks only go down; every tool reports the same plan.
static void dropDeadComputes(const TrainingGraph &graph,
                             SolverResult &result) {
  size_t removed = 0;
  Schedule pruned = withoutDeadComputes(graph, result.schedule, &removed);
  if (removed == 0)
    return;
  SimulationReport report = simulate(graph, pruned);
  if (!report.valid)
    return;
  LLVM_DEBUG(llvm::dbgs() << "solver '" << result.solver << "': " << removed
                          << " dead computations removed\n");
  result.schedule = std::move(pruned);
  result.report = std::move(report);
}

llvm::Expected<StartOrder> remat::parseStartOrder(llvm::StringRef value,
                                                  llvm::StringRef name) {
  std::optional<StartOrder> order =
      llvm::StringSwitch<std::optional<StartOrder>>(value.trim())
          .Case("program", StartOrder::Program)
          .Case("reordered", StartOrder::Reordered)
          .Case("best", StartOrder::Best)
          .Default(std::nullopt);
  if (!order)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   name + " must be 'program', 'reordered' or "
                                          "'best', not '" +
                                       value + "'");
  return *order;
}

llvm::StringRef remat::startOrderName(StartOrder order) {
  switch (order) {
  case StartOrder::Program:
    return "program";
  case StartOrder::Reordered:
    return "reordered";
  case StartOrder::Best:
    return "best";
  }
  llvm_unreachable("unknown start order");
}

/// runSolver from another start order than the program's (StartOrder).
static llvm::Expected<SolverResult>
runSolverFromStartOrder(const SolverInfo &solver, const TrainingGraph &graph,
                        const SolverOptions &options) {
  SolverOptions fromOrder = options;
  fromOrder.startOrder = StartOrder::Program;
  if (options.startOrder == StartOrder::Reordered)
    return solveOnReorderedGraph(graph, solver, fromOrder);
  // Best: both orders, half the time each, the better plan.
  if (fromOrder.timeLimitSeconds > 0)
    fromOrder.timeLimitSeconds /= 2;
  llvm::Expected<SolverResult> program = runSolver(solver, graph, fromOrder);
  if (!program)
    return program.takeError();
  llvm::Expected<SolverResult> reordered =
      solveOnReorderedGraph(graph, solver, fromOrder);
  if (!reordered) {
    LLVM_DEBUG(llvm::dbgs() << "solver '" << solver.name
                            << "' on the reordered graph failed: "
                            << llvm::toString(reordered.takeError()) << "\n");
    llvm::consumeError(reordered.takeError());
    return program;
  }
  double seconds = program->solveSeconds + reordered->solveSeconds;
  bool takeReordered =
      betterPlan(reordered->report, program->report, options.budget);
  LLVM_DEBUG(llvm::dbgs() << "solver '" << solver.name
                          << "' start-order=best: program order peak "
                          << program->report.peakBytes << " cost "
                          << program->report.totalCost << ", reordered peak "
                          << reordered->report.peakBytes << " cost "
                          << reordered->report.totalCost << ": keeps the "
                          << (takeReordered ? "reordered" : "program")
                          << " order's plan\n");
  SolverResult &kept = takeReordered ? *reordered : *program;
  kept.solveSeconds = seconds;
  return std::move(kept);
}

llvm::Expected<SolverResult> remat::runSolver(const SolverInfo &solver,
                                              const TrainingGraph &graph,
                                              const SolverOptions &options) {
  if (llvm::Error err = checkSolverOptions(options))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "solver '" + solver.name +
                                       "': " + llvm::toString(std::move(err)));
  if (options.startOrder != StartOrder::Program && solver.name != "auto" &&
      solver.name != "none" && solver.name != "reorder")
    return runSolverFromStartOrder(solver, graph, options);
  // The portfolio reports which solver won.
  if (solver.name == "auto") {
    llvm::Expected<SolverResult> result = runPortfolio(graph, options);
    if (result)
      dropDeadComputes(graph, *result);
    return result;
  }
  // Solvers index the graph without checks; a malformed graph must be an
  // error here rather than a crash inside one of them.
  if (llvm::Error err = graph.verify())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "solver '" + solver.name +
            "': invalid graph: " + llvm::toString(std::move(err)));

  auto begin = std::chrono::steady_clock::now();
  llvm::Expected<SolvedPlan> plan = solver.fn(graph, options);
  auto end = std::chrono::steady_clock::now();
  if (!plan)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "solver '" + solver.name + "': " +
                                       llvm::toString(plan.takeError()));

  SolverResult result;
  result.solver = solver.name;
  result.solveSeconds = std::chrono::duration<double>(end - begin).count();
  result.schedule = std::move(plan->schedule);
  result.report = simulate(graph, result.schedule);
  // An invalid plan is a solver bug: never hand it on as a result.
  if (!result.report.valid)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "solver '" + solver.name +
            "' produced an invalid plan: " + result.report.error);
  dropDeadComputes(graph, result);
  result.meetsBudget =
      !options.budget || result.report.peakBytes <= *options.budget;
  result.modelBound = plan->modelBound;
  setPlanStatus(result, graph, options.budget, &*plan);
  LLVM_DEBUG({
    llvm::dbgs() << "solver '" << solver.name << "': budget ";
    if (options.budget)
      llvm::dbgs() << *options.budget;
    else
      llvm::dbgs() << "none";
    llvm::dbgs() << ": peak " << result.report.peakBytes << ", cost "
                 << llvm::format("%g", result.report.totalCost) << " ("
                 << result.report.numRecomputations << " recomputations), "
                 << (result.meetsBudget ? "meets the budget"
                                        : "over the budget")
                 << ", " << planStatusName(result.status) << ", "
                 << llvm::format("%.4f", result.solveSeconds) << " s\n";
  });
  return result;
}
