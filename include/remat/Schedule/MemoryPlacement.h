//===- MemoryPlacement.h - Buffers at compile-time arena offsets -*- C++ -*-===//
//
// Where each byte lives (issue 22): the offline placement problem, also known
// as dynamic storage allocation (DSA). Every buffer has a size, an alignment
// and a lifetime; a placement gives each buffer an offset in one arena such
// that two buffers alive at the same time never share a byte. The arena is
// the highest byte used. The live peak (the largest sum of the sizes of the
// buffers alive at one time) is a lower bound on every arena; the simulator's
// peak is exactly the live peak of the buffers of its schedule
// (scheduleBuffers), so an arena equal to the live peak means the placement
// costs nothing over the prediction.
//
// Solvers: greedy heuristics as production compilers use them (TFLite's
// arena planner: best fit by decreasing size; by number of conflicts; by
// lifetime; first fit in program order as the naive reference), and an exact
// search in the canonical solutions of MiniMalloc (M. D. Moffitt, "MiniMalloc:
// A Lightweight Memory Allocator for Hardware-Accelerated Machine Learning",
// ASPLOS 2023) within a time limit, which proves optimality when it finishes.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_SCHEDULE_MEMORYPLACEMENT_H
#define REMAT_SCHEDULE_MEMORYPLACEMENT_H

#include "remat/Schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace remat {

//===----------------------------------------------------------------------===//
// The placement problem
//===----------------------------------------------------------------------===//

/// One buffer to place. Its lifetime is the half-open interval of program
/// steps [begin, end): it is alive at step t iff begin <= t < end. Two buffers
/// conflict (must not share a byte) iff both have bytes and their lifetimes
/// intersect: a.begin < b.end && b.begin < a.end. A buffer whose lifetime is
/// empty (begin == end) or whose size is 0 conflicts with nothing.
struct PlacementBuffer {
  uint64_t bytes = 0;
  /// The offset must be a multiple of it: a power of two, at least 1.
  uint64_t alignment = 1;
  int64_t begin = 0;
  int64_t end = 0;

  bool isEmpty() const { return bytes == 0 || begin >= end; }
};

/// Whether `a` and `b` must not share a byte (see PlacementBuffer).
bool placementConflict(const PlacementBuffer &a, const PlacementBuffer &b);

/// Checks the input of the placement solvers: alignments are powers of two,
/// begin <= end, and every sum of sizes (with alignment padding) fits in 63
/// bits. The error names the first bad buffer.
llvm::Error checkPlacementProblem(const std::vector<PlacementBuffer> &buffers);

/// The live peak: the largest, over the steps t, of the sum of the bytes of
/// the buffers alive at t. A lower bound on every arena.
uint64_t placementLivePeak(const std::vector<PlacementBuffer> &buffers);

/// For each buffer, its breadth: the most bytes alive at one step of its
/// lifetime (0 for an empty buffer). O(n log n).
std::vector<uint64_t>
placementBreadths(const std::vector<PlacementBuffer> &buffers);

/// A lower bound on the arena of every placement, at least the live peak: at
/// each step, the buffers alive sit at multiples of g, the smallest alignment
/// of a non-empty buffer, so each of them but the topmost occupies its size
/// rounded up to g (sum of rounded sizes less the largest rounding).
uint64_t placementLowerBound(const std::vector<PlacementBuffer> &buffers);

/// The arena a placement needs: the largest offset + bytes of a non-empty
/// buffer (0 when every buffer is empty).
uint64_t placementArena(const std::vector<PlacementBuffer> &buffers,
                        const std::vector<uint64_t> &offsets);

/// Checks a placement: one offset per buffer, each aligned, no two
/// conflicting buffers overlapping in [offset, offset + bytes). The error
/// names the first violation.
llvm::Error verifyPlacement(const std::vector<PlacementBuffer> &buffers,
                            const std::vector<uint64_t> &offsets);

//===----------------------------------------------------------------------===//
// Solvers
//===----------------------------------------------------------------------===//

/// The order a greedy heuristic places buffers in.
enum class PlacementOrder {
  /// Decreasing size (TFLite's "greedy by size" arena planner; Pisarchyk &
  /// Lee, "Efficient Memory Management for Deep Neural Net Inference", 2020,
  /// §4.2), then longer lifetime.
  Size,
  /// Most conflicting buffers first (the degree in the interference graph),
  /// then larger size.
  Conflicts,
  /// Longest lifetime first, then larger size.
  Lifetime,
  /// Largest area (bytes x lifetime) first.
  Area,
  /// Program order: by begin, then by index.
  Program,
  /// Largest breadth first: the most bytes alive at one step of the
  /// buffer's lifetime (the buffers of the fullest steps make the arena:
  /// TFLite's "greedy by breadth", Pisarchyk & Lee §4.3; MiniMalloc's "T"
  /// key), then larger area.
  Breadth,
};

