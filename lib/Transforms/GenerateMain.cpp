//===- GenerateMain.cpp - Add a main that runs an entry function ----------===//
//
// remat-generate-main: adds `func.func @main()` that builds deterministic
// inputs for the entry function, calls it between `remat_rt_step_begin` and
// `remat_rt_step_end`, and prints every result through the CPU runtime
// (lib/Runtime/CpuRuntime.cpp). The inputs are a formula of the element index,
// so the un-rematerialised and the rematerialised step see the same bits and
// must print the same lines.
//
// The printing functions are declared on unranked tensors with
// `llvm.emit_c_interface`: one-shot bufferization with
// bufferize-function-boundaries turns `tensor<*xf32>` into `memref<*xf32>`
// and `tensor.cast` into `memref.cast`, and convert-func-to-llvm then calls
// `_mlir_ciface_remat_rt_print_f32(UnrankedMemRefType *)`.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace remat {
#define GEN_PASS_DEF_REMATGENERATEMAINPASS
#define GEN_PASS_DEF_REMATINSTRUMENTSTEPCALLSPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

// -debug-only=remat-generate-main: what the generated main calls.
#define DEBUG_TYPE "remat-generate-main"

namespace {

/// The element types the runtime can print and the generator can fill:
/// f32, f64 and signless i32/i64. Returns the runtime's suffix or "".
llvm::StringRef runtimeSuffix(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isSignlessInteger(32))
    return "i32";
  if (type.isSignlessInteger(64))
    return "i64";
  return "";
}

/// An argument the generator can fill: a statically shaped ranked tensor of a
/// supported element type.
bool isSupportedArgument(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && !tensor.getEncoding() &&
         !runtimeSuffix(tensor.getElementType()).empty();
}

/// A result the runtime can print: any tensor of a supported element type (the
/// runtime reads the shape from the descriptor) or a supported scalar; an
/// `index` scalar is printed as i64.
bool isSupportedResult(Type type) {
  if (auto tensor = dyn_cast<TensorType>(type)) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    if (ranked && ranked.getEncoding())
      return false;
    return !runtimeSuffix(tensor.getElementType()).empty();
  }
  return type.isIndex() || !runtimeSuffix(type).empty();
}

/// Finds or declares the private runtime function `name` of type `type` in
/// `module`; null (after an error) if the symbol exists with another
/// signature.
func::FuncOp getOrDeclare(ModuleOp module, OpBuilder &builder,
                          llvm::StringRef name, FunctionType type,
                          bool cInterface, llvm::StringRef pass) {
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, name)) {
    auto func = dyn_cast<func::FuncOp>(existing);
    if (!func || func.getFunctionType() != type) {
      existing->emitError() << pass << ": symbol '" << name
                            << "' exists but is not a function of type "
                            << type << " (it is reserved for the runtime)";
      return nullptr;
    }
    return func;
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(builder, module.getLoc(), name, type);
  func.setPrivate();
  if (cInterface)
    func->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  return func;
}

/// After `after`: `repeat` more calls like `call` (same callee, same
/// operands), each between `begin` and `end`, its tensor results freed as
/// soon as it returns, in an scf.for. The step's time is then the median of
/// these windows (remat-run --repeat); its peak is the same in each.
void addRepeatedCalls(OpBuilder &builder, func::CallOp call, Operation *after,
                      unsigned repeat, func::FuncOp begin, func::FuncOp end,
                      ValueRange beginArgs = {}) {
  if (repeat == 0)
    return;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfter(after);
  Location loc = call.getLoc();
  Value lower = arith::ConstantIndexOp::create(builder, loc, 0);
  Value upper = arith::ConstantIndexOp::create(builder, loc, repeat);
  Value step = arith::ConstantIndexOp::create(builder, loc, 1);
  scf::ForOp::create(
      builder, loc, lower, upper, step, ValueRange{},
      [&](OpBuilder &b, Location l, Value, ValueRange) {
        func::CallOp::create(b, l, begin, beginArgs);
        auto again = func::CallOp::create(b, l, call.getCallee(),
                                          call.getResultTypes(),
                                          call.getOperands());
        func::CallOp::create(b, l, end);
        for (Value result : again.getResults())
          if (isa<RankedTensorType>(result.getType()))
            bufferization::DeallocTensorOp::create(b, l, result);
        scf::YieldOp::create(b, l);
      });
}

