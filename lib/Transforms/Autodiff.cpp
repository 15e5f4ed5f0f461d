//===- Autodiff.cpp - reverse-mode autodiff of a forward graph -----------===//
//
// remat-autodiff: turns a forward function (result #0 a scalar loss) into a
// training step of DESIGN.md §4 — same name and arguments, results (loss,
// gradient of every parameter, the other original results), reverse mode
// started by a fill of 1 marked `remat.seed` — so that extraction, every
// solver and the lowering work on it unchanged.
//
// The backward is emitted in reverse program order, op by op, right after
// the last forward op: when an op is reached, every use of its results lies
// behind it, so their adjoints are complete. Each adjoint is a fresh tensor
// (or accumulates in place into the adjoint it adds to) that nothing reads
// after the op that consumes it, so `remat-early-free` frees it there:
// `solver=none` on the result is already a good order.
//
// The pass knows no op: it asks each op's RematDifferentiableOpInterface
// which operands carry a derivative and for the IR of its backward, through
// a remat::ReverseModeContext. The upstream ops' rules are external models
// (AutodiffRules.cpp, AutodiffLinalgRule.cpp); an op without the interface
// that lies on a path from a parameter to the loss is a located error naming
// the op. What stays here: activity (which values depend on a parameter and
// reach the loss), values that carry a parameter where no rule can follow
// (the bits of an arith.bitcast), the seed, the sweep and the new signature.
//
//===----------------------------------------------------------------------===//

#include "remat/Interfaces/RematDifferentiableOpInterface.h"
#include "remat/Support/Debug.h"
#include "remat/Transforms/ExternalModels.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATAUTODIFFPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using namespace remat;

// -debug-only=remat-autodiff: every op whose adjoint is built, and the size of the backward.
#define DEBUG_TYPE "remat-autodiff"

namespace {

//===----------------------------------------------------------------------===//
// The differentiation of one function.
//===----------------------------------------------------------------------===//

class Differentiator {
public:
  Differentiator(func::FuncOp func)
      : func(func), ctx(func.getContext()), b(ctx.getBuilder()) {}

  LogicalResult run(Value loss, ArrayRef<BlockArgument> params);
  /// After run: whether the loss depends on some parameter at all.
  bool lossDependsOnParameters() const { return lossUseful; }

private:
  func::FuncOp func;
  /// The adjoints and the values that need one, which the rules see.
  ReverseModeContext ctx;
  OpBuilder &b;
  DenseSet<Value> active;
  /// Values that depend on a parameter in a form without derivative rules
  /// (bits, unranked tensors), with the op that first made such a value.
  DenseMap<Value, Operation *> opaque;
  Operation *returnOp = nullptr;
  bool lossUseful = false;

