//===- Rotor.cpp - Rotor's operation model, DP and graph mapping ----------===//
//
// seeds/004_12ee49cee382de08.txt: the operation model of §3.1 (Table 1), the
// optimal persistent dynamic program of §4.2 (Theorem 1, Algorithms 1-2) with
// the slot discretisation of §5.2, and the bridge to training graphs (stages,
// the sets behind a^l / abar^l / delta^l, and the conversion of an operation
// sequence into Compute/Free statements). Revolve (§5.3) is the same program
// without chains of F_all (Revolve.cpp).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Rotor.h"

#include "remat/Solvers/Chain.h"
#include "remat/Structure/Structure.h"
#include "remat/Support/Debug.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

using namespace remat;

// -debug-only=remat-rotor: the stagings and chains, every table built (its
// memory, slots, size and optimum), the budget retries and the plan chosen.
// Revolve runs the same code (solveRotorFamily with allowFAllChains off) and
// prints under remat-revolve.
#define DEBUG_TYPE "remat-rotor"

[[maybe_unused]] static const char *familyDebugType(const RotorDPOptions &dp) {
  return dp.allowFAllChains ? "remat-rotor" : "remat-revolve";
}
[[maybe_unused]] static const char *familyName(const RotorDPOptions &dp) {
  return dp.allowFAllChains ? "rotor" : "revolve";
}
#define FAMILY_DEBUG(dp, ...) DEBUG_WITH_TYPE(familyDebugType(dp), __VA_ARGS__)

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static const float kInf = std::numeric_limits<float>::infinity();

//===----------------------------------------------------------------------===//
// RotorChain and the operation model
//===----------------------------------------------------------------------===//

RotorChain RotorChain::withLength(unsigned length) {
  RotorChain chain;
  size_t n = size_t(length) + 1;
  chain.a.assign(n, 0);
  chain.abar.assign(n, 0);
  chain.delta.assign(n, 0);
  chain.overheadF.assign(n, 0);
  chain.overheadB.assign(n, 0);
  chain.costF.assign(n, 0);
  chain.costB.assign(n, 0);
  chain.pinned.assign(n, false);
  chain.backwardReadsAbar.assign(n, true);
  return chain;
}

llvm::Error RotorChain::check() const {
  size_t n = a.size();
  if (n == 0)
    return makeError("rotor chain: 'a' must hold at least a^0");
  auto sized = [&](size_t size, const char *name) -> llvm::Error {
    if (size != n)
      return makeError(llvm::Twine("rotor chain: '") + name + "' has " +
                       llvm::Twine(size) + " entries, expected " +
                       llvm::Twine(n));
    return llvm::Error::success();
  };
  if (auto err = sized(abar.size(), "abar"))
    return err;
  if (auto err = sized(delta.size(), "delta"))
    return err;
  if (auto err = sized(overheadF.size(), "overheadF"))
    return err;
  if (auto err = sized(overheadB.size(), "overheadB"))
    return err;
  if (auto err = sized(costF.size(), "costF"))
    return err;
  if (auto err = sized(costB.size(), "costB"))
    return err;
  if (!pinned.empty())
    if (auto err = sized(pinned.size(), "pinned"))
      return err;
  if (!backwardReadsAbar.empty())
    if (auto err = sized(backwardReadsAbar.size(), "backwardReadsAbar"))
      return err;
  if (!reliefB.empty())
    if (auto err = sized(reliefB.size(), "reliefB"))
      return err;
  for (size_t l = 1; l < n; ++l) {
    // abar^l includes a^l (§3.1): an F_all stores at least what an F_ck of
    // the next stage reads.
    if (abar[l] < a[l])
      return makeError("rotor chain: stage " + llvm::Twine(l) +
                       " has abar < a (abar^l includes a^l)");
    // The relief cannot exceed what B^l is counted for (outside the
    // inputs, a B^l always holds delta^{l-1} at its end).
    if (relief(l) > delta[l] + abar[l] + a[l - 1] + overheadB[l])
      return makeError("rotor chain: stage " + llvm::Twine(l) +
                       " has a backward relief above its inputs");
    if (!(costF[l] >= 0) || !(costB[l] >= 0) || !std::isfinite(costF[l]) ||
        !std::isfinite(costB[l]))
      return makeError("rotor chain: stage " + llvm::Twine(l) +
                       " has a negative or non-finite cost");
  }
  if (!options.empty()) {
    if (auto err = sized(options.size(), "options"))
      return err;
    for (size_t l = 1; l < n; ++l) {
      if (!options[l].empty() && !readsAbar(unsigned(l)))
        return makeError("rotor chain: stage " + llvm::Twine(l) +
                         " has options but B^l reads nothing it stores");
      for (const Option &o : options[l]) {
        if (o.abar < a[l])
          return makeError("rotor chain: an option of stage " +
                           llvm::Twine(l) + " has abar < a");
        if (o.reliefB > delta[l] + o.abar + a[l - 1] + o.overheadB)
          return makeError("rotor chain: an option of stage " +
                           llvm::Twine(l) +
                           " has a backward relief above its inputs");
        if (!(o.costB >= 0) || !std::isfinite(o.costB))
          return makeError("rotor chain: an option of stage " +
                           llvm::Twine(l) + " has a negative or non-finite "
                                            "cost");
      }
    }
  }
  double total = 0;
  for (size_t l = 1; l < n; ++l) {
    double most = costB[l];
    for (unsigned k = 0; k < numOptions(unsigned(l)); ++k)
      most = std::max(most, option(unsigned(l), k).costB);
    total += costF[l] + most;
  }
  if (!std::isfinite(total))
    return makeError("rotor chain: the costs sum to more than the largest "
                     "finite double");
  return llvm::Error::success();
}

std::string remat::formatRotorSequence(const RotorSequence &sequence) {
  std::string text;
  for (const RotorOp &op : sequence) {
    if (!text.empty())
      text += ' ';
    switch (op.kind) {
    case RotorOp::Kind::FNone:
      text += "Fn";
      break;
    case RotorOp::Kind::FCk:
      text += "Fck";
      break;
    case RotorOp::Kind::FAll:
      text += "Fall";
      break;
    case RotorOp::Kind::B:
      text += "B";
      break;
    case RotorOp::Kind::Drop:
      text += "D";
      break;
    }
    text += std::to_string(op.stage);
    if (op.option)
      text += "." + std::to_string(op.option);
  }
  return text;
}

RotorSimulation remat::simulateRotorSequence(const RotorChain &chain,
                                             const RotorSequence &sequence) {
  RotorSimulation sim;
  auto fail = [&](size_t i, const std::string &message) {
    sim.valid = false;
    sim.error = "op " + std::to_string(i) + ": " + message;
    return sim;
  };
  if (llvm::Error err = chain.check()) {
    sim.valid = false;
    sim.error = llvm::toString(std::move(err));
    return sim;
  }
  const unsigned L = chain.length();
  // The stored items of Table 1: a^l, abar^l, delta^l.
  std::vector<char> haveA(L + 1, 0), haveAbar(L + 1, 0), haveDelta(L + 1, 0);
  std::vector<unsigned> computed(L + 1, 0);
  // The option of the abar^l stored.
  std::vector<unsigned> storedOption(L + 1, 0);
  haveA[0] = 1;
  haveDelta[L] = 1;
  uint64_t memory = chain.a[0] + chain.delta[L];
  sim.peak = memory;

  for (size_t i = 0; i < sequence.size(); ++i) {
    const RotorOp &op = sequence[i];
    const unsigned l = op.stage;
    if (l < 1 || l > L)
      return fail(i, "stage " + std::to_string(l) + " out of range");
    const std::string name = formatRotorSequence({op});
    if (op.option >= chain.numOptions(l))
      return fail(i, name + ": no such option");
    const RotorChain::Option option = chain.option(l, op.option);
    // abar^{l-1} can stand for a^{l-1} (Table 1's second lines); there is no
    // abar^0.
    bool inputStored = haveA[l - 1] || (l > 1 && haveAbar[l - 1]);
    if (op.kind == RotorOp::Kind::Drop) {
      if (haveA[l]) {
        haveA[l] = 0;
        memory -= chain.a[l];
      } else if (haveAbar[l]) {
        haveAbar[l] = 0;
        memory -= chain.option(l, storedOption[l]).abar;
      } else {
        return fail(i, name + ": neither a^" + std::to_string(l) +
                           " nor abar^" + std::to_string(l) + " is stored");
      }
      continue;
    }
    if (op.isForward()) {
      if (op.kind == RotorOp::Kind::FNone ? !haveA[l - 1] : !inputStored)
        return fail(i, name + " needs a^" + std::to_string(l - 1));
      // Nothing can read a^L; and a stage whose output is stored cannot be
      // computed again (the graph's buffer is still live).
      if (op.kind != RotorOp::Kind::FAll && l == L)
        return fail(i, name + ": a^L is never read, only F_all^L is useful");
      if (haveA[l] || haveAbar[l])
        return fail(i, name + ": the output of stage " + std::to_string(l) +
                           " is already stored");
      if (chain.isPinned(l) && computed[l]++)
        return fail(i, name + ": pinned stage computed twice");
      bool all = op.kind == RotorOp::Kind::FAll;
      uint64_t out = all ? option.abar : chain.a[l];
      sim.peak = std::max(sim.peak, memory + out +
                                        (all ? option.overheadF
                                             : chain.overheadF[l]));
      memory += out;
      (all ? haveAbar : haveA)[l] = 1;
      if (all)
        storedOption[l] = op.option;
      if (op.kind == RotorOp::Kind::FNone) {
        haveA[l - 1] = 0;
        memory -= chain.a[l - 1];
      }
      sim.cost += chain.costF[l];
      continue;
    }
    if (!haveDelta[l] ||
        (chain.readsAbar(l) &&
         (!haveAbar[l] || storedOption[l] != op.option)) ||
        !inputStored)
      return fail(i, name + " needs delta^" + std::to_string(l) + ", abar^" +
                         std::to_string(l) + " of its option and a^" +
                         std::to_string(l - 1));
    if (haveDelta[l - 1])
      return fail(i, name + ": delta^" + std::to_string(l - 1) +
                         " is already stored");
    sim.peak = std::max(sim.peak, memory + chain.delta[l - 1] +
                                      option.overheadB - option.reliefB);
    memory += chain.delta[l - 1];
    haveDelta[l - 1] = 1;
    haveDelta[l] = 0;
    memory -= chain.delta[l];
    if (haveAbar[l]) {
      haveAbar[l] = 0;
      memory -= chain.option(l, storedOption[l]).abar;
    }
    if (haveA[l - 1]) {
      haveA[l - 1] = 0;
      memory -= chain.a[l - 1];
    }
    sim.cost += option.costB;
  }
  if (!haveDelta[0]) {
    sim.valid = false;
    sim.error = "end of sequence: delta^0 was not computed";
  }
  return sim;
}

