//===- ApplySchedule.cpp - solve, then rewrite the step to the plan -------===//
//
// remat-apply: extract the training graph, run a solver, validate its plan
// with the simulator, and reorder / clone the step's ops so that the program
// executes exactly the plan's Compute statements (the early-free pass later
// places the Free statements). remat-print-report: the same plans as JSON.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Schedule/MemoryPlacement.h"
#include "remat/Solvers/Join.h"
#include "remat/Solvers/Solver.h"
#include "remat/Structure/Structure.h"
#include "remat/Support/Budget.h"
#include "remat/Transforms/ExternalModels.h"
#include "remat/Transforms/GraphExtraction.h"
#include "remat/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Remarks.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "remat/Support/Debug.h"
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

#define DEBUG_TYPE "remat-apply"

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
resolveStepBudget(FunctionOpInterface func, StringRef text,
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
                                  unsigned slots, StringRef startOrder) {
  if (llvm::Error err = checkTimeLimit(timeLimit))
    return at->emitError(llvm::toString(std::move(err)));
  if (llvm::Error err = checkMemorySlots(slots))
    return at->emitError(llvm::toString(std::move(err)));
  if (llvm::Expected<StartOrder> order = parseStartOrder(startOrder); !order)
    return at->emitError(llvm::toString(order.takeError()));
  return success();
}

/// The start order of a checked option (checkNumericOptions ran first).
StartOrder checkedStartOrder(StringRef startOrder) {
  llvm::Expected<StartOrder> order = parseStartOrder(startOrder);
  if (!order) {
    llvm::consumeError(order.takeError());
    return StartOrder::Program;
  }
  return *order;
}

/// What makes a function a training step (isTrainingStep), for diagnostics.
constexpr llvm::StringLiteral kStepMarkers =
    "mark the step with 'remat.step' on the function, 'remat.loss' on its "
    "loss (an op or a result), 'remat.seed' on the op that starts the "
    "backward, 'remat.tangent' on a gradient argument or 'remat.phase' on an "
    "op";

/// The least budget the registered solvers reach on `graph` in their
/// min-memory mode, which solver reaches it, and the solvers that the time
/// limit left out.
struct LeastBudget {
  uint64_t bytes = std::numeric_limits<uint64_t>::max();
  std::string solver;
  SmallVector<std::string> notRun;
};

/// Runs the solvers cheapest first (the registry's order) under one deadline
/// of `timeLimitSeconds` (0: none), each with the time that remains, as the
/// portfolio does: the dynamic programs (rotor, revolve) take most of it on
/// large steps (each 11 to 15 s on DenseNet-121, whose error took 30 s when
/// each had its own limit). Stops early when a plan reaches the peak lower
/// bound, below which no plan exists. The portfolio (`auto`, which only
/// repeats the others) and Checkmate's solvers (which minimise cost, and
/// without a budget return the no-recomputation plan) are skipped.
LeastBudget leastFeasibleBudget(const TrainingGraph &graph,
                                double timeLimitSeconds, unsigned slots) {
  auto begin = std::chrono::steady_clock::now();
  const uint64_t floor = peakLowerBound(graph);
  LeastBudget best;
  for (const SolverInfo &solver : allSolvers()) {
    if (solver.name == "auto" ||
        StringRef(solver.name).starts_with("checkmate") ||
        !solverApplies(solver, graph))
      continue;
    if (best.bytes <= floor)
      break;
    SolverOptions options;
    options.memorySlots = slots;
    options.timeLimitSeconds = 0;
    if (timeLimitSeconds > 0) {
      double remaining =
          timeLimitSeconds -
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        begin)
              .count();
      if (remaining <= 0 && !best.solver.empty()) {
        best.notRun.push_back(solver.name);
        continue;
      }
      // 0 would mean no limit at all.
      options.timeLimitSeconds = std::max(remaining, 1e-3);
    }
    llvm::Expected<SolverResult> result = runSolver(solver, graph, options);
    if (!result) {
      llvm::consumeError(result.takeError());
      continue;
    }
    if (result->report.peakBytes < best.bytes) {
      best.bytes = result->report.peakBytes;
      best.solver = solver.name;
    }
  }
  return best;
}