  LogicalResult differentiate(Operation *op);
};

LogicalResult Differentiator::differentiate(Operation *op) {
  llvm::SetVector<Value> inputs(op->operand_begin(), op->operand_end());
  for (Region &r : op->getRegions())
    getUsedValuesDefinedAbove(r, inputs);
  for (Value v : inputs) {
    Operation *origin = opaque.lookup(v);
    if (!origin)
      continue;
    // bitcast(bitcast(x : f -> i) : i -> f) is x: the adjoint passes.
    auto back = dyn_cast<arith::BitcastOp>(op);
    auto there = back ? back.getIn().getDefiningOp<arith::BitcastOp>()
                      : arith::BitcastOp();
    if (there && there.getIn().getType() == back.getType()) {
      if (ctx.needsAdjoint(there.getIn()))
        ctx.accumulate(there.getIn(), ctx.getAdjoint(back.getResult()),
                       op->getLoc());
      return success();
    }
    // A select whose condition alone carries the bits has the usual rule.
    auto sel = dyn_cast<arith::SelectOp>(op);
    if (sel && !opaque.count(sel.getTrueValue()) &&
        !opaque.count(sel.getFalseValue()))
      continue;
    InFlightDiagnostic diag = op->emitOpError();
    diag << "cannot be differentiated: it reads a value that depends on a "
            "parameter through '"
         << origin->getName() << "' (as " << v.getType()
         << "), which carries no derivative remat-autodiff knows (only a "
            "bitcast back to the same float type, the identity, has one)";
    diag.attachNote(origin->getLoc()) << "the value is made here";
    return failure();
  }
  // The op's own rule (RematDifferentiableOpInterface).
  if (auto rule = dyn_cast<RematDifferentiableOpInterface>(op))
    return rule.buildAdjoints(ctx);
  if (isa<func::CallOp>(op))
    return op->emitOpError()
           << "cannot be differentiated: calls must be inlined first "
              "(remat-inline-calls, which the remat pipelines run before "
              "remat-autodiff)";
  return emitNoAdjointRule(op);
}

LogicalResult Differentiator::run(Value loss, ArrayRef<BlockArgument> params) {
  Block &block = func.getBody().front();
  returnOp = block.getTerminator();

  // Activity: values that depend on a parameter (values captured by
  // regions count as operands) ...
  for (BlockArgument p : params)
    active.insert(p);
  SmallVector<Operation *> ops;
  for (Operation &op : block.without_terminator())
    ops.push_back(&op);
  auto inputsOf = [](Operation *op) {
    llvm::SetVector<Value> values(op->operand_begin(), op->operand_end());
    for (Region &r : op->getRegions())
      getUsedValuesDefinedAbove(r, values);
    return values;
  };
  // A result that depends on a parameter but is not a float (tensor) carries
  // no derivative when it is an integer computed by an op without one (a
  // comparison, fptosi: piecewise constant). Anything else — the bits of an
  // arith.bitcast, an unranked or non-tensor float container — carries the
  // parameter where no rule can follow: such values are kept in `opaque`
  // (with the op that made them), so that an op computing the loss from them
  // is an error instead of a silently zero gradient.
  for (Operation *op : ops) {
    llvm::SetVector<Value> inputs = inputsOf(op);
    bool fromActive =
        llvm::any_of(inputs, [&](Value v) { return active.count(v); });
    Value fromOpaque;
    for (Value v : inputs)
      if (opaque.count(v))
        fromOpaque = v;
    if (!fromActive && !fromOpaque)
      continue;
    for (Value r : op->getResults()) {
      if (isDifferentiableType(r.getType())) {
        active.insert(r);
        continue;
      }
      Type elem = getElementTypeOrSelf(r.getType());
      bool derivativeFree = isa<IntegerType, IndexType>(elem) &&
                            isa<IntegerType, IndexType, RankedTensorType>(
                                r.getType()) &&
                            !fromOpaque && !isa<arith::BitcastOp>(op);
      if (!derivativeFree)
        opaque[r] = fromOpaque ? opaque.lookup(fromOpaque) : op;
    }
  }
  // ... and that the loss depends on.
  if (active.count(loss))
    ctx.setNeedsAdjoint(loss);
  lossUseful = ctx.needsAdjoint(loss);
  // A derivative flows through the operands the op's rule says carry one
  // (all of them for an op without a rule: the sweep reports it) and the
  // values its regions capture; a value that carries a parameter where no
  // rule can follow is kept on the path, so that the op reading it is
  // reported.
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getResults(),
                      [&](Value r) { return ctx.needsAdjoint(r); }))
      continue;
    auto rule = dyn_cast<RematDifferentiableOpInterface>(op);
    llvm::SetVector<Value> carried;
    for (OpOperand &operand : op->getOpOperands())
      if (!rule || rule.isDifferentiableOperand(operand))
        carried.insert(operand.get());
    for (Region &r : op->getRegions())
      getUsedValuesDefinedAbove(r, carried);
    for (Value v : inputsOf(op))
      if (opaque.count(v) || (active.count(v) && carried.contains(v)))
        ctx.setNeedsAdjoint(v);
  }

  // Static shapes: every adjoint has its value's type and is built from
  // tensor.empty of its shape.
  for (Operation *op : ops)
    for (OpResult r : op->getResults()) {
      auto shaped = dyn_cast<ShapedType>(r.getType());
      if (!ctx.needsAdjoint(r) || opaque.count(r) || !shaped ||
          shaped.hasStaticShape())
        continue;
      return op->emitOpError()
             << "cannot be differentiated: its result #" << r.getResultNumber()
             << " lies on the path from a parameter to the loss and has the "
                "dynamic shape "
             << r.getType()
             << "; remat-autodiff needs static shapes (every adjoint is a "
                "tensor of its value's shape)";
    }

  // The seed, then the reverse sweep, all before the return.
  b.setInsertionPoint(returnOp);
  Operation *lastForward = returnOp->getPrevNode();
  Location loc = loss.getLoc();
  Value seed;
  // A tensor seed is a fill of 1 (not a dense constant, which the GPU
  // lowering would have to copy from a host global).
  if (auto tensorType = dyn_cast<RankedTensorType>(loss.getType()))
    seed = linalg::FillOp::create(
               b, loc,
               ValueRange{arith::ConstantOp::create(
                   b, loc, FloatAttr::get(tensorType.getElementType(), 1.0))},
               ValueRange{tensor::EmptyOp::create(b, loc, tensorType.getShape(),
                                                  tensorType.getElementType())})
               .getResult(0);
  else
    seed = arith::ConstantOp::create(b, loc, FloatAttr::get(loss.getType(), 1.0));
  seed.getDefiningOp()->setAttr("remat.seed", b.getUnitAttr());
  if (ctx.needsAdjoint(loss))
    ctx.setAdjoint(loss, seed);
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getResults(),
                      [&](Value r) { return bool(ctx.getAdjoint(r)); }))
      continue;
    LLVM_DEBUG(llvm::dbgs() << "remat-autodiff: adjoint of " << op->getName()
                            << " at " << op->getLoc() << "\n");
    if (failed(differentiate(op)))
      return failure();
  }

  // Gradients of the parameters (zero where the loss does not depend on
  // one), then the clean-up of what the rules left unused.
  SmallVector<Value> results{loss};
  for (BlockArgument p : params) {
    Value g = ctx.getAdjoint(p);
    results.push_back(g ? g : ctx.zeros(p.getType(), loc));
  }
  auto ret = cast<func::ReturnOp>(returnOp);
  for (Value v : ret.getOperands().drop_front())
    results.push_back(v);
  ret->setOperands(results);
  Operation *first = lastForward ? lastForward->getNextNode() : &block.front();
  SmallVector<Operation *> backward;
  for (Operation *op = first; op != returnOp; op = op->getNextNode())
    backward.push_back(op);
  for (Operation *op : llvm::reverse(backward))
    if (op != seed.getDefiningOp() && isOpTriviallyDead(op))
      op->erase();
  size_t numBackward = 0;
  for (Operation *op = first; op && op != returnOp; op = op->getNextNode()) {
    op->setAttr("remat.phase", b.getStringAttr("backward"));
    ++numBackward;
  }
  LLVM_DEBUG(llvm::dbgs() << "remat-autodiff: " << numBackward
                          << " backward ops after pruning, " << params.size()
                          << " parameter gradients\n");
  return success();
}

