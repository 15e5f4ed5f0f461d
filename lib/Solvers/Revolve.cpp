//===- Revolve.cpp - Revolve: heterogeneous (rotor §5.3) and binomial -----===//
//
// Two faces of Griewank & Walther's revolve:
//  - on heterogeneous chains, as rotor's evaluation converts it
//    (seeds/004 §5.3): the optimal persistent sequence of the automatic
//    differentiation model, which stores only activations a^l and performs
//    an F_all right before each backward step — rotor's dynamic program
//    without chains of F_all (RotorTable.cpp);
//  - on homogeneous chains, the binomial optimum REV / Opt_0 ([GW00], cited
//    by seeds/002 §3(b)): closed forms for the number of forward steps, and
//    the reversal schedule the join-graph program (JoinDP.cpp) builds on.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Join.h"
#include "remat/Solvers/Rotor.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace remat;
using namespace remat::join;

// -debug-only=remat-revolve: revolve on training graphs runs rotor's code
// (solveRotorFamily), which prints its stagings, tables and plan under this
// type too.
#define DEBUG_TYPE "remat-revolve"

static const double kInfinity = std::numeric_limits<double>::infinity();

llvm::Expected<Schedule> remat::solveRevolve(const TrainingGraph &graph,
                                             const SolverOptions &options,
                                             const RotorOptions &rotorOptions,
                                             RotorSolveInfo *info) {
  // Rotor's §5.3: "saving only activations a to memory, and performing a
  // F_all step before each backward step": Theorem 1's program with C_all
  // allowed only for single stages (Eq. 1).
  RotorDPOptions dp;
  dp.slots = rotorOptions.slots;
  dp.allowFAllChains = false;
  LLVM_DEBUG(llvm::dbgs() << "revolve: rotor's program without chains of "
                             "F_all, S="
                          << dp.slots << "\n");
  return solveRotorFamily(graph, options, rotorOptions, dp, info);
}

//===----------------------------------------------------------------------===//
// Binomial checkpointing
//===----------------------------------------------------------------------===//

uint64_t join::binomialBeta(unsigned s, unsigned r) {
  // C(s + r, min(s, r)) by the multiplicative formula; every partial product
  // is itself a binomial coefficient, so the division is exact.
  unsigned k = std::min(s, r), n = s + r;
  unsigned __int128 value = 1;
  for (unsigned i = 1; i <= k; ++i) {
    value = value * (n - k + i) / i;
    if (value > std::numeric_limits<uint64_t>::max())
      return std::numeric_limits<uint64_t>::max();
  }
  return uint64_t(value);
}

uint64_t join::revolveForwardSteps(uint64_t l, unsigned s) {
  // Griewank & Walther: with s snapshots, l steps are reversed with the
  // repetition number r (each step advanced at most r times) when
  // beta(s, r - 1) < l <= beta(s, r), and the least number of forward steps
  // is r l - beta(s + 1, r - 1).
  if (l <= 1)
    return 0;
  if (s == 0)
    return std::numeric_limits<uint64_t>::max();
  unsigned r = 1;
  while (binomialBeta(s, r) < l)
    ++r;
  unsigned __int128 steps = (unsigned __int128)r * l;
  return uint64_t(steps - binomialBeta(s + 1, r - 1));
}

double join::reverseTime(unsigned i, unsigned c, const UniformCosts &costs) {
  if (i == 0)
    return 0;
  // x_0 and xbar_i take two slots; one more is needed to advance from x_0
  // as soon as a step must be recomputed.
  if (c < 2 || (i >= 2 && c < 3))
    return kInfinity;
  return double(revolveForwardSteps(i, c - 2)) * costs.forward +
         double(i) * costs.backward;
}

double join::opt0(unsigned l, unsigned c, const UniformCosts &costs) {
  if (l == 0)
    return c >= 1 ? costs.turn : kInfinity;
  // REV on one chain: advance to x_l (the last step may overwrite x_{l-1}),
  // turn in place, and the l steps are then reversed from x_0 and xbar_l
  // exactly as reverseTime() counts (Griewank's binomial optimum). Its
  // infinite cases are c_min((l)) of Theorem 2: 2 slots for l = 1, else 3.
  double reverse = reverseTime(l, c, costs);
  return std::isinf(reverse) ? kInfinity
                             : costs.forward + costs.turn + reverse;
}

llvm::Error join::appendReversal(unsigned branch, unsigned offset, unsigned i,
                                 unsigned c, const UniformCosts &costs,
                                 JoinSchedule &out) {
  // Griewank's recursion for the reversal of i steps (the structure REV
  // optimises over): advance j steps from x_0, keeping x_0; reverse the
  // last i - j with one slot fewer; then the first j with all c.
  while (true) {
    if (std::isinf(reverseTime(i, c, costs)))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "revolve: cannot reverse " + llvm::Twine(i) + " steps with " +
              llvm::Twine(c) + " slots");
    if (i == 0)
      return llvm::Error::success();
    if (i == 1) {
      out.push_back({JoinOp::Kind::Backward, branch, offset, false});
      return llvm::Error::success();
    }
    unsigned bestJ = 0;
    double best = kInfinity;
    for (unsigned j = 1; j < i; ++j) {
      double value = j * costs.forward + reverseTime(i - j, c - 1, costs) +
                     reverseTime(j, c, costs);
      if (value < best) {
        best = value;
        bestJ = j;
      }
    }
    for (unsigned step = 0; step < bestJ; ++step)
      out.push_back(
          {JoinOp::Kind::Forward, branch, offset + step, step == 0});
    if (auto err = appendReversal(branch, offset + bestJ, i - bestJ, c - 1,
                                  costs, out))
      return err;
    // Tail call: the first bestJ steps with all c slots.
    i = bestJ;
  }
}
