//===- Rotor.h - Optimal persistent checkpointing of chains -----*- C++ -*-===//
//
// Rotor (Beaumont, Eyraud-Dubois, Herrmann, Joly, Shilova, "Optimal
// checkpointing for heterogeneous chains", seeds/004_12ee49cee382de08.txt):
//
//  - the operation model of §3.1 (Table 1): a chain of L stages, each with a
//    forward F^l in three flavours (F_all keeps abar^l, F_ck keeps its input
//    a^{l-1}, F_none keeps nothing) and a backward B^l, activation sizes
//    w_a, w_abar, w_delta and memory overheads o_f, o_b;
//  - the dynamic program of Theorem 1 (C_BP, m_none, m_all) for the optimal
//    *persistent* sequence and its reconstruction (Algorithms 1-2), with the
//    memory discretised into S slots, sizes rounded up (§5.2);
//  - revolve as rotor's evaluation runs it (§5.3): the optimal persistent
//    sequence of the automatic-differentiation model, which stores only a^l
//    and tapes (F_all) each stage right before its backward;
//  - the mapping of a training graph onto such a chain (stages = groups of
//    forward nodes in a topological order, a^l / abar^l / delta^l = sets of
//    buffers) and the conversion of an operation sequence into a Schedule that
//    the simulator judges.
//
// docs/budget-solvers.md states the model, the mapping and what deviates from
// the paper's printed equations.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SOLVERS_ROTOR_H
#define REMAT_SOLVERS_ROTOR_H

#include "remat/Solvers/Solver.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace remat {

//===----------------------------------------------------------------------===//
// The operation model (seeds/004 §3.1, Table 1)
//===----------------------------------------------------------------------===//

/// A heterogeneous chain of L stages. Every vector is indexed by the paper's
/// stage number and has L + 1 entries; entry 0 is meaningful only for `a`
/// (the chain's input a^0) and `delta` (delta^0, the result of B^1).
struct RotorChain {
  /// w_a^l, l = 0..L: the output a^l of F^l (a^0 is the chain's input).
  std::vector<uint64_t> a;
  /// w_abar^l: everything B^l needs from F^l. abar^l includes a^l, so
  /// abar[l] >= a[l].
  std::vector<uint64_t> abar;
  /// w_delta^l, l = 0..L: the gradient B^{l+1} hands to B^l. delta^L is in
  /// memory at the start (the seed), delta^0 is the result.
  std::vector<uint64_t> delta;
  /// o_f^l, o_b^l: memory that F^l / B^l need beyond their inputs and
  /// outputs while they run.
  std::vector<uint64_t> overheadF, overheadB;
  /// r_b^l: bytes of B^l's inputs that are gone by the time B^l reaches its
  /// peak. Table 1 counts an operation's inputs for its whole run, which is
  /// exact for one kernel; a stage's backward on a training graph is a group
  /// of nodes whose first ones may read an input for the last time (a
  /// gradient padded for a transposed convolution, then freed). The peak of
  /// B^l is delta^l + abar^l + a^{l-1} + delta^{l-1} + o_b^l - r_b^l. Our
  /// extension; empty means all 0.
  std::vector<uint64_t> reliefB;
  /// u_f^l, u_b^l: the durations of F^l and B^l.
  std::vector<double> costF, costB;
  /// Stages that must be computed exactly once (on a training graph: a stage
  /// whose node returns a step output, which is never freed and so cannot be
  /// computed again). Our extension; empty means none.
  std::vector<bool> pinned;
  /// Whether B^l reads abar^l. Table 1 says it always does; on a training
  /// graph many backward steps read only the stage's input (a matmul's
  /// backward reads its input and weights, not its output), and then B^l
  /// needs no F_all^l before it. Our extension; empty means all true.
  std::vector<bool> backwardReadsAbar;

