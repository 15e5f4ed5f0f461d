//===- ResidencyBound.cpp - A cost bound from what must stay resident -----===//
//
// residencyLowerBound (Solver.h): a lower bound on the cost of every plan of
// the graph within a budget, valid for any order, recomputation and frees,
// on graphs of any size (issue 24: above the exact search's reach the only
// bound was the graph's total cost).
//
// The argument, for one node x (the moment x is computed for the first
// time, t):
// - every ancestor a of x ran before t; every descendant of x runs after t;
//   a node unordered with x ran for the first time before t or after it
//   (before_z = 1 or 0), and what ran before t is closed under producers
//   (before_z <= before_p);
// - a value v produced before t (by an ancestor, or by an unordered node
//   with before_p) and read after t (by a descendant; by an unordered node
//   u at its first run, without before_u, or at a rerun, r_u) must be
//   resident at t (kept), or its producer must run again after t (r = 1):
//   keep_v + r_p >= before_p - before_u + r_u; a step output produced
//   before t is resident (never freed);
// - a node recomputed after t ran before t and needs its inputs then: each
//   input w was resident at t, or its producer runs again after t too;
// - at t, x holds its footprint (peakLowerBound's: its inputs, outputs,
//   workspace and the step outputs of its ancestors, never freed) and the
//   kept values, all within the budget.
// Every plan computes every node once, plus at least the recomputations
// after t: cost >= total cost + min sum_a cost(a) r_a over the 0/1 points
// of these constraints, and over their linear relaxation (solved with
// COIN-OR CLP; the bound is read off its row duals, valid whatever their
// accuracy), which is what is used. Each x gives a valid bound; the best
// of a few is reported, and the x of the highest relaxation is also solved
// as an integer program (COIN-OR CBC's best bound, CbcBound.h). A cheaper relaxation of the same (no chain
// constraints, no unordered nodes, only the values the ancestors leave for
// the descendants: a fractional knapsack cover) ranks every x first, and so
// does the memory at x in the program's own order (one order of the
// unordered nodes: where it is far above the budget, every order may be).
// The unordered nodes matter where the ancestors' values alone fit: on
// mobilenet_v2 at 80% of its peak every knapsack cover is empty, yet no
// order of the nodes keeps every moment within the budget (a min cut over
// the sets that can run before t says 98.4% of the peak at least), and the
// plans' 0.36% of recomputation is 0.001% above this bound. Several moments
// also bound together: each has its own variables, and a node's cost counts
// once, through R_a >= r_a at every moment (a plan that runs a again after
// any moment runs it at least twice), or twice where a value of a must be
// made again between two moments and again after the second (R_a counts
// reruns; solveRelaxation).
//
// The optimum of the highest relaxation solved is also handed out
// (ResidencyGuide, Solver.h): the eviction planner follows it
// (evict-guided, Evict.h).
//
// Nothing here is from the seed papers: it is a relaxation of the
// simulator's rules (DESIGN.md §5) written for this project, checked
// against the brute-force optimum (unittests/Property/BoundsTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "CbcBound.h"

#include "remat/Solvers/Solver.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include "CoinPackedVector.hpp"
#include "OsiClpSolverInterface.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

using namespace remat;

// -debug-only=remat-residency-bound: per candidate moment, the knapsack
// estimate and the LP value.
#define DEBUG_TYPE "remat-residency-bound"

namespace {

/// What one moment (node x's first computation) asks of a plan.
struct Moment {
  NodeId node = -1;
  /// Bytes the kept values may take: budget - footprint(x).
  uint64_t capacity = 0;
  /// The fractional knapsack cover's value (a bound by itself).
  double estimate = 0;
  /// Bytes over the budget at x's step in the program's order, every value
  /// freed after its last reader (ranks the moments only).
  uint64_t programExcess = 0;
};

class ResidencyBound {
public:
  ResidencyBound(const TrainingGraph &graph, uint64_t budget)
      : graph(graph), budget(budget), n(graph.numNodes()),
        ancestors(n, llvm::BitVector(n)), descendants(n, llvm::BitVector(n)) {
    for (NodeId id = 0; id < NodeId(n); ++id)
      for (ValueId in : graph.node(id).inputs)
        if (NodeId p = graph.value(in).producer; p >= 0) {
          ancestors[id].set(p);
          ancestors[id] |= ancestors[p];
        }
    for (NodeId id = NodeId(n) - 1; id >= 0; --id)
      for (ValueId out : graph.node(id).outputs)
        for (NodeId user : graph.value(out).users) {
          descendants[id].set(user);
          descendants[id] |= descendants[user];
        }
    footprint = nodeFootprints(graph);
  }

