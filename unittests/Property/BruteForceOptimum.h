//===- BruteForceOptimum.h - The cheapest plan by exhaustive search -*- C++ -*-===//
//
// The reference every reported lower bound and every "optimal" or
// "infeasible" claim is judged against on tiny graphs: Dijkstra over every
// state a schedule can reach, written from the simulator's rules as
// documented (Schedule.h), not from any solver's code, and linked against
// RematGraph only, like the independent checker. A state is the set of
// values holding their bytes and the set of nodes computed at least once;
// the moves are every Free (cost 0) and every Compute whose inputs are
// resident and outputs are not, with each in-place choice of its reuse pairs
// (an input updated in place gives its bytes to the output and is read no
// more). No pruning beyond that: it is exponential and meant for graphs of
// at most about ten nodes and sixteen values.
//
//===----------------------------------------------------------------------===//

#ifndef REMAT_UNITTESTS_PROPERTY_BRUTEFORCEOPTIMUM_H
#define REMAT_UNITTESTS_PROPERTY_BRUTEFORCEOPTIMUM_H

#include "remat/Graph/TrainingGraph.h"

#include <cstdint>
#include <optional>

namespace remat {
namespace property {

struct BruteForceResult {
  /// False when the state space is too large for the search.
  bool solved = false;
  /// The least cost of a plan whose peak is within the budget; nullopt when
  /// no plan fits (solved and infeasible).
  std::optional<long double> optimum;
  size_t states = 0;
};

/// The largest graphs bruteForceOptimum takes.
constexpr size_t kBruteForceMaxNodes = 12, kBruteForceMaxValues = 20;

BruteForceResult bruteForceOptimum(const TrainingGraph &graph,
                                   uint64_t budget,
                                   size_t maxStates = 2'000'000);

} // namespace property
} // namespace remat

#endif // REMAT_UNITTESTS_PROPERTY_BRUTEFORCEOPTIMUM_H
