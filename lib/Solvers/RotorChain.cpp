//===- RotorChain.cpp - Rotor's chain and its operation sequences ---------===//
//
// seeds/004_12ee49cee382de08.txt §3.1 and its Table 1, the operation model:
// a chain of L stages, each with the sizes w_a, w_abar, w_delta of the items
// a^l, abar^l, delta^l, the overheads o_f, o_b and the times u_f, u_b
// (RotorChain; this project adds options per stage, pinned stages and
// reliefs, and check() says what a chain must satisfy), and a sequence of
// F_all / F_ck / F_none / B operations run on it (formatRotorSequence,
// simulateRotorSequence): each operation replaces its inputs in memory by
// its outputs, the sequence is valid when every input is present, its
// memory is the largest of the items held plus an operation's overhead and
// its time is the sum of the operations' times.
//
// The dynamic program over such chains is in RotorTable.cpp, the mapping of
// a training graph onto one in RotorMapping.cpp and the solvers in
// RotorSearch.cpp.
//
//===----------------------------------------------------------------------===//

#include "remat/Solvers/Rotor.h"

#include "RotorInternal.h"

#include <algorithm>
#include <cmath>

using namespace remat;

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