//===----------------------------------------------------------------------===//
// The dynamic program
//===----------------------------------------------------------------------===//

int RotorTable::toSlots(uint64_t bytes) const {
  if (bytes == 0)
    return 0;
  if (memory == 0)
    return int(numColumns) + 1;
  // ceil(bytes * S / M) without overflow or rounding error: every size is
  // rounded *up*, so that a sequence within m slots is within m M / S bytes
  // (§5.2). Beyond the last column, one more: never fits.
  unsigned __int128 q =
      ((unsigned __int128)bytes * numSlots + memory - 1) / memory;
  return q > numColumns ? int(numColumns) + 1 : int(q);
}

int RotorTable::toSlotsDown(uint64_t bytes) const {
  if (bytes == 0 || memory == 0)
    return 0;
  unsigned __int128 q = (unsigned __int128)bytes * numSlots / memory;
  return q > numColumns ? int(numColumns) + 1 : int(q);
}

size_t RotorTable::rowIndex(unsigned s, unsigned t) const {
  // Rows of s = 1..s-1 come first: sum_{i<s} (L - i + 1) of them.
  size_t before = size_t(s - 1) * (length + 1) - size_t(s - 1) * s / 2;
  return before + (t - s);
}

float RotorTable::cell(unsigned s, unsigned t, int m) const {
  if (m < 0)
    return kInf;
  return row(s, t)[std::min<size_t>(size_t(m), numColumns)];
}

int RotorTable::mAll(unsigned s, unsigned t, unsigned k) const {
  // m_all^{s,t}: F_all^s with delta^t stored, then B^s with delta^s, abar^s
  // and delta^{s-1} (a^{s-1} is outside m). The paper prints w_a^s and omits
  // delta^{s-1}; abar^s is what F_all^s stores and delta^{s-1} is what B^s
  // writes, so both belong to the peaks (Table 1).
  // The relief r_b^s (our extension) lowers B^s's peak by the inputs it has
  // freed by then.
  // k: the index of the option in the opt* arrays.
  return std::max(delta[t] + optAbar[k] + optOf[k],
                  delta[s] + optAbar[k] + delta[s - 1] + optOb[k] - optRb[k]);
}

int RotorTable::mLeafB(unsigned s) const {
  // B^s alone, with delta^s stored, writing delta^{s-1}.
  // B^s reads nothing of its stage: it has one option.
  unsigned k = optionBegin[s];
  return delta[s] + delta[s - 1] + optOb[k] - optRb[k];
}

int RotorTable::mNone(unsigned s, unsigned t) const {
  // m_none^{s,t}: F_ck^s and F_none^{s+1..t-1} with delta^t stored.
  return delta[t] + std::max(a[s] + of[s], forwardPeak[rowIndex(s, t)]);
}

unsigned RotorTable::ckLimit(unsigned s, unsigned t) const {
  // C_ck(s, s', t) runs F^s..F^{s'-1} now and F^s..F^{s'-2} again inside
  // C_BP(s, s'-1), plus F_all^{s'-1} unless B^{s'-1} reads nothing of its
  // stage: a pinned stage p may only be s'-1, and only in that case.
  unsigned p = firstPinned[s];
  if (p > length)
    return t;
  return std::min(t, readsAbar[p] ? p : p + 1);
}

float RotorTable::prefix(unsigned s, unsigned sp) const {
  // sum_{k=s}^{s'-1} u_f^k, rounded to float once, identically in fill() and
  // rebuild().
  return float(prefixF[sp - 1] - prefixF[s - 1]);
}

llvm::Expected<RotorTable> RotorTable::build(const RotorChain &chain,
                                             uint64_t memoryBytes,
                                             const RotorDPOptions &options) {
  if (llvm::Error err = chain.check())
    return std::move(err);
  if (chain.length() == 0)
    return makeError("rotor: the chain has no stage");
  if (options.slots == 0 || options.slots > (1u << 20))
    return makeError("rotor: the number of slots must be in [1, 2^20]");
  if (options.columns > (1u << 21))
    return makeError("rotor: the number of columns must be at most 2^21");
  RotorTable t;
  const unsigned L = chain.length();
  t.length = L;
  t.numSlots = options.slots;
  t.numColumns = std::max(options.slots, options.columns);
  t.width = size_t(t.numColumns) + 1;
  t.memory = memoryBytes;
  t.bytesPerSlot = double(memoryBytes) / options.slots;
  t.allowFAllChains = options.allowFAllChains;

  auto slotsOf = [&](const std::vector<uint64_t> &bytes) {
    std::vector<int> out(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i)
      out[i] = t.toSlots(bytes[i]);
    return out;
  };
  t.a = slotsOf(chain.a);
  t.delta = slotsOf(chain.delta);
  t.of = slotsOf(chain.overheadF);
  // The table holds floats. A cell is at most every forward stage run L
  // times plus every backward once; costs whose such bound exceeds 2^100
  // (float overflows near 2^128) are scaled down by a power of two, exactly,
  // and cost() scales back: with costs of 1e40 every cell would be +inf,
  // which reads as "infeasible". Usual costs are left as they are.
  double sumF = 0, sumB = 0;
  for (unsigned l = 1; l <= L; ++l) {
    sumF += chain.costF[l];
    double most = 0;
    for (unsigned k = 0; k < chain.numOptions(l); ++k)
      most = std::max(most, chain.option(l, k).costB);
    sumB += most;
  }
  double bound = std::max(sumF, sumB);
  if (bound > 0) {
    int exponent = std::ilogb(bound) + 2 + int(llvm::Log2_32_Ceil(L + 1));
    if (exponent > 100)
      t.costScale = std::ldexp(1.0, 100 - exponent);
  }
  t.prefixF.assign(L + 1, 0);
  t.optionBegin.assign(L + 2, 0);
  for (unsigned l = 1; l <= L; ++l) {
    double f = chain.costF[l] * t.costScale;
    t.prefixF[l] = t.prefixF[l - 1] + f;
    t.optionBegin[l] = unsigned(t.optAbar.size());
    for (unsigned k = 0; k < chain.numOptions(l); ++k) {
      RotorChain::Option o = chain.option(l, k);
      double b = o.costB * t.costScale;
      t.optAbar.push_back(t.toSlots(o.abar));
      t.optOf.push_back(t.toSlots(o.overheadF));
      t.optOb.push_back(t.toSlots(o.overheadB));
      // In slots a relief is rounded down: the need stays an upper bound.
      t.optRb.push_back(t.toSlotsDown(o.reliefB));
      t.optCostB.push_back(float(b));
      t.optCostFB.push_back(float(f + b));
    }
  }
  t.optionBegin[L + 1] = unsigned(t.optAbar.size());
  t.readsAbar.assign(L + 1, 1);
  for (unsigned l = 1; l <= L; ++l)
    t.readsAbar[l] = chain.readsAbar(l);
  t.firstPinned.assign(L + 2, L + 1);
  for (unsigned l = L; l >= 1; --l)
    t.firstPinned[l] = chain.isPinned(l) ? l : t.firstPinned[l + 1];

  size_t rows = size_t(L) * (L + 1) / 2;
  t.forwardPeak.assign(rows, 0);
  for (unsigned s = 1; s <= L; ++s) {
    int running = 0;
    for (unsigned tt = s; tt <= L; ++tt) {
      t.forwardPeak[t.rowIndex(s, tt)] = running;
      if (tt > s)
        running = std::max(running, t.a[tt - 1] + t.a[tt] + t.of[tt]);
    }
  }
  t.table.assign(rows * t.width, kInf);
  t.fill();
  return std::move(t);
}

void RotorTable::fill() {
  // Every column is filled: memories beyond the slots' S are answered from
  // the same table (RotorDPOptions::columns).
  const int S = int(numColumns);
  // Algorithm 1 with the loops reordered: the paper's s-outer loop reads
  // C[s', t] (s' > s) before computing it. Every cell (s, t) reads only
  // shorter segments, (s', t) with s' > s and (s, t') with t' < t, so t
  // ascending and s descending meets each before it is read, for any sizes
  // (zero sizes read the same m). This order also keeps column t, read by
  // every s of the same t, in cache.
  for (unsigned t = 1; t <= length; ++t) {
    for (unsigned s = t; s >= 1; --s) {
      const unsigned d = t - s;
      float *out = row(s, t);
      if (d == 0) {
        // Eq. (1): F_all^s then B^s, the cheapest option that fits; only
        // B^s when it reads nothing of stage s (our extension).
        if (!readsAbar[s]) {
          float c = optCostB[optionBegin[s]];
          for (int m = std::max(mLeafB(s), 0); m <= S; ++m)
            out[m] = c;
          continue;
        }
        for (unsigned k = optionBegin[s]; k < optionBegin[s + 1]; ++k) {
          float c = optCostFB[k];
          for (int m = std::max(mAll(s, s, k), 0); m <= S; ++m)
            out[m] = c < out[m] ? c : out[m];
        }
        continue;
      }
      // C_2 = C_all (Eq. 2): F_all^s, C_BP(s+1, t, m - w_abar^s), B^s.
      // Revolve forbids it except for pinned stages, which can only be
      // computed this way.
      // With options (the blocks solver), the cheapest option at each m.
      if (allowFAllChains || firstPinned[s] == s) {
        const float *in = row(s + 1, t);
        for (unsigned k = optionBegin[s]; k < optionBegin[s + 1]; ++k) {
          int w = optAbar[k];
          int need = std::max(mAll(s, t, k), w);
          const float c = optCostFB[k];
          for (int m = need; m <= S; ++m) {
            float v = c + in[m - w];
            out[m] = v < out[m] ? v : out[m];
          }
        }
      }
      // C_1 = min over s' of C_ck(s, s', t): F_ck^s, F_none^{s+1..s'-1},
      // C_BP(s', t, m - w_a^{s'-1}), C_BP(s, s'-1, m).
      const int none = mNone(s, t);
      const unsigned limit = ckLimit(s, t);
      for (unsigned sp = s + 1; sp <= limit; ++sp) {
        const int w = a[sp - 1];
        const float pre = prefix(s, sp);
        const float *right = row(sp, t);
        const float *left = row(s, sp - 1);
        // Contiguous, branch-free and vectorisable: the hot loop.
        for (int m = std::max(none, w); m <= S; ++m) {
          float v = (pre + right[m - w]) + left[m];
          out[m] = v < out[m] ? v : out[m];
        }
      }
    }
  }
}