  /// An alternative F_all^l / B^l pair of a stage (issue 24, the options
  /// of Rockmate, ICML'23, §4): F_all^l stores only part of what B^l reads
  /// (`abar`), and B^l first recomputes the rest from a^{l-1} (stored
  /// whenever B^l runs) and what was stored; `costB` includes that
  /// recomputation. `overheadF` is F_all's overhead alone (F_ck and F_none
  /// keep using the stage's `overheadF`).
  struct Option {
    uint64_t abar = 0, overheadF = 0, overheadB = 0, reliefB = 0;
    double costB = 0;
  };
  /// Per stage (l = 0..L, entry 0 unused), its options; empty (or an empty
  /// entry): the single option of abar, overheadF, overheadB, reliefB and
  /// costB. Only stages whose B^l reads abar^l have options. Our extension;
  /// the blocks solver fills it.
  std::vector<std::vector<Option>> options;

  unsigned length() const { return a.empty() ? 0 : unsigned(a.size() - 1); }
  unsigned numOptions(unsigned stage) const {
    return stage < options.size() && !options[stage].empty()
               ? unsigned(options[stage].size())
               : 1;
  }
  /// Option k of stage l (the stage's own figures when it has none).
  Option option(unsigned stage, unsigned k) const {
    if (stage < options.size() && !options[stage].empty())
      return options[stage][k];
    return {abar[stage], overheadF[stage], overheadB[stage], relief(stage),
            costB[stage]};
  }
  bool isPinned(unsigned stage) const {
    return stage < pinned.size() && pinned[stage];
  }
  bool readsAbar(unsigned stage) const {
    return stage >= backwardReadsAbar.size() || backwardReadsAbar[stage];
  }
  uint64_t relief(unsigned stage) const {
    return stage < reliefB.size() ? reliefB[stage] : 0;
  }
  /// A chain of `length` stages with every size and cost 0.
  static RotorChain withLength(unsigned length);
  /// Checks the vector sizes and abar >= a.
  llvm::Error check() const;
};

/// One operation of Table 1, plus Drop: deleting a stored a^l or abar^l
/// before its backward, which is what makes a sequence non-persistent (§4.1;
/// Table 1 has no such operation and persistent sequences never need one).
struct RotorOp {
  enum class Kind { FNone, FCk, FAll, B, Drop };
  Kind kind;
  unsigned stage;
  /// F_all and B: which of the stage's options (RotorChain::Option).
  unsigned option = 0;

  static RotorOp fNone(unsigned l) { return {Kind::FNone, l}; }
  static RotorOp fCk(unsigned l) { return {Kind::FCk, l}; }
  static RotorOp fAll(unsigned l, unsigned k = 0) { return {Kind::FAll, l, k}; }
  static RotorOp b(unsigned l, unsigned k = 0) { return {Kind::B, l, k}; }
  static RotorOp drop(unsigned l) { return {Kind::Drop, l}; }
  bool isForward() const {
    return kind == Kind::FNone || kind == Kind::FCk || kind == Kind::FAll;
  }
  bool operator==(const RotorOp &other) const {
    return kind == other.kind && stage == other.stage &&
           option == other.option;
  }
};
using RotorSequence = std::vector<RotorOp>;

/// "Fck1 Fn2 Fall3 B3 D1 ..." (Fn = F_none, D = Drop; "Fall3.2 B3.2" for
/// option 2).
std::string formatRotorSequence(const RotorSequence &sequence);

/// What simulateRotorSequence finds.
struct RotorSimulation {
  bool valid = true;
  std::string error;
  /// Highest memory during any operation (inputs, outputs, overhead and
  /// everything else stored), a^0 and delta^L included.
  uint64_t peak = 0;
  double cost = 0;
};