  /// Whether `v` must be resident at x's moment anyway (x's operands and
  /// results, and step outputs, which are never freed): no variable.
  bool held(NodeId x, ValueId v) const {
    const GraphValue &value = graph.value(v);
    if (value.producer == x ||
        (value.isOutput && ancestors[x].test(value.producer)))
      return true;
    const std::vector<ValueId> &inputs = graph.node(x).inputs;
    return std::find(inputs.begin(), inputs.end(), v) != inputs.end();
  }
  /// A value produced before x that a node after x reads.
  bool readAfter(NodeId x, ValueId v) const {
    for (NodeId user : graph.value(v).users)
      if (descendants[x].test(user))
        return true;
    return false;
  }

  /// Per node, the bytes resident while it runs in the program's order
  /// (outputs allocated before it, each value freed after its last reader;
  /// step outputs never), with its workspace.
  std::vector<uint64_t> programOrderMemory() const {
    std::vector<NodeId> lastReader(graph.numValues(), -1);
    for (NodeId id = 0; id < NodeId(n); ++id)
      for (ValueId in : graph.node(id).inputs)
        lastReader[in] = id;
    std::vector<uint64_t> memory(n, 0);
    uint64_t resident = 0;
    for (NodeId id = 0; id < NodeId(n); ++id) {
      const Node &node = graph.node(id);
      for (ValueId out : node.outputs)
        resident += graph.value(out).bytes;
      memory[id] = resident + node.workspaceBytes;
      auto release = [&](ValueId v) {
        const GraphValue &value = graph.value(v);
        if (!value.isFixed() && !value.isOutput && lastReader[v] == id) {
          resident -= value.bytes;
          lastReader[v] = -1; // once, however often it is read
        }
      };
      for (ValueId in : node.inputs)
        release(in);
      for (ValueId out : node.outputs)
        if (graph.value(out).users.empty() && !graph.value(out).isOutput)
          resident -= graph.value(out).bytes;
    }
    return memory;
  }

  /// The fractional knapsack cover at x: the bytes read after x that do not
  /// fit next to the footprint, freed at the least cost per byte.
  std::optional<Moment> estimate(NodeId x) const {
    if (footprint[x] > budget)
      return std::nullopt; // infeasible: peakLowerBound says so
    Moment moment;
    moment.node = x;
    moment.capacity = budget - footprint[x];
    std::vector<std::pair<double, uint64_t>> items; // (cost, bytes) per node
    uint64_t needed = 0;
    for (NodeId a = 0; a < x; ++a) {
      if (!ancestors[x].test(a))
        continue;
      uint64_t bytes = 0;
      for (ValueId v : graph.node(a).outputs)
        if (!held(x, v) && readAfter(x, v))
          bytes += graph.value(v).bytes;
      if (bytes == 0)
        continue;
      items.push_back({graph.node(a).cost, bytes});
      needed += bytes;
    }
    if (needed <= moment.capacity)
      return moment;
    double deficit = double(needed - moment.capacity);
    std::sort(items.begin(), items.end(), [](const auto &l, const auto &r) {
      return l.first * double(r.second) < r.first * double(l.second);
    });
    for (auto [cost, bytes] : items) {
      if (deficit <= 0)
        break;
      double share = std::min(1.0, deficit / double(bytes));
      moment.estimate += share * cost;
      deficit -= double(bytes);
    }
    return moment;
  }

