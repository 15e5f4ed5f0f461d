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
// - a value v produced by an ancestor and read by a descendant of x must be
//   resident at t (kept), or its producer must run again after t (r = 1);
// - a node recomputed after t needs its inputs then: each input w (produced
//   by an ancestor, since the node is one) was resident at t, or its producer
//   runs again after t too;
// - at t, x holds its footprint (peakLowerBound's: its inputs, outputs,
//   workspace and the step outputs of its ancestors, never freed) and the
//   kept values, all within the budget.
// Every plan computes every node once, plus at least the recomputations
// after t: cost >= total cost + min sum_a cost(a) r_a over the 0/1 points
// of these constraints, and over their linear relaxation (solved with
// COIN-OR CLP), which is what is used. Each x gives a valid bound; the best
// of a few is reported. A cheaper relaxation of the same (no chain
// constraints, only the values read after t: a fractional knapsack cover)
// ranks every x first. Several moments also bound together: each has its
// own variables, and a node's cost counts once, through R_a >= r_a at every
// moment (a plan that runs a again after any moment runs it at least twice).
//
// Nothing here is from the seed papers: it is a relaxation of the
// simulator's rules (DESIGN.md §5) written for this project, checked
// against the brute-force optimum (unittests/Property/BoundsTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Solver.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include "CoinPackedMatrix.hpp"
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
    if (value.isOutput || value.producer == x)
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
  std::optional<double> solveRelaxation(llvm::ArrayRef<Moment> moments,
                                        double seconds) const {
    double maxCost = 0;
    llvm::BitVector any(n);
    for (const Moment &m : moments)
      any |= ancestors[m.node];
    for (int a : any.set_bits())
      maxCost = std::max(maxCost, graph.node(a).cost);
    if (maxCost <= 0)
      return 0.0;
    // Columns: R_a for every ancestor a of some moment; then per moment
    // r_a (R_a itself when there is one moment) and keep_v for every value
    // of an ancestor that is not held anyway.
    std::vector<int> once(n, -1);
    std::vector<double> objective;
    for (int a : any.set_bits()) {
      once[a] = int(objective.size());
      objective.push_back(graph.node(a).cost / maxCost);
    }
    CoinPackedMatrix matrix(false, 0, 0);
    std::vector<double> rowLower, rowUpper;
    const double inf = std::numeric_limits<double>::infinity();
    struct Pending {
      CoinPackedVector row;
      double lower, upper;
    };
    std::vector<Pending> rows;
    auto addRow = [&](CoinPackedVector row, double lower, double upper) {
      rows.push_back({std::move(row), lower, upper});
    };
    for (const Moment &moment : moments) {
      const NodeId x = moment.node;
      std::vector<int> recompute(n, -1), keep(graph.numValues(), -1);
      std::vector<ValueId> keptValues;
      for (NodeId a = 0; a < x; ++a) {
        if (!ancestors[x].test(a))
          continue;
        if (moments.size() == 1) {
          recompute[a] = once[a];
          continue;
        }
        recompute[a] = int(objective.size());
        objective.push_back(0);
        CoinPackedVector link; // r_a <= R_a
        link.insert(recompute[a], 1.0);
        link.insert(once[a], -1.0);
        addRow(std::move(link), -inf, 0.0);
      }
      for (NodeId a = 0; a < x; ++a) {
        if (recompute[a] < 0)
          continue;
        for (ValueId v : graph.node(a).outputs)
          if (!held(x, v)) {
            keep[v] = int(objective.size());
            objective.push_back(0);
            keptValues.push_back(v);
          }
      }
      // At t the kept values fit next to the footprint (bytes scaled by
      // the capacity; a zero capacity keeps nothing).
      {
        CoinPackedVector row;
        const double scale = std::max<double>(1.0, double(moment.capacity));
        for (ValueId v : keptValues)
          row.insert(keep[v], double(graph.value(v).bytes) / scale);
        addRow(std::move(row), -inf, double(moment.capacity) / scale);
      }
      for (ValueId v : keptValues) {
        // Read after t: kept, or its producer runs again.
        if (readAfter(x, v)) {
          CoinPackedVector row;
          row.insert(keep[v], 1.0);
          row.insert(recompute[graph.value(v).producer], 1.0);
          addRow(std::move(row), 1.0, inf);
        }
      }
      // A node run again after t finds each input kept or run again too.
      for (NodeId a = 0; a < x; ++a) {
        if (recompute[a] < 0)
          continue;
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
    const int columns = int(objective.size());
    matrix.setDimensions(0, columns);
    for (Pending &r : rows) {
      matrix.appendRow(r.row);
      rowLower.push_back(r.lower);
      rowUpper.push_back(r.upper);
    }
    std::vector<double> colLower(columns, 0.0), colUpper(columns, 1.0);
    OsiClpSolverInterface solver;
    solver.messageHandler()->setLogLevel(0);
    solver.loadProblem(matrix, colLower.data(), colUpper.data(),
                       objective.data(), rowLower.data(), rowUpper.data());
    // CLP's own limit is CPU time; the wall clock is the user's.
    solver.getModelPtr()->setMaximumSeconds(seconds);
    solver.getModelPtr()->setMaximumWallSeconds(seconds);
    solver.initialSolve();
    if (!solver.isProvenOptimal())
      return std::nullopt;
    // CLP's optimum is exact up to its tolerances (1e-7): a bound a little
    // below it stays a bound.
    double value = solver.getObjValue() * maxCost;
    return std::max(0.0, value * (1 - 1e-6) - 1e-9 * maxCost);
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
                                  unsigned jointMoments) {
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
  for (NodeId x = 0; x < NodeId(graph.numNodes()); ++x) {
    if (x % 64 == 0 && left() < seconds / 2)
      break;
    if (std::optional<Moment> m = bound.estimate(x); m && m->estimate > 0)
      moments.push_back(*m);
  }
  double best = 0;
  for (const Moment &m : moments)
    best = std::max(best, m.estimate);
  std::sort(moments.begin(), moments.end(),
            [](const Moment &a, const Moment &b) {
              return a.estimate > b.estimate;
            });
  std::vector<Moment> joint(
      moments.begin(),
      moments.begin() + std::min<size_t>(moments.size(), jointMoments));
  if (moments.size() > maxMoments)
    moments.resize(maxMoments);
  for (size_t i = 0; i < moments.size(); ++i) {
    double time = left() / double(moments.size() - i);
    if (time < 0.01)
      break;
    std::optional<double> lp = bound.solveRelaxation(moments[i], time);
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
  // take 5 to 150 times longer). It gets the time the moments alone left.
  if (joint.size() > 1 && left() > 0.01) {
    std::optional<double> lp = bound.solveRelaxation(joint, left());
    LLVM_DEBUG(llvm::dbgs()
               << "residency bound: " << joint.size()
               << " moments at once: LP "
               << (lp ? llvm::formatv("{0}", *lp).str() : "unsolved") << "\n");
    if (lp)
      best = std::max(best, *lp);
  }
  return total + best;
}