/// Runs one solver (or 'none': the program order) on the graph. A solver
/// that fails is an error at `func`, or, with `failureMessage`, its message
/// there
/// (a report of every solver goes on with the others).
FailureOr<SolverResult> solveStep(FunctionOpInterface func, const TrainingGraph &graph,
                                  StringRef solverName,
                                  std::optional<uint64_t> budget,
                                  double timeLimitSeconds,
                                  unsigned memorySlots,
                                  StartOrder startOrder,
                                  llvm::raw_ostream *progress,
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
  options.startOrder = startOrder;
  options.progress = progress;
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
           << solverName << "' failed on '" << func.getName()
           << "': " << detail;
  }
  return std::move(*result);
}

/// Emits the "budget too small" error, naming the least feasible budget
/// found within the time limit and the least peak proven for every plan.
LogicalResult budgetError(FunctionOpInterface func, const TrainingGraph &graph,
                          const SolverResult &result, uint64_t budget,
                          double timeLimitSeconds, unsigned slots,
                          std::optional<uint64_t> arenaBytes = std::nullopt) {
  LeastBudget least = leastFeasibleBudget(graph, timeLimitSeconds, slots);
  // The failing plan is a plan too (the limit may have cut the others).
  if (result.report.peakBytes < least.bytes) {
    least.bytes = result.report.peakBytes;
    least.solver = result.solver;
  }
  InFlightDiagnostic diag = func.emitError("budget of ");
  diag << budget << " bytes is infeasible for solver '" << result.solver
       << "' on '" << func.getName() << "', whose plan needs "
       << (arenaBytes ? *arenaBytes : result.report.peakBytes)
       << " bytes; the least feasible budget found is " << least.bytes
       << " bytes (solver '" << least.solver << "')";

  if (!least.notRun.empty()) {
    std::string seconds;
    llvm::raw_string_ostream(seconds) << llvm::format("%g", timeLimitSeconds);
    diag << " among the solvers that ran within the time limit of " << seconds
         << " s (not run: "
         << llvm::join(least.notRun, ", ")
         << "; time-limit=0 runs them all)";
  }
  // What is proven of every plan (leastPeakBound): the least budget found
  // is the least there is, or the budget is below what any plan needs, or
  // how far below the least found a plan might still fit.
  uint64_t floor =
      leastPeakBound(graph, leastPeakBoundSeconds(timeLimitSeconds));
  const char *why = " (the nodes' footprints and the step outputs held at "
                    "the end)";
  if (least.bytes <= floor)
    diag << "; no plan peaks below it" << why;
  else if (budget < floor)
    diag << "; no plan fits this budget: every plan peaks at " << floor
         << " bytes or more" << why;
  else
    diag << "; no plan peaks below " << floor << " bytes" << why;
  if (arenaBytes && *arenaBytes != result.report.peakBytes)
    diag.attachNote() << "with its buffers placed: the plan's " << *arenaBytes
                      << " bytes are its arena, for "
                      << result.report.peakBytes
                      << " live bytes; the least feasible budget counts live "
                         "bytes, and its arena may need a little more";
  return diag;
}

/// Where each byte of a plan lives: the placement of its buffers in one
/// arena (issue 22), the step's results included (views of the arena, valid
/// until the step runs again, as a TFLite interpreter's outputs).
struct ArenaPlan {
  ScheduleBuffers buffers;
  PlacementResult placement;
  uint64_t arenaBytes = 0;
  /// Bytes of the buffers the step returns (part of the arena).
  uint64_t outputBytes = 0;

  /// The memory the compiled step holds at its peak: the arena.
  uint64_t figure() const { return arenaBytes; }
  /// The arena offset of `buffer`, or -1 for none.
  int64_t offsetOf(int buffer) const {
    if (buffer < 0)
      return -1;
    return static_cast<int64_t>(placement.offsets[buffer]);
  }
};