/// Executes a sequence in the model of Table 1, independently of the dynamic
/// program: memory starts as {a^0, delta^L}; F^l needs a^{l-1} or abar^{l-1}
/// (F_none needs a^{l-1} and consumes it), may not produce a^l / abar^l while
/// either is stored, and uses everything stored + its output + o_f^l; B^l
/// needs delta^l, abar^l (unless !readsAbar(l)) and a^{l-1} or abar^{l-1},
/// uses everything stored +
/// delta^{l-1} + o_b^l, and leaves delta^{l-1} in place of delta^l, abar^l
/// and a^{l-1} (abar^{l-1}, when it is what B^l read, stays: Table 1's second
/// line); Drop^l deletes the stored a^l or abar^l. Valid when every
/// operation finds its inputs, pinned stages are computed once, and delta^0
/// is produced. Non-persistent sequences are accepted too (the
/// counter-example of Fig. 2).
RotorSimulation simulateRotorSequence(const RotorChain &chain,
                                      const RotorSequence &sequence);

//===----------------------------------------------------------------------===//
// The dynamic program (Theorem 1, Algorithms 1-2)
//===----------------------------------------------------------------------===//

struct RotorDPOptions {
  /// S, the number of memory slots the limit is divided into (§5.2).
  unsigned slots = 500;
  /// false gives revolve's model (§5.3): C_all only for single stages, so
  /// that only a^l are stored and each F_all comes right before its B.
  bool allowFAllChains = true;
  /// Columns of the table, at least `slots` (0: `slots`): the table answers
  /// every memory up to columns slots of M / S bytes, so that the optimum
  /// for a larger memory than M (the model over-counts; a plan for more
  /// memory may still fit the budget) or a smaller one is a lookup in the
  /// same table, not another O(L^3 S) fill (issue 24).
  unsigned columns = 0;
};

/// The storage of a rotor table's cells. While a RotorTableReuse
/// (below) is alive on the thread, the storage of a table that
/// ends goes to the next table built there instead of back to the system:
/// `auto` builds about 70 tables of 15 MB on the transformer, and the
/// kernel's page faults on fresh storage were half of each build.
class RotorTableStorage {
public:
  RotorTableStorage() = default;
  RotorTableStorage(RotorTableStorage &&other) noexcept
      : cells(std::move(other.cells)) {
    other.cells = {};
  }
  RotorTableStorage &operator=(RotorTableStorage &&other) noexcept;
  RotorTableStorage(const RotorTableStorage &) = default;
  RotorTableStorage &operator=(const RotorTableStorage &) = default;
  ~RotorTableStorage();

  /// n cells of `value`, in reused storage where some is kept.
  void assign(size_t n, float value);
  float *data() { return cells.data(); }
  const float *data() const { return cells.data(); }
  size_t size() const { return cells.size(); }

private:
  void release();
  std::vector<float> cells;
};

/// While one is alive on a thread, ended tables' storage is kept for the
/// tables built next on that thread (at most two buffers); when the last one
/// ends, the kept storage is freed. Scopes nest. For callers that build many
/// tables in a row (`auto`, solveRotorFamily).
class RotorTableReuse {
public:
  RotorTableReuse();
  ~RotorTableReuse();
  RotorTableReuse(const RotorTableReuse &) = delete;
  RotorTableReuse &operator=(const RotorTableReuse &) = delete;
};

/// The table C_BP(s, t, m) of Theorem 1 for one chain and one memory limit.
/// Rows are the pairs s <= t (triangular), each S + 1 floats; the table is
/// filled by increasing segment length t - s, so that every cell a cell reads
/// (shorter segments at the same or smaller m) is already final, whatever the
/// sizes (zero sizes included). No choice table is stored: reconstruction
/// re-evaluates the same expressions and matches them bit for bit.
class RotorTable {
public:
  /// Builds the table for a memory limit of `memoryBytes`, every size rounded
  /// up to whole slots of memoryBytes / S bytes. Errors on an invalid chain.
  static llvm::Expected<RotorTable> build(const RotorChain &chain,
                                          uint64_t memoryBytes,
                                          const RotorDPOptions &options = {});

  unsigned slots() const { return numSlots; }
  /// The last column: memories up to columns() * slotBytes() are answered.
  unsigned columns() const { return numColumns; }
  /// Bytes per slot (memoryBytes / S).
  double slotBytes() const { return bytesPerSlot; }
  uint64_t memoryBytes() const { return memory; }
  /// Bytes held by the cost table and its index arrays.
  size_t tableBytes() const;