/// How a greedy heuristic places the buffers.
enum class PlacementFit {
  /// In `order`, each into the smallest gap it fits in among the
  /// conflicting buffers already placed (else on top of everything).
  Best,
  /// In `order`, each into the lowest gap it fits in.
  First,
  /// Skyline: repeatedly the unplaced buffer that can go lowest, on top of
  /// the conflicting buffers placed so far, `order` breaking ties. Offsets
  /// never decrease: this is one dive of MiniMalloc's search (its dynamic
  /// ordering, §4.1) without backtracking.
  Skyline,
};

/// One greedy placement (see PlacementFit). O(n^2) time.
std::vector<uint64_t> placeGreedy(const std::vector<PlacementBuffer> &buffers,
                                  PlacementOrder order, PlacementFit fit);

/// The name of a heuristic, as PlacementResult::method reports it:
/// "greedy-<order>" for best fit ("greedy-size", "greedy-conflicts", ...),
/// "first-fit-program", "skyline-<order>" ("skyline-lifetime", ...), and
/// "first-fit-<order>", "best-fit-program" for the other combinations. The
/// random dives are "skyline-random", the exact search "exact".
std::string placementMethodName(PlacementOrder order, PlacementFit fit);

/// The greedy heuristics placeBuffers runs, in its order.
llvm::ArrayRef<std::pair<PlacementOrder, PlacementFit>> placementHeuristics();

struct PlacementOptions {
  /// Run the greedy heuristics (best fit by size, conflicts, lifetime, area;
  /// first fit in program order; skyline by lifetime, size, area, program
  /// order) and start from the best of them.
  bool heuristics = true;
  /// Run the exact search after the heuristics (unless their best already
  /// meets the lower bound).
  bool exact = true;
  /// Skyline dives with randomly perturbed priorities after the
  /// deterministic heuristics, while the arena is above the lower bound (a
  /// fixed seed: the same input gives the same placement unless the time
  /// limit cuts the dives short).
  unsigned randomDives = 16;
  /// Wall-clock limit of the random dives and the exact search together,
  /// seconds; 0 (or less): no limit (the search may take exponential time:
  /// for tests on small instances).
  double timeLimitSeconds = 1.0;
};

/// One method's outcome, for reports and benchmarks.
struct PlacementAttempt {
  std::string method;
  /// The arena of its placement; 0 with `found` false when the exact search
  /// found no placement below the incumbent in time.
  uint64_t arenaBytes = 0;
  bool found = true;
  double seconds = 0;
};

struct PlacementResult {
  /// One offset per buffer (0 for empty ones).
  std::vector<uint64_t> offsets;
  /// max(offset + bytes) over the non-empty buffers.
  uint64_t arenaBytes = 0;
  /// placementLivePeak of the buffers.
  uint64_t livePeakBytes = 0;
  /// The best proven lower bound on the arena: placementLowerBound, raised
  /// by the capacities the exact search proved infeasible.
  uint64_t lowerBoundBytes = 0;
  /// Which method's placement `offsets` is: a heuristic's name
  /// (placementMethodName), "skyline-random" or "exact".
  std::string method;
  /// Proven optimal: the arena meets the lower bound, or the exact search
  /// proved that one byte less is infeasible.
  bool optimal = false;
  /// Whether the exact search ran to the end (proved its answer); false
  /// when it stopped on the time limit or did not run.
  bool searchFinished = false;
  /// Search nodes the exact search visited.
  uint64_t searchNodes = 0;
  /// Wall-clock seconds of the whole call.
  double seconds = 0;
  /// Every method that ran, in order.
  std::vector<PlacementAttempt> attempts;

  /// arena / live peak - 1 (0 when the live peak is 0).
  double fragmentation() const;
  llvm::json::Value toJSON(bool withOffsets = false) const;
};

/// Places `buffers` (checkPlacementProblem must pass): the best of the
/// heuristics, then MiniMalloc's canonical search for a smaller arena within
/// the time limit. The result is always a valid placement (verifyPlacement);
/// `optimal` says whether its arena is proven least.
PlacementResult placeBuffers(const std::vector<PlacementBuffer> &buffers,
                             const PlacementOptions &options = {});

