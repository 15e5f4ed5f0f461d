//===- JoinDP.cpp - Optimal backpropagation of join graphs ----------------===//
//
// seeds/002_c4b2a5e0f8f68511.txt: the minimal memory c_min of Theorem 2, the
// dynamic program Opt_join of Theorem 3 over canonical schedules (§3(a)),
// its reconstruction, and a player for schedules of the pebble model (§2).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Join.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

using namespace remat;
using namespace remat::join;

// -debug-only=remat-join-dp: the size of Opt_join's table and its optimum
// at the least and the most memory.
#define DEBUG_TYPE "remat-join-dp"

static const double kInfinity = std::numeric_limits<double>::infinity();

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

unsigned join::minMemory(llvm::ArrayRef<unsigned> lengths) {
  // Eq. (3.1). The peak is right after the turn: the input of every
  // non-empty branch is still needed, the k outputs of the turn are stored,
  // and one more slot moves between them unless a branch of length 1 can be
  // back-propagated at once, which frees its input.
  unsigned k = unsigned(lengths.size()), nonEmpty = 0;
  bool hasOne = false;
  for (unsigned l : lengths) {
    nonEmpty += l != 0;
    hasOne |= l == 1;
  }
  if (nonEmpty == 0)
    return k;
  return k + nonEmpty + (hasOne ? 0 : 1);
}

std::string join::formatJoinSchedule(const JoinSchedule &schedule) {
  std::string text;
  for (const JoinOp &op : schedule) {
    if (!text.empty())
      text += ' ';
    switch (op.kind) {
    case JoinOp::Kind::Forward:
      text += (op.keep ? "F" : "f") + std::to_string(op.branch) + "." +
              std::to_string(op.index);
      break;
    case JoinOp::Kind::Backward:
      text += "B" + std::to_string(op.branch) + "." + std::to_string(op.index);
      break;
    case JoinOp::Kind::Turn:
      text += "T";
      break;
    }
  }
  return text;
}

