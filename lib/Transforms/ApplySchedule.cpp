//===- ApplySchedule.cpp - solve, then rewrite the step to the plan -------===//
//
// remat-apply: extract the training graph, run a solver, validate its plan
// with the simulator, and reorder / clone the step's ops so that the program
// executes exactly the plan's Compute statements (the early-free pass later
// places the Free statements). remat-print-report: the same plans as JSON.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Solvers/Join.h"
#include "remat/Solvers/Solver.h"
#include "remat/Structure/Structure.h"
#include "remat/Support/Budget.h"
#include "remat/Transforms/GraphExtraction.h"
#include "remat/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <chrono>
#include <limits>

namespace remat {
#define GEN_PASS_DEF_REMATAPPLYPASS
#define GEN_PASS_DEF_REMATREPORTPASS
#define GEN_PASS_DEF_REMATCHECKOPTIONSPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

namespace {

/// The checkpoint-all peak: the reference of percentage budgets.
uint64_t checkpointAllPeak(const TrainingGraph &graph) {
  return simulate(graph, solveCheckpointAll(graph)).peakBytes;
}

/// The pass's `budget` option in bytes (remat/Support/Budget.h), or nullopt
/// when it is empty (no budget). `reference` gives the checkpoint-all peak,
/// the reference of percentages; it is called only for one. A bad budget is
/// an error at `func`.
FailureOr<std::optional<uint64_t>>
resolveStepBudget(func::FuncOp func, StringRef text,
                  llvm::function_ref<uint64_t()> reference) {
  if (text.trim().empty())
    return std::optional<uint64_t>();
  llvm::Expected<BudgetSpec> spec = parseBudgetSpec(text);
  llvm::Expected<uint64_t> bytes =
      !spec ? llvm::Expected<uint64_t>(spec.takeError())
            : resolveBudget(*spec, spec->kind == BudgetSpec::PercentOfReference
                                       ? reference()
                                       : 0);
  if (!bytes) {
    func.emitError(llvm::toString(bytes.takeError()));
    return failure();
  }
  return std::optional<uint64_t>(*bytes);
}

/// The numeric options of the solvers, range-checked (remat/Solvers/Solver.h):
/// a bad value is an error at `at` naming the option and the value.
LogicalResult checkNumericOptions(Operation *at, double timeLimit,
                                  unsigned slots) {
  if (llvm::Error err = checkTimeLimit(timeLimit))
    return at->emitError(llvm::toString(std::move(err)));
  if (llvm::Error err = checkMemorySlots(slots))
    return at->emitError(llvm::toString(std::move(err)));
  return success();
}

/// What makes a function a training step (isTrainingStep), for diagnostics.
constexpr llvm::StringLiteral kStepMarkers =
    "mark the step with 'remat.step' on the function, 'remat.loss' on its "
    "loss (an op or a result), 'remat.seed' on the op that starts the "
    "backward, 'remat.tangent' on a gradient argument or 'remat.phase' on an "
    "op";

/// The least budget any registered solver reaches on `graph` in its
/// min-memory mode, and which. The portfolio (`auto`, which only repeats the
/// others) and Checkmate's solvers (which minimise cost, and without a budget
/// return the no-recomputation plan) are skipped.
std::pair<uint64_t, std::string> leastFeasibleBudget(const TrainingGraph &graph) {
  std::pair<uint64_t, std::string> best{std::numeric_limits<uint64_t>::max(),
                                        ""};
  for (const SolverInfo &solver : allSolvers()) {
    if (solver.name == "auto" || StringRef(solver.name).starts_with("checkmate"))
      continue;
    llvm::Expected<SolverResult> result = runSolver(solver, graph, {});
    if (!result) {
      llvm::consumeError(result.takeError());
      continue;
    }
    if (result->report.peakBytes < best.first)
      best = {result->report.peakBytes, solver.name};
  }
  return best;
}

/// Runs one solver (or 'none': the program order) on the graph. A solver
/// that fails is an error at `func`, or, with `failureMessage`, its message
/// there
/// (a report of every solver goes on with the others).
FailureOr<SolverResult> solveStep(func::FuncOp func, const TrainingGraph &graph,
                                  StringRef solverName,
                                  std::optional<uint64_t> budget,
                                  double timeLimitSeconds,
                                  unsigned memorySlots,
                                  std::string *failureMessage = nullptr) {
  if (solverName == "none") {
    std::vector<NodeId> order(graph.numNodes());
    for (NodeId i = 0; i < static_cast<NodeId>(order.size()); ++i)
      order[i] = i;
    SolverResult result;
    result.solver = "none";
    result.schedule = insertEarlyFrees(graph, order);
    result.report = simulate(graph, result.schedule);
    result.meetsBudget = !budget || result.report.peakBytes <= *budget;
    setPlanStatus(result, graph, budget, nullptr);
    return result;
  }
  const SolverInfo *solver = findSolver(solverName);
  if (!solver)
    return func.emitError("unknown solver '")
           << solverName << "'; available solvers: none, " << solverNames();
  SolverOptions options;
  options.budget = budget;
  options.timeLimitSeconds = timeLimitSeconds;
  options.memorySlots = memorySlots;
  llvm::Expected<SolverResult> result = runSolver(*solver, graph, options);
  if (!result) {
    // runSolver's message starts with "solver '<name>': ".
    std::string message = llvm::toString(result.takeError());
    StringRef detail(message);
    detail.consume_front(("solver '" + solverName + "': ").str());
    if (failureMessage) {
      *failureMessage = detail.str();
      return failure();
    }
    return func.emitError("solver '")
           << solverName << "' failed on '" << func.getSymName()
           << "': " << detail;
  }
  return std::move(*result);
}

/// Emits the "budget too small" error, naming the least feasible budget.
LogicalResult budgetError(func::FuncOp func, const TrainingGraph &graph,
                          const SolverResult &result, uint64_t budget) {
  auto [least, who] = leastFeasibleBudget(graph);
  return func.emitError("budget of ")
         << budget << " bytes is infeasible for solver '" << result.solver
         << "' on '" << func.getSymName() << "', whose plan needs "
         << result.report.peakBytes
         << " bytes; the least feasible budget is " << least
         << " bytes (solver '" << who << "')";
}

/// Reorders the step's ops into the schedule's Compute order and clones
/// recomputed nodes. `current` maps an original SSA value to the instance
/// that later readers must use (the latest recomputation).
void applySchedule(func::FuncOp func, const ExtractedGraph &extracted,
                   const Schedule &schedule) {
  Block &block = func.front();
  Operation *terminator = block.getTerminator();
  for (Operation *op : extracted.preludeOps)
    op->moveBefore(terminator);

  // current: original value -> the instance later readers must use;
  // originalOf: instance (a recomputed copy's result) -> original value.
  llvm::DenseMap<mlir::Value, mlir::Value> current, originalOf;
  auto remapReads = [&](Operation *root) {
    root->walk([&](Operation *op) {
      for (OpOperand &operand : op->getOpOperands()) {
        auto it = current.find(operand.get());
        if (it != current.end())
          operand.set(it->second);
      }
    });
  };

  std::vector<bool> computed(extracted.graph.numNodes(), false);
  OpBuilder builder(terminator);
  int64_t instance = 0;
  MLIRContext *ctx = func.getContext();
  for (const Step &step : schedule.steps) {
    if (!step.isCompute())
      continue;
    NodeId node = step.id;
    const auto &ops = extracted.nodeOps[node];
    if (!computed[node]) {
      computed[node] = true;
      for (Operation *op : ops) {
        op->moveBefore(terminator);
        remapReads(op);
      }
      continue;
    }
    // A recomputation: clone the node, reading the current instances. The
    // node's ops were remapped when first computed, so an operand may be an
    // instance already: look the current one up by the value it stands for.
    IRMapping mapping;
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        for (mlir::Value read : nested->getOperands()) {
          mlir::Value original = originalOf.lookup(read);
          auto it = current.find(original ? original : read);
          if (it != current.end())
            mapping.map(read, it->second);
        }
      });
    for (Operation *op : ops) {
      Operation *clone = builder.clone(*op, mapping);
      clone->setAttr(RematDialect::kRecomputeAttr,
                     IntegerAttr::get(IntegerType::get(ctx, 64), instance));
      for (auto [original, copy] :
           llvm::zip(op->getResults(), clone->getResults()))
        mapping.map(original, copy);
    }
    ++instance;
    for (Operation *op : ops)
      for (OpResult result : op->getResults()) {
        mlir::Value copy = mapping.lookup(result);
        current[result] = copy;
        originalOf[copy] = result;
      }
  }
  remapReads(terminator);
}