struct RematGenerateMainPass
    : remat::impl::RematGenerateMainPassBase<RematGenerateMainPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// The entry function: `entry` if set, else the only function with a body.
  func::FuncOp findEntry();
  /// A tensor of `type` with element k (row-major linear index) equal to
  /// ((k * 37 + argNo * 11) mod 101 - 50), divided by 64 for floats.
  Value buildInput(OpBuilder &builder, Location loc, RankedTensorType type,
                   unsigned argNo);
};

} // namespace

func::FuncOp RematGenerateMainPass::findEntry() {
  ModuleOp module = getOperation();
  if (!entry.empty()) {
    auto func = dyn_cast_or_null<func::FuncOp>(
        SymbolTable::lookupSymbolIn(module, entry));
    if (!func) {
      module.emitError() << "remat-generate-main: entry function '" << entry
                         << "' not found";
      return nullptr;
    }
    return func;
  }
  // No entry given: only unambiguous when the module has one definition.
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (found) {
      module.emitError() << "remat-generate-main: several functions ('"
                         << found.getSymName() << "', '" << func.getSymName()
                         << "'): name the one to call with entry=<name>";
      return nullptr;
    }
    found = func;
  }
  if (!found)
    module.emitError() << "remat-generate-main: no function to call";
  return found;
}

Value RematGenerateMainPass::buildInput(OpBuilder &builder, Location loc,
                                        RankedTensorType type,
                                        unsigned argNo) {
  Type elementType = type.getElementType();
  int64_t rank = type.getRank();
  Value empty =
      tensor::EmptyOp::create(builder, loc, type.getShape(), elementType);
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank, builder.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  ArrayRef<int64_t> shape = type.getShape();

  auto body = [&](OpBuilder &b, Location l, ValueRange) {
    auto cst = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, l, v);
    };
    // Row-major linear index: ((i0 * s1 + i1) * s2 + i2) ...
    // A rank-0 tensor has the one index 0.
    Value linear = rank == 0 ? cst(0) : Value();
    for (int64_t d = 0; d < rank; ++d) {
      Value idx = linalg::IndexOp::create(b, l, d);
      linear = d == 0 ? idx
                      : arith::AddIOp::create(
                            b, l, arith::MulIOp::create(b, l, linear,
                                                        cst(shape[d])),
                            idx);
    }
    // Every term is non-negative, so the unsigned remainder is the modulo.
    Value v = arith::MulIOp::create(b, l, linear, cst(37));
    v = arith::AddIOp::create(b, l, v, cst(int64_t(argNo) * 11));
    v = arith::RemUIOp::create(b, l, v, cst(101));
    v = arith::SubIOp::create(b, l, v, cst(50));
    Value result;
    if (auto floatType = dyn_cast<FloatType>(elementType)) {
      Value asInt = arith::IndexCastOp::create(b, l, b.getI64Type(), v);
      Value asFloat = arith::SIToFPOp::create(b, l, floatType, asInt);
      Value scale = arith::ConstantOp::create(
          b, l, b.getFloatAttr(floatType, 64.0));
      result = arith::DivFOp::create(b, l, asFloat, scale);
    } else {
      result = arith::IndexCastOp::create(b, l, elementType, v);
    }
    linalg::YieldOp::create(b, l, result);
  };
  auto generic = linalg::GenericOp::create(builder, loc, TypeRange{type},
                                           ValueRange{}, ValueRange{empty},
                                           maps, iterators, body);
  return generic.getResult(0);
}

void RematGenerateMainPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();

  if (Operation *existing = SymbolTable::lookupSymbolIn(module, "main")) {
    existing->emitError()
        << "remat-generate-main: the module already has a 'main'";
    return signalPassFailure();
  }
  func::FuncOp entryFunc = findEntry();
  if (!entryFunc)
    return signalPassFailure();
  if (entryFunc.isExternal()) {
    entryFunc.emitError() << "remat-generate-main: entry '"
                          << entryFunc.getSymName()
                          << "' is a declaration without a body";
    return signalPassFailure();
  }

  // Check every type before building anything, so that a failure leaves the
  // module untouched.
  FunctionType entryType = entryFunc.getFunctionType();
  for (auto [i, type] : llvm::enumerate(entryType.getInputs())) {
    if (!isSupportedArgument(type)) {
      entryFunc.emitError()
          << "remat-generate-main: argument #" << i << " of '"
          << entryFunc.getSymName() << "' has unsupported type " << type
          << " (expected a statically shaped tensor of f32, f64, i32 or i64)";
      return signalPassFailure();
    }
  }
  for (auto [i, type] : llvm::enumerate(entryType.getResults())) {
    if (!isSupportedResult(type)) {
      entryFunc.emitError()
          << "remat-generate-main: result #" << i << " of '"
          << entryFunc.getSymName() << "' has unsupported type " << type
          << " (expected a tensor or scalar of f32, f64, i32, i64 or index)";
      return signalPassFailure();
    }
  }

  OpBuilder builder(ctx);
  auto voidType = FunctionType::get(ctx, {}, {});
  func::FuncOp begin =
      getOrDeclare(module, builder, "remat_rt_step_begin", voidType,
                   /*cInterface=*/false, getArgument());
  func::FuncOp end =
      getOrDeclare(module, builder, "remat_rt_step_end", voidType,
                   /*cInterface=*/false, getArgument());
  if (!begin || !end)
    return signalPassFailure();

  // main() is placed after everything else; its location is the entry's so
  // that diagnostics in it point at something meaningful.
  Location loc = entryFunc.getLoc();
  builder.setInsertionPointToEnd(module.getBody());
  auto mainFunc = func::FuncOp::create(builder, loc, "main", voidType);
  Block *block = mainFunc.addEntryBlock();
  builder.setInsertionPointToStart(block);

  SmallVector<Value> inputs;
  for (auto [i, type] : llvm::enumerate(entryType.getInputs()))
    inputs.push_back(
        buildInput(builder, loc, cast<RankedTensorType>(type), i));

  func::CallOp::create(builder, loc, begin);
  auto call = func::CallOp::create(builder, loc, entryFunc, inputs);
  auto endCall = func::CallOp::create(builder, loc, end);
  addRepeatedCalls(builder, call, endCall, repeat, begin, end);
  LLVM_DEBUG(llvm::dbgs() << "remat-generate-main: main calls @"
                          << entryFunc.getSymName() << " on " << inputs.size()
                          << " deterministic inputs and prints its "
                          << call.getNumResults() << " results\n");

  for (Value result : call.getResults()) {
    Type type = result.getType();
    if (auto tensor = dyn_cast<TensorType>(type)) {
      // Print through the unranked C interface: one function per element
      // type whatever the rank.
      Type elementType = tensor.getElementType();
      auto unranked = UnrankedTensorType::get(elementType);
      func::FuncOp print = getOrDeclare(
          module, builder,
          ("remat_rt_print_" + runtimeSuffix(elementType)).str(),
          FunctionType::get(ctx, {unranked}, {}), /*cInterface=*/true,
          getArgument());
      if (!print)
        return signalPassFailure();
      Value cast = tensor::CastOp::create(builder, loc, unranked, result);
      func::CallOp::create(builder, loc, print, ValueRange{cast});
      continue;
    }
    Value scalar = result;
    if (type.isIndex()) {
      scalar =
          arith::IndexCastOp::create(builder, loc, builder.getI64Type(), result);
      type = scalar.getType();
    }
    func::FuncOp print = getOrDeclare(
        module, builder,
        ("remat_rt_print_scalar_" + runtimeSuffix(type)).str(),
        FunctionType::get(ctx, {type}, {}), /*cInterface=*/false,
        getArgument());
    if (!print)
      return signalPassFailure();
    func::CallOp::create(builder, loc, print, ValueRange{scalar});
  }
  func::ReturnOp::create(builder, loc);
}

