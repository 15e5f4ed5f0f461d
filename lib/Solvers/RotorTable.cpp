//===- RotorTable.cpp - Rotor's dynamic program and its reconstruction ----===//
//
// seeds/004_12ee49cee382de08.txt §4.2: the dynamic program of Theorem 1
// (C_BP(s, t, m) of Eqs. (1)-(2) with m_none^{s,t} and m_all^{s,t}) for the
// optimal *persistent* sequence (§4.1 shows why persistence is assumed),
// filled as Algorithm 1 (RotorTable::build, fill, cost) and read back as
// Algorithm 2, OptRec (RotorTable::rebuild, sequence), over a memory
// discretised into S slots with every size rounded up (§5.2,
// RotorTable::toSlots); and rotorLeastMemory, the same recurrence for
// feasibility alone, in bytes and without slots. Revolve as §5.3 runs it is
// this program without chains of F_all (RotorDPOptions::allowFAllChains,
// Revolve.cpp). The operation model the table counts is §3.1's
// (RotorChain.cpp).
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Rotor.h"

#include "RotorInternal.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace remat;

static const float kInf = std::numeric_limits<float>::infinity();

//===----------------------------------------------------------------------===//
// Reused storage
//===----------------------------------------------------------------------===//

namespace {
/// The storage kept on this thread while a RotorTableReuse is alive.
struct KeptStorage {
  unsigned scopes = 0;
  std::vector<std::vector<float>> buffers;
};
thread_local KeptStorage kept;
/// Two buffers: a solve alternates between at most two live tables
/// (RotorSearch.cpp's scaled second table).
constexpr size_t kKeptBuffers = 2;
} // namespace

RotorTableReuse::RotorTableReuse() { ++kept.scopes; }

RotorTableReuse::~RotorTableReuse() {
  if (--kept.scopes == 0)
    kept.buffers.clear();
}

RotorTableStorage &
RotorTableStorage::operator=(RotorTableStorage &&other) noexcept {
  if (this != &other) {
    release();
    cells = std::move(other.cells);
    other.cells = {};
  }
  return *this;
}

RotorTableStorage::~RotorTableStorage() { release(); }

void RotorTableStorage::release() {
  if (kept.scopes == 0 || cells.capacity() == 0)
    return;
  cells.clear();
  if (kept.buffers.size() < kKeptBuffers) {
    kept.buffers.push_back(std::move(cells));
  } else {
    // Keep the larger ones: the next tables are usually as large.
    auto smallest = std::min_element(
        kept.buffers.begin(), kept.buffers.end(),
        [](const auto &x, const auto &y) { return x.capacity() < y.capacity(); });
    if (smallest->capacity() < cells.capacity())
      std::swap(*smallest, cells);
  }
  cells = {};
}

void RotorTableStorage::assign(size_t n, float value) {
  if (cells.capacity() < n && kept.scopes != 0) {
    // The smallest kept buffer that holds n cells.
    auto fit = kept.buffers.end();
    for (auto it = kept.buffers.begin(); it != kept.buffers.end(); ++it)
      if (it->capacity() >= n &&
          (fit == kept.buffers.end() || it->capacity() < fit->capacity()))
        fit = it;
    if (fit != kept.buffers.end()) {
      std::swap(cells, *fit);
      kept.buffers.erase(fit);
    }
  }
  cells.assign(n, value);
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

/// out[k] = min(out[k], (pre + right[k]) + left[k]) for k < count: C_1's
/// hot loop (fill), contiguous and branch-free. Compiled twice, for AVX2 and
/// for the baseline, the one the CPU runs chosen when the program loads:
/// sums of two adds and a minimum are the same bits either way (no
/// contraction, no reassociation), so the tables are too, and rebuild()'s
/// scalar re-evaluation still matches them.
__attribute__((target_clones("avx2", "default"))) static void
relaxCheckpointed(float *out, const float *right, const float *left,
                  float pre, int count) {
  for (int k = 0; k < count; ++k) {
    float v = (pre + right[k]) + left[k];
    out[k] = v < out[k] ? v : out[k];
  }
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
        const int from = std::max(none, w);
        if (from <= S)
          relaxCheckpointed(out + from, right + (from - w), left + from, pre,
                            S - from + 1);
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
