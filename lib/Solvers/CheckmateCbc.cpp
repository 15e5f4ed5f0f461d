//===- CheckmateCbc.cpp - Running COIN-OR CBC on problem (9) --------------===//
//
// Checkmate's MILP (runCbc) and the residency bound's integer programs
// (cbcLowerBound, CbcBound.h). The only translation unit that includes CBC's
// headers. COIN-OR is built with RTTI (its inline code uses dynamic_cast,
// and the event handler below derives from one of its classes) while LLVM
// and this project are built without: lib/Solvers/CMakeLists.txt compiles
// this file alone with -frtti, and it exchanges only standard types with
// the rest.
//
//===----------------------------------------------------------------------===//

#include "CheckmateModel.h"
#include "CbcBound.h"

#include "remat/Support/Debug.h"

#include "llvm/Support/Format.h"

#include "CbcEventHandler.hpp"
#include "CoinPackedMatrix.hpp"
#include "CbcModel.hpp"
#include "CbcSolver.hpp"
#include "OsiClpSolverInterface.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

using namespace remat;
using namespace remat::checkmate;

// -debug-only=remat-checkmate-cbc: the root relaxation, the arguments CBC's
// driver gets (time limit, cutoff, cut generators) and what it returns.
#define DEBUG_TYPE "remat-checkmate-cbc"

namespace {

/// Progress lines for long searches: incumbent, best bound and gap, at most
/// one per interval, on CBC's node and solution events.
class ProgressHandler : public CbcEventHandler {
public:
  ProgressHandler(std::function<void(const std::string &)> print,
                  double interval, double scale,
                  std::chrono::steady_clock::time_point start,
                  std::chrono::steady_clock::time_point deadline)
      : print(std::move(print)), interval(interval), scale(scale),
        start(start), deadline(deadline) {}

  CbcAction event(CbcEvent whichEvent) override {
    // The wall-clock limit: CBC's own `-sec` counts CPU time even with
    // `-timeMode elapsed` in Debian's 2.10.8 (issue 24: 100 to 123 s wall
    // with a 60 s limit), so every event looks at the clock.
    if (std::chrono::steady_clock::now() >= deadline)
      return stop;
    if (interval <= 0 || !model_ || !print)
      return noAction;
    if (whichEvent != node && whichEvent != solution &&
        whichEvent != heuristicSolution && whichEvent != treeStatus)
      return noAction;
    double now =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (now < next)
      return noAction;
    if (next == 0) {
      // The first line after one interval, not at the first event.
      next = now + interval;
      return noAction;
    }
    next = now + interval;
    double bound = model_->getBestPossibleObjValue() * scale;
    char line[256];
    if (model_->getSolutionCount() > 0) {
      double incumbent = model_->getObjValue() * scale;
      double gap =
          incumbent != 0 ? (incumbent - bound) / std::fabs(incumbent) : 0;
      std::snprintf(line, sizeof(line),
                    "%.1fs nodes=%d incumbent=%.6g bound=%.6g gap=%.2f%%", now,
                    model_->getNodeCount(), incumbent, bound, 100 * gap);
    } else {
      std::snprintf(line, sizeof(line),
                    "%.1fs nodes=%d incumbent=none bound=%.6g", now,
                    model_->getNodeCount(), bound);
    }
    print(line);
    return noAction;
  }

  CbcEventHandler *clone() const override { return new ProgressHandler(*this); }

private:
  std::function<void(const std::string &)> print;
  double interval, scale;
  std::chrono::steady_clock::time_point start, deadline;
  double next = 0;
};

} // namespace