size_t RotorTable::tableBytes() const {
  return table.size() * sizeof(float) + forwardPeak.size() * sizeof(int) +
         (a.size() * 3 + optAbar.size() * 4) * sizeof(int) +
         optCostFB.size() * 2 * sizeof(float) +
         prefixF.size() * sizeof(double) + firstPinned.size() * sizeof(unsigned);
}

double RotorTable::cost(unsigned m) const {
  // Algorithm 1, line 12: C_BP(1, L, M - w_a^0).
  float c = cell(1, length, int(std::min(m, numColumns)) - a[0]);
  return std::isinf(c) ? std::numeric_limits<double>::infinity()
                       : double(c) / costScale;
}

std::optional<unsigned> RotorTable::leastFeasibleSlots() const {
  for (unsigned m = 0; m <= numColumns; ++m)
    if (!std::isinf(cost(m)))
      return m;
  return std::nullopt;
}

unsigned RotorTable::leastSlotsForCost(unsigned m) const {
  m = std::min(m, numColumns);
  double target = cost(m);
  for (unsigned k = 0; k < m; ++k)
    if (cost(k) == target)
      return k;
  return m;
}

llvm::Error RotorTable::rebuild(unsigned s, unsigned t, int m,
                                RotorSequence &out) const {
  // Algorithm 2 (OptRec). The choice is re-derived by evaluating exactly the
  // expressions fill() evaluated, in the same float arithmetic, so the match
  // is exact.
  const float value = cell(s, t, m);
  if (std::isinf(value))
    return makeError("rotor: infeasible at stages [" + llvm::Twine(s) + ", " +
                     llvm::Twine(t) + "] with " + llvm::Twine(m) + " slots");
  if (s == t) {
    if (!readsAbar[s]) {
      out.push_back(RotorOp::b(s));
      return llvm::Error::success();
    }
    for (unsigned k = optionBegin[s]; k < optionBegin[s + 1]; ++k)
      if (m >= mAll(s, s, k) && optCostFB[k] == value) {
        out.push_back(RotorOp::fAll(s, k - optionBegin[s]));
        out.push_back(RotorOp::b(s, k - optionBegin[s]));
        return llvm::Error::success();
      }
    return makeError("rotor: reconstruction found no option matching the "
                     "table (internal error)");
  }
  if (allowFAllChains || firstPinned[s] == s)
    for (unsigned k = optionBegin[s]; k < optionBegin[s + 1]; ++k) {
      int w = optAbar[k];
      if (m < std::max(mAll(s, t, k), w) ||
          optCostFB[k] + cell(s + 1, t, m - w) != value)
        continue;
      out.push_back(RotorOp::fAll(s, k - optionBegin[s]));
      if (auto err = rebuild(s + 1, t, m - w, out))
        return err;
      out.push_back(RotorOp::b(s, k - optionBegin[s]));
      return llvm::Error::success();
    }
  if (m >= mNone(s, t)) {
    for (unsigned sp = s + 1, limit = ckLimit(s, t); sp <= limit; ++sp) {
      const int w = a[sp - 1];
      if (m < w)
        continue;
      float v = (prefix(s, sp) + cell(sp, t, m - w)) + cell(s, sp - 1, m);
      if (v != value)
        continue;
      // The paper's Algorithm 2 lists F_none up to F^{s'}; the recurrence
      // (sum_{k=s}^{s'-1} u_f^k) runs them up to F^{s'-1}.
      out.push_back(RotorOp::fCk(s));
      for (unsigned j = s + 1; j < sp; ++j)
        out.push_back(RotorOp::fNone(j));
      if (auto err = rebuild(sp, t, m - w, out))
        return err;
      return rebuild(s, sp - 1, m, out);
    }
  }
  return makeError("rotor: reconstruction found no choice matching the table "
                   "(internal error)");
}

llvm::Expected<RotorSequence> RotorTable::sequence(unsigned m) const {
  m = std::min(m, numColumns);
  RotorSequence out;
  out.reserve(4 * size_t(length));
  if (auto err = rebuild(1, length, int(m) - a[0], out))
    return std::move(err);
  return out;
}

std::optional<uint64_t> remat::rotorLeastMemory(const RotorChain &chain,
                                                bool allowFAllChains) {
  // The recurrence of RotorTable::fill for feasibility alone, in bytes: the
  // least m with a finite C_BP(s, t, m) is M(s, t) = min over the choices of
  // the largest need on their path (Eqs. 1-2 with the same extensions:
  // pinned stages, B^l reading nothing of its stage, reliefs). O(L^3), no
  // slots, so no rounding.
  const unsigned L = chain.length();
  if (L == 0 || chain.check())
    return std::nullopt;
  using I = int64_t;
  const I kNever = std::numeric_limits<I>::max() / 4;
  auto at = [](const std::vector<uint64_t> &v, unsigned l) {
    return l < v.size() ? I(v[l]) : I(0);
  };
  std::vector<unsigned> firstPinned(L + 2, L + 1);
  for (unsigned l = L; l >= 1; --l)
    firstPinned[l] = chain.isPinned(l) ? l : firstPinned[l + 1];
  auto mAll = [&](unsigned s, unsigned t, const RotorChain::Option &o) {
    return std::max(at(chain.delta, t) + I(o.abar) + I(o.overheadF),
                    at(chain.delta, s) + I(o.abar) + at(chain.delta, s - 1) +
                        I(o.overheadB) - I(o.reliefB));
  };
  auto ckLimit = [&](unsigned s, unsigned t) {
    unsigned p = firstPinned[s];
    if (p > L)
      return t;
    return std::min(t, chain.readsAbar(p) ? p : p + 1);
  };
  // M(s, t), triangular like the table.
  auto index = [&](unsigned s, unsigned t) {
    return size_t(s - 1) * (L + 1) - size_t(s - 1) * s / 2 + (t - s);
  };
  std::vector<I> least(size_t(L) * (L + 1) / 2, kNever);
  for (unsigned t = 1; t <= L; ++t) {
    // max_{s<j<t} (a^{j-1} + a^j + o_f^j), for s descending.
    I forwardPeak = 0;
    for (unsigned s = t; s >= 1; --s) {
      if (s == t) {
        I need = kNever;
        if (chain.readsAbar(s)) {
          for (unsigned k = 0; k < chain.numOptions(s); ++k)
            need = std::min(need, mAll(s, s, chain.option(s, k)));
        } else {
          RotorChain::Option o = chain.option(s, 0);
          need = at(chain.delta, s) + at(chain.delta, s - 1) +
                 I(o.overheadB) - I(o.reliefB);
        }
        least[index(s, s)] = std::max<I>(need, 0);
        continue;
      }
      if (s + 1 < t)
        forwardPeak =
            std::max(forwardPeak, at(chain.a, s) + at(chain.a, s + 1) +
                                      at(chain.overheadF, s + 1));
      I best = kNever;
      I rest = least[index(s + 1, t)];
      if ((allowFAllChains || firstPinned[s] == s) && rest < kNever)
        for (unsigned k = 0; k < chain.numOptions(s); ++k) {
          RotorChain::Option o = chain.option(s, k);
          I w = I(o.abar);
          best = std::min(best, std::max({mAll(s, t, o), w, w + rest}));
        }
      I none = at(chain.delta, t) +
               std::max(at(chain.a, s) + at(chain.overheadF, s), forwardPeak);
      for (unsigned sp = s + 1, limit = ckLimit(s, t); sp <= limit; ++sp) {
        I w = at(chain.a, sp - 1);
        I right = least[index(sp, t)], left = least[index(s, sp - 1)];
        if (right >= kNever || left >= kNever)
          continue;
        best = std::min(best, std::max({none, w, w + right, left}));
      }
      least[index(s, t)] = best;
    }
  }
  I whole = least[index(1, L)];
  if (whole >= kNever)
    return std::nullopt;
  return uint64_t(std::max<I>(whole + at(chain.a, 0), 0));
}

//===----------------------------------------------------------------------===//
// Training graphs
//===----------------------------------------------------------------------===//

namespace {
/// Peak of the bytes a list of nodes allocates while it runs in order, each
/// produced value freed after its last reader in the list unless `keep`
/// says it stays (and never counted when reserved); inputs from elsewhere are
/// not counted. insertEarlyFrees frees at these points or earlier.
class LocalPeak {
public:
  LocalPeak(const TrainingGraph &graph, const std::vector<char> &reserved)
      : graph(graph), reserved(reserved), lastUse(graph.numValues(), -1) {}

  template <typename Keep>
  uint64_t operator()(const std::vector<NodeId> &nodes, Keep keep) {
    for (size_t i = 0; i < nodes.size(); ++i)
      for (ValueId in : graph.node(nodes[i]).inputs)
        lastUse[in] = int(i);
    uint64_t live = 0, peak = 0;
    std::vector<ValueId> produced;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node &node = graph.node(nodes[i]);
      for (ValueId out : node.outputs) {
        if (reserved[out])
          continue;
        live += graph.value(out).bytes;
        produced.push_back(out);
      }
      peak = std::max(peak, live + node.workspaceBytes);
      // Values produced by the list (this node's outputs included) that no
      // later node of the list reads are gone after this node.
      size_t kept = 0;
      for (ValueId v : produced) {
        if (lastUse[v] <= int(i) && !keep(v))
          live -= graph.value(v).bytes;
        else
          produced[kept++] = v;
      }
      produced.resize(kept);
    }
    for (size_t i = 0; i < nodes.size(); ++i)
      for (ValueId in : graph.node(nodes[i]).inputs)
        lastUse[in] = -1;
    return peak;
  }

private:
  const TrainingGraph &graph;
  const std::vector<char> &reserved;
  /// Scratch: last position in the list reading a value.
  std::vector<int> lastUse;
};
} // namespace