PebbleResult join::simulatePebbles(llvm::ArrayRef<unsigned> lengths,
                                   unsigned c, const JoinSchedule &schedule,
                                   const UniformCosts &costs) {
  PebbleResult result;
  const unsigned k = unsigned(lengths.size());
  std::vector<std::vector<char>> x(k), xbar(k);
  for (unsigned b = 0; b < k; ++b) {
    x[b].assign(lengths[b] + 1, 0);
    xbar[b].assign(lengths[b] + 1, 0);
    x[b][0] = 1;
  }
  unsigned live = k;
  result.peak = live;
  bool turned = false;
  auto fail = [&](size_t i, const std::string &why) {
    result.valid = false;
    result.error = "op " + std::to_string(i) + ": " + why;
    return result;
  };
  if (live > c)
    return fail(0, "the inputs alone exceed the memory");
  for (size_t i = 0; i < schedule.size(); ++i) {
    const JoinOp &op = schedule[i];
    const std::string name = formatJoinSchedule({op});
    if (op.kind == JoinOp::Kind::Turn) {
      if (turned)
        return fail(i, "second turn");
      for (unsigned b = 0; b < k; ++b)
        if (!x[b][lengths[b]])
          return fail(i, "the turn needs x_" + std::to_string(lengths[b]) +
                             " of branch " + std::to_string(b));
      for (unsigned b = 0; b < k; ++b) {
        x[b][lengths[b]] = 0;
        xbar[b][lengths[b]] = 1;
      }
      turned = true;
      result.cost += costs.turn;
      continue;
    }
    if (op.branch >= k || op.index >= lengths[op.branch])
      return fail(i, name + ": no such step");
    std::vector<char> &xs = x[op.branch], &bs = xbar[op.branch];
    if (op.kind == JoinOp::Kind::Forward) {
      if (!xs[op.index])
        return fail(i, name + " needs its input");
      if (xs[op.index + 1])
        return fail(i, name + ": its output is already stored");
      if (op.keep) {
        if (++live > c)
          return fail(i, name + " exceeds " + std::to_string(c) + " slots");
      } else {
        xs[op.index] = 0;
      }
      xs[op.index + 1] = 1;
      result.cost += costs.forward;
    } else {
      if (!xs[op.index] || !bs[op.index + 1])
        return fail(i, name + " needs x_i and xbar_{i+1}");
      xs[op.index] = 0;
      bs[op.index + 1] = 0;
      bs[op.index] = 1;
      --live;
      result.cost += costs.backward;
    }
    result.peak = std::max(result.peak, live);
  }
  for (unsigned b = 0; b < k; ++b)
    if (!xbar[b][0]) {
      result.valid = false;
      result.error = "end: xbar_0 of branch " + std::to_string(b) +
                     " was not computed";
      return result;
    }
  if (live != k) {
    result.valid = false;
    result.error = "end: data other than the xbar_0 are still stored";
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Opt_join
//===----------------------------------------------------------------------===//

JoinDP::JoinDP(std::vector<unsigned> lengthsIn, unsigned maxSlots,
               const UniformCosts &costsIn)
    : lengths(std::move(lengthsIn)), slots(maxSlots), costs(costsIn) {
  const unsigned k = numBranches();
  stride.assign(k, 1);
  size_t states = 1;
  for (unsigned b = 0; b < k; ++b) {
    stride[b] = states;
    states *= lengths[b] + 1;
  }
  table.assign(states * (size_t(slots) + 1), kInfinity);
  // Mixed-radix order: every sub-problem (one component smaller) has a
  // smaller index, so it is final before it is read.
  std::vector<unsigned> sub(k, 0);
  for (size_t idx = 0; idx < states; ++idx) {
    size_t rest = idx;
    for (unsigned b = 0; b < k; ++b) {
      sub[b] = unsigned(rest % (lengths[b] + 1));
      rest /= lengths[b] + 1;
    }
    for (unsigned c = 0; c <= slots; ++c)
      table[idx * (size_t(slots) + 1) + c] =
          evaluate(sub, c, nullptr, nullptr);
  }
  LLVM_DEBUG({
    unsigned least = minMemory(lengths);
    llvm::dbgs() << "join dp: " << k << " branches of lengths "
                 << debugList(lengths) << ", " << states << " states x "
                 << (slots + 1) << " slot counts (" << tableBytes()
                 << " bytes); c_min = " << least << ", Opt_join(c_min) = "
                 << llvm::format("%g", least <= slots ? opt(least) : kInfinity)
                 << ", Opt_join(" << slots
                 << ") = " << llvm::format("%g", opt(slots)) << "\n";
  });
}

size_t JoinDP::index(llvm::ArrayRef<unsigned> sub) const {
  size_t idx = 0;
  for (unsigned b = 0; b < sub.size(); ++b)
    idx += sub[b] * stride[b];
  return idx;
}

double JoinDP::opt(llvm::ArrayRef<unsigned> sub, unsigned c) const {
  assert(sub.size() == lengths.size() && "one length per branch");
  for (unsigned b = 0; b < sub.size(); ++b)
    if (sub[b] > lengths[b])
      return kInfinity;
  // More memory never hurts: beyond the table, its last column.
  c = std::min(c, slots);
  return table[index(sub) * (size_t(slots) + 1) + c];
}

double JoinDP::evaluate(llvm::ArrayRef<unsigned> sub, unsigned c,
                        unsigned *branch, unsigned *steps) const {
  // Theorem 3.
  const unsigned k = numBranches();
  if (c < minMemory(sub))
    return kInfinity;
  unsigned nonEmpty = 0, total = 0;
  for (unsigned l : sub) {
    nonEmpty += l != 0;
    total += l;
  }
  if (total == 0)
    return costs.turn;
  if (total == 1)
    return costs.forward + costs.turn + costs.backward;
  // Canonical form (§3(a)): i forward steps on branch m from its current
  // input, which stays stored; the rest of the join with one slot fewer;
  // then the i steps back-propagated with the memory the other k - 1
  // branches' final gradients leave.
  double best = kInfinity;
  std::vector<unsigned> smaller(sub.begin(), sub.end());
  for (unsigned m = 0; m < k; ++m) {
    for (unsigned i = 1; i <= sub[m]; ++i) {
      smaller[m] = sub[m] - i;
      double rest = table[index(smaller) * (size_t(slots) + 1) + (c - 1)];
      smaller[m] = sub[m];
      if (std::isinf(rest))
        continue;
      // The paper writes Opt_0(i - 1, c - (k - 1)) for this term; see
      // reverseTime() and docs/budget-solvers.md for the slot it counts.
      double back = reverseTime(i, c - (k - 1), costs);
      double value = i * costs.forward + rest + back;
      if (value < best) {
        best = value;
        if (branch)
          *branch = m;
        if (steps)
          *steps = i;
      }
    }
  }
  return best;
}

llvm::Error JoinDP::rebuild(std::vector<unsigned> sub,
                            std::vector<unsigned> offset, unsigned c,
                            JoinSchedule &out) const {
  const unsigned k = numBranches();
  while (true) {
    if (std::isinf(opt(sub, c)))
      return makeError("join: infeasible with " + llvm::Twine(c) + " slots");
    unsigned total = 0, only = 0;
    for (unsigned b = 0; b < k; ++b) {
      total += sub[b];
      if (sub[b])
        only = b;
    }
    if (total == 0) {
      out.push_back({JoinOp::Kind::Turn, 0, 0, false});
      return llvm::Error::success();
    }
    if (total == 1) {
      out.push_back({JoinOp::Kind::Forward, only, offset[only], true});
      out.push_back({JoinOp::Kind::Turn, 0, 0, false});
      out.push_back({JoinOp::Kind::Backward, only, offset[only], false});
      return llvm::Error::success();
    }
    unsigned m = 0, i = 0;
    evaluate(sub, c, &m, &i);
    for (unsigned step = 0; step < i; ++step)
      out.push_back(
          {JoinOp::Kind::Forward, m, offset[m] + step, step == 0});
    std::vector<unsigned> restSub = sub, restOffset = offset;
    restSub[m] -= i;
    restOffset[m] += i;
    if (auto err = rebuild(std::move(restSub), std::move(restOffset), c - 1,
                           out))
      return err;
    return appendReversal(m, offset[m], i, c - (k - 1), costs, out);
  }
}

llvm::Expected<JoinSchedule> JoinDP::schedule(unsigned c) const {
  if (c > slots)
    return makeError("join: " + llvm::Twine(c) + " slots is beyond the table (" +
                     llvm::Twine(slots) + ")");
  JoinSchedule out;
  if (auto err = rebuild(lengths, std::vector<unsigned>(lengths.size(), 0), c,
                         out))
    return std::move(err);
  return out;
}
