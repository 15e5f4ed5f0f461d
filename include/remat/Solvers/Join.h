//===- Join.h - Join graphs and homogeneous chain reversal ------*- C++ -*-===//
//
// Beaumont, Herrmann, Pallez, Shilova, "Optimal Memory-aware Backpropagation
// of Deep Join Networks" (seeds/002_c4b2a5e0f8f68511.txt): k homogeneous
// chains meeting at the loss (Siamese, cross-modal networks), in the
// uniform-cost pebble model of §2: every datum takes one slot, forward steps
// cost u_f, backward steps u_b, the turn u_t; an operation may write its
// result over an input it consumes (the turn replaces its inputs "in the same
// memory locations", §3).
//
//  - c_min of Theorem 2 (Eq. 3.1);
//  - Opt_join of Theorem 3 and the reconstruction of the canonical schedule
//    (§3(a)) it optimises over;
//  - REV / Opt_0 for one chain (Griewank & Walther's binomial optimum,
//    [GW00]), and the reversal of a segment after the turn, which the
//    recurrence of Theorem 3 calls;
//  - the detection of join structure in a training graph (k independent
//    chains of stages, the head from the node that combines them to the
//    loss) and the `join` solver, which runs Opt_join on it (JoinSolver.cpp).
//
// docs/budget-solvers.md has the model and where our equations differ from
// the printed ones.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SOLVERS_JOIN_H
#define REMAT_SOLVERS_JOIN_H

#include "remat/Solvers/Solver.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace remat {
namespace join {

/// u_f, u_b, u_t of §2(b).
struct UniformCosts {
  double forward = 1;
  double backward = 1;
  double turn = 1;
};

//===----------------------------------------------------------------------===//
// One homogeneous chain (Griewank & Walther)
//===----------------------------------------------------------------------===//

/// beta(s, r) = C(s + r, s), saturating at UINT64_MAX.
uint64_t binomialBeta(unsigned s, unsigned r);

/// Griewank & Walther's minimal number of forward steps to reverse l steps
/// with s snapshots besides the one being advanced: 0 for l <= 1, else
/// r * l - beta(s + 1, r - 1) with r the least integer such that
/// beta(s, r) >= l; UINT64_MAX when l >= 2 and s == 0 (impossible).
uint64_t revolveForwardSteps(uint64_t l, unsigned s);

/// The time to back-propagate i steps of a chain segment x_0 .. x_i when
/// x_0 and the gradient xbar_i are stored, with c slots in all (those two
/// included), ending with xbar_0 alone: Griewank's reversal with c - 2
/// snapshots, revolveForwardSteps(i, c - 2) u_f + i u_b; +infinity when
/// c < 2, or i >= 2 and c < 3. Theorem 3 calls this for the backward phase
/// of a segment; the paper writes it Opt_0(i - 1, c - (k - 1)).
double reverseTime(unsigned i, unsigned c, const UniformCosts &costs = {});

/// Opt_0(l, c): the execution time of REV(l, c), the optimal schedule of a
/// single chain of length l (k = 1: forward steps, the turn, backward steps)
/// with c slots: u_t for l = 0, else u_f + u_t + reverseTime(l, c) (advance
/// to x_l overwriting as you go, turn in place, reverse the l steps from x_0
/// and xbar_l); +infinity below c_min((l)).
double opt0(unsigned l, unsigned c, const UniformCosts &costs = {});

//===----------------------------------------------------------------------===//
// Join graphs
//===----------------------------------------------------------------------===//

/// c_min(l) of Theorem 2 (Eq. 3.1): k if every branch is empty; k plus the
/// number of non-empty branches if some branch has length 1; one more
/// otherwise.
unsigned minMemory(llvm::ArrayRef<unsigned> lengths);

/// One operation of a join schedule. Branch b's forward data are x_0..x_{l_b}
/// and its backward data xbar_0..xbar_{l_b}.
struct JoinOp {
  enum class Kind {
    /// F_i^(b): x_i -> x_{i+1}; x_i stays when `keep`, else it is
    /// overwritten.
    Forward,
    /// Fbar_i^(b): (x_i, xbar_{i+1}) -> xbar_i, both inputs consumed.
    Backward,
    /// (x_{l_1}, ..., x_{l_k}) -> (xbar_{l_1}, ..., xbar_{l_k}) in place.
    Turn,
  };
  Kind kind;
  unsigned branch = 0;
  unsigned index = 0;
  bool keep = false;

  bool operator==(const JoinOp &o) const {
    return kind == o.kind && branch == o.branch && index == o.index &&
           keep == o.keep;
  }
};
using JoinSchedule = std::vector<JoinOp>;

std::string formatJoinSchedule(const JoinSchedule &schedule);

struct PebbleResult {
  bool valid = true;
  std::string error;
  /// Most slots used at any time.
  unsigned peak = 0;
  double cost = 0;
};

/// Plays a schedule in the pebble model: memory starts as {x_0^(b)}, ends as
/// {xbar_0^(b)}; an operation needs its inputs stored and at most c slots
/// used at any time (a Forward that keeps its input takes a new slot, every
/// other operation writes over what it consumes).
PebbleResult simulatePebbles(llvm::ArrayRef<unsigned> lengths, unsigned c,
                             const JoinSchedule &schedule,
                             const UniformCosts &costs = {});

/// Opt_join(l, c) of Theorem 3 for every sub-vector of `lengths` and every
/// c <= maxSlots, by the recurrence over canonical schedules, and their
/// reconstruction. Table size prod(l_j + 1) (maxSlots + 1), time
/// O(table * sum l_j) (the paper's O(c k max(l)^{k+1})).
class JoinDP {
public:
  JoinDP(std::vector<unsigned> lengths, unsigned maxSlots,
         const UniformCosts &costs = {});