/// The peak of the backward nodes `nodes` of group l run with their real
/// inputs (delta^l, `abar` when given, a^{l-1}: each value once, an input
/// gone after its last reader in the list unless an earlier group reads it,
/// one nothing reads here or later not there at all): what the relief r_b^l
/// of buildRotorStageMap compares the model's count with.
static uint64_t realBackwardPeak(const TrainingGraph &graph,
                                 const RotorStageMap &map,
                                 const std::vector<unsigned> &firstReaderGroup,
                                 unsigned l, const std::vector<NodeId> &nodes,
                                 const std::vector<ValueId> *abar) {
  std::vector<int> lastReader(graph.numValues(), -1);
  std::vector<char> inSet(graph.numValues(), 0);
  {
    for (size_t i = 0; i < nodes.size(); ++i)
      for (ValueId in : graph.node(nodes[i]).inputs)
        lastReader[in] = int(i);
    auto neededLater = [&](ValueId v) { return firstReaderGroup[v] < l; };
    std::vector<ValueId> inputs;
    auto addSet = [&](const std::vector<ValueId> &set) {
      for (ValueId v : set)
        if (!inSet[v] && !map.reserved[v] &&
            (lastReader[v] >= 0 || neededLater(v))) {
          inSet[v] = 1;
          inputs.push_back(v);
        }
    };
    addSet(map.deltaValues[l]);
    if (abar)
      addSet(*abar);
    addSet(map.aValues[l - 1]);
    uint64_t live = 0;
    for (ValueId v : inputs)
      live += graph.value(v).bytes;
    uint64_t peak = live;
    std::vector<ValueId> produced;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node &node = graph.node(nodes[i]);
      for (ValueId out : node.outputs)
        if (!map.reserved[out]) {
          live += graph.value(out).bytes;
          produced.push_back(out);
        }
      peak = std::max(peak, live + node.workspaceBytes);
      size_t kept = 0;
      for (ValueId v : produced) {
        bool passesOn = firstReaderGroup[v] < l;
        if (lastReader[v] <= int(i) && !passesOn)
          live -= graph.value(v).bytes;
        else
          produced[kept++] = v;
      }
      produced.resize(kept);
      for (ValueId in : node.inputs)
        if (inSet[in] && lastReader[in] == int(i) && !neededLater(in))
          live -= graph.value(in).bytes;
    }
    for (ValueId v : inputs)
      inSet[v] = 0;
    for (NodeId n : nodes)
      for (ValueId in : graph.node(n).inputs)
        lastReader[in] = -1;
    return peak;
  }
}

llvm::Expected<RotorStageMap>
remat::buildRotorStageMap(const TrainingGraph &graph,
                          const std::vector<std::vector<NodeId>> &stagesIn,
                          BackwardPlacement placement) {
  const std::vector<NodeId> forward = graph.forwardNodes();
  const std::vector<NodeId> backward = graph.backwardNodes();
  if (forward.empty())
    return makeError("rotor: the graph has no forward node");
  std::vector<std::vector<NodeId>> stages = stagesIn;
  if (stages.empty())
    for (NodeId n : forward)
      stages.push_back({n});

  const unsigned L = unsigned(stages.size());
  const size_t numNodes = graph.numNodes(), numValues = graph.numValues();
  std::vector<unsigned> stageOf(numNodes, 0);
  for (unsigned l = 1; l <= L; ++l) {
    std::vector<NodeId> &nodes = stages[l - 1];
    if (nodes.empty())
      return makeError("rotor: stage " + llvm::Twine(l) + " is empty");
    std::sort(nodes.begin(), nodes.end());
    for (NodeId n : nodes) {
      if (n < 0 || size_t(n) >= numNodes ||
          graph.node(n).phase != Phase::Forward)
        return makeError("rotor: stage " + llvm::Twine(l) +
                         " lists a node that is not a forward node");
      if (stageOf[n])
        return makeError("rotor: node '" + graph.node(n).name +
                         "' is in two stages");
      stageOf[n] = l;
    }
  }
  for (NodeId n : forward) {
    if (!stageOf[n])
      return makeError("rotor: forward node '" + graph.node(n).name +
                       "' is in no stage");
    for (ValueId in : graph.node(n).inputs) {
      NodeId p = graph.value(in).producer;
      if (p >= 0 && stageOf[p] > stageOf[n])
        return makeError("rotor: stages are not in a topological order ('" +
                         graph.node(n).name + "' reads a later stage)");
    }
  }

  RotorStageMap map;
  map.reserved.assign(numValues, 0);
  map.producerStage.assign(numValues, 0);
  for (ValueId v = 0; v < ValueId(numValues); ++v) {
    const GraphValue &value = graph.value(v);
    map.reserved[v] = !value.isFixed() && value.isOutput;
    if (map.reserved[v])
      map.reservedBytes += value.bytes;
  }

  // f(v): the last stage that reads forward value v in the forward pass (at
  // least its producer's). A backward node reading v in any group <= f(v)
  // adds v to no cut beyond those the forward pass already needs.
  auto isForwardValue = [&](ValueId v) {
    NodeId p = graph.value(v).producer;
    return p >= 0 && graph.node(p).phase == Phase::Forward;
  };
  // Fixed values (parameters, inputs) count as produced before stage 1: a
  // backward node reading a weight belongs with the stage that reads it
  // (dW = x^T dz, dx = dz W^T), not earlier.
  std::vector<unsigned> lastForwardReader(numValues, 0);
  for (ValueId v = 0; v < ValueId(numValues); ++v) {
    bool fixed = graph.value(v).isFixed();
    if (!fixed && !isForwardValue(v))
      continue;
    unsigned f = fixed ? 0 : stageOf[graph.value(v).producer];
    for (NodeId user : graph.value(v).users)
      if (graph.node(user).phase == Phase::Forward)
        f = std::max(f, stageOf[user]);
    lastForwardReader[v] = f;
  }

  // Groups: sigma(b) must be >= the stage of every forward value b reads
  // (B^l only sees abar^l, a^{l-1} and older stored items), >= sigma of
  // every backward reader (readers run later, and groups run L, L-1, ...,
  // 1) and <= sigma of every backward producer.
  // 1. Reverse program order: lo(b), the least group b may take, is at
  //    least the stage of every forward value b reads and lo of every
  //    backward reader of b.
  std::vector<unsigned> lo(numNodes, 1);
  for (auto it = backward.rbegin(); it != backward.rend(); ++it) {
    const Node &node = graph.node(*it);
    unsigned least = 1;
    for (ValueId in : node.inputs)
      if (isForwardValue(in))
        least = std::max(least, stageOf[graph.value(in).producer]);
    for (ValueId out : node.outputs)
      for (NodeId user : graph.value(out).users)
        least = std::max(least, lo[user]);
    lo[*it] = std::min(L, least);
  }
  // 2. Program order: b must run no earlier than its backward producers, so
  //    sigma(b) <= hi(b) = min sigma(p) (L without any); lo(b) <= hi(b)
  //    because lo(p) >= lo(b) for every producer p. A node anchored to the
  //    forward pass goes, within [lo, hi], to the latest group at which what
  //    it reads is in the cut anyway (min f): its forward inputs, the weights
  //    it reads (f = the last stage reading them), and values the backward
  //    derives from weights alone (a transposed or flipped weight), which
  //    stand for their weights. An unanchored node (it reads only gradients)
  //    goes where it keeps the cuts smallest: one that frees more than it
  //    allocates (a weight gradient, a step output; a sum of gradients) runs
  //    as soon as its inputs exist, in the group of its last producer, so that
  //    those inputs are not carried through later cuts; one that allocates
  //    more (the padded copy of a gradient for a transposed convolution) runs
  //    in the group of its latest reader (pass 3), so that its output is not
  //    carried instead.
  constexpr unsigned kNone = std::numeric_limits<unsigned>::max();
  // For values the backward computes from weights alone: the stage that
  // anchors them (0: none).
  std::vector<unsigned> weightAnchor(numValues, 0);
  std::vector<unsigned> group(numNodes, 0);
  std::vector<char> late(numNodes, 0);
  for (NodeId b : backward) {
    const Node &node = graph.node(b);
    unsigned hi = L, target = kNone, anchor = kNone;
    bool weightsOnly = true;
    for (ValueId in : node.inputs) {
      const GraphValue &value = graph.value(in);
      unsigned f = 0;
      if (value.isFixed()) {
        f = lastForwardReader[in];
      } else if (isForwardValue(in)) {
        f = lastForwardReader[in];
        weightsOnly = false;
      } else {
        hi = std::min(hi, group[value.producer]);
        f = weightAnchor[in];
        weightsOnly &= f > 0;
      }
      if (f > 0)
        target = std::min(target, f);
      if (f > 0 && (value.isFixed() || weightAnchor[in] > 0))
        anchor = std::min(anchor, f);
    }
    if (weightsOnly && anchor != kNone)
      for (ValueId out : node.outputs)
        weightAnchor[out] = anchor;
    if (target == kNone) {
      uint64_t allocated = 0, released = 0;
      for (ValueId out : node.outputs)
        if (!graph.value(out).isOutput)
          allocated += graph.value(out).bytes;
      for (ValueId in : node.inputs) {
        const GraphValue &value = graph.value(in);
        if (!value.isFixed() && value.users.back() == b)
          released += value.bytes;
      }
      late[b] = placement == BackwardPlacement::Late ||
                (placement == BackwardPlacement::Balanced &&
                 allocated > released);
      target = hi;
    }
    group[b] = std::clamp(target, lo[b], std::max(lo[b], hi));
  }
  // 3. Reverse program order: a late node moves down to its latest reader's
  //    group (never below lo, never above where it is: every reader is in a
  //    group <= its own, so its readers' bounds still hold).
  for (auto it = backward.rbegin(); it != backward.rend(); ++it) {
    if (!late[*it])
      continue;
    unsigned latest = 0;
    for (ValueId out : graph.node(*it).outputs)
      for (NodeId user : graph.value(out).users)
        latest = std::max(latest, group[user]);
    if (latest > 0)
      group[*it] = std::max(lo[*it], latest);
  }

  map.chain = RotorChain::withLength(L);
  RotorChain &chain = map.chain;
  map.forward.assign(L + 1, {});
  map.backward.assign(L + 1, {});
  for (unsigned l = 1; l <= L; ++l)
    map.forward[l] = stages[l - 1];
  for (NodeId b : backward)
    map.backward[group[b]].push_back(b);

  // The sets: every value's membership is an interval of l.
  map.aValues.assign(L + 1, {});
  map.abarValues.assign(L + 1, {});
  map.deltaValues.assign(L + 1, {});
  for (ValueId v = 0; v < ValueId(numValues); ++v) {
    const GraphValue &value = graph.value(v);
    if (value.isFixed())
      continue;
    bool fwd = isForwardValue(v);
    unsigned own = fwd ? stageOf[value.producer] : group[value.producer];
    map.producerStage[v] = own;
    if (map.reserved[v])
      continue;
    if (fwd) {
      unsigned last = own;
      bool ownGroupReads = false;
      for (NodeId user : value.users) {
        bool userForward = graph.node(user).phase == Phase::Forward;
        unsigned at = userForward ? stageOf[user] : group[user];
        last = std::max(last, at);
        ownGroupReads |= !userForward && at == own;
      }
      // a^l for own <= l < last.
      for (unsigned l = own; l < last; ++l)
        map.aValues[l].push_back(v);
      if (own < last || ownGroupReads)
        map.abarValues[own].push_back(v);
    } else {
      unsigned first = own;
      for (NodeId user : value.users)
        first = std::min(first, group[user]);
      // delta^l for first <= l < own.
      for (unsigned l = first; l < own; ++l)
        map.deltaValues[l].push_back(v);
    }
  }
  // abar^l = A^l plus what group l reads of stage l: add the pass-through
  // members of A^l (produced earlier), kept sorted by id.
  for (unsigned l = 1; l <= L; ++l) {
    std::vector<ValueId> merged;
    std::set_union(map.aValues[l].begin(), map.aValues[l].end(),
                   map.abarValues[l].begin(), map.abarValues[l].end(),
                   std::back_inserter(merged));
    map.abarValues[l] = std::move(merged);
  }

  auto bytesOf = [&](const std::vector<ValueId> &values) {
    uint64_t sum = 0;
    for (ValueId v : values)
      sum += graph.value(v).bytes;
    return sum;
  };
  for (unsigned l = 0; l <= L; ++l) {
    chain.a[l] = bytesOf(map.aValues[l]);
    chain.abar[l] = l ? bytesOf(map.abarValues[l]) : 0;
    chain.delta[l] = bytesOf(map.deltaValues[l]);
  }

  // Costs and overheads. o_f^l covers both flavours: F_all keeps abar^l
  // (model: abar^l + o_f), F_none / F_ck keep a^l (model: a^l + o_f), and
  // the node allocates its outputs either way; F_none / F_ck of the last
  // stage never occur (nothing reads a^L).
  LocalPeak localPeak(graph, map.reserved);
  chain.reliefB.assign(L + 1, 0);
  // The least group of a backward reader of each value (L + 1: none).
  std::vector<unsigned> firstReaderGroup(numValues, L + 1);
  for (NodeId b : backward)
    for (ValueId in : graph.node(b).inputs)
      firstReaderGroup[in] = std::min(firstReaderGroup[in], group[b]);
  auto groupPeak = [&](unsigned l, bool withAbar) {
    return realBackwardPeak(graph, map, firstReaderGroup, l, map.backward[l],
                            withAbar ? &map.abarValues[l] : nullptr);
  };
  std::vector<char> mark(numValues, 0);
  auto markAll = [&](const std::vector<ValueId> &values, char on) {
    for (ValueId v : values)
      mark[v] = on;
  };
  auto keepMarked = [&](ValueId v) { return bool(mark[v]); };
  for (unsigned l = 1; l <= L; ++l) {
    for (NodeId n : map.forward[l]) {
      chain.costF[l] += graph.node(n).cost;
      for (ValueId out : graph.node(n).outputs)
        if (map.reserved[out])
          chain.pinned[l] = true;
    }
    for (NodeId n : map.backward[l])
      chain.costB[l] += graph.node(n).cost;
    // B^l needs F_all^l only if group l reads something stage l produced
    // (R^l, the members of Abar^l produced by stage l and read by group l).
    // The last stage always runs F_all: it must be computed once.
    bool readsOwn = false;
    for (NodeId n : map.backward[l])
      for (ValueId in : graph.node(n).inputs)
        readsOwn |= !graph.value(in).isFixed() && isForwardValue(in) &&
                    stageOf[graph.value(in).producer] == l;
    chain.backwardReadsAbar[l] = readsOwn || l == L;

    markAll(map.abarValues[l], 1);
    uint64_t peakAll = localPeak(map.forward[l], keepMarked);
    markAll(map.abarValues[l], 0);
    uint64_t over = peakAll > chain.abar[l] ? peakAll - chain.abar[l] : 0;
    if (l < L) {
      markAll(map.aValues[l], 1);
      uint64_t peakCk = localPeak(map.forward[l], keepMarked);
      markAll(map.aValues[l], 0);
      if (peakCk > chain.a[l])
        over = std::max(over, peakCk - chain.a[l]);
    }
    chain.overheadF[l] = over;

    markAll(map.deltaValues[l - 1], 1);
    uint64_t peakB = localPeak(map.backward[l], keepMarked);
    markAll(map.deltaValues[l - 1], 0);
    chain.overheadB[l] =
        peakB > chain.delta[l - 1] ? peakB - chain.delta[l - 1] : 0;

    // r_b^l: the model counts B^l's inputs (delta^l, abar^l when read,
    // a^{l-1}) for its whole run, each set in full, a value in two sets
    // twice. Run the group with its real inputs instead: each value once, an
    // input gone after its last reader in the group unless a later group
    // reads it (the model has it stored then), one nothing reads here or
    // later not there at all. The difference between the two peaks is the
    // relief.
    uint64_t counted = chain.delta[l] +
                       (chain.backwardReadsAbar[l] ? chain.abar[l] : 0) +
                       chain.a[l - 1] + chain.delta[l - 1] +
                       chain.overheadB[l];
    uint64_t real = groupPeak(l, chain.backwardReadsAbar[l]);
    chain.reliefB[l] = counted > real ? counted - real : 0;
  }
  return map;
}