/// Where result #`i` of `func` is marked a loss: the op that defines the
/// returned value when the op carries `remat.loss`, the function when the
/// result does; null when neither.
Operation *lossMarker(func::FuncOp func, unsigned i) {
  if (func.isExternal() || i >= func.getNumResults())
    return nullptr;
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
  if (ret && i < ret.getNumOperands())
    if (Operation *def = ret.getOperand(i).getDefiningOp();
        def && def->hasAttr("remat.loss"))
      return def;
  if (func.getResultAttr(i, "remat.loss"))
    return func;
  return nullptr;
}

/// Whether result #0 is a loss: marked on the function result, or by the op
/// that defines it.
bool isMarkedLoss(func::FuncOp func) { return lossMarker(func, 0); }

/// The first result after #0 that is marked a loss, if any.
std::optional<unsigned> otherLossResult(func::FuncOp func) {
  for (unsigned i = 1, e = func.getNumResults(); i < e; ++i) {
    Operation *marker = lossMarker(func, i);
    // The loss itself returned again is not another loss.
    if (!marker || (marker != func.getOperation() &&
                    marker == lossMarker(func, 0)))
      continue;
    return i;
  }
  return std::nullopt;
}

struct RematAutodiffPass
    : public remat::impl::RematAutodiffPassBase<RematAutodiffPass> {
  using RematAutodiffPassBase::RematAutodiffPassBase;

  // The rules (and cost models) of the upstream ops, also in a stock
  // mlir-opt that loaded only the pass plugin.
  void getDependentDialects(DialectRegistry &registry) const override {
    RematAutodiffPassBase::getDependentDialects(registry);
    registerRematExternalModels(registry);
  }

  LogicalResult differentiateFunction(func::FuncOp func, ModuleOp module);

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> targets;
    if (!function.empty()) {
      auto func = module.lookupSymbol<func::FuncOp>(function);
      if (!func || func.isExternal()) {
        module.emitError() << "remat-autodiff: no function '" << function
                           << "' with a body in the module";
        return signalPassFailure();
      }
      targets.push_back(func);
    } else {
      for (auto func : module.getOps<func::FuncOp>())
        if (isMarkedLoss(func))
          targets.push_back(func);
      if (targets.empty()) {
        // A marker on another result than #0 is a misplaced loss: say where.
        for (auto func : module.getOps<func::FuncOp>())
          if (std::optional<unsigned> i = otherLossResult(func)) {
            lossMarker(func, *i)->emitError()
                << "remat-autodiff: result #" << *i << " of '"
                << func.getSymName()
                << "' is marked `remat.loss`, but the loss must be result "
                   "#0 of the forward function: return it first";
            return signalPassFailure();
          }
        module.emitError()
            << "remat-autodiff: no function to differentiate: mark the loss "
               "(result #0) of the forward function with `remat.loss`, or "
               "name the function with function=NAME";
        return signalPassFailure();
      }
    }
    for (func::FuncOp func : targets)
      if (failed(differentiateFunction(func, module)))
        return signalPassFailure();
  }
};