  /// The optimal persistent cost with m slots (m <= columns()) for the whole
  /// chain, a^0 and delta^L included (Algorithm 1, line 12), or +infinity
  /// when infeasible.
  double cost(unsigned m) const;
  double cost() const { return cost(numSlots); }
  /// The least m with a finite cost.
  std::optional<unsigned> leastFeasibleSlots() const;
  /// The least m' <= m with cost(m') == cost(m): the same optimum in the
  /// least memory.
  unsigned leastSlotsForCost(unsigned m) const;
  /// Algorithm 2 at m slots; an error when cost(m) is infinite.
  llvm::Expected<RotorSequence> sequence(unsigned m) const;
  llvm::Expected<RotorSequence> sequence() const { return sequence(numSlots); }

  /// A size in slots (rounded up; anything beyond the last column becomes
  /// columns() + 1).
  int toSlots(uint64_t bytes) const;
  /// A size in whole slots, rounded down (for amounts subtracted from a
  /// need, so that the need stays an upper bound).
  int toSlotsDown(uint64_t bytes) const;

private:
  RotorTable() = default;
  size_t rowIndex(unsigned s, unsigned t) const;
  const float *row(unsigned s, unsigned t) const {
    return table.data() + rowIndex(s, t) * width;
  }
  float *row(unsigned s, unsigned t) {
    return table.data() + rowIndex(s, t) * width;
  }
  float cell(unsigned s, unsigned t, int m) const;
  int mAll(unsigned s, unsigned t, unsigned k) const;
  int mLeafB(unsigned s) const;
  int mNone(unsigned s, unsigned t) const;
  unsigned ckLimit(unsigned s, unsigned t) const;
  float prefix(unsigned s, unsigned sp) const;
  void fill();
  llvm::Error rebuild(unsigned s, unsigned t, int m,
                      RotorSequence &out) const;

  unsigned length = 0;
  unsigned numSlots = 0, numColumns = 0;
  size_t width = 0;
  uint64_t memory = 0;
  double bytesPerSlot = 0;
  bool allowFAllChains = true;
  // Sizes in slots, indexed like RotorChain.
  std::vector<int> a, delta, of;
  // The options of stage l are entries optionBegin[l] .. optionBegin[l+1]-1
  // of these (sizes in slots; costs scaled).
  std::vector<unsigned> optionBegin;
  std::vector<int> optAbar, optOf, optOb, optRb;
  std::vector<float> optCostFB, optCostB;
  /// The power of two the chain's costs are multiplied by in the table, so
  /// that no cell overflows a float (1 for all but huge costs).
  double costScale = 1;
  std::vector<char> readsAbar;
  std::vector<double> prefixF;
  std::vector<unsigned> firstPinned;
  // max_{s<j<t} (a[j-1] + a[j] + of[j]), triangular like the table.
  std::vector<int> forwardPeak;
  RotorTableStorage table;
};

/// The least memory (bytes, a^0 included, as RotorTable::cost counts it)
/// with which a persistent sequence of the chain exists: the feasibility
/// side of Theorem 1's recurrence, exact in bytes (no slots), O(L^3). A table
/// of any number of slots is feasible only at this memory or more.
/// std::nullopt for an invalid or empty chain.
std::optional<uint64_t> rotorLeastMemory(const RotorChain &chain,
                                         bool allowFAllChains = true);

//===----------------------------------------------------------------------===//
// Training graphs
//===----------------------------------------------------------------------===//