void remat::addBlockOptions(const TrainingGraph &graph, RotorStageMap &map,
                            unsigned exhaustive, unsigned maxOptions) {
  RotorChain &chain = map.chain;
  const unsigned L = chain.length();
  const size_t numNodes = graph.numNodes(), numValues = graph.numValues();
  chain.options.assign(L + 1, {});
  map.optionRecompute.assign(L + 1, {});
  std::vector<unsigned> stageOf(numNodes, 0), groupOf(numNodes, 0);
  for (unsigned l = 1; l <= L; ++l) {
    for (NodeId n : map.forward[l])
      stageOf[n] = l;
    for (NodeId n : map.backward[l])
      groupOf[n] = l;
  }
  std::vector<unsigned> firstReaderGroup(numValues, L + 1);
  for (unsigned l = 1; l <= L; ++l)
    for (NodeId b : map.backward[l])
      for (ValueId in : graph.node(b).inputs)
        firstReaderGroup[in] = std::min(firstReaderGroup[in], l);
  LocalPeak localPeak(graph, map.reserved);
  std::vector<char> mark(numValues, 0), inAbar(numValues, 0),
      inPrev(numValues, 0), dropped(numValues, 0);
  auto bytesOf = [&](const std::vector<ValueId> &values) {
    uint64_t sum = 0;
    for (ValueId v : values)
      sum += graph.value(v).bytes;
    return sum;
  };

  for (unsigned l = 1; l <= L; ++l) {
    if (!chain.readsAbar(l) || map.forward[l].empty())
      continue;
    for (ValueId v : map.abarValues[l])
      inAbar[v] = 1;
    for (ValueId v : map.aValues[l - 1])
      inPrev[v] = 1;
    // The values stage l stores only for its own group: produced by the
    // stage, not in a^l, read by nothing but the stage and the group.
    std::vector<ValueId> internal;
    for (ValueId v : map.abarValues[l]) {
      const GraphValue &value = graph.value(v);
      if (value.isFixed() || map.reserved[v] || value.producer < 0 ||
          stageOf[value.producer] != l ||
          llvm::is_contained(map.aValues[l], v))
        continue;
      bool local = llvm::all_of(value.users, [&](NodeId u) {
        return stageOf[u] == l || groupOf[u] == l;
      });
      if (local)
        internal.push_back(v);
    }
    // The fewest forward nodes of the stage that give back `dropped` values
    // from a^{l-1} and what stays stored; nullopt when one would be a node
    // producing a step output (never run twice).
    auto closure = [&]() -> std::optional<std::vector<NodeId>> {
      std::vector<char> inClosure(numNodes, 0);
      std::vector<ValueId> work;
      for (ValueId v : internal)
        if (dropped[v])
          work.push_back(v);
      std::vector<NodeId> nodes;
      while (!work.empty()) {
        ValueId v = work.back();
        work.pop_back();
        NodeId p = graph.value(v).producer;
        if (inClosure[p])
          continue;
        if (llvm::any_of(graph.node(p).outputs,
                         [&](ValueId o) { return map.reserved[o] != 0; }))
          return std::nullopt;
        inClosure[p] = 1;
        nodes.push_back(p);
        for (ValueId u : graph.node(p).inputs) {
          const GraphValue &in = graph.value(u);
          if (in.isFixed() || inPrev[u] || (inAbar[u] && !dropped[u]))
            continue;
          if (in.producer < 0 || stageOf[in.producer] != l)
            return std::nullopt; // not available during B^l
          work.push_back(u);
        }
      }
      std::sort(nodes.begin(), nodes.end());
      return nodes;
    };
    struct Candidate {
      RotorChain::Option option;
      std::vector<NodeId> recompute;
    };
    std::vector<Candidate> candidates;
    auto evaluate = [&](const std::vector<ValueId> &drop) {
      for (ValueId v : drop)
        dropped[v] = 1;
      std::optional<std::vector<NodeId>> recompute = closure();
      if (recompute) {
        Candidate c;
        c.recompute = std::move(*recompute);
        std::vector<ValueId> stored;
        for (ValueId v : map.abarValues[l])
          if (!dropped[v])
            stored.push_back(v);
        c.option.abar = bytesOf(stored);
        c.option.costB = chain.costB[l];
        for (NodeId n : c.recompute)
          c.option.costB += graph.node(n).cost;
        // F_all^l keeping only `stored`: its peak over what it stores.
        for (ValueId v : stored)
          mark[v] = 1;
        uint64_t peakF = localPeak(map.forward[l],
                                   [&](ValueId v) { return mark[v] != 0; });
        for (ValueId v : stored)
          mark[v] = 0;
        c.option.overheadF =
            peakF > c.option.abar ? peakF - c.option.abar : 0;
        // B^l: the recomputation, then the group, as buildRotorStageMap
        // measures o_b and r_b.
        std::vector<NodeId> list = c.recompute;
        list.insert(list.end(), map.backward[l].begin(), map.backward[l].end());
        for (ValueId v : map.deltaValues[l - 1])
          mark[v] = 1;
        uint64_t peakB =
            localPeak(list, [&](ValueId v) { return mark[v] != 0; });
        for (ValueId v : map.deltaValues[l - 1])
          mark[v] = 0;
        c.option.overheadB =
            peakB > chain.delta[l - 1] ? peakB - chain.delta[l - 1] : 0;
        uint64_t counted = chain.delta[l] + c.option.abar + chain.a[l - 1] +
                           chain.delta[l - 1] + c.option.overheadB;
        uint64_t real = realBackwardPeak(graph, map, firstReaderGroup, l,
                                         list, &stored);
        c.option.reliefB = counted > real ? counted - real : 0;
        candidates.push_back(std::move(c));
      }
      for (ValueId v : drop)
        dropped[v] = 0;
    };
    // Keeping everything is always an option (the stage's own figures, but
    // F_all's overhead alone).
    evaluate({});
    if (internal.size() <= exhaustive) {
      for (unsigned mask = 1; mask < (1u << internal.size()); ++mask) {
        std::vector<ValueId> drop;
        for (size_t i = 0; i < internal.size(); ++i)
          if ((mask >> i) & 1)
            drop.push_back(internal[i]);
        evaluate(drop);
      }
    } else {
      // Nested subsets: the cheapest to recompute per byte go first.
      std::vector<ValueId> order = internal;
      std::stable_sort(order.begin(), order.end(), [&](ValueId x, ValueId y) {
        double cx = graph.node(graph.value(x).producer).cost,
               cy = graph.node(graph.value(y).producer).cost;
        return cx * double(std::max<uint64_t>(graph.value(y).bytes, 1)) <
               cy * double(std::max<uint64_t>(graph.value(x).bytes, 1));
      });
      std::vector<ValueId> drop;
      unsigned steps = std::min<unsigned>(unsigned(order.size()), 4 * maxOptions);
      for (unsigned i = 1; i <= steps; ++i) {
        size_t upTo = order.size() * i / steps;
        drop.assign(order.begin(), order.begin() + upTo);
        evaluate(drop);
      }
    }
    for (ValueId v : map.abarValues[l])
      inAbar[v] = 0;
    for (ValueId v : map.aValues[l - 1])
      inPrev[v] = 0;
    if (candidates.size() <= 1)
      continue;
    // Options another beats or equals in every figure go; the first (keep
    // everything) stays, so that option 0 is the stage's plain F_all / B.
    auto dominates = [](const RotorChain::Option &x,
                        const RotorChain::Option &y) {
      return x.abar <= y.abar && x.costB <= y.costB &&
             x.overheadF <= y.overheadF &&
             x.overheadB - std::min(x.overheadB, x.reliefB) <=
                 y.overheadB - std::min(y.overheadB, y.reliefB);
    };
    std::vector<Candidate> kept;
    for (size_t i = 0; i < candidates.size(); ++i) {
      bool beaten = false;
      for (size_t j = 0; j < candidates.size() && !beaten && i > 0; ++j)
        beaten = j != i && dominates(candidates[j].option, candidates[i].option) &&
                 (j < i || !dominates(candidates[i].option,
                                      candidates[j].option));
      if (!beaten)
        kept.push_back(std::move(candidates[i]));
    }
    // At most maxOptions, spread over the stored bytes.
    if (kept.size() > maxOptions) {
      std::sort(kept.begin() + 1, kept.end(), [](auto &x, auto &y) {
        return x.option.abar > y.option.abar;
      });
      std::vector<Candidate> spread;
      spread.push_back(std::move(kept[0]));
      size_t rest = kept.size() - 1;
      for (unsigned k = 1; k < maxOptions; ++k)
        spread.push_back(std::move(kept[1 + (rest - 1) * (k - 1) /
                                                std::max(1u, maxOptions - 2)]));
      kept = std::move(spread);
    }
    for (Candidate &c : kept) {
      chain.options[l].push_back(c.option);
      map.optionRecompute[l].push_back(std::move(c.recompute));
    }
  }
}