//===----------------------------------------------------------------------===//
// remat-instrument-step-calls
//===----------------------------------------------------------------------===//

namespace {
/// Whether one-shot bufferization may give `v` another layout than a step's
/// identity-layout arguments take, so that it would copy it at the call,
/// inside the measured window: a view of a bigger tensor, or a value that a
/// region carries or yields (an scf.for iter_arg or result: the weights of a
/// training loop get a fully dynamic layout).
bool mayGetOtherLayout(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return !isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  Operation *def = v.getDefiningOp();
  return def && (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                     tensor::CollapseShapeOp, tensor::CastOp>(def) ||
                 def->getNumRegions() > 0);
}

struct RematInstrumentStepCallsPass
    : remat::impl::RematInstrumentStepCallsPassBase<
          RematInstrumentStepCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (entry.empty()) {
      module.emitError() << getArgument() << ": no entry given (entry=F)";
      return signalPassFailure();
    }
    // The calls of each entry, in entry order.
    SmallVector<SmallVector<func::CallOp>> calls;
    for (const std::string &name : entry) {
      auto step = dyn_cast_or_null<func::FuncOp>(
          SymbolTable::lookupSymbolIn(module, name));
      if (!step) {
        module.emitError() << getArgument() << ": no function '" << name
                           << "'";
        return signalPassFailure();
      }
      SmallVector<func::CallOp> &stepCalls = calls.emplace_back();
      module.walk([&](func::CallOp call) {
        if (call.getCallee() == name && !step->isAncestor(call))
          stepCalls.push_back(call);
      });
      if (stepCalls.empty()) {
        step.emitError() << getArgument() << ": nothing in the module calls '"
                         << name
                         << "', so no measured window would be the step's";
        return signalPassFailure();
      }
    }
    OpBuilder builder(&getContext());
    auto voidType = FunctionType::get(&getContext(), {}, {});
    // One step: the plain window. Several: a window tagged with the entry's
    // index, so that the runtime reports each step's peak apart.
    bool tagged = entry.size() > 1;
    func::FuncOp begin =
        tagged ? getOrDeclare(module, builder, "remat_rt_step_begin_tagged",
                              FunctionType::get(&getContext(),
                                                {builder.getI64Type()}, {}),
                              /*cInterface=*/false, getArgument())
               : getOrDeclare(module, builder, "remat_rt_step_begin",
                              voidType, /*cInterface=*/false, getArgument());
    func::FuncOp end =
        getOrDeclare(module, builder, "remat_rt_step_end", voidType,
                     /*cInterface=*/false, getArgument());
    if (!begin || !end)
      return signalPassFailure();
    for (auto [tag, stepCalls] : llvm::enumerate(calls)) {
      for (func::CallOp call : stepCalls) {
        builder.setInsertionPoint(call);
        // An argument that bufferization would copy into the step's identity
        // layout at the call, inside the window, where the prediction
        // (arguments are fixed memory) does not count it: copy it here,
        // before the window opens.
        for (OpOperand &operand : call->getOpOperands()) {
          auto type = dyn_cast<RankedTensorType>(operand.get().getType());
          if (!type || !type.hasStaticShape() ||
              !mayGetOtherLayout(operand.get()))
            continue;
          Value empty = tensor::EmptyOp::create(
              builder, call.getLoc(), type.getShape(), type.getElementType());
          operand.set(linalg::CopyOp::create(builder, call.getLoc(),
                                             operand.get(), empty)
                          ->getResult(0));
        }
        SmallVector<Value> beginArgs;
        if (tagged)
          beginArgs.push_back(arith::ConstantOp::create(
              builder, call.getLoc(), builder.getI64IntegerAttr(tag)));
        func::CallOp::create(builder, call.getLoc(), begin, beginArgs);
        builder.setInsertionPointAfter(call);
        auto endCall = func::CallOp::create(builder, call.getLoc(), end);
        // remat-run --repeat: more windows on the same arguments.
        addRepeatedCalls(builder, call, endCall, repeat, begin, end,
                         beginArgs);
      }
    }
  }
};
} // namespace
