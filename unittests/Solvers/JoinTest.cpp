//===- JoinTest.cpp - Join graphs: c_min, Opt_join, REV / Opt_0 -----------===//
//
// seeds/002: Theorem 2 (c_min) for every small length vector, Theorem 3
// (Opt_join) and its reconstructed schedules against brute-force pebbling,
// Opt_join for k = 1 against REV / Opt_0, Griewank & Walther's closed form
// against its recursion, and the figures of the paper's §4.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Join.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <unordered_map>

using namespace remat;
using namespace remat::join;

namespace {

const double kInf = std::numeric_limits<double>::infinity();

/// The optimum of PROB_join(lengths, c) over *all* schedules of the pebble
/// model, by Dijkstra over the sets of stored data: forward steps (keeping or
/// overwriting their input), backward steps, the turn, and deleting any datum
/// for free. Independent of the dynamic program and of simulatePebbles.
double brutePebbling(const std::vector<unsigned> &lengths, unsigned c,
                     const UniformCosts &costs = {}) {
  const unsigned k = unsigned(lengths.size());
  std::vector<unsigned> base(k);
  unsigned bits = 0;
  for (unsigned b = 0; b < k; ++b) {
    base[b] = bits;
    bits += 2 * (lengths[b] + 1);
  }
  const unsigned turnBit = bits;
  auto x = [&](unsigned b, unsigned i) { return uint64_t(1) << (base[b] + i); };
  auto xb = [&](unsigned b, unsigned i) {
    return uint64_t(1) << (base[b] + lengths[b] + 1 + i);
  };
  auto count = [&](uint64_t s) {
    return unsigned(__builtin_popcountll(s & ~(uint64_t(1) << turnBit)));
  };
  uint64_t start = 0, goal = 0;
  for (unsigned b = 0; b < k; ++b) {
    start |= x(b, 0);
    goal |= xb(b, 0);
  }
  if (count(start) > c)
    return kInf;
  std::unordered_map<uint64_t, double> dist;
  using Entry = std::pair<double, uint64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  dist[start] = 0;
  queue.push({0, start});
  while (!queue.empty()) {
    auto [d, s] = queue.top();
    queue.pop();
    if (d > dist[s])
      continue;
    if ((s & goal) == goal)
      return d;
    auto relax = [&](uint64_t next, double w) {
      if (count(next) > c)
        return;
      auto it = dist.find(next);
      if (it == dist.end() || d + w < it->second) {
        dist[next] = d + w;
        queue.push({d + w, next});
      }
    };
    bool turned = s >> turnBit & 1;
    if (!turned) {
      bool ready = true;
      for (unsigned b = 0; b < k; ++b)
        ready &= bool(s & x(b, lengths[b]));
      if (ready) {
        uint64_t next = s | (uint64_t(1) << turnBit);
        for (unsigned b = 0; b < k; ++b)
          next = (next & ~x(b, lengths[b])) | xb(b, lengths[b]);
        relax(next, costs.turn);
      }
    }
    for (unsigned b = 0; b < k; ++b) {
      for (unsigned i = 0; i < lengths[b]; ++i) {
        if ((s & x(b, i)) && !(s & x(b, i + 1))) {
          relax(s | x(b, i + 1), costs.forward);
          relax((s | x(b, i + 1)) & ~x(b, i), costs.forward);
        }
        if ((s & x(b, i)) && (s & xb(b, i + 1)) && !(s & xb(b, i)))
          relax((s | xb(b, i)) & ~x(b, i) & ~xb(b, i + 1), costs.backward);
      }
      for (unsigned i = 0; i <= lengths[b]; ++i) {
        if (s & x(b, i))
          relax(s & ~x(b, i), 0);
        if ((s & xb(b, i)) && i > 0)
          relax(s & ~xb(b, i), 0);
      }
    }
  }
  return kInf;
}

/// Every vector with k entries in [0, maxLength].
std::vector<std::vector<unsigned>> vectors(unsigned k, unsigned maxLength) {
  std::vector<std::vector<unsigned>> out;
  std::vector<unsigned> v(k, 0);
  std::function<void(unsigned)> rec = [&](unsigned b) {
    if (b == k) {
      out.push_back(v);
      return;
    }
    for (unsigned l = 0; l <= maxLength; ++l) {
      v[b] = l;
      rec(b + 1);
    }
  };
  rec(0);
  return out;
}

std::vector<std::vector<unsigned>> smallJoins() {
  std::vector<std::vector<unsigned>> all;
  for (auto &v : vectors(1, 6))
    all.push_back(v);
  for (auto &v : vectors(2, 3))
    all.push_back(v);
  for (auto &v : vectors(3, 2))
    all.push_back(v);
  return all;
}

std::string str(const std::vector<unsigned> &v) {
  std::string s = "(";
  for (unsigned l : v)
    s += std::to_string(l) + (&l == &v.back() ? "" : ",");
  return s + ")";
}

unsigned fullMemory(const std::vector<unsigned> &lengths) {
  // Everything stored at the turn, plus one.
  unsigned sum = 0;
  for (unsigned l : lengths)
    sum += l + 1;
  return sum + 1;
}

//===----------------------------------------------------------------------===//
// Theorem 2
//===----------------------------------------------------------------------===//

TEST(JoinCMin, MatchesTheorem2ForAllSmallLengthVectors) {
  for (const std::vector<unsigned> &lengths : smallJoins()) {
    unsigned least = 0;
    while (std::isinf(brutePebbling(lengths, least)))
      ++least;
    EXPECT_EQ(minMemory(lengths), least) << str(lengths);
  }
  // The paper's §4: two chains start at 5 slots, three at 7.
  EXPECT_EQ(minMemory({3, 15}), 5u);
  EXPECT_EQ(minMemory({6, 6, 6}), 7u);
  EXPECT_EQ(minMemory({}), 0u);
  EXPECT_EQ(minMemory({0, 0}), 2u);
  EXPECT_EQ(minMemory({1, 0, 5}), 5u);
}

//===----------------------------------------------------------------------===//
// Theorem 3
//===----------------------------------------------------------------------===//

void checkJoins(const UniformCosts &costs) {
  for (const std::vector<unsigned> &lengths : smallJoins()) {
    unsigned top = fullMemory(lengths);
    JoinDP dp(lengths, top, costs);
    for (unsigned c = 0; c <= top; ++c) {
      std::string at = str(lengths) + " c=" + std::to_string(c);
      double expected = brutePebbling(lengths, c, costs);
      EXPECT_EQ(dp.opt(c), expected) << at;
      if (std::isinf(expected))
        continue;
      llvm::Expected<JoinSchedule> schedule = dp.schedule(c);
      ASSERT_TRUE(bool(schedule)) << at << llvm::toString(schedule.takeError());
      PebbleResult played = simulatePebbles(lengths, c, *schedule, costs);
      EXPECT_TRUE(played.valid) << at << ": " << played.error << " in "
                                << formatJoinSchedule(*schedule);
      EXPECT_LE(played.peak, c) << at;
      EXPECT_EQ(played.cost, expected) << at;
    }
  }
}

TEST(JoinDPTest, EqualsBruteForcePebblingUnitCosts) { checkJoins({}); }

TEST(JoinDPTest, EqualsBruteForcePebblingOtherCosts) {
  UniformCosts costs;
  costs.forward = 2;
  costs.backward = 3;
  costs.turn = 5;
  checkJoins(costs);
}

TEST(JoinDPTest, SingleChainEqualsOpt0) {
  // k = 1: Opt_join is REV's optimum, here in its closed form.
  for (UniformCosts costs : {UniformCosts{}, UniformCosts{2, 3, 5}}) {
    for (unsigned l = 0; l <= 40; ++l) {
      JoinDP dp({l}, 16, costs);
      for (unsigned c = 0; c <= 16; ++c)
        EXPECT_EQ(dp.opt(c), opt0(l, c, costs)) << "l=" << l << " c=" << c;
    }
    for (unsigned l = 0; l <= 7; ++l)
      for (unsigned c = 0; c <= 9; ++c)
        EXPECT_EQ(opt0(l, c, costs), brutePebbling({l}, c, costs))
            << "l=" << l << " c=" << c;
  }
}

TEST(JoinDPTest, PaperSection4Figures) {
  // With u_f = u_b = u_t = 1 the least makespan is 12L + 1, reached with
  // 6L + 3 slots for the Siamese join (2L, 2L, 2L), 6L + 2 for the
  // cross-modal join (L, 5L) and 6L + 1 for the single chain 6L — and not
  // one slot below.
  for (unsigned L : {1u, 2u}) {
    struct Case {
      std::vector<unsigned> lengths;
      unsigned slots;
    };
    for (const Case &cs : {Case{{2 * L, 2 * L, 2 * L}, 6 * L + 3},
                           Case{{L, 5 * L}, 6 * L + 2},
                           Case{{6 * L}, 6 * L + 1}}) {
      JoinDP dp(cs.lengths, cs.slots);
      EXPECT_EQ(dp.opt(cs.slots), 12.0 * L + 1) << str(cs.lengths);
      EXPECT_GT(dp.opt(cs.slots - 1), 12.0 * L + 1) << str(cs.lengths);
    }
  }
}

TEST(JoinDPTest, PrintedBackwardTermIsOneSlotOptimistic) {
  // Theorem 3 prints the backward phase of i steps as Opt_0(i - 1, c-(k-1)).
  // For one chain of 4 steps in 3 slots that gives 11, below what any
  // schedule achieves (12): reversing 3 steps from x_0 with xbar_3 already
  // stored cannot use the slot Opt_0(2, 3) counts for it.
  auto printed = [](unsigned l, unsigned c) {
    std::function<double(unsigned, unsigned)> rec = [&](unsigned l,
                                                         unsigned c) {
      if (c < minMemory({l}))
        return kInf;
      if (l == 0)
        return 1.0;
      if (l == 1)
        return 3.0;
      double best = kInf;
      for (unsigned i = 1; i <= l; ++i)
        best = std::min(best, i + rec(l - i, c - 1) + opt0(i - 1, c));
      return best;
    };
    return rec(l, c);
  };
  EXPECT_EQ(printed(4, 3), 11);
  EXPECT_EQ(brutePebbling({4}, 3), 12);
  EXPECT_EQ(JoinDP({4}, 3).opt(3), 12);
  EXPECT_EQ(reverseTime(3, 3), 6);
  EXPECT_EQ(opt0(2, 3), 5);
}

//===----------------------------------------------------------------------===//
// Griewank & Walther
//===----------------------------------------------------------------------===//

TEST(Revolve, BinomialClosedFormMatchesTheRecursion) {
  // Least forward steps to reverse i steps with c slots (x_0 and xbar_i
  // included), by Griewank's recursion: advance j, reverse the last i - j
  // with one slot fewer, then the first j.
  const unsigned maxI = 80, maxC = 10;
  std::vector<std::vector<double>> f(maxI + 1,
                                     std::vector<double>(maxC + 1, kInf));
  for (unsigned c = 0; c <= maxC; ++c) {
    f[0][c] = 0;
    if (c >= 2)
      f[1][c] = 0;
  }
  for (unsigned c = 3; c <= maxC; ++c)
    for (unsigned i = 2; i <= maxI; ++i)
      for (unsigned j = 1; j < i; ++j)
        f[i][c] = std::min(f[i][c], j + f[i - j][c - 1] + f[j][c]);
  for (unsigned i = 0; i <= maxI; ++i)
    for (unsigned c = 0; c <= maxC; ++c) {
      double closed =
          std::isinf(reverseTime(i, c)) ? kInf : reverseTime(i, c) - i;
      EXPECT_EQ(closed, f[i][c]) << "i=" << i << " c=" << c;
    }
  EXPECT_EQ(binomialBeta(0, 5), 1u);
  EXPECT_EQ(binomialBeta(3, 2), 10u);
  EXPECT_EQ(binomialBeta(5, 5), 252u);
  EXPECT_EQ(binomialBeta(200, 200), std::numeric_limits<uint64_t>::max());
  // One snapshot: i(i-1)/2 forward steps.
  EXPECT_EQ(revolveForwardSteps(10, 1), 45u);
  EXPECT_EQ(revolveForwardSteps(1, 0), 0u);
  EXPECT_EQ(revolveForwardSteps(2, 0), std::numeric_limits<uint64_t>::max());
}

TEST(Revolve, ReversalScheduleIsValid) {
  UniformCosts costs{1, 2, 3};
  for (unsigned i = 1; i <= 30; ++i)
    for (unsigned c = 3; c <= 8; ++c) {
      // Play the reversal as the backward phase of a one-branch join whose
      // turn happened first: x_0 and x_i are forward-stepped to the turn.
      JoinSchedule out;
      for (unsigned s = 0; s < i; ++s)
        out.push_back({JoinOp::Kind::Forward, 0, s, s == 0});
      out.push_back({JoinOp::Kind::Turn, 0, 0, false});
      // x_0 and xbar_i stored, c slots: the reversal of the first i - 1
      // steps needs xbar_{i}; rebuild it as the join DP does (i steps from
      // x_0 with xbar_i).
      JoinSchedule rev;
      ASSERT_FALSE(bool(appendReversal(0, 0, i, c, costs, rev)));
      // The turn took x_i to xbar_i; the sequence is F*, T, reversal.
      out.insert(out.end(), rev.begin(), rev.end());
      // Memory: the forward sweep holds x_0 and x_i only if it overwrites;
      // use c + 0 slots, which the sweep needs 2 of.
      PebbleResult played = simulatePebbles({i}, c, out, costs);
      EXPECT_TRUE(played.valid) << "i=" << i << " c=" << c << ": "
                                << played.error;
      EXPECT_EQ(played.cost, i * costs.forward + costs.turn +
                                 reverseTime(i, c, costs));
    }
}

} // namespace