CbcOutcome checkmate::runCbc(const Formulation &formulation,
                             const std::vector<double> *start,
                             std::optional<double> cutoff, double seconds,
                             double progressInterval,
                             std::chrono::steady_clock::time_point clock,
                             std::function<void(const std::string &)> print) {
  // Out of time already: nothing to solve.
  if (seconds < 0.05)
    return CbcOutcome();
  auto begin = std::chrono::steady_clock::now();
  auto deadline =
      begin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(seconds));
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  formulation.load(solver);
  formulation.markIntegers(solver);
  // The root relaxation, solved here: CbcMain1 then starts from its basis.
  // Left to CbcMain1, the same solve took 6 to 20 times longer on the
  // larger graphs (MobileNet: 76 s against 11 s), past any time limit.
  // CLP's limit is CPU time unless the wall-clock one is set too.
  double rootSeconds = std::max(
      0.01, std::chrono::duration<double>(deadline -
                                          std::chrono::steady_clock::now())
                .count());
  solver.getModelPtr()->setMaximumSeconds(rootSeconds);
  solver.getModelPtr()->setMaximumWallSeconds(rootSeconds);
  solver.initialSolve();
  seconds -=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  LLVM_DEBUG(llvm::dbgs() << "checkmate cbc: root relaxation "
                          << (solver.isProvenOptimal()            ? "optimal"
                              : solver.isProvenPrimalInfeasible() ? "infeasible"
                                                                  : "unsolved")
                          << ", value "
                          << llvm::format("%g", solver.isProvenOptimal()
                                                    ? solver.getObjValue() *
                                                          formulation.costScale
                                                    : 0.0)
                          << "; " << llvm::format("%.2f", seconds)
                          << " s left\n");
  if (solver.isProvenPrimalInfeasible()) {
    CbcOutcome outcome;
    outcome.infeasible = true;
    return outcome;
  }
  // Out of time before the root relaxation was solved: CbcMain1 would solve
  // it again without looking at the clock.
  if (!solver.isProvenOptimal() && seconds < 1)
    return CbcOutcome();

  CbcModel model(solver);
  model.setLogLevel(0);
  CbcMain0(model);
  ProgressHandler handler(std::move(print), progressInterval,
                          formulation.costScale, clock, deadline);
  // Always: the handler also stops the search at the wall-clock deadline.
  model.passInEventHandler(&handler);
  if (start) {
    // CbcMain1 reads a MIP start by column name and completes it (the
    // continuous U) with a reduced search.
    std::vector<std::pair<std::string, double>> values;
    OsiSolverInterface *inner = model.solver();
    for (int c = 0, e = static_cast<int>(start->size()); c < e; ++c) {
      std::string name = "c" + std::to_string(c);
      inner->setColName(c, name);
      if (inner->isInteger(c))
        values.emplace_back(std::move(name), (*start)[c]);
    }
    model.setMIPStart(values);
  }
  std::string limit = std::to_string(std::max(seconds, 0.5));
  // -timeMode elapsed: CBC's limit is CPU time by default, a wall-clock
  // limit is what a user asks for. A relative gap far below any cost
  // difference: prove optimality.
  // -preprocess off: when the time limit stops the search inside or right
  // after CglPreProcess, CbcMain1's CglPreProcess::postProcess dereferences
  // a model the early stop left half built (SIGSEGV, every run on a loaded
  // 2-core machine with limits of 2 to 8 s). The formulation is already
  // tight (CheckmateModel.cpp); without preprocessing CBC proves the same
  // optima, and a stop at the limit leaves the incumbent intact.
  std::vector<const char *> args = {
      "remat-checkmate", "-log",       "0",   "-timeMode", "elapsed",
      "-preprocess",     "off",        "-sec", limit.c_str(), "-ratioGap",
      "1e-7"};
  // -probingCuts off where memory coefficients span many orders of
  // magnitude (budgets above 2^28 memory units: tensors of 10^9..10^16 bytes
  // next to 4-byte ones, found by remat-property-check,
  // test/Solvers/Inputs/cbc-crash-*.json): CglProbing then aborts on
  // assertions of Debian's CoinUtils build (`colUpper[i]==floor(colUpper[i]
  // +0.5)`, `newSol>solMove`) or loops without looking at the clock.
  // Elsewhere probing stays: without it CBC proved the chain tests' optima
  // several times slower (unittests/Solvers/CheckmateTest.cpp).
  if (formulation.budgetUnits() > (uint64_t(1) << 28)) {
    args.push_back("-probingCuts");
    args.push_back("off");
  }
  // The cutoff prunes every node that cannot beat the best plan known
  // (slightly above it, so that CBC may still report an equal one).
  std::string cutoffText;
  if (cutoff) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.12g",
                  *cutoff + 1e-7 * std::fabs(*cutoff) + 1e-9);
    cutoffText = text;
    args.push_back("-cutoff");
    args.push_back(cutoffText.c_str());
  }
  args.push_back("-solve");
  args.push_back("-quit");
  LLVM_DEBUG({
    llvm::dbgs() << "checkmate cbc: CbcMain1";
    for (const char *arg : args)
      llvm::dbgs() << " " << arg;
    llvm::dbgs() << (start ? " (with a MIP start)" : "") << "\n";
  });
  CbcMain1(static_cast<int>(args.size()), args.data(), model);

  CbcOutcome outcome;
  outcome.optimal = model.isProvenOptimal();
  outcome.infeasible = model.isProvenInfeasible();
  outcome.nodes = model.getNodeCount();
  outcome.bound = model.getBestPossibleObjValue();
  if (model.bestSolution() && model.getSolutionCount() > 0) {
    const double *x = model.bestSolution();
    outcome.solution.assign(x, x + formulation.numColumns());
  }
  LLVM_DEBUG(
      llvm::dbgs()
      << "checkmate cbc: status " << model.status() << " (secondary "
      << model.secondaryStatus() << "), " << outcome.nodes << " nodes, "
      << model.getSolutionCount() << " solutions, best "
      << llvm::format("%g", outcome.solution.empty()
                                ? 0.0
                                : model.getObjValue() * formulation.costScale)
      << ", bound " << llvm::format("%g", outcome.bound * formulation.costScale)
      << "\n");
  return outcome;
}

