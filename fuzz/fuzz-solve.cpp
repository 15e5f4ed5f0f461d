//===- fuzz-solve.cpp - Fuzz every solver on small valid graphs -----------===//
//
// Decodes the input into a small training graph that is valid by
// construction (built through the public TrainingGraph API: a fixed input,
// 1-6 forward nodes with optional skip connections and workspaces, one
// backward node per forward node in reverse order reading its gradient and
// the forward values it needs; up to 12 nodes) and a budget (none, or a
// fraction of the checkpoint-all peak), then runs every registered solver
// that applies, except the CBC MILP (checkmate-ilp) and the portfolio (auto,
// which runs it), with a 0.05 s time limit. For each plan: the simulator
// must accept it (every input computed before use, every node computed,
// the step outputs resident), and a plan said to meet the budget must have
// a simulated peak within it; the plan's status must agree with the
// simulation (see the checks below). Any violation aborts.
//
//===----------------------------------------------------------------------===//

#include "remat/Graph/TrainingGraph.h"
#include "remat/Schedule/Schedule.h"
#include "remat/Solvers/Solver.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace remat;

namespace {
/// Reads the fuzzer's bytes; zeros once they run out.
struct Bytes {
  const uint8_t *data;
  size_t size;
  size_t pos = 0;
  uint8_t next() { return pos < size ? data[pos++] : 0; }
  uint64_t next16() { return next() | (uint64_t(next()) << 8); }
};
} // namespace

[[noreturn]] static void fail(const std::string &solver,
                              const std::string &what) {
  std::fprintf(stderr, "fuzz-solve: %s: %s\n", solver.c_str(), what.c_str());
  std::abort();
}

static uint64_t decodeBytes(Bytes &in) {
  // 1 .. 65536 bytes, scaled by 1, 1 KiB, 1 MiB or 1 GiB.
  static const uint64_t scales[] = {1, 1024, 1u << 20, 1u << 30};
  uint8_t scale = in.next();
  return (in.next16() + 1) * scales[scale & 3];
}