llvm::Expected<Schedule>
remat::scheduleFromRotorSequence(const TrainingGraph &graph,
                                 const RotorStageMap &map,
                                 const RotorSequence &sequence) {
  const unsigned L = map.chain.length();
  if (map.forward.size() != L + 1 || map.backward.size() != L + 1 ||
      map.reserved.size() != graph.numValues())
    return makeError("rotor: the stage map does not belong to this graph");
  // The operations' compute order, checked against the items of Table 1 as
  // simulateRotorSequence does; the frees are then placed by
  // insertEarlyFrees: every buffer right after its last use. A stored item
  // holds only buffers that a later operation reads (or none later: then it
  // is freed sooner), so the plan's memory never exceeds the model's.
  std::vector<char> haveA(L + 1, 0), haveAbar(L + 1, 0), haveDelta(L + 1, 0);
  std::vector<unsigned> storedOption(L + 1, 0);
  haveA[0] = 1;
  haveDelta[L] = 1;
  std::vector<NodeId> order;
  for (size_t i = 0; i < sequence.size(); ++i) {
    const RotorOp &op = sequence[i];
    const unsigned l = op.stage;
    auto bad = [&](const std::string &why) {
      return makeError("rotor: op " + llvm::Twine(i) + " (" +
                       formatRotorSequence({op}) + "): " + why);
    };
    if (l < 1 || l > L)
      return bad("stage out of range");
    if (op.option >= map.chain.numOptions(l))
      return bad("no such option");
    bool inputStored = haveA[l - 1] || (l > 1 && haveAbar[l - 1]);
    switch (op.kind) {
    case RotorOp::Kind::Drop:
      if (haveA[l])
        haveA[l] = 0;
      else if (haveAbar[l])
        haveAbar[l] = 0;
      else
        return bad("nothing of the stage is stored");
      continue;
    case RotorOp::Kind::FNone:
    case RotorOp::Kind::FCk:
    case RotorOp::Kind::FAll:
      if (op.kind == RotorOp::Kind::FNone ? !haveA[l - 1] : !inputStored)
        return bad("its input is not stored");
      if (haveA[l] || haveAbar[l])
        return bad("its output is already stored");
      order.insert(order.end(), map.forward[l].begin(), map.forward[l].end());
      (op.kind == RotorOp::Kind::FAll ? haveAbar : haveA)[l] = 1;
      if (op.kind == RotorOp::Kind::FAll)
        storedOption[l] = op.option;
      if (op.kind == RotorOp::Kind::FNone)
        haveA[l - 1] = 0;
      continue;
    case RotorOp::Kind::B:
      if (!haveDelta[l] ||
          (map.chain.readsAbar(l) &&
           (!haveAbar[l] || storedOption[l] != op.option)) ||
          !inputStored || haveDelta[l - 1])
        return bad("its inputs are not stored");
      // An option's recomputation first, from a^{l-1} and what F_all^l
      // stored: insertEarlyFrees then frees the values F_all^l did not keep
      // after their last forward use.
      if (l < map.optionRecompute.size() &&
          op.option < map.optionRecompute[l].size())
        order.insert(order.end(), map.optionRecompute[l][op.option].begin(),
                     map.optionRecompute[l][op.option].end());
      order.insert(order.end(), map.backward[l].begin(),
                   map.backward[l].end());
      haveDelta[l - 1] = 1;
      haveDelta[l] = 0;
      haveAbar[l] = 0;
      haveA[l - 1] = 0;
      continue;
    }
  }
  return insertEarlyFrees(graph, order);
}

TrainingGraph remat::makeRotorChainGraph(const RotorChain &chain) {
  TrainingGraph g;
  const unsigned L = chain.length();
  std::vector<ValueId> acts(L + 1, -1), extra(L + 1, -1);
  acts[0] = g.addFixedValue("a0", chain.a[0]);
  for (unsigned l = 1; l <= L; ++l) {
    std::string id = std::to_string(l);
    NodeId f = g.addNode("F" + id, "rotor.forward", chain.costF[l],
                         Phase::Forward, {acts[l - 1]});
    acts[l] = g.addOutput(f, "a" + id, chain.a[l]);
    uint64_t more = chain.abar[l] - chain.a[l];
    if (more > 0)
      extra[l] = g.addOutput(f, "abar" + id, more);
    // The node allocates abar^l - a^l even in an F_none, where the model
    // counts it in o_f^l: the workspace is what remains of o_f^l. (F^L only
    // ever runs as F_all.)
    uint64_t overhead = chain.overheadF[l];
    g.node(f).workspaceBytes =
        l < L ? overhead - std::min(overhead, more) : overhead;
  }
  ValueId grad = g.addFixedValue("delta" + std::to_string(L), chain.delta[L]);
  for (unsigned l = L; l >= 1; --l) {
    std::vector<ValueId> inputs = {grad, acts[l]};
    if (extra[l] >= 0)
      inputs.push_back(extra[l]);
    inputs.push_back(acts[l - 1]);
    NodeId b = g.addNode("B" + std::to_string(l), "rotor.backward",
                         chain.costB[l], Phase::Backward, inputs);
    grad = g.addOutput(b, "delta" + std::to_string(l - 1), chain.delta[l - 1]);
    g.node(b).workspaceBytes = chain.overheadB[l];
  }
  g.markOutput(grad);
  return g;
}

//===----------------------------------------------------------------------===//
// The solvers
//===----------------------------------------------------------------------===//