void remat::loadProgram(OsiClpSolverInterface &solver,
                        const MixedIntegerProgram &program) {
  CoinPackedMatrix matrix(/*colordered=*/false, program.rowIndex.data(),
                          program.columnIndex.data(), program.elements.data(),
                          CoinBigIndex(program.elements.size()));
  matrix.setDimensions(int(program.rowLower.size()),
                       int(program.objective.size()));
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, program.columnLower.data(),
                     program.columnUpper.data(), program.objective.data(),
                     program.rowLower.data(), program.rowUpper.data());
  for (size_t c = 0; c < program.integer.size(); ++c)
    if (program.integer[c])
      solver.setInteger(int(c));
}

std::optional<MixedIntegerBound>
remat::cbcLowerBound(const MixedIntegerProgram &program, double seconds) {
  if (seconds < 0.02)
    return std::nullopt;
  auto begin = std::chrono::steady_clock::now();
  auto deadline =
      begin + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(seconds));
  auto left = [&] {
    return std::chrono::duration<double>(deadline -
                                         std::chrono::steady_clock::now())
        .count();
  };
  OsiClpSolverInterface solver;
  loadProgram(solver, program);
  // The root relaxation here, under the wall clock (as in runCbc).
  solver.getModelPtr()->setMaximumSeconds(std::max(0.01, left()));
  solver.getModelPtr()->setMaximumWallSeconds(std::max(0.01, left()));
  solver.initialSolve();
  if (!solver.isProvenOptimal())
    return std::nullopt;
  // 1e-4 of the largest objective coefficient: what the bound gives up to
  // CLP's tolerances and CBC's pruning (below).
  double scale = 0;
  for (double c : program.objective)
    scale = std::max(scale, std::fabs(c));
  MixedIntegerBound result;
  result.bound = solver.getObjValue() - 1e-4 * scale;
  if (left() < 0.05)
    return result;
  // CLP's limits count from when they were set and stay with the solver
  // CbcModel copies: cleared, so that the root's limit does not stop the
  // node relaxations; the event handler keeps the deadline.
  solver.getModelPtr()->setMaximumSeconds(-1);
  solver.getModelPtr()->setMaximumWallSeconds(-1);

  CbcModel model(solver);
  model.setLogLevel(0);
  CbcMain0(model);
  // No progress lines; the handler stops the search at the deadline.
  ProgressHandler handler(nullptr, 0, 1, begin, deadline);
  model.passInEventHandler(&handler);
  std::string limit = std::to_string(std::max(left(), 0.05));
  // The arguments of runCbc's search (see there): a wall-clock limit,
  // no preprocessing (its early stops crash CbcMain1), and no probing: the
  // bound problems mix bytes of tensors of very different sizes, where
  // CglProbing aborts on Debian's CoinUtils assertions.
  // -integerTolerance 1e-9: with CBC's default (1e-6) a relaxation whose
  // r is 2.4e-8 (two kept values 2.4e-8 of the capacity over it) counts as
  // integral, its rounding breaks the memory row, and CBC declared the
  // node, and with it a feasible 5-column program, infeasible instead of
  // branching (found by ResidencyBound.IsAtMostTheOptimumOfTinyRandomGraphs).
  std::vector<const char *> args = {
      "remat-bound",   "-log",         "0",   "-timeMode",   "elapsed",
      "-preprocess",   "off",          "-sec", limit.c_str(), "-ratioGap",
      "1e-7",          "-probingCuts", "off", "-integerTolerance",
      "1e-9",          "-solve",       "-quit"};
  CbcMain1(static_cast<int>(args.size()), args.data(), model);
  // An infeasibility claim is not trusted (the program has a point for
  // every plan; a budget no plan fits is proven elsewhere): the root's
  // bound stands then.
  if (model.isProvenInfeasible())
    return result;
  // CBC prunes a node whose relaxation is within its cutoff increment (or
  // allowable gaps) of the incumbent, and its node relaxations hold up to
  // CLP's tolerances (on mobilenet_v2 at 60% an LP of this kind was 4.8e-6,
  // scaled, above a plan's cost): its best bound is taken down by those
  // and by 1e-4 of the largest objective coefficient (the scale).
  double best = model.getBestPossibleObjValue();
  if (model.getSolutionCount() > 0)
    best = std::min(best, model.getObjValue());
  const double slack =
      std::max({model.getCutoffIncrement(), model.getAllowableGap(), 0.0}) +
      std::max(model.getAllowableFractionGap(), 1e-7) * std::fabs(best) +
      1e-4 * scale;
  if (std::isfinite(best) && best < 1e20)
    result.bound = std::max(result.bound, best - slack);
  result.optimal = model.isProvenOptimal();
  return result;
}
