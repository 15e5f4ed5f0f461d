//===- IndependentChecker.h - A second simulator for property tests -*- C++ -*-===//
//
// An independent judge of a plan (a Schedule of Compute/Free statements) on a
// TrainingGraph, written from the memory model of DESIGN.md §5 and the
// contract in Schedule.h, sharing no code with lib/Schedule/Simulator.cpp or
// Schedule.cpp: it uses only the plain data types (Step, Schedule, Node,
// GraphValue) and links against RematGraph only, never RematSchedule.
//
// Where the simulator keeps one running "live bytes" counter, this checker
// builds the list of buffers the plan allocates, each an interval of
// statements [allocated, released) with its size (an output from its Compute
// to its Free or to the in-place update that takes its storage over; a
// workspace for its one statement), then sums the intervals with a
// difference array in 128-bit arithmetic. Whether a reuse pair is an
// in-place update is decided forwards, from the last statement that reads
// each *instance* of a value (an instance begins at each Compute of its
// producer), where the simulator walks the schedule backwards.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_UNITTESTS_PROPERTY_INDEPENDENTCHECKER_H
#define REMAT_UNITTESTS_PROPERTY_INDEPENDENTCHECKER_H

#include "remat/Graph/TrainingGraph.h"
#include "remat/Schedule/Schedule.h" // Step and Schedule, plain data only

#include <cstdint>
#include <string>
#include <vector>

namespace remat {
namespace property {

/// What the checker finds on one plan.
struct CheckResult {
  /// Every rule the plan breaks, in statement order (at most
  /// kMaxViolations, then one line saying how many more): empty when valid.
  std::vector<std::string> violations;
  size_t numViolations = 0;
  /// Peak bytes of non-fixed values plus workspace over the statements
  /// (fixed values, the function arguments, are not counted). Meaningful
  /// for a valid plan; best effort otherwise.
  uint64_t peakBytes = 0;
  /// First statement at which the peak is reached.
  size_t peakStep = 0;
  /// Bytes held during each statement (the workspace of a Compute
  /// included; after the release of a Free).
  std::vector<uint64_t> perStep;
  size_t numComputes = 0;
  /// Compute statements of nodes already computed before.
  size_t numRecomputations = 0;
  /// Sum of the costs of the Compute statements (long double).
  long double totalCost = 0;
  /// Number of reuse pairs that were in-place updates.
  size_t numInPlace = 0;
  /// Non-output values still resident after the last statement (allowed by
  /// the model, reported for information).
  size_t numLeftResident = 0;

  bool valid() const { return numViolations == 0; }
};

constexpr size_t kMaxViolations = 16;

/// Checks `schedule` against `graph` from first principles:
///  - a Compute names an existing node; each of its inputs is resident (a
///    fixed value, or an output computed earlier and not freed since); none
///    of its outputs is resident already;
///  - a Free names an existing value that is resident, neither fixed nor a
///    step output;
///  - at the end, every node was computed at least once (every gradient,
///    every forward value the backward needs) and every step output is
///    resident;
///  - memory: each Compute allocates its outputs and, for that statement
///    only, its workspace; a reuse pair (in, out) is in place when `in` is
///    not a step output and no later statement reads the instance of `in`
///    that the Compute reads: then `in`'s storage is released there (it stays
///    resident, holding nothing, until its Free); a Free releases the
///    value's storage.
CheckResult checkPlan(const TrainingGraph &graph, const Schedule &schedule);

/// A lower bound on the peak of every valid plan, from the graph alone: the
/// largest, over the nodes, of its workspace + its outputs + its non-fixed
/// inputs, less the inputs it may update in place (which are then not held
/// while it runs). 128-bit sums, saturated to UINT64_MAX.
uint64_t nodeLowerBound(const TrainingGraph &graph);

} // namespace property
} // namespace remat

#endif // REMAT_UNITTESTS_PROPERTY_INDEPENDENTCHECKER_H