/// Places the buffers of `schedule` (see ArenaPlan).
llvm::Expected<ArenaPlan> planArena(const TrainingGraph &graph,
                                    const Schedule &schedule,
                                    uint64_t alignment,
                                    double searchSeconds) {
  llvm::Expected<ScheduleBuffers> buffers =
      scheduleBuffers(graph, schedule, alignment);
  if (!buffers)
    return buffers.takeError();
  ArenaPlan plan;
  plan.buffers = std::move(*buffers);
  const std::vector<PlacementBuffer> &problem = plan.buffers.buffers;
  for (size_t b = 0; b < problem.size(); ++b)
    for (const ScheduleBuffers::Occupant &o : plan.buffers.occupants[b])
      if (o.value >= 0 && graph.value(o.value).isOutput) {
        plan.outputBytes += problem[b].bytes;
        break;
      }
  PlacementOptions options;
  // Deterministic unless an exact search is asked for: the heuristics and
  // the (seeded) dives all run, whatever the machine's load.
  options.exact = searchSeconds > 0;
  options.timeLimitSeconds = searchSeconds;
  plan.placement = placeBuffers(problem, options);
  plan.arenaBytes = plan.placement.arenaBytes;
  return plan;
}

/// Seconds of exact placement search spent on a plan whose heuristic
/// placement misses the budget that its live bytes meet (arena-search-time
/// 0 otherwise keeps the placement deterministic and fast).
constexpr double kArenaRetrySearchSeconds = 2.0;

/// A plan with its buffers placed, and whether its arena meets the budget.
struct PlacedPlan {
  SolverResult result;
  std::optional<ArenaPlan> arena;
  bool meetsBudget = true;
};

/// How the arena is placed and how a plan is solved again.
struct ArenaOptions {
  int64_t alignment;
  double searchSeconds;
  double timeLimit;
  unsigned slots;
  StartOrder startOrder;
  llvm::raw_ostream *progress;
};

/// Places the buffers of `result`'s plan; under a budget that its arena
/// exceeds while its live bytes fit, solves again under a budget lowered by
/// the excess, up to 4 times (the first plan whose arena fits wins; the last
/// one is returned, meetsBudget false, when none does). A plan that does not
/// meet the budget in live bytes is returned placed, meetsBudget false.
FailureOr<PlacedPlan> placePlan(FunctionOpInterface func,
                                const TrainingGraph &graph,
                                StringRef solverName,
                                std::optional<uint64_t> budget,
                                SolverResult result,
                                const ArenaOptions &options,
                                std::string *failureMessage = nullptr) {
  if (options.alignment < 1 || (options.alignment & (options.alignment - 1)))
    return func.emitError() << "arena-alignment must be a power of two, got "
                            << options.alignment;
  PlacedPlan placed;
  placed.result = std::move(result);
  std::optional<uint64_t> solveBudget = budget;
  for (int attempt = 0;; ++attempt) {
    llvm::Expected<ArenaPlan> plan =
        planArena(graph, placed.result.schedule, options.alignment,
                  options.searchSeconds);
    if (!plan)
      return func.emitError() << "cannot place the plan's buffers: "
                              << llvm::toString(plan.takeError());
    placed.arena = std::move(*plan);
    placed.meetsBudget = placed.result.meetsBudget &&
                         (!budget || placed.arena->figure() <= *budget);
    // Above the budget by its placement only: the exact placement search
    // (MiniMalloc's) may close the gap before any plan is given up.
    double exactSeconds = options.timeLimit > 0
                              ? std::min(kArenaRetrySearchSeconds,
                                         options.timeLimit)
                              : kArenaRetrySearchSeconds;
    if (!placed.meetsBudget && placed.result.meetsBudget &&
        !placed.arena->placement.optimal &&
        options.searchSeconds < exactSeconds) {
      llvm::Expected<ArenaPlan> exact = planArena(
          graph, placed.result.schedule, options.alignment, exactSeconds);
      if (exact && exact->figure() < placed.arena->figure()) {
        placed.arena = std::move(*exact);
        placed.meetsBudget = placed.arena->figure() <= *budget;
      } else if (!exact) {
        llvm::consumeError(exact.takeError());
      }
    }
    if (placed.meetsBudget || !placed.result.meetsBudget)
      return placed;
    // The first retry asks for room for this plan's whole fragmentation
    // (its arena less its live bytes, which a plan of similar shape needs
    // again); the later ones lower the budget by what is still missing.
    uint64_t excess = placed.arena->figure() - *budget;
    uint64_t lowerBy =
        attempt == 0 ? placed.arena->figure() - placed.result.report.peakBytes
                     : excess;
    if (attempt == 4 || *solveBudget <= lowerBy)
      return placed;
    *solveBudget -= lowerBy;
    LLVM_DEBUG(llvm::dbgs() << "remat-apply @" << func.getName() << ": arena "
                            << placed.arena->figure()
                            << " above the budget, solving again under "
                            << *solveBudget << "\n");
    FailureOr<SolverResult> again =
        solveStep(func, graph, solverName, solveBudget, options.timeLimit,
                  options.slots, options.startOrder, options.progress,
                  failureMessage);
    if (failed(again))
      return failure();
    if (!again->meetsBudget)
      return placed; // the previous plan, above the budget
    // The budget the caller asked for is the one the plan is judged by.
    again->meetsBudget = true;
    placed.result = std::move(*again);
  }
}