/// A training graph seen as a rotor chain. Stage l (1..L) is a group of
/// forward nodes, consecutive in a topological order; backward node b belongs
/// to the group sigma(b) whose B^l runs it. With P(v) the stage producing a
/// forward value v and G(v) the group producing a backward value v:
///  - A^l (a^l): the forward values with P(v) <= l read by a forward stage
///    > l or a backward group > l (what a restart after stage l needs);
///  - Abar^l (abar^l): A^l plus the values stage l produces that group l
///    reads;
///  - Delta^l (delta^l): the backward values with G(v) > l read by a group
///    <= l.
/// Step outputs are never freed, so they are not in these sets: their bytes
/// are reserved from the budget up front, as the paper does for the parameter
/// gradients (§3.1), and a forward stage producing one is pinned. Every
/// value's sets are intervals of l, so membership is O(1).
struct RotorStageMap {
  RotorChain chain;
  /// Forward nodes of stage l / backward nodes of group l, in id order
  /// (index 0 unused).
  std::vector<std::vector<NodeId>> forward, backward;
  /// A^l, Abar^l (l = 0..L) and Delta^l (l = 0..L) as value ids.
  std::vector<std::vector<ValueId>> aValues, abarValues, deltaValues;
  /// Bytes of the step outputs (non-fixed values never freed).
  uint64_t reservedBytes = 0;
  /// Per value: producing stage or group (0 for fixed values), and whether
  /// it is a step output.
  std::vector<unsigned> producerStage;
  std::vector<char> reserved;
  /// With block options (addBlockOptions): per stage l and option k, the
  /// forward nodes of stage l that B^{l,k} recomputes first (id order);
  /// empty: none.
  std::vector<std::vector<std::vector<NodeId>>> optionRecompute;
};

/// Where a backward node that reads no forward value goes within the groups
/// its readers and producers allow (a node that reads forward values goes to
/// the latest group at which they are in the cut anyway, whatever the
/// policy). The best placement depends on what the node's neighbours keep,
/// so the solvers try each and let the simulator judge.
enum class BackwardPlacement {
  /// As early as its inputs exist when it frees more than it allocates (a
  /// weight gradient), as late as its readers allow otherwise (a padded copy).
  Balanced,
  /// Always as early as its inputs exist.
  Early,
  /// Always as late as its readers allow.
  Late,
};

/// Maps `graph` onto a chain whose stages are `stages` (forward node groups
/// in a topological order covering every forward node once); with `stages`
/// empty, one stage per forward node in id order. Errors when the groups are
/// not a topological partition of the forward nodes.
llvm::Expected<RotorStageMap>
buildRotorStageMap(const TrainingGraph &graph,
                   const std::vector<std::vector<NodeId>> &stages = {},
                   BackwardPlacement placement = BackwardPlacement::Balanced);

/// The blocks solver's options (issue 24, after Rockmate, Zhao et al.,
/// ICML'23: each block solved for several memory options, a chain DP over
/// the blocks): for every stage whose group reads what the stage stores,
/// the alternatives of keeping only a subset K of those values (the others
/// recomputed by B^l from a^{l-1} and K, by the fewest forward nodes of the
/// stage). Every subset when the stage stores at most `exhaustive` such
/// values (the exact set of options of this model), else the nested subsets
/// that drop values in increasing order of recomputation cost per byte;
/// options that another beats in every figure are dropped, and at most
/// `maxOptions` kept. Sets map.chain.options and map.optionRecompute.
void addBlockOptions(const TrainingGraph &graph, RotorStageMap &map,
                     unsigned exhaustive = 10, unsigned maxOptions = 8);

/// Runs an operation sequence on the graph: F^l computes the nodes of stage
/// l, B^{l,k} the recomputation of option k (if any) then those of group l
/// (in id order), Drop computes nothing; the
/// sequence is checked against the stored items of Table 1, and the frees
/// are placed by insertEarlyFrees (each buffer right after its last use).
/// For a valid sequence of a stage map built from `graph`, the simulated
/// peak is at most the model's peak plus the reserved bytes, and the
/// simulated cost equals the model's cost.
llvm::Expected<Schedule>
scheduleFromRotorSequence(const TrainingGraph &graph,
                          const RotorStageMap &map,
                          const RotorSequence &sequence);