  /// The linear relaxation at the moments `moments` at once (the file
  /// comment), solved by CLP within `seconds`; nullopt when CLP does not
  /// prove its optimum. Each moment has its own variables (r: run again
  /// after that moment; keep: resident at it); a node's cost counts once,
  /// through R_a >= r_a at every moment: every plan that runs a again after
  /// any of the moments runs it at least once more.
  /// `guide`, when given and the relaxation is solved, receives its
  /// optimum (ResidencyGuide).
  std::optional<double> solveRelaxation(llvm::ArrayRef<Moment> moments,
                                        double seconds, bool integer = false,
                                        ResidencyGuide *guide = nullptr) const {
    // The nodes that may have run before a moment: its ancestors (they
    // did) and the nodes unordered with it (`before` decides).
    auto earlier = [&](NodeId x) {
      llvm::BitVector set = descendants[x];
      set.set(x);
      set.flip();
      return set;
    };
    double maxCost = 0;
    llvm::BitVector any(n);
    for (const Moment &m : moments)
      any |= earlier(m.node);
    for (int a : any.set_bits())
      maxCost = std::max(maxCost, graph.node(a).cost);
    if (maxCost <= 0)
      return 0.0;
    // Columns: R_a for every node that may run before some moment; then per
    // moment r_a (R_a itself when there is one moment), before_z for the
    // nodes unordered with it and keep_v for every value of those nodes that
    // is not held anyway.
    std::vector<int> once(n, -1);
    std::vector<double> objective;
    std::vector<int> integral, cannotKeep;
    for (int a : any.set_bits()) {
      once[a] = int(objective.size());
      integral.push_back(once[a]);
      objective.push_back(graph.node(a).cost / maxCost);
    }
    const double inf = std::numeric_limits<double>::infinity();
    struct Pending {
      CoinPackedVector row;
      double lower, upper;
    };
    std::vector<Pending> rows;
    auto addRow = [&](CoinPackedVector row, double lower, double upper) {
      rows.push_back({std::move(row), lower, upper});
    };
    // Per moment, its before_z and keep_v columns (the links between
    // moments below).
    std::vector<std::vector<int>> beforeOf, keepOf;
    // Per moment, the row of its memory.
    std::vector<size_t> memoryRow;
    for (const Moment &moment : moments) {
      const NodeId x = moment.node;
      const llvm::BitVector mayRun = earlier(x);
      beforeOf.emplace_back(n, -1);
      std::vector<int> &before = beforeOf.back();
      keepOf.emplace_back(graph.numValues(), -1);
      std::vector<int> &keep = keepOf.back();
      std::vector<int> recompute(n, -1);
      std::vector<ValueId> keptValues;
      for (int a : mayRun.set_bits()) {
        if (!ancestors[x].test(a)) {
          before[a] = int(objective.size());
          integral.push_back(before[a]);
          objective.push_back(0);
        }
        if (moments.size() == 1) {
          recompute[a] = once[a];
        } else {
          recompute[a] = int(objective.size());
          integral.push_back(recompute[a]);
          objective.push_back(0);
          CoinPackedVector link; // r_a <= R_a
          link.insert(recompute[a], 1.0);
          link.insert(once[a], -1.0);
          addRow(std::move(link), -inf, 0.0);
        }
        if (before[a] >= 0) {
          // Run again after the moment only if it ran before it.
          CoinPackedVector row;
          row.insert(recompute[a], 1.0);
          row.insert(before[a], -1.0);
          addRow(std::move(row), -inf, 0.0);
        }
        for (ValueId v : graph.node(a).outputs)
          if (!held(x, v)) {
            keep[v] = int(objective.size());
            objective.push_back(0);
            keptValues.push_back(v);
          }
      }
      // What ran before the moment is closed under producers: an unordered
      // node that ran had its unordered producers run (its ancestors among
      // the moment's did anyway).
      for (int z : mayRun.set_bits()) {
        if (before[z] < 0)
          continue;
        for (ValueId in : graph.node(z).inputs) {
          NodeId p = graph.value(in).producer;
          if (p < 0 || before[p] < 0)
            continue;
          CoinPackedVector row; // before_z <= before_p
          row.insert(before[z], 1.0);
          row.insert(before[p], -1.0);
          addRow(std::move(row), -inf, 0.0);
        }
      }
      // At t the kept values fit next to the footprint. A value larger than
      // the capacity cannot be kept: its column is fixed at 0 (in the row,
      // coefficients up to 10^9 made CBC cut off points that fit). The room
      // is the capacity widened by a millionth and a byte: a relaxation, so
      // still a bound, where every plan's point keeps a slack above the
      // solvers' tolerances. Without it CBC "proved" a moment of a tiny
      // graph (two values 7 bytes over a capacity of 160 MiB: 4e-8) to cost
      // a dearer node than the optimal plan recomputes (found by
      // ResidencyBound.IsAtMostTheOptimumOfTinyRandomGraphs).
      {
        CoinPackedVector row;
        const double room = double(moment.capacity) * (1 + 1e-6) + 1;
        for (ValueId v : keptValues) {
          if (graph.value(v).bytes > moment.capacity) {
            cannotKeep.push_back(keep[v]);
            continue;
          }
          row.insert(keep[v], double(graph.value(v).bytes) / room);
        }
        memoryRow.push_back(rows.size());
        addRow(std::move(row), -inf, 1.0);
      }
      for (ValueId v : keptValues) {
        // A value that was produced before t and that a node run for the
        // first time after t reads, or that the step returns (never
        // freed): kept, or its producer runs again (a step output only
        // kept). Its producer ran before t when it is an ancestor, else
        // when before_p; a reader unordered with x reads it after t at its
        // first run unless before_u, and at a rerun (r_u):
        // keep_v + r_p >= before_p - before_u + r_u (which also covers the
        // rerun's input below).
        const GraphValue &value = graph.value(v);
        const NodeId p = value.producer;
        auto crossing = [&](NodeId reader, bool stepOutput) {
          CoinPackedVector row;
          row.insert(keep[v], 1.0);
          if (!stepOutput)
            row.insert(recompute[p], 1.0);
          double lower = 1.0;
          if (before[p] >= 0) {
            row.insert(before[p], -1.0);
            lower = 0.0;
          }
          if (reader >= 0) {
            row.insert(before[reader], 1.0);
            row.insert(recompute[reader], -1.0);
          }
          addRow(std::move(row), lower, inf);
        };
        if (value.isOutput) {
          crossing(-1, /*stepOutput=*/true);
          continue;
        }
        if (readAfter(x, v))
          crossing(-1, false);
        for (NodeId u : value.users)
          if (before[u] >= 0)
            crossing(u, false);
      }
      // A node run again after t finds each input kept or run again too.
      for (int a : mayRun.set_bits()) {
        for (ValueId w : graph.node(a).inputs) {
          if (keep[w] < 0)
            continue; // fixed, or held at t
          CoinPackedVector row;
          row.insert(recompute[a], 1.0);
          row.insert(keep[w], -1.0);
          row.insert(recompute[graph.value(w).producer], -1.0);
          addRow(std::move(row), -inf, 0.0);
        }
      }
    }
    // What ran before an ancestor y of x ran before x: before_z at y <=
    // before_z at x. (Linking the orders of two unordered moments as well,
    // before_y at x + before_x at y = 1, raised the bound of one tiny
    // random graph in 100,000 2e-5 above its optimum; it is not used.)
    for (size_t i = 0; i < moments.size(); ++i)
      for (size_t j = 0; j < moments.size(); ++j) {
        const NodeId x = moments[i].node, y = moments[j].node;
        if (i == j || x == y || !ancestors[x].test(y))
          continue;
        for (NodeId z = 0; z < NodeId(n); ++z)
          if (beforeOf[j][z] >= 0 && beforeOf[i][z] >= 0) {
            CoinPackedVector row;
            row.insert(beforeOf[j][z], 1.0);
            row.insert(beforeOf[i][z], -1.0);
            addRow(std::move(row), -inf, 0.0);
          }
      }
    // Two moments x ancestor of y, and a value v of an ancestor p of x that
    // a node between them reads at its first run (a descendant of x and an
    // ancestor of y) and a node after y reads too: v not resident at x's
    // moment is made again before that reader, before y's; v not resident
    // at y's is made again after it. Two runs of p, so
    // R_p >= (1 - keep_v at x) + (1 - keep_v at y): R counts p's reruns
    // (at most one per moment), not only whether there is one.
    bool countsReruns = false;
    for (size_t i = 0; i < moments.size(); ++i)
      for (size_t j = 0; j < moments.size(); ++j) {
        const NodeId x = moments[i].node, y = moments[j].node;
        if (i == j || x == y || !ancestors[y].test(x))
          continue;
        llvm::BitVector between = descendants[x];
        between &= ancestors[y];
        for (int p : ancestors[x].set_bits())
          for (ValueId v : graph.node(p).outputs) {
            if (keepOf[i][v] < 0 || keepOf[j][v] < 0 || !readAfter(y, v))
              continue;
            bool readBetween = false;
            for (NodeId u : graph.value(v).users)
              readBetween |= between.test(u);
            if (!readBetween)
              continue;
            CoinPackedVector row;
            row.insert(once[p], 1.0);
            row.insert(keepOf[i][v], 1.0);
            row.insert(keepOf[j][v], 1.0);
            addRow(std::move(row), 2.0, inf);
            countsReruns = true;
          }
      }
    const int columns = int(objective.size());
    MixedIntegerProgram program;
    program.objective = std::move(objective);
    program.columnLower.assign(columns, 0.0);
    program.columnUpper.assign(columns, 1.0);
    if (countsReruns)
      for (int a : any.set_bits())
        program.columnUpper[once[a]] = double(moments.size());
    for (int c : cannotKeep)
      program.columnUpper[c] = 0.0;
    // r, R and before are 0/1 in every plan; keep follows from them.
    program.integer.assign(columns, 0);
    for (int c : integral)
      program.integer[c] = 1;
    for (size_t r = 0; r < rows.size(); ++r) {
      const CoinPackedVector &row = rows[r].row;
      for (int k = 0; k < row.getNumElements(); ++k) {
        program.rowIndex.push_back(int(r));
        program.columnIndex.push_back(row.getIndices()[k]);
        program.elements.push_back(row.getElements()[k]);
      }
      program.rowLower.push_back(rows[r].lower);
      program.rowUpper.push_back(rows[r].upper);
    }
    std::optional<double> value;
    if (integer) {
      if (std::optional<MixedIntegerBound> mip =
              cbcLowerBound(program, seconds))
        value = mip->bound;
    } else {
      std::vector<double> point, prices;
      value = solveLinear(program, seconds, guide ? &point : nullptr,
                          guide ? &prices : nullptr);
      if (value && guide) {
        guide->rerunShare.assign(n, 0.0);
        for (int a : any.set_bits())
          guide->rerunShare[a] = std::clamp(point[once[a]], 0.0, 1.0);
        guide->moments.clear();
        for (size_t i = 0; i < moments.size(); ++i) {
          ResidencyGuide::MomentOrder order;
          order.node = moments[i].node;
          // A moment whose memory does not raise the optimum (its row's
          // price is 0) says nothing about where its unordered nodes go.
          order.binding = std::fabs(prices[memoryRow[i]]) > 1e-9;
          for (NodeId z = 0; z < NodeId(n); ++z)
            if (int column = beforeOf[i][z]; column >= 0)
              (point[column] >= 0.5 ? order.before : order.after).push_back(z);
          guide->moments.push_back(std::move(order));
        }
        llvm::sort(guide->moments, [](const auto &l, const auto &r) {
          return l.node < r.node;
        });
      }
    }
    if (!value)
      return std::nullopt;
    // A millionth less, for the rounding of the bound's own arithmetic.
    return std::max(0.0, *value * maxCost * (1 - 1e-6) - 1e-9 * maxCost);
  }