  unsigned numBranches() const { return unsigned(lengths.size()); }
  unsigned maxSlots() const { return slots; }
  /// Opt_join(lengths, c); +infinity when c < c_min.
  double opt(unsigned c) const { return opt(lengths, c); }
  /// Opt_join(sub, c) for sub <= lengths componentwise.
  double opt(llvm::ArrayRef<unsigned> sub, unsigned c) const;
  /// The canonical schedule achieving opt(c); an error when infeasible.
  llvm::Expected<JoinSchedule> schedule(unsigned c) const;
  size_t tableBytes() const { return table.size() * sizeof(double); }

private:
  size_t index(llvm::ArrayRef<unsigned> sub) const;
  double evaluate(llvm::ArrayRef<unsigned> sub, unsigned c, unsigned *branch,
                  unsigned *steps) const;
  llvm::Error rebuild(std::vector<unsigned> sub, std::vector<unsigned> offset,
                      unsigned c, JoinSchedule &out) const;

  std::vector<unsigned> lengths;
  unsigned slots;
  UniformCosts costs;
  std::vector<size_t> stride;
  std::vector<double> table;
};

/// The reversal of a segment as reverseTime() counts it: from x_offset (kept
/// until the last step) and xbar_{offset+i}, with c slots.
llvm::Error appendReversal(unsigned branch, unsigned offset, unsigned i,
                           unsigned c, const UniformCosts &costs,
                           JoinSchedule &out);

//===----------------------------------------------------------------------===//
// Join structure in a training graph (JoinSolver.cpp)
//===----------------------------------------------------------------------===//

/// A training graph seen as a join of k chains (§2 of seeds/002): the
/// forward nodes split into the *head* (the first forward node that combines
/// two independent components, and everything after it: the join and the
/// loss) and k *branches*, the weakly connected components of the other
/// forward nodes. A branch is a chain of stages cut at its articulation
/// points: after a stage only its last node's outputs are read later (the
/// structure hierarchy's linear level, seeds/001 §4). Stage i + 1 of a branch
/// is F_i of the paper (x_i -> x_{i+1}); x_0 is the branch's input (fixed
/// memory). Backward nodes go to the group of Fbar_i that runs them, to the
/// head (they run in the turn), or to the tail (after every branch: e.g. the
/// sum of a shared weight's gradients).
struct JoinStructure {
  /// stages[b][i]: forward nodes of F_i of branch b (stage i + 1), id order.
  std::vector<std::vector<std::vector<NodeId>>> stages;
  /// groups[b][i]: backward nodes of Fbar_i of branch b, id order.
  std::vector<std::vector<std::vector<NodeId>>> groups;
  /// Whether groups[b][i] reads values stages[b][i] produces, so that Fbar_i
  /// re-runs F_i first (rotor's §5.3 conversion: the pebble model stores
  /// only x_i).
  std::vector<std::vector<bool>> groupReadsStage;
  std::vector<NodeId> headForward, headBackward, tail;
  /// xBytes[b][i], xbarBytes[b][i] (i = 0..l_b): the bytes of x_i and
  /// xbar_i (x_0 is fixed memory: 0).
  std::vector<std::vector<uint64_t>> xBytes, xbarBytes;
  /// The largest x_i or xbar_i: the size of one pebble-model slot.
  uint64_t slotBytes = 0;
  /// Stages merged beyond the articulation cuts (a backward node reading
  /// across a cut, or the DP table's size limit).
  unsigned mergedStages = 0;

  std::vector<unsigned> lengths() const;
};

/// Detects join structure; an error that says why when the graph is not a
/// join of at least two branches. Stages are merged until
/// prod(l_b + 1) * (sum(l_b) + k + 2) <= maxTableEntries (the DP table with
/// enough slots to store everything). A backward node that reads only the
/// head's gradients and fixed values goes to the branch whose forward nodes
/// alone read those fixed values (dx = dz W^T with the stage reading W) when
/// `weightsPickTheBranch`, else to the turn.
llvm::Expected<JoinStructure>
detectJoinStructure(const TrainingGraph &graph,
                    size_t maxTableEntries = size_t(1) << 22,
                    bool weightsPickTheBranch = true);

/// The training-graph plan of a join schedule: F_i computes stage i + 1,
/// Fbar_i re-runs it when its group reads it and then runs the group, the
/// turn runs the head (forward, then backward), the tail runs last; frees by
/// insertEarlyFrees.
llvm::Expected<Schedule> scheduleFromJoinSchedule(const TrainingGraph &graph,
                                                  const JoinStructure &join,
                                                  const JoinSchedule &ops);

struct JoinSolveInfo {
  std::vector<unsigned> lengths;
  uint64_t slotBytes = 0;
  /// Slots of the chosen schedule, and the DP's value for it.
  unsigned slots = 0;
  double modelCost = 0;
  size_t tableBytes = 0;
  /// Slot counts whose plans were simulated.
  unsigned candidates = 0;
};

/// The `join` solver: Opt_join (Theorem 3) on the detected structure (both
/// placements of weight-only backward nodes) with uniform costs (the mean
/// stage costs), for every slot count from c_min up to storing everything;
/// each plan is simulated and the cheapest within the budget wins (without a
/// budget, or when none fits, the least peak).
llvm::Expected<Schedule> solveJoin(const TrainingGraph &graph,
                                   const SolverOptions &options,
                                   JoinSolveInfo *info = nullptr);

} // namespace join
} // namespace remat

#endif // REMAT_SOLVERS_JOIN_H