namespace {
struct Attempt {
  Schedule schedule;
  SimulationReport report;
  RotorSolveInfo info;
  bool fits = false;
  /// The operation sequence, under -debug only (formatRotorSequence).
  std::string sequence;
};

/// Merges consecutive stages so that at most `maxStages` remain.
std::vector<std::vector<NodeId>>
coarsen(std::vector<std::vector<NodeId>> stages, unsigned maxStages) {
  if (maxStages == 0 || stages.size() <= maxStages)
    return stages;
  std::vector<std::vector<NodeId>> out(maxStages);
  size_t n = stages.size();
  for (size_t i = 0; i < n; ++i) {
    std::vector<NodeId> &bucket = out[i * maxStages / n];
    bucket.insert(bucket.end(), stages[i].begin(), stages[i].end());
  }
  return out;
}

/// Simulates the sequence the table gives at m slots.
llvm::Expected<Attempt> tryAt(const TrainingGraph &graph,
                              const RotorStageMap &map, const RotorTable &table,
                              unsigned m, const RotorDPOptions &dp) {
  llvm::Expected<RotorSequence> sequence = table.sequence(m);
  if (!sequence)
    return sequence.takeError();
  std::string text;
  FAMILY_DEBUG(dp, {
    text = formatRotorSequence(*sequence);
    if (text.size() > 240)
      text = text.substr(0, 240) + " ... (" + std::to_string(sequence->size()) +
             " operations)";
  });
  llvm::Expected<Schedule> schedule =
      scheduleFromRotorSequence(graph, map, *sequence);
  if (!schedule)
    return schedule.takeError();
  Attempt attempt;
  attempt.schedule = std::move(*schedule);
  attempt.report = simulate(graph, attempt.schedule);
  if (!attempt.report.valid)
    return makeError("rotor: converted sequence is invalid (internal "
                     "error): " +
                     attempt.report.error);
  attempt.info.length = map.chain.length();
  attempt.info.slots = table.slots();
  attempt.info.usedSlots = m;
  attempt.info.slotBytes = table.slotBytes();
  attempt.info.modelCost = table.cost(m);
  attempt.info.tableBytes = table.tableBytes();
  attempt.sequence = std::move(text);
  return std::move(attempt);
}

/// A model memory every sequence fits in: all items at once.
uint64_t allItemsBound(const RotorChain &chain) {
  uint64_t upper = 1;
  for (unsigned l = 0; l <= chain.length(); ++l)
    upper += chain.a[l] + chain.abar[l] + chain.delta[l] +
             chain.overheadF[l] + chain.overheadB[l];
  return upper;
}

bool timeLeft(const Deadline &deadline) {
  return !deadline || std::chrono::steady_clock::now() < *deadline;
}

/// Table cells (one m of one (s, s') pair) filled per second, measured on a
/// shared 2-core VM (densenet201: 4.5e9 cells in 2.2 s of CPU) and halved:
/// the time a table takes is predicted from it.
constexpr double kTableCellsPerSecond = 1e9;
/// How many memories above the budget one table answers: its columns reach
/// this many times the budget's slots. The model over-counts (a buffer held
/// by several stored items, sizes rounded up), so the optimum for more
/// memory than the budget often still fits it in the simulator.
constexpr double kColumnHeadroom = 1.5;
/// The most plans judged above the budget (each a reconstruction and a
/// simulation, no table fill).
constexpr int kProbesAboveBudget = 10;

llvm::Expected<Attempt> solveMapped(const TrainingGraph &graph,
                                    const RotorStageMap &map,
                                    const SolverOptions &options,
                                    const RotorDPOptions &dpIn,
                                    const Deadline &deadline,
                                    std::optional<uint64_t> leastMemory,
                                    bool leastMemoryOnly) {
  const std::optional<uint64_t> budget = options.budget;
  const RotorChain &chain = map.chain;
  const uint64_t upper = allItemsBound(chain);
  std::optional<Attempt> best;
  unsigned retries = 0, tables = 0;
  auto consider = [&](Attempt attempt) {
    attempt.fits = budget && attempt.report.peakBytes <= *budget;
    attempt.info.feasible = attempt.fits;
    attempt.info.retries = retries;
    // Every plan simulated is a candidate for whoever listens (`auto`
    // keeps the best for its own budget), whatever memory it was for.
    if (options.observer)
      options.observer(attempt.schedule, attempt.report);
    if (!best || betterPlan(attempt.report, best->report, budget))
      best = std::move(attempt);
  };
  auto build = [&](uint64_t memory, unsigned columns, unsigned slots) {
    ++tables;
    RotorDPOptions dp = dpIn;
    dp.columns = columns;
    dp.slots = slots;
    [[maybe_unused]] auto begin = std::chrono::steady_clock::now();
    llvm::Expected<RotorTable> table = RotorTable::build(chain, memory, dp);
    FAMILY_DEBUG(dp, {
      llvm::dbgs() << familyName(dp) << ": table " << tables
                   << ": L=" << chain.length() << " memory=" << memory
                   << " bytes, S=" << dp.slots << " slots of "
                   << llvm::format("%.1f", double(memory) / dp.slots)
                   << " bytes, " << std::max(dp.slots, columns) << " columns";
      if (table) {
        std::optional<unsigned> least = table->leastFeasibleSlots();
        llvm::dbgs() << ", " << table->tableBytes() << " table bytes, "
                     << llvm::format(
                            "%.3f",
                            std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - begin)
                                .count())
                     << " s; optimum at S: "
                     << llvm::format("%g", table->cost()) << ", least "
                     << "feasible slots: ";
        if (least)
          llvm::dbgs() << *least;
        else
          llvm::dbgs() << "none";
      }
      llvm::dbgs() << "\n";
    });
    return table;
  };
  // The optimum of column m, in the least memory that still gives it.
  auto planAt = [&](const RotorTable &table,
                    unsigned m) -> llvm::Expected<std::optional<Attempt>> {
    if (std::isinf(table.cost(m)))
      return std::nullopt;
    llvm::Expected<Attempt> attempt =
        tryAt(graph, map, table, table.leastSlotsForCost(m), dpIn);
    if (!attempt)
      return attempt.takeError();
    attempt->fits = budget && attempt->report.peakBytes <= *budget;
    return std::optional<Attempt>(std::move(*attempt));
  };

  if (!leastMemoryOnly && budget && *budget > map.reservedBytes) {
    // One table for every memory tried: S slots of (budget - reserved) / S
    // bytes, and columns up to kColumnHeadroom times that.
    const uint64_t room = *budget - map.reservedBytes;
    const unsigned S = dpIn.slots;
    double slot = double(room) / S;
    unsigned columns = unsigned(std::min<double>(
        std::ceil(kColumnHeadroom * S), std::ceil(double(upper) / slot) + 1));
    columns = std::max(columns, S);
    llvm::Expected<RotorTable> table = build(room, columns, S);
    if (!table)
      return table.takeError();
    // 1. The budget's column. The model bounds the simulated peak from
    //    above, so this plan fits; should it not, a lower column of the
    //    same table is tried (counted in `retries`, expected to stay 0).
    unsigned m = S;
    std::optional<unsigned> fitting;
    for (int round = 0; round < 6; ++round) {
      auto attempt = planAt(*table, m);
      if (!attempt)
        return attempt.takeError();
      if (!*attempt)
        break;
      uint64_t peak = (*attempt)->report.peakBytes;
      bool fits = (*attempt)->fits;
      FAMILY_DEBUG(dpIn, llvm::dbgs()
                             << familyName(dpIn) << ": plan at column " << m
                             << ": model cost "
                             << llvm::format("%g", (*attempt)->info.modelCost)
                             << ", simulated peak " << peak << " cost "
                             << llvm::format("%g", (*attempt)->report.totalCost)
                             << (fits ? " (fits)" : " (over the budget)")
                             << "\n");
      consider(std::move(**attempt));
      if (fits) {
        fitting = m;
        break;
      }
      unsigned excess = unsigned(std::ceil(double(peak - *budget) / slot));
      if (excess >= m)
        break;
      m -= excess;
      ++retries;
    }
    // 2. Columns above the budget's: the largest whose plan still fits is
    //    searched by bisection (plans are not monotone in the memory, so
    //    every probe is judged and kept if better), all in this table. When
    //    even its last column's plan fits with room to spare (the model
    //    over-counted by more than the headroom), one more table, its
    //    memory scaled by how much the model over-counted.
    bool topFits = false;
    for (int extra = 0; fitting && extra < 2; ++extra) {
      if (extra == 1) {
        if (!timeLeft(deadline) || !topFits || !best || !best->fits)
          break;
        uint64_t used = best->report.peakBytes - map.reservedBytes;
        if (used >= room - room / 50)
          break;
        double memory = double(table->columns()) * slot;
        double scaled = std::min<double>(double(upper),
                                         memory * double(room) / double(used));
        if (scaled <= memory * 1.02)
          break;
        slot = scaled / (kColumnHeadroom * S);
        llvm::Expected<RotorTable> next =
            build(uint64_t(slot * S), unsigned(std::ceil(kColumnHeadroom * S)),
                  S);
        if (!next)
          return next.takeError();
        *table = std::move(*next);
        fitting = 0;
      }
      unsigned lo = *fitting, hi = table->columns() + 1;
      for (int probe = 0; probe < kProbesAboveBudget && timeLeft(deadline);
           ++probe) {
        unsigned next = hi > table->columns() ? table->columns()
                                              : lo + (hi - lo) / 2;
        if (next <= lo || next >= hi)
          break;
        auto attempt = planAt(*table, next);
        if (!attempt)
          return attempt.takeError();
        bool fits = *attempt && (*attempt)->fits;
        FAMILY_DEBUG(dpIn, {
          llvm::dbgs() << familyName(dpIn) << ": column " << next << ": ";
          if (*attempt)
            llvm::dbgs() << "simulated peak " << (*attempt)->report.peakBytes
                         << " cost "
                         << llvm::format("%g", (*attempt)->report.totalCost)
                         << (fits ? " (fits)" : " (over the budget)");
          else
            llvm::dbgs() << "no sequence";
          llvm::dbgs() << "\n";
        });
        if (*attempt)
          consider(std::move(**attempt));
        if (next == table->columns())
          topFits = fits;
        (fits ? lo : hi) = next;
      }
    }
    // Fitting or not: the caller searches the least memory of one chain
    // only when no chain's plan fits.
    if (best) {
      best->info.tables = tables;
      return std::move(*best);
    }
  }

  FAMILY_DEBUG(dpIn, llvm::dbgs()
                         << familyName(dpIn) << ": "
                         << (budget ? "no plan within the budget"
                                    : "no budget")
                         << ": search the least-memory plan\n");
  // No budget, or none fits: the least memory. The chain's least memory is
  // known exactly (rotorLeastMemory); one table of 1.5 times that memory in
  // S / 2 slots when S >= 400 (0.6% of it each: rounding costs at most that
  // per stored item, and half the slots is half the fill) holds it, and every
  // breakpoint of its cost curve is judged by the simulator (the model's
  // least memory need not be the graph's: it over-counts buffers held by
  // several items).
  uint64_t least = leastMemory ? *leastMemory
                               : rotorLeastMemory(chain, dpIn.allowFAllChains)
                                     .value_or(upper);
  std::optional<RotorTable> table;
  uint64_t limit = std::max<uint64_t>(least + least / 2, 1);
  const unsigned slots = dpIn.slots >= 400 ? dpIn.slots / 2 : dpIn.slots;
  for (int round = 0; round < 8 && !table; ++round, limit *= 2) {
    llvm::Expected<RotorTable> built = build(limit, 0, slots);
    if (!built)
      return built.takeError();
    if (built->leastFeasibleSlots())
      table = std::move(*built);
    if (limit >= upper && !table)
      break;
  }
  if (!table)
    // Every stored item takes at least one slot, so a sequence can need
    // more slots than S whatever the memory (a^{l-1}, abar^l and delta^l
    // together during B^l): only S too small gets here.
    return makeError("rotor: no sequence is feasible with " +
                     llvm::Twine(dpIn.slots) +
                     " memory slots (each stored item takes at least one "
                     "slot); use more slots");
  unsigned leastSlots = *table->leastFeasibleSlots();
  [[maybe_unused]] unsigned judged = 0;
  // Every distinct optimum of the table at the least memory that gives it
  // (the breakpoints of the cost curve), judged by the simulator.
  for (unsigned m = leastSlots; m <= table->slots(); ++m) {
    if (m > leastSlots && !(table->cost(m) < table->cost(m - 1)))
      continue;
    llvm::Expected<Attempt> attempt = tryAt(graph, map, *table, m, dpIn);
    if (!attempt)
      return attempt.takeError();
    ++judged;
    consider(std::move(*attempt));
    if (!timeLeft(deadline))
      break;
  }
  FAMILY_DEBUG(dpIn, llvm::dbgs()
                         << familyName(dpIn) << ": least memory: model least "
                         << least << " bytes, least feasible " << leastSlots
                         << " of " << table->slots() << " slots, " << judged
                         << " breakpoints of the cost curve simulated; best "
                            "peak "
                         << best->report.peakBytes << "\n");
  best->info.tables = tables;
  return std::move(*best);
}

} // namespace