/// The arena offsets of `op`'s operands at the Compute `statement`: the
/// buffer that holds each operand's graph value then (`bufferOf`), -1 for
/// fixed values, scalars and returned buffers. A destination operand (a
/// DPS init) gets the offset of the buffer its tied result is planned in:
/// the same as the init's when the update is in place, else the buffer
/// bufferization copies the init into (and the op then writes), which is
/// the result's, not the input's (an in-place update whose input is still
/// read later by a recomputation).
ArrayAttr operandOffsets(Operation *op, const ExtractedGraph &extracted,
                         const ArenaPlan &plan,
                         const llvm::DenseMap<ValueId, int> &bufferOf) {
  Builder b(op->getContext());
  auto offsetOfValue = [&](mlir::Value value) -> std::optional<int64_t> {
    auto it = extracted.valueOf.find(value);
    if (it == extracted.valueOf.end())
      return std::nullopt;
    auto buffer = bufferOf.find(it->second);
    if (buffer == bufferOf.end())
      return std::nullopt;
    return plan.offsetOf(buffer->second);
  };
  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  SmallVector<Attribute> offsets;
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<int64_t> offset;
    if (dps && dps.isDpsInit(&operand))
      offset = offsetOfValue(dps.getTiedOpResult(&operand));
    if (!offset)
      offset = offsetOfValue(operand.get());
    offsets.push_back(b.getI64IntegerAttr(offset.value_or(-1)));
  }
  return b.getArrayAttr(offsets);
}

/// The arena offset of the node output that `value` (a fresh destination,
/// e.g. a tensor.empty's result) becomes through the destination operands
/// of its node's ops: none if it never reaches a planned graph value.
std::optional<int64_t>
destinationOffset(mlir::Value value, const ExtractedGraph &extracted,
                  const ArenaPlan &plan,
                  const llvm::DenseMap<ValueId, int> &bufferOf) {
  for (int hops = 0; hops < 64; ++hops) {
    auto it = extracted.valueOf.find(value);
    if (it != extracted.valueOf.end()) {
      auto buffer = bufferOf.find(it->second);
      if (buffer == bufferOf.end())
        return std::nullopt;
      int64_t offset = plan.offsetOf(buffer->second);
      return offset >= 0 ? std::optional<int64_t>(offset) : std::nullopt;
    }
    mlir::Value next;
    for (OpOperand &use : value.getUses()) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
      if (dps && dps.isDpsInit(&use)) {
        next = dps.getTiedOpResult(&use);
        break;
      }
    }
    if (!next)
      return std::nullopt;
    value = next;
  }
  return std::nullopt;
}