  /// The linear relaxation of `program` by CLP within `seconds`.
  /// `point` and `prices`, when given, receive the optimum's columns and
  /// its row duals.
  static std::optional<double>
  solveLinear(const MixedIntegerProgram &program, double seconds,
              std::vector<double> *point = nullptr,
              std::vector<double> *prices = nullptr) {
    OsiClpSolverInterface solver;
    loadProgram(solver, program);
    // CLP's own limit is CPU time; the wall clock is the user's.
    solver.getModelPtr()->setMaximumSeconds(seconds);
    solver.getModelPtr()->setMaximumWallSeconds(seconds);
    solver.initialSolve();
    if (!solver.isProvenOptimal())
      return std::nullopt;
    if (point)
      point->assign(solver.getColSolution(),
                    solver.getColSolution() + program.objective.size());
    if (prices)
      prices->assign(solver.getRowPrice(),
                     solver.getRowPrice() + program.rowLower.size());
    return boundFromDuals(program, solver.getRowPrice());
  }

  /// The bound that the row duals `y` prove, whatever their accuracy: for
  /// every x within the column bounds and the row bounds,
  /// c x = (c - A^T y) x + y A x >= sum_j min over x_j of (c - A^T y)_j x_j
  /// + sum_i min over r_i of y_i r_i (a dual whose row bound on its side is
  /// infinite is taken as 0). CLP's objective itself holds only up to its
  /// tolerances, which on mobilenet_v2 at 60% put it 484 above the cost of a
  /// plan `auto` had found.
  static double boundFromDuals(const MixedIntegerProgram &program,
                               const double *dual) {
    const size_t rows = program.rowLower.size();
    std::vector<double> y(dual, dual + rows);
    double bound = 0;
    for (size_t r = 0; r < rows; ++r) {
      const double lower = program.rowLower[r], upper = program.rowUpper[r];
      if (y[r] > 0)
        y[r] = std::isfinite(lower) ? y[r] : 0;
      else if (y[r] < 0)
        y[r] = std::isfinite(upper) ? y[r] : 0;
      bound += y[r] > 0 ? y[r] * lower : y[r] < 0 ? y[r] * upper : 0;
    }
    std::vector<double> reduced = program.objective;
    for (size_t k = 0; k < program.elements.size(); ++k)
      reduced[program.columnIndex[k]] -=
          program.elements[k] * y[program.rowIndex[k]];
    for (size_t c = 0; c < reduced.size(); ++c)
      bound += reduced[c] * (reduced[c] < 0 ? program.columnUpper[c]
                                            : program.columnLower[c]);
    return bound;
  }