/// A training graph that realises `chain`: stage l is one forward node
/// reading a^{l-1} and producing a^l (plus abar^l - a^l bytes that only B^l
/// reads), group l one backward node reading delta^l, abar^l and a^{l-1} and
/// producing delta^{l-1}; a^0 and delta^L are arguments, delta^0 the step
/// output. The node allocates abar^l - a^l in every flavour of F^l, so the
/// forward workspace is o_f^l - (abar^l - a^l) (o_f^L for the last stage).
/// When o_f^l >= abar^l - a^l for l < L, buildRotorStageMap gives `chain`
/// back except a^0, delta^0 and delta^L (fixed memory or reserved, so 0) and
/// a^L (nothing reads it, so 0).
TrainingGraph makeRotorChainGraph(const RotorChain &chain);

struct RotorOptions {
  /// S of §5.2.
  unsigned slots = 500;
  /// Chains longer than this are coarsened (consecutive stages merged) to
  /// keep the O(L^3 S) table within seconds and O(L^2 S) memory.
  unsigned maxStages = 400;
  /// Also try the stages of the structure analysis' linear hierarchy
  /// (include/remat/Structure), and keep the better plan.
  bool tryHierarchy = true;
  /// The blocks solver: every stage gets its options (addBlockOptions).
  bool blockOptions = false;
};

/// What a rotor / revolve solve did, for reports and benchmarks.
struct RotorSolveInfo {
  /// "nodes" (one stage per forward node) or "hierarchy", with the backward
  /// placement when it is not the balanced one ("nodes/early").
  std::string stages;
  unsigned length = 0;
  unsigned slots = 0;
  /// Slots the chosen sequence was reconstructed at.
  unsigned usedSlots = 0;
  double slotBytes = 0;
  double modelCost = 0;
  size_t tableBytes = 0;
  /// Times the budget given to the table was lowered because the simulated
  /// peak exceeded the budget (expected 0: the model is conservative).
  unsigned retries = 0;
  /// Tables built for the chosen staging.
  unsigned tables = 0;
  bool feasible = false;
};

/// The rotor solver: the optimal persistent sequence under the budget
/// (minus the reserved bytes) for each candidate staging, converted and
/// simulated; the cheapest plan within the budget wins. Without a budget, or
/// when none fits, the least-memory plan the table finds.
llvm::Expected<Schedule> solveRotor(const TrainingGraph &graph,
                                    const SolverOptions &options,
                                    const RotorOptions &rotorOptions = {},
                                    RotorSolveInfo *info = nullptr);

/// The blocks solver (issue 24; the structure of Rockmate, Zhao et al.,
/// ICML'23: blocks solved for several memory options, rotor's recurrence
/// over the blocks): rotor's dynamic program over the stages of the
/// structure hierarchy (and the per-node stages), each stage with the
/// options of addBlockOptions. Its optimum is over persistent sequences of
/// those blocks and options, a restricted model: it proves nothing about
/// the graph's optimum.
llvm::Expected<Schedule> solveBlocks(const TrainingGraph &graph,
                                     const SolverOptions &options,
                                     RotorSolveInfo *info = nullptr);

/// Revolve for heterogeneous chains as rotor's §5.3 converts it: only a^l
/// is stored, an F_all right before each B (Revolve.cpp).
llvm::Expected<Schedule> solveRevolve(const TrainingGraph &graph,
                                      const SolverOptions &options,
                                      const RotorOptions &rotorOptions = {},
                                      RotorSolveInfo *info = nullptr);

/// The driver both share: for each candidate staging, the table of `dp` at
/// the budget, the sequence converted and simulated, the best plan kept.
llvm::Expected<Schedule> solveRotorFamily(const TrainingGraph &graph,
                                          const SolverOptions &options,
                                          const RotorOptions &rotorOptions,
                                          const RotorDPOptions &dp,
                                          RotorSolveInfo *info = nullptr);

} // namespace remat

#endif // REMAT_SOLVERS_ROTOR_H