void annotate(func::FuncOp func, const SolverResult &result,
              std::optional<uint64_t> budget) {
  Builder b(func.getContext());
  func->setAttr("remat.solver", b.getStringAttr(result.solver));
  func->setAttr("remat.predicted_peak_bytes",
                b.getI64IntegerAttr(result.report.peakBytes));
  func->setAttr("remat.fixed_bytes", b.getI64IntegerAttr(result.report.fixedBytes));
  func->setAttr("remat.predicted_cost", b.getF64FloatAttr(result.report.totalCost));
  func->setAttr("remat.recomputations",
                b.getI64IntegerAttr(result.report.numRecomputations));
  if (budget)
    func->setAttr("remat.budget_bytes", b.getI64IntegerAttr(*budget));
}

struct RematApply : public remat::impl::RematApplyPassBase<RematApply> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (failed(checkNumericOptions(func, timeLimit, slots)))
      return signalPassFailure();
    if (!isTrainingStep(func))
      return;
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::time_point from, Clock::time_point to) {
      return std::chrono::duration<double>(to - from).count();
    };
    Clock::time_point start = Clock::now();
    FailureOr<ExtractedGraph> extracted = extractTrainingGraph(func);
    if (failed(extracted))
      return signalPassFailure();
    const TrainingGraph &graph = extracted->graph;
    Clock::time_point extractedAt = Clock::now();
    FailureOr<std::optional<uint64_t>> budgetBytes = resolveStepBudget(
        func, budget, [&] { return checkpointAllPeak(graph); });
    if (failed(budgetBytes))
      return signalPassFailure();
    FailureOr<SolverResult> result =
        solveStep(func, graph, solver, *budgetBytes, timeLimit, slots);
    if (failed(result))
      return signalPassFailure();
    if (!result->meetsBudget) {
      (void)budgetError(func, graph, *result, **budgetBytes);
      return signalPassFailure();
    }
    Clock::time_point solvedAt = Clock::now();
    // 'none' too: its order is the program's, but each node's ops (an
    // initialisation the program wrote far above its user, say) are gathered
    // where the node runs, which is where the simulator allocates its buffer.
    applySchedule(func, *extracted, result->schedule);
    annotate(func, *result, *budgetBytes);
    Clock::time_point appliedAt = Clock::now();
    if (printTiming)
      llvm::errs() << llvm::formatv(
          "remat-apply timing @{0}: nodes={1} extract_s={2:f6} "
          "solve_s={3:f6} apply_s={4:f6}\n",
          func.getSymName(), graph.numNodes(), seconds(start, extractedAt),
          seconds(extractedAt, solvedAt), seconds(solvedAt, appliedAt));
  }
};