  const TrainingGraph &graph;
  const uint64_t budget;
  const size_t n;
  /// Per node, its ancestors and its descendants.
  std::vector<llvm::BitVector> ancestors, descendants;
  std::vector<uint64_t> footprint;
};

} // namespace

double remat::residencyLowerBound(const TrainingGraph &graph, uint64_t budget,
                                  double seconds, unsigned maxMoments,
                                  unsigned jointMoments,
                                  unsigned integerMoments,
                                  ResidencyGuide *guide) {
  const double total = graph.totalCost();
  // Two n x n bit matrices: 64 MiB at the limit. Larger graphs get the
  // trivial bound.
  if (graph.numNodes() == 0 || graph.numNodes() > kResidencyBoundMaxNodes)
    return total;
  auto start = std::chrono::steady_clock::now();
  auto left = [&] {
    return seconds -
           std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
               .count();
  };
  ResidencyBound bound(graph, budget);
  // Every moment's knapsack estimate (each a bound; half of the time at
  // most, the moments not reached are skipped), then the relaxation at the
  // best ones.
  std::vector<Moment> moments;
  std::vector<uint64_t> programMemory = bound.programOrderMemory();
  for (NodeId x = 0; x < NodeId(graph.numNodes()); ++x) {
    if (x % 64 == 0 && left() < seconds / 2)
      break;
    std::optional<Moment> m = bound.estimate(x);
    if (!m)
      continue;
    m->programExcess =
        programMemory[x] > budget ? programMemory[x] - budget : 0;
    if (m->estimate > 0 || m->programExcess > 0)
      moments.push_back(*m);
  }
  double best = 0;
  for (const Moment &m : moments)
    best = std::max(best, m.estimate);
  // The candidates: the moments of the largest knapsack estimates (what
  // their ancestors leave for their descendants) and those where the
  // program's own order holds the most above the budget (where the nodes
  // unordered with them add what they leave).
  auto mostDemanding = [&](size_t count) {
    std::vector<Moment> byEstimate = moments, byExcess = moments;
    std::stable_sort(byEstimate.begin(), byEstimate.end(),
                     [](const Moment &a, const Moment &b) {
                       return a.estimate > b.estimate;
                     });
    std::stable_sort(byExcess.begin(), byExcess.end(),
                     [](const Moment &a, const Moment &b) {
                       return a.programExcess > b.programExcess;
                     });
    std::vector<Moment> picked;
    llvm::DenseSet<NodeId> seen;
    for (size_t i = 0; i < moments.size() && picked.size() < count; ++i)
      for (const Moment *m : {&byEstimate[i], &byExcess[i]})
        if (picked.size() < count && seen.insert(m->node).second)
          picked.push_back(*m);
    return picked;
  };
  std::vector<Moment> joint = mostDemanding(jointMoments);
  moments = mostDemanding(maxMoments);
  // CLP stops at its limit only once it iterates; building and loading a
  // model comes first. The moments alone measure what one costs here.
  double perMoment = 0;
  size_t solved = 0;
  // The relaxation `guide` holds.
  double guideValue = 0;
  if (guide)
    *guide = ResidencyGuide();
  std::vector<std::pair<double, size_t>> relaxed; // (LP value, moment)
  for (size_t i = 0; i < moments.size(); ++i) {
    double time = left() / double(moments.size() - i);
    if (time < 0.01)
      break;
    double started = left();
    ResidencyGuide point;
    std::optional<double> lp = bound.solveRelaxation(
        moments[i], time, /*integer=*/false, guide ? &point : nullptr);
    if (lp && guide && (guide->empty() || *lp > guideValue)) {
      *guide = std::move(point);
      guideValue = *lp;
    }
    perMoment += started - left();
    ++solved;
    if (lp)
      relaxed.push_back({*lp, i});
    LLVM_DEBUG(llvm::dbgs()
               << "residency bound: node " << moments[i].node << " ("
               << graph.node(moments[i].node).name << "): knapsack "
               << llvm::format("%g", moments[i].estimate) << ", LP "
               << (lp ? llvm::formatv("{0}", *lp).str() : "unsolved")
               << "\n");
    if (lp)
      best = std::max(best, *lp);
  }
  // The most demanding moments at once, each node's cost counted once: at
  // least the best of them alone, and more where they need different
  // recomputations (the transformer at 50%: 1.02125x alone, 1.02490x over
  // its 8 most demanding moments at once; no more over 16 to 128, which
  // take 5 to 150 times longer). It gets the time the moments alone left,
  // when that is at least what as many moments alone took (densenet201's
  // joint model, 79,000 columns, did not finish within the 0.2 s left).
  const double jointTime =
      solved ? perMoment / double(solved) * double(joint.size()) : 0;
  if (joint.size() > 1 && left() > std::max(0.01, jointTime)) {
    ResidencyGuide point;
    std::optional<double> lp = bound.solveRelaxation(
        joint, left(), /*integer=*/false, guide ? &point : nullptr);
    if (lp && guide && (guide->empty() || *lp >= guideValue)) {
      *guide = std::move(point);
      guideValue = *lp;
    }
    LLVM_DEBUG(llvm::dbgs()
               << "residency bound: " << joint.size()
               << " moments at once: LP "
               << (lp ? llvm::formatv("{0}", *lp).str() : "unsolved") << "\n");
    if (lp)
      best = std::max(best, *lp);
  }
  // The moments whose relaxations are the highest, as integer programs
  // (COIN-OR CBC's best bound when its time is up, at least the LP's): r
  // and before are 0/1 in every plan, and the LP spreads them. The U-Net
  // at 50%: its best moment's LP says 1.369% of recomputation, with the
  // decoder convolution every plan recomputes at a third; the integer
  // program proves 1.756% (0.1 s). Half of the time left, shared: where
  // CBC cannot prove its optimum (the transformer at 50%: 14 s for its best
  // moment) the rest of `auto` needs the time more.
  std::sort(relaxed.begin(), relaxed.end(),
            [](const auto &a, const auto &b) { return a.first > b.first; });
  if (relaxed.size() > integerMoments)
    relaxed.resize(integerMoments);
  for (size_t k = 0; k < relaxed.size(); ++k) {
    if (relaxed[k].first <= 0)
      break;
    double time = left() / double(2 * (relaxed.size() - k));
    if (time < 0.02)
      break;
    std::optional<double> mip = bound.solveRelaxation(
        moments[relaxed[k].second], time, /*integer=*/true);
    LLVM_DEBUG(llvm::dbgs()
               << "residency bound: node " << moments[relaxed[k].second].node
               << " as an integer program: "
               << (mip ? llvm::formatv("{0}", *mip).str() : "unsolved")
               << "\n");
    if (mip)
      best = std::max(best, *mip);
  }
  return total + best;
}