LogicalResult RematAutodiffPass::differentiateFunction(func::FuncOp func,
                                                       ModuleOp module) {
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "remat-autodiff: '" << func.getSymName()
                            << "' must have a single block";
  if (func.getNumResults() == 0)
    return func.emitError() << "remat-autodiff: '" << func.getSymName()
                            << "' returns nothing: result #0 must be the loss";
  Type lossType = func.getResultTypes()[0];
  auto lossTensor = dyn_cast<RankedTensorType>(lossType);
  if (!(isa<FloatType>(lossType) ||
        (lossTensor && lossTensor.getRank() == 0 &&
         isa<FloatType>(lossTensor.getElementType()))))
    return func.emitError() << "remat-autodiff: result #0 of '"
                            << func.getSymName() << "' must be a scalar loss "
                            << "(a float or a rank-0 float tensor), not "
                            << lossType;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), "remat.tangent"))
      return func.emitError()
             << "remat-autodiff: '" << func.getSymName()
             << "' is already a training step (argument #"
             << arg.getArgNumber() << " is a `remat.tangent`)";
  WalkResult seeded = func.walk([](Operation *op) {
    return op->hasAttr("remat.seed") ? WalkResult::interrupt()
                                     : WalkResult::advance();
  });
  if (seeded.wasInterrupted())
    return func.emitError() << "remat-autodiff: '" << func.getSymName()
                            << "' is already a training step (it has an op "
                               "marked `remat.seed`)";
  // A step marked as such, or one whose backward is marked by phase: its
  // backward ops would be differentiated as if they were forward ones.
  if (func->hasAttr("remat.step"))
    return func.emitError() << "remat-autodiff: '" << func.getSymName()
                            << "' is already a training step (it is marked "
                               "`remat.step`)";
  Operation *backwardOp = nullptr;
  func.walk([&](Operation *op) {
    auto phase = op->getAttrOfType<StringAttr>("remat.phase");
    if (phase && phase.getValue() == "backward" && !backwardOp)
      backwardOp = op;
  });
  if (backwardOp) {
    InFlightDiagnostic diag =
        func.emitError() << "remat-autodiff: '" << func.getSymName()
                         << "' is already a training step (it has ops in "
                            "`remat.phase = \"backward\"`)";
    diag.attachNote(backwardOp->getLoc()) << "a backward op";
    return diag;
  }
  // One loss: a second marked result would keep its marker without a
  // gradient, and the step would have two losses for the graph.
  if (std::optional<unsigned> i = otherLossResult(func)) {
    InFlightDiagnostic diag =
        lossMarker(func, *i)->emitError()
        << "remat-autodiff: result #" << *i << " of '" << func.getSymName()
        << "' is marked `remat.loss` as well as result #0: remat-autodiff "
           "differentiates one loss; add the losses into result #0";
    return diag;
  }

  // Parameters: the marked arguments, else every float tensor argument.
  SmallVector<BlockArgument> params;
  for (BlockArgument arg : func.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), "remat.param")) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || !type.hasStaticShape() ||
          !isa<FloatType>(type.getElementType()))
        return func.emitError()
               << "remat-autodiff: argument #" << arg.getArgNumber()
               << " is a `remat.param` but not a statically shaped float "
                  "tensor";
      params.push_back(arg);
    }
  if (params.empty())
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (type && type.hasStaticShape() &&
          isa<FloatType>(type.getElementType()))
        params.push_back(arg);
    }

  if (params.empty())
    return func.emitError()
           << "remat-autodiff: '" << func.getSymName()
           << "' has no parameter to differentiate with respect to: mark "
              "its parameters `remat.param` (without marks, every statically "
              "shaped float tensor argument is one, and it has none)";

  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  Value loss = ret.getOperand(0);
  Differentiator diff(func);
  if (failed(diff.run(loss, params)))
    return failure();
  if (!diff.lossDependsOnParameters())
    func.emitWarning() << "remat-autodiff: the loss of '" << func.getSymName()
                       << "' depends on none of its " << params.size()
                       << " parameter(s): every gradient is zero";

  // The new signature: loss, gradients, then the other original results.
  SmallVector<Type> resultTypes{lossType};
  for (BlockArgument p : params)
    resultTypes.push_back(p.getType());
  llvm::append_range(resultTypes, func.getResultTypes().drop_front());
  SmallVector<DictionaryAttr> resultAttrs;
  SmallVector<DictionaryAttr> oldAttrs;
  func.getAllResultAttrs(oldAttrs);
  unsigned numOld = func.getNumResults();
  DictionaryAttr lossAttrs =
      oldAttrs.empty() ? DictionaryAttr::get(func.getContext()) : oldAttrs[0];
  if (!lossAttrs.get("remat.loss")) {
    NamedAttrList list(lossAttrs);
    list.set("remat.loss", UnitAttr::get(func.getContext()));
    lossAttrs = list.getDictionary(func.getContext());
  }
  resultAttrs.push_back(lossAttrs);
  for (size_t i = 0; i < params.size(); ++i)
    resultAttrs.push_back(DictionaryAttr::get(func.getContext()));
  for (unsigned i = 1; i < numOld; ++i)
    resultAttrs.push_back(oldAttrs.empty()
                              ? DictionaryAttr::get(func.getContext())
                              : oldAttrs[i]);
  func.setType(FunctionType::get(func.getContext(),
                                 func.getArgumentTypes(), resultTypes));
  func.setAllResultAttrs(resultAttrs);

  // Every call of the function now gets the new results.
  std::optional<SymbolTable::UseRange> uses = func.getSymbolUses(module);
  if (uses) {
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call)
        continue;
      OpBuilder b(call);
      auto newCall = func::CallOp::create(b, call.getLoc(), func.getSymName(),
                                          resultTypes, call.getOperands());
      newCall->setAttrs(call->getAttrs());
      for (unsigned i = 0; i < numOld; ++i)
        call.getResult(i).replaceAllUsesWith(
            newCall.getResult(i == 0 ? 0 : i + params.size()));
      call.erase();
    }
  }
  return success();
}

} // namespace