/// Reorders the step's ops into the schedule's Compute order and clones
/// recomputed nodes. `current` maps an original SSA value to the instance
/// that later readers must use (the latest recomputation). With `arena`,
/// every op of every Compute gets `remat.operand_offsets` (and
/// `remat.workspace_offset`) for remat-assign-arena.
void applySchedule(FunctionOpInterface func, const ExtractedGraph &extracted,
                   const Schedule &schedule, const ArenaPlan *arena) {
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
  // With an arena: the buffer that holds each graph value now.
  llvm::DenseMap<ValueId, int> bufferOf;
  // The arena attributes of `target`, one of the ops of the Compute at
  // `statement` (its original, whose operands are the graph's values).
  auto annotateArena = [&](Operation *original, Operation *target,
                           size_t statement) {
    if (!arena)
      return;
    // An op without operands (tensor.empty) has no offsets to say; where
    // it is the destination its node's output is built in (a concat's
    // insert_slice chain), its location carries that output's offset:
    // bufferization turns it into the buffer's allocation with this
    // location, while the ops that fill it (subviews, copies) carry no
    // attributes any more (remat-assign-arena reads it).
    // The same for an op whose update may be out of place (an insert_slice
    // into a value still read later): bufferization allocates its result's
    // buffer with the op's location.
    mlir::Value built;
    if (original->getNumOperands() == 0 && original->getNumResults() == 1)
      built = original->getResult(0);
    else if (auto dps = dyn_cast<DestinationStyleOpInterface>(original))
      // Only an update of another node's value may be out of place.
      if (dps.getNumDpsInits() > 0 &&
          extracted.valueOf.count(dps.getDpsInitOperand(0)->get()))
        built = dps.getTiedOpResult(dps.getDpsInitOperand(0));
    if (built) {
      if (std::optional<int64_t> offset =
              destinationOffset(built, extracted, *arena, bufferOf))
        target->setLoc(FusedLoc::get(
            ctx, {original->getLoc()},
            DictionaryAttr::get(
                ctx, {NamedAttribute(
                         StringAttr::get(ctx, RematDialect::kArenaOffsetLocKey),
                         IntegerAttr::get(IntegerType::get(ctx, 64),
                                          *offset))})));
    }
    if (original->getNumOperands() != 0)
      target->setAttr(RematDialect::kOperandOffsetsAttr,
                      operandOffsets(original, extracted, *arena, bufferOf));
    if (original->hasAttr(RematDialect::kWorkspaceAttr)) {
      int64_t offset =
          arena->offsetOf(arena->buffers.workspaceBuffers[statement]);
      if (offset >= 0)
        target->setAttr(RematDialect::kWorkspaceOffsetAttr,
                        IntegerAttr::get(IntegerType::get(ctx, 64), offset));
    }
  };
  for (auto [statement, step] : llvm::enumerate(schedule.steps)) {
    if (!step.isCompute())
      continue;
    NodeId node = step.id;
    const auto &ops = extracted.nodeOps[node];
    if (arena)
      for (auto [k, value] :
           llvm::enumerate(extracted.graph.node(node).outputs))
        bufferOf[value] = arena->buffers.outputBuffers[statement][k];
    if (!computed[node]) {
      computed[node] = true;
      for (Operation *op : ops) {
        annotateArena(op, op, statement);
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
      annotateArena(op, clone, statement);
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

void annotate(FunctionOpInterface func, const SolverResult &result,
              std::optional<uint64_t> budget, const ArenaPlan *arena) {
  Builder b(func.getContext());
  func->setAttr("remat.solver", b.getStringAttr(result.solver));
  func->setAttr("remat.predicted_peak_bytes",
                b.getI64IntegerAttr(arena ? arena->figure()
                                          : result.report.peakBytes));
  if (arena) {
    func->setAttr("remat.live_peak_bytes",
                  b.getI64IntegerAttr(result.report.peakBytes));
    func->setAttr(RematDialect::kArenaBytesAttr,
                  b.getI64IntegerAttr(arena->arenaBytes));
    func->setAttr("remat.output_bytes",
                  b.getI64IntegerAttr(arena->outputBytes));
    func->setAttr("remat.placement",
                  b.getStringAttr(arena->placement.method +
                                  (arena->placement.optimal ? " (optimal)"
                                                            : "")));
  }
  func->setAttr("remat.fixed_bytes", b.getI64IntegerAttr(result.report.fixedBytes));
  func->setAttr("remat.predicted_cost", b.getF64FloatAttr(result.report.totalCost));
  func->setAttr("remat.recomputations",
                b.getI64IntegerAttr(result.report.numRecomputations));
  if (budget)
    func->setAttr("remat.budget_bytes", b.getI64IntegerAttr(*budget));
}

/// Makes the solve a row of `--mlir-timing` ("(A) remat solve"), nested in
/// remat-apply's, next to "(A) remat::TrainingGraphAnalysis" (the
/// extraction): MLIR's pass timing times every analysis through these
/// instrumentation hooks, and the solve is the one stage of the pass that is
/// not an analysis, because it depends on the pass's options.
class TimedStage {
public:
  TimedStage(AnalysisManager am, Operation *op, StringRef name)
      : instrumentor(am.getPassInstrumentor()), op(op), name(name) {
    if (instrumentor)
      instrumentor->runBeforeAnalysis(name, id(), op);
  }
  ~TimedStage() {
    if (instrumentor)
      instrumentor->runAfterAnalysis(name, id(), op);
  }

private:
  static TypeID id() {
    static const char tag = 0;
    return TypeID::getFromOpaquePointer(&tag);
  }
  PassInstrumentor *instrumentor;
  Operation *op;
  StringRef name;
};

/// Optimization remarks of remat-apply (category "remat", sub-category
/// "apply"; `remat-opt --remarks-filter=remat`): one per function for the
/// plan, then, for every forward node whose buffers the backward reads,
/// whether the plan keeps it from the forward to the backward or recomputes
/// it, and why.
void emitPlanRemarks(FunctionOpInterface func, const ExtractedGraph &extracted,
                     const SolverResult &result,
                     std::optional<uint64_t> budget) {
  const TrainingGraph &graph = extracted.graph;
  auto opts = [&](StringRef name) {
    return remark::RemarkOpts::name(name)
        .category("remat")
        .subCategory("apply")
        .function(func.getName());
  };
  std::string within =
      budget ? llvm::formatv("within the budget of {0} bytes", *budget).str()
             : std::string("without a budget");
  remark::analysis(func.getLoc(), opts("Plan"))
      << llvm::formatv("solver '{0}' ({1}): peak {2} bytes {3}, cost {4}, "
                       "{5} recomputation(s)",
                       result.solver, planStatusName(result.status),
                       result.report.peakBytes, within, result.report.totalCost,
                       result.report.numRecomputations)
             .str();
  std::vector<unsigned> computations(graph.numNodes(), 0);
  for (const Step &step : result.schedule.steps)
    if (step.isCompute())
      ++computations[step.id];
  // The producers of the saved activations: the forward nodes the backward
  // reads, which a plan keeps or recomputes. A node recomputed only to
  // rebuild one of them (the matmul under a recomputed activation) gets its
  // remark too.
  std::vector<bool> saved(graph.numNodes(), false);
  for (ValueId value : graph.savedActivations())
    if (!graph.value(value).isFixed())
      saved[graph.value(value).producer] = true;
  for (NodeId node = 0; node < static_cast<NodeId>(graph.numNodes()); ++node) {
    if (!saved[node] && computations[node] <= 1)
      continue;
    uint64_t bytes = 0;
    for (ValueId out : graph.node(node).outputs)
      bytes += graph.value(out).bytes;
    Location loc = extracted.head(node)->getLoc();
    if (computations[node] > 1) {
      remark::passed(loc, opts("Recompute"))
          << llvm::formatv(
                 "recomputed {0} time(s) for the backward (cost {1} each){2}: "
                 "its {3} bytes are freed after their last forward use, "
                 "which keeps the peak at {4} bytes {5}",
                 computations[node] - 1, graph.node(node).cost,
                 saved[node] ? "" : " to rebuild a value the backward reads",
                 bytes, result.report.peakBytes, within)
                 .str();
    } else {
      remark::analysis(loc, opts("Keep"))
          << llvm::formatv("kept from the forward to the backward: {0} bytes "
                           "stay live; recomputing would cost {1}",
                           bytes, graph.node(node).cost)
                 .str();
    }
  }
}

struct RematApply : public remat::impl::RematApplyPassBase<RematApply> {
  using Base::Base;

  // The cost models of the upstream ops, also in a stock mlir-opt that
  // loaded only the pass plugin.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerRematExternalModels(registry);
  }

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (failed(checkNumericOptions(func, timeLimit, slots, startOrder)))
      return signalPassFailure();
    FailureOr<const ExtractedGraph *> extracted =
        getAnalysis<TrainingGraphAnalysis>().get();
    if (failed(extracted))
      return signalPassFailure();
    if (!*extracted) // Not a training step.
      return markAllAnalysesPreserved();
    const TrainingGraph &graph = (*extracted)->graph;
    FailureOr<SolverResult> result = failure();
    FailureOr<std::optional<uint64_t>> budgetBytes = failure();
    {
      TimedStage timed(getAnalysisManager(), func, "remat solve");
      budgetBytes = resolveStepBudget(
          func, budget, [&] { return checkpointAllPeak(graph); });
      if (failed(budgetBytes))
        return signalPassFailure();
      result = solveStep(func, graph, solver, *budgetBytes, timeLimit, slots,
                         checkedStartOrder(startOrder),
                         progress ? &llvm::errs() : nullptr);
    }
    if (failed(result))
      return signalPassFailure();
    if (!result->meetsBudget) {
      // With an arena the plan's figure is its arena: what a budget must be
      // for this plan to fit.
      std::optional<uint64_t> figure;
      if (arena) {
        llvm::Expected<ArenaPlan> placedPlan = planArena(
            graph, result->schedule, arenaAlignment, arenaSearchTime);
        if (placedPlan)
          figure = placedPlan->figure();
        else
          llvm::consumeError(placedPlan.takeError());
      }
      (void)budgetError(func, graph, *result, **budgetBytes, timeLimit, slots,
                        figure);
      return signalPassFailure();
    }
    // The arena is the figure: a plan that fits the budget in live bytes
    // but not in its arena is solved again (solveAndPlace).
    std::optional<ArenaPlan> arenaPlan;
    if (arena) {
      FailureOr<PlacedPlan> placed = placePlan(
          func, graph, solver, *budgetBytes, std::move(*result),
          {arenaAlignment, arenaSearchTime, timeLimit, slots,
           checkedStartOrder(startOrder),
           progress ? &llvm::errs() : nullptr});
      if (failed(placed))
        return signalPassFailure();
      if (!placed->meetsBudget) {
        func.emitError() << "budget of " << **budgetBytes
                         << " bytes is infeasible for solver '"
                         << placed->result.solver << "' on '"
                         << func.getName() << "', whose plan needs "
                         << placed->arena->arenaBytes
                         << " bytes once its buffers are placed (an arena "
                            "for "
                         << placed->result.report.peakBytes
                         << " live bytes); no plan it finds under a lower "
                            "budget fits";
        return signalPassFailure();
      }
      result = std::move(placed->result);
      arenaPlan = std::move(placed->arena);
      LLVM_DEBUG(llvm::dbgs() << "remat-apply @" << func.getName()
                              << ": arena " << arenaPlan->arenaBytes
                              << " bytes (" << arenaPlan->placement.method
                              << "), live peak " << result->report.peakBytes
                              << "\n");
    }
    LLVM_DEBUG(llvm::dbgs() << "remat-apply @" << func.getName() << ": "
                            << graph.numNodes() << " nodes, solver '"
                            << result->solver << "' peak "
                            << result->report.peakBytes << " bytes, "
                            << result->report.numRecomputations
                            << " recomputations, "
                            << result->schedule.steps.size() << " steps\n");
    emitPlanRemarks(func, **extracted, *result, *budgetBytes);
    // 'none' too: its order is the program's, but each node's ops (an
    // initialisation the program wrote far above its user, say) are gathered
    // where the node runs, which is where the simulator allocates its buffer.
    applySchedule(func, **extracted, result->schedule,
                  arenaPlan ? &*arenaPlan : nullptr);
    annotate(func, *result, *budgetBytes, arenaPlan ? &*arenaPlan : nullptr);
  }
};

struct RematReport : public remat::impl::RematReportPassBase<RematReport> {
  using Base::Base;

  // The cost models of the upstream ops, also in a stock mlir-opt that
  // loaded only the pass plugin.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerRematExternalModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkNumericOptions(module, timeLimit, slots, startOrder)))
      return signalPassFailure();
    // A report of no function hides a missing marker: say what marks one.
    WalkResult anyStep = module.walk([](FunctionOpInterface func) {
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
    // The report changes nothing: every analysis stays valid.
    markAllAnalysesPreserved();
    module.walk([&](FunctionOpInterface func) {
      if (!isTrainingStep(func))
        return;
      // The module's own steps have their TrainingGraphAnalysis (kept from
      // earlier passes that preserved it).
      std::optional<ExtractedGraph> storage;
      FailureOr<const ExtractedGraph *> graphOrError =
          graphForModulePass(getAnalysisManager(), module, func, storage);
      if (failed(graphOrError)) {
        failedAny = true;
        return;
      }
      const ExtractedGraph *extracted = *graphOrError;
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
                      checkedStartOrder(startOrder),
                      progress ? &llvm::errs() : nullptr,
                      solver == "all" ? &solverFailure : nullptr);
        if (failed(result) && !solverFailure.empty()) {
          func.emitWarning("solver '")
              << name << "' failed on '" << func.getName()
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
        std::optional<ArenaPlan> arenaPlan;
        bool meetsBudget = result->meetsBudget;
        if (arena) {
          FailureOr<PlacedPlan> placed = placePlan(
              func, graph, name, *budgetBytes, std::move(*result),
              {arenaAlignment, arenaSearchTime, timeLimit, slots,
               checkedStartOrder(startOrder),
               progress ? &llvm::errs() : nullptr});
          if (failed(placed)) {
            failedAny = true;
            return;
          }
          result = std::move(placed->result);
          arenaPlan = std::move(placed->arena);
          meetsBudget = placed->meetsBudget;
        }
        llvm::json::Object plan{
            {"solver", result->solver},
            {"meets_budget", meetsBudget},
            {"status", planStatusName(result->status)},
            {"lower_bound", result->lowerBound
                                ? llvm::json::Value(*result->lowerBound)
                                : llvm::json::Value(nullptr)},
            {"solve_seconds", result->solveSeconds},
            {"simulation", result->report.toJSON(withTimeline)},
            {"schedule", result->schedule.toJSON()}};
        if (arenaPlan) {
          plan["arena_bytes"] = static_cast<int64_t>(arenaPlan->arenaBytes);
          plan["live_peak_bytes"] =
              static_cast<int64_t>(result->report.peakBytes);
          plan["output_bytes"] = static_cast<int64_t>(arenaPlan->outputBytes);
          plan["fragmentation"] = arenaPlan->placement.fragmentation();
          plan["placement"] = arenaPlan->placement.method;
          plan["placement_optimal"] = arenaPlan->placement.optimal;
          plan["placement_seconds"] = arenaPlan->placement.seconds;
        }
        plans.push_back(std::move(plan));
      }
      llvm::json::Object entry{
          {"function", func.getName().str()},
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
    if (failed(checkNumericOptions(module, timeLimit, slots, startOrder)))
      return signalPassFailure();
    bool explicitRequest =
        !StringRef(budget).trim().empty() || solver != kDefaultSolverName;
    // The functions remat-apply runs on: those of the module itself.
    if (!explicitRequest ||
        llvm::any_of(module.getOps<func::FuncOp>(),
                     [](FunctionOpInterface func) { return isTrainingStep(func); }))
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

};

} // namespace