/// What one exact decision search found.
enum class PlacementSearchOutcome {
  /// A placement within the capacity.
  Found,
  /// Proven: no placement fits in the capacity.
  Infeasible,
  /// Stopped on the deadline or the node limit: nothing proven.
  Stopped,
};

/// MiniMalloc's decision search (Moffitt 2023, §4): is there a placement of
/// `buffers` with arena <= `capacity`? Depth-first over canonical solutions
/// only, with the paper's inference and dominance rules. On Found,
/// `offsets` holds the placement. `seconds` <= 0: no time limit. `nodes`
/// (if given) receives the number of search nodes. `incumbent` (if given)
/// is a valid placement of `buffers`: the groups of buffers that never meet
/// the others in time are searched independently, and a group that the
/// incumbent already places within `capacity` keeps its offsets.
PlacementSearchOutcome
searchPlacement(const std::vector<PlacementBuffer> &buffers, uint64_t capacity,
                double seconds, std::vector<uint64_t> &offsets,
                uint64_t *nodes = nullptr,
                const std::vector<uint64_t> *incumbent = nullptr);

//===----------------------------------------------------------------------===//
// The buffers of a schedule
//===----------------------------------------------------------------------===//

/// The buffers a schedule allocates, exactly as the simulator counts its
/// memory (Simulator.cpp): time is the index of the schedule's statements.
/// The Compute at statement i allocates a buffer for each output, alive from
/// i until the Free that releases it (exclusive: the timeline after a Free
/// no longer holds it), or to the end of the schedule (statement count) for a
/// step output or a value never freed; its workspace (if any bytes) is a
/// buffer alive at statement i only. An in-place update (inPlaceUpdates) does
/// not allocate: the output takes over its input's buffer, which then lives
/// on until the Free of the value that holds it last. Fixed values (function
/// arguments) have no buffer. Hence the bytes alive at statement t are
/// exactly SimulationReport::timeline[t], and the live peak is the
/// simulator's peak.
struct ScheduleBuffers {
  /// The placement problem: one entry per buffer.
  std::vector<PlacementBuffer> buffers;

  /// Who holds a buffer: the output `value` computed at statement `step`, or
  /// the workspace of the Compute at `step` (value == -1).
  struct Occupant {
    size_t step;
    ValueId value;
  };
  /// Per buffer, its occupants in time order: one workspace, or the chain of
  /// value instances of in-place updates (an output, then the outputs that
  /// updated it in place).
  std::vector<std::vector<Occupant>> occupants;

  /// Per statement: for a Compute, the buffer of each of its node's outputs
  /// (parallel to Node::outputs); empty for a Free.
  std::vector<std::vector<int>> outputBuffers;
  /// Per statement: the buffer of a Compute's workspace, -1 when it has none
  /// (no workspace bytes, or a Free).
  std::vector<int> workspaceBuffers;
};

/// The buffers of `schedule` on `graph` (see ScheduleBuffers), each with
/// `alignment` (a power of two). An error if the schedule is invalid (the
/// simulator's message) or the alignment is not a power of two.
llvm::Expected<ScheduleBuffers> scheduleBuffers(const TrainingGraph &graph,
                                                const Schedule &schedule,
                                                uint64_t alignment = 1);

/// A schedule's buffers and their placement (placeSchedule).
struct SchedulePlacement {
  ScheduleBuffers buffers;
  PlacementResult placement;

  /// The arena offset of output `k` (index into Node::outputs) of the
  /// Compute at statement `step`.
  uint64_t outputOffset(size_t step, size_t k) const {
    return placement.offsets[buffers.outputBuffers[step][k]];
  }
  /// The arena offset of the workspace of the Compute at `step`; nullopt
  /// when it has none.
  std::optional<uint64_t> workspaceOffset(size_t step) const {
    int buffer = buffers.workspaceBuffers[step];
    if (buffer < 0)
      return std::nullopt;
    return placement.offsets[buffer];
  }
};

/// scheduleBuffers, then placeBuffers: every buffer the compiled step
/// allocates at an offset of one arena of placement.arenaBytes bytes (errors
/// as scheduleBuffers).
llvm::Expected<SchedulePlacement>
placeSchedule(const TrainingGraph &graph, const Schedule &schedule,
              uint64_t alignment = 1, const PlacementOptions &options = {});

} // namespace remat

#endif // REMAT_SCHEDULE_MEMORYPLACEMENT_H