llvm::Expected<Schedule> remat::solveRotorFamily(
    const TrainingGraph &graph, const SolverOptions &options,
    const RotorOptions &rotorOptions, const RotorDPOptions &dp,
    RotorSolveInfo *info) {
  if (graph.forwardNodes().empty()) {
    // Nothing to checkpoint: run the nodes in order.
    std::vector<NodeId> order(graph.numNodes());
    std::iota(order.begin(), order.end(), 0);
    return insertEarlyFrees(graph, order);
  }
  // Candidate stagings: one stage per forward node (Checkmate's
  // linearization, seeds/003 appendix B.2), and the top level of the linear
  // hierarchy (seeds/001 §4), whose stages hide branches and skip
  // connections the way rotor's own experiments cut ResNets into blocks.
  std::vector<std::pair<std::string, std::vector<std::vector<NodeId>>>>
      stagings;
  // A table fill is not interruptible: under a time limit the stages are
  // coarsened so that the first table's predicted fill takes at most half
  // of it (issue 24: a solve returns within 110% of its limit).
  unsigned maxStages = rotorOptions.maxStages;
  if (options.timeLimitSeconds > 0) {
    double columns = kColumnHeadroom * dp.slots;
    double affordable = std::cbrt(0.5 * options.timeLimitSeconds *
                                  kTableCellsPerSecond * 6 / columns);
    // Clamped before the cast: a huge limit must not overflow unsigned.
    unsigned cap = unsigned(std::min(std::max(16.0, affordable), 1e9));
    if (maxStages == 0 || cap < maxStages)
      maxStages = cap;
  }
  {
    std::vector<std::vector<NodeId>> perNode;
    for (NodeId n : graph.forwardNodes())
      perNode.push_back({n});
    stagings.emplace_back("nodes", coarsen(std::move(perNode), maxStages));
  }
  if (rotorOptions.tryHierarchy) {
    StructureAnalysis analysis(graph);
    std::vector<int> top = analysis.hierarchy.topLevelStages();
    if (top.size() > 1 && top.size() < graph.forwardNodes().size()) {
      std::vector<std::vector<NodeId>> stages;
      for (int id : top) {
        std::vector<NodeId> nodes;
        for (Vertex v : analysis.hierarchy.vertices(id))
          nodes.push_back(analysis.graph.nodeId(v));
        stages.push_back(std::move(nodes));
      }
      stagings.emplace_back("hierarchy", coarsen(std::move(stages), maxStages));
    }
  }

  const Deadline deadline = deadlineFrom(options);
  std::optional<Attempt> best;
  std::string firstError;
  FAMILY_DEBUG(dp, {
    llvm::dbgs() << familyName(dp) << ": " << graph.forwardNodes().size()
                 << " forward nodes, budget ";
    if (options.budget)
      llvm::dbgs() << *options.budget;
    else
      llvm::dbgs() << "none (least memory)";
    llvm::dbgs() << ", S=" << dp.slots << "; stagings:";
    for (auto &[name, stages] : stagings)
      llvm::dbgs() << " " << name << " (" << stages.size() << " stages)";
    llvm::dbgs() << "\n";
  });
  static const std::pair<BackwardPlacement, const char *> placements[] = {
      {BackwardPlacement::Balanced, ""},
      {BackwardPlacement::Early, "/early"},
      {BackwardPlacement::Late, "/late"}};
  // Every distinct chain: each placement of the backward nodes on each
  // staging; placements that give the same groups as an earlier one are the
  // same chain.
  struct Mapped {
    std::string name;
    RotorStageMap map;
    /// The chain's least memory (rotorLeastMemory) plus the reserved bytes.
    std::optional<uint64_t> leastMemory;
  };
  std::vector<Mapped> chains;
  for (auto &[name, stages] : stagings) {
    std::vector<std::vector<std::vector<NodeId>>> seen;
    for (auto [placement, suffix] : placements) {
      llvm::Expected<RotorStageMap> map =
          buildRotorStageMap(graph, stages, placement);
      if (!map) {
        // A staging the map rejects (not a topological partition) is
        // skipped; the per-node staging always maps.
        std::string error = llvm::toString(map.takeError());
        FAMILY_DEBUG(dp, llvm::dbgs()
                             << familyName(dp) << ": staging " << name << suffix
                             << " rejected: " << error << "\n");
        if (firstError.empty())
          firstError = std::move(error);
        break;
      }
      if (llvm::is_contained(seen, map->backward)) {
        FAMILY_DEBUG(dp, llvm::dbgs()
                             << familyName(dp) << ": staging " << name << suffix
                             << ": same backward groups as before, skipped\n");
        continue;
      }
      seen.push_back(map->backward);
      if (rotorOptions.blockOptions)
        addBlockOptions(graph, *map);
      std::optional<uint64_t> least =
          rotorLeastMemory(map->chain, dp.allowFAllChains);
      if (least)
        *least += map->reservedBytes;
      FAMILY_DEBUG(dp, {
        const RotorChain &chain = map->chain;
        uint64_t a = 0, abar = 0, delta = 0;
        unsigned pinned = 0;
        for (unsigned l = 0; l <= chain.length(); ++l) {
          a += chain.a[l];
          abar += chain.abar[l];
          delta += chain.delta[l];
          pinned += chain.isPinned(l);
        }
        llvm::dbgs() << familyName(dp) << ": staging " << name << suffix
                     << ": chain of L=" << chain.length()
                     << " stages, sum a=" << a << " abar=" << abar
                     << " delta=" << delta << " bytes, reserved "
                     << map->reservedBytes << " bytes, " << pinned
                     << " pinned stages, model least memory ";
        if (least)
          llvm::dbgs() << *least;
        else
          llvm::dbgs() << "none";
        llvm::dbgs() << "\n";
      });
      chains.push_back({name + suffix, std::move(*map), least});
    }
  }
  auto solveChain = [&](Mapped &mapped, bool leastMemoryOnly) -> llvm::Error {
    std::optional<uint64_t> least = mapped.leastMemory;
    if (least)
      *least -= mapped.map.reservedBytes;
    llvm::Expected<Attempt> attempt = solveMapped(
        graph, mapped.map, options, dp, deadline, least, leastMemoryOnly);
    if (!attempt)
      return attempt.takeError();
    attempt->info.stages = mapped.name;
    FAMILY_DEBUG(dp, llvm::dbgs()
                         << familyName(dp) << ": staging " << mapped.name
                         << ": " << attempt->info.tables << " tables, "
                         << attempt->info.retries << " retries; plan at "
                         << attempt->info.usedSlots << "/"
                         << attempt->info.slots << " slots (model cost "
                         << llvm::format("%g", attempt->info.modelCost)
                         << "): simulated peak " << attempt->report.peakBytes
                         << " cost "
                         << llvm::format("%g", attempt->report.totalCost)
                         << ", " << attempt->report.numRecomputations
                         << " recomputations"
                         << (attempt->fits ? ", fits" : "") << "\n");
    if (!best || betterPlan(attempt->report, best->report, options.budget))
      best = std::move(*attempt);
    return llvm::Error::success();
  };
  // With a budget, every chain within the time limit: one table each.
  if (options.budget)
    for (Mapped &mapped : chains) {
      if (best && !timeLeft(deadline))
        break;
      // A chain whose table would not be filled in the time left is skipped
      // (once a plan exists): the fill cannot be stopped half-way.
      if (best && deadline) {
        double cells = std::pow(double(mapped.map.chain.length()), 3) / 6 *
                       kColumnHeadroom * dp.slots;
        double left = std::chrono::duration<double>(
                          *deadline - std::chrono::steady_clock::now())
                          .count();
        if (cells / kTableCellsPerSecond > left)
          continue;
      }
      // A chain whose least memory exceeds the budget has no plan within it.
      if (mapped.leastMemory && *mapped.leastMemory > *options.budget)
        continue;
      if (llvm::Error err = solveChain(mapped, /*leastMemoryOnly=*/false))
        return std::move(err);
    }
  // Without a budget, or when no chain's plan fits: the least-memory plan
  // of the chain with the least memory in the model, one table (the table
  // fill, O(L^3 S), is the cost; the least memory of every chain, O(L^3),
  // is cheap).
  if (!best || !options.budget ||
      best->report.peakBytes > *options.budget) {
    Mapped *leastChain = nullptr;
    for (Mapped &mapped : chains)
      if (mapped.leastMemory &&
          (!leastChain || *mapped.leastMemory < *leastChain->leastMemory))
        leastChain = &mapped;
    if (!leastChain && !chains.empty())
      leastChain = &chains.front();
    if (leastChain)
      if (llvm::Error err = solveChain(*leastChain, /*leastMemoryOnly=*/true))
        return std::move(err);
  }
  if (!best)
    return makeError(firstError.empty() ? "rotor: no staging" : firstError);
  FAMILY_DEBUG(dp, llvm::dbgs() << familyName(dp) << ": chose staging "
                                << best->info.stages << ": peak "
                                << best->report.peakBytes << ", cost "
                                << llvm::format("%g", best->report.totalCost)
                                << "; sequence: " << best->sequence << "\n");
  if (info)
    *info = best->info;
  return std::move(best->schedule);
}

llvm::Expected<Schedule> remat::solveRotor(const TrainingGraph &graph,
                                           const SolverOptions &options,
                                           const RotorOptions &rotorOptions,
                                           RotorSolveInfo *info) {
  RotorDPOptions dp;
  dp.slots = rotorOptions.slots;
  dp.allowFAllChains = true;
  return solveRotorFamily(graph, options, rotorOptions, dp, info);
}

llvm::Expected<Schedule> remat::solveBlocks(const TrainingGraph &graph,
                                            const SolverOptions &options,
                                            RotorSolveInfo *info) {
  RotorOptions rotorOptions;
  rotorOptions.slots = options.memorySlots;
  rotorOptions.blockOptions = true;
  // Options multiply the F_all terms of the table: the per-node staging is
  // coarsened further than rotor's, and the hierarchy's blocks (a few dozen
  // on real models) carry most of the gain.
  rotorOptions.maxStages = 200;
  RotorDPOptions dp;
  dp.slots = options.memorySlots;
  dp.allowFAllChains = true;
  return solveRotorFamily(graph, options, rotorOptions, dp, info);
}