static TrainingGraph decodeGraph(Bytes &in) {
  TrainingGraph graph;
  unsigned numForward = 1 + in.next() % 6;
  ValueId input = graph.addFixedValue("x", decodeBytes(in));
  std::vector<ValueId> fwdOut;
  std::vector<std::vector<ValueId>> fwdIn;
  for (unsigned i = 0; i < numForward; ++i) {
    std::vector<ValueId> inputs{i == 0 ? input : fwdOut[i - 1]};
    uint8_t skip = in.next();
    // A skip connection from an earlier forward value (or the input).
    if (i >= 2 && (skip & 1)) {
      unsigned from = (skip >> 1) % (i - 1);
      inputs.push_back(fwdOut[from]);
    } else if (i >= 1 && (skip & 2)) {
      inputs.push_back(input);
    }
    double cost = in.next();
    NodeId node = graph.addNode("f" + std::to_string(i), "op", cost,
                                Phase::Forward, inputs);
    if (in.next() % 4 == 0)
      graph.node(node).workspaceBytes = in.next() * 16;
    fwdOut.push_back(
        graph.addOutput(node, "a" + std::to_string(i), decodeBytes(in)));
    fwdIn.push_back(inputs);
  }
  // Backward: the gradient of f_i reads the gradient of f_{i+1} (the loss
  // value for the last one) and, as chosen, f_i's inputs and output.
  ValueId grad = fwdOut.back();
  for (unsigned k = 0; k < numForward; ++k) {
    unsigned i = numForward - 1 - k;
    uint8_t reads = in.next();
    std::vector<ValueId> inputs{grad};
    if ((reads & 1) && fwdOut[i] != grad)
      inputs.push_back(fwdOut[i]);
    if (reads & 2)
      for (ValueId v : fwdIn[i])
        if (v != grad && std::find(inputs.begin(), inputs.end(), v) ==
                             inputs.end())
          inputs.push_back(v);
    double cost = in.next();
    NodeId node = graph.addNode("b" + std::to_string(i), "op", cost,
                                Phase::Backward, inputs);
    if (in.next() % 4 == 0)
      graph.node(node).workspaceBytes = in.next() * 16;
    grad = graph.addOutput(node, "g" + std::to_string(i), decodeBytes(in));
    if (reads & 4)
      graph.markOutput(grad);
  }
  if (in.next() & 1)
    graph.markOutput(grad);
  return graph;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Bytes in{data, size};
  TrainingGraph graph = decodeGraph(in);
  if (llvm::Error err = graph.verify())
    fail("decodeGraph", "built an invalid graph: " +
                            llvm::toString(std::move(err)));

  SolverOptions options;
  options.timeLimitSeconds = 0.05;
  options.memorySlots = 1 + in.next16() % 600;
  uint8_t budgetByte = in.next();
  if (budgetByte != 0) {
    // 1/256 .. 2x of checkpoint-all's peak (at least 1 byte).
    SimulationReport all = simulate(graph, solveCheckpointAll(graph));
    if (!all.valid)
      fail("checkpoint-all", "invalid plan: " + all.error);
    long double scaled = (long double)all.peakBytes * budgetByte / 128;
    options.budget = std::max<uint64_t>(1, (uint64_t)std::min<long double>(
                                               scaled, (long double)UINT64_MAX));
  }

  for (const SolverInfo &solver : allSolvers()) {
    if (solver.name == "auto" || solver.name == "checkmate-ilp" ||
        !solverApplies(solver, graph))
      continue;
    llvm::Expected<SolverResult> result = runSolver(solver, graph, options);
    if (!result) {
      std::string message = llvm::toString(result.takeError());
      // runSolver turns a plan the simulator rejects into an error.
      if (message.find("invalid plan") != std::string::npos)
        fail(solver.name, message);
      continue;
    }
    // Judge the plan again, independently of runSolver.
    SimulationReport report = simulate(graph, result->schedule);
    if (!report.valid)
      fail(solver.name, "invalid plan: " + report.error);
    if (report.peakBytes != result->report.peakBytes)
      fail(solver.name, "simulated peak differs from the reported one");
    if (result->meetsBudget && options.budget &&
        report.peakBytes > *options.budget)
      fail(solver.name, "claims to meet the budget " +
                            std::to_string(*options.budget) + " with peak " +
                            std::to_string(report.peakBytes));
    if (!result->meetsBudget && !options.budget)
      fail(solver.name, "misses a budget that does not exist");
    if (report.numComputes < graph.numNodes())
      fail(solver.name, "computes fewer statements than nodes");
    if (!(report.totalCost + 1e-6 * std::fabs(report.baseCost) >=
          report.baseCost))
      fail(solver.name, "total cost below the cost of one pass");
    // The status must agree with the simulation: no plan peaks below
    // peakLowerBound; a plan within the budget is never infeasible or
    // no-plan, one above it never optimal, feasible or heuristic; a lower
    // bound never exceeds the cost of a plan it claims optimal.
    if (report.peakBytes < peakLowerBound(graph))
      fail(solver.name, "peak " + std::to_string(report.peakBytes) +
                            " below peakLowerBound " +
                            std::to_string(peakLowerBound(graph)));
    bool missed = result->status == PlanStatus::Infeasible ||
                  result->status == PlanStatus::NoPlan;
    if (missed == result->meetsBudget)
      fail(solver.name, std::string("status ") +
                            planStatusName(result->status).str() +
                            (result->meetsBudget ? " for a plan within"
                                                 : " for a plan above") +
                            " the budget");
    if (result->status == PlanStatus::Optimal &&
        (!result->lowerBound ||
         *result->lowerBound > report.totalCost * (1 + 1e-9)))
      fail(solver.name, "optimal with a lower bound above its cost");
  }
  return 0;
}