struct RematReport : public remat::impl::RematReportPassBase<RematReport> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkNumericOptions(module, timeLimit, slots)))
      return signalPassFailure();
    // A report of no function hides a missing marker: say what marks one.
    WalkResult anyStep = module.walk([](func::FuncOp func) {
      return isTrainingStep(func) ? WalkResult::interrupt()
                                  : WalkResult::advance();
    });
    if (!anyStep.wasInterrupted()) {
      module.emitError("no function of the module is a training step, so "
                       "there is no plan to report; ")
          << kStepMarkers;
      return signalPassFailure();
    }
    llvm::json::Array functions;
    bool failedAny = false;
    module.walk([&](func::FuncOp func) {
      if (!isTrainingStep(func))
        return;
      FailureOr<ExtractedGraph> extracted = extractTrainingGraph(func);
      if (failed(extracted)) {
        failedAny = true;
        return;
      }
      const TrainingGraph &graph = extracted->graph;
      uint64_t reference = checkpointAllPeak(graph);
      FailureOr<std::optional<uint64_t>> budgetBytes =
          resolveStepBudget(func, budget, [&] { return reference; });
      if (failed(budgetBytes)) {
        failedAny = true;
        return;
      }
      SmallVector<std::string> names;
      if (solver == "all") {
        names.push_back("none");
        for (const SolverInfo &info : allSolvers())
          if (solverApplies(info, graph))
            names.push_back(info.name);
      } else {
        names.push_back(solver);
      }
      llvm::json::Array plans;
      for (const std::string &name : names) {
        // With every solver, one that fails gets its error in its row and
        // the others go on.
        std::string solverFailure;
        FailureOr<SolverResult> result =
            solveStep(func, graph, name, *budgetBytes, timeLimit, slots,
                      solver == "all" ? &solverFailure : nullptr);
        if (failed(result) && !solverFailure.empty()) {
          func.emitWarning("solver '")
              << name << "' failed on '" << func.getSymName()
              << "': " << solverFailure;
          plans.push_back(llvm::json::Object{{"solver", name},
                                             {"status", "error"},
                                             {"error", solverFailure}});
          continue;
        }
        if (failed(result)) {
          failedAny = true;
          return;
        }
        llvm::json::Object plan{
            {"solver", result->solver},
            {"meets_budget", result->meetsBudget},
            {"status", planStatusName(result->status)},
            {"lower_bound", result->lowerBound
                                ? llvm::json::Value(*result->lowerBound)
                                : llvm::json::Value(nullptr)},
            {"solve_seconds", result->solveSeconds},
            {"simulation", result->report.toJSON(withTimeline)},
            {"schedule", result->schedule.toJSON()}};
        plans.push_back(std::move(plan));
      }
      llvm::json::Object entry{
          {"function", func.getSymName().str()},
          {"nodes", static_cast<int64_t>(graph.numNodes())},
          {"values", static_cast<int64_t>(graph.numValues())},
          {"saved_activations",
           static_cast<int64_t>(graph.savedActivations().size())},
          {"fixed_bytes", static_cast<int64_t>(graph.fixedBytes())},
          {"checkpoint_all_peak_bytes", static_cast<int64_t>(reference)},
          {"plans", std::move(plans)}};
      if (*budgetBytes)
        entry["budget_bytes"] = **budgetBytes; // uint64_t: past 2^63 too.
      // Structure of the forward graph (docs/structure.md): node counts of
      // the hierarchy, its depth, articulation points, splitting vertices.
      entry["hierarchy"] = StructureAnalysis(graph).summaryJSON();
      // Join structure (docs/budget-solvers.md §2): the branches' stage
      // counts, or why the step is not a join network.
      llvm::Expected<join::JoinStructure> joinStructure =
          join::detectJoinStructure(graph);
      if (joinStructure) {
        llvm::json::Array lengths;
        for (unsigned l : joinStructure->lengths())
          lengths.push_back(static_cast<int64_t>(l));
        entry["join"] = llvm::json::Object{
            {"detected", true},
            {"branch_stages", std::move(lengths)},
            {"head_nodes",
             static_cast<int64_t>(joinStructure->headForward.size() +
                                  joinStructure->headBackward.size())},
            {"tail_nodes", static_cast<int64_t>(joinStructure->tail.size())},
            {"merged_stages",
             static_cast<int64_t>(joinStructure->mergedStages)}};
      } else {
        entry["join"] = llvm::json::Object{
            {"detected", false},
            {"reason", llvm::toString(joinStructure.takeError())}};
      }
      functions.push_back(std::move(entry));
    });
    if (failedAny)
      return signalPassFailure();
    llvm::outs() << llvm::formatv(
        "{0:2}\n", llvm::json::Value(llvm::json::Object{
                       {"functions", std::move(functions)}}));
  }
};

/// The module-level checks of remat-pipeline, before any function is
/// touched: the numeric options, and a training step for an explicit budget
/// or solver to apply to.
struct RematCheckOptions
    : public remat::impl::RematCheckOptionsPassBase<RematCheckOptions> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkNumericOptions(module, timeLimit, slots)))
      return signalPassFailure();
    bool explicitRequest =
        !StringRef(budget).trim().empty() || solver != kDefaultSolver;
    // The functions remat-apply runs on: those of the module itself.
    if (!explicitRequest ||
        llvm::any_of(module.getOps<func::FuncOp>(),
                     [](func::FuncOp func) { return isTrainingStep(func); }))
      return;
    InFlightDiagnostic diag =
        module.emitError("no function of the module is a training step, so ");
    if (!StringRef(budget).trim().empty())
      diag << "budget=" << budget;
    else
      diag << "solver=" << solver;
    diag << " would apply to nothing; " << kStepMarkers;
    signalPassFailure();
  }

  /// The default `solver` of remat-pipeline and remat-apply.
  static constexpr llvm::StringLiteral kDefaultSolver = "chen-sqrtn";
};

} // namespace
