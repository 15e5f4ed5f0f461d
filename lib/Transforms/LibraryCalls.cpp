//===- LibraryCalls.cpp - Contractions on oneDNN, cuBLAS and cuDNN --------===//
//
// remat-plan-library-calls (tensors, before the plan) and
// remat-lower-library-calls (buffers, after the early frees); Passes.td
// states their contracts, LibraryCalls.h the call they make.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Runtime/CpuLibrary.h"
#include "remat/Runtime/GpuLibrary.h"
#include "remat/Support/Debug.h"
#include "remat/Transforms/ContractionMatch.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace remat {
#define GEN_PASS_DEF_REMATPLANLIBRARYCALLSPASS
#define GEN_PASS_DEF_REMATLOWERLIBRARYCALLSPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using remat::lib::ContractionDesc;

#define DEBUG_TYPE "remat-plan-library-calls"

static constexpr llvm::StringLiteral kLibraryCallAttr =
    remat::RematDialect::kLibraryCallAttr;
static constexpr llvm::StringLiteral kWorkspaceAttr =
    remat::RematDialect::kWorkspaceAttr;

namespace {

/// The workspace the target's library needs for `desc` under `limit`, or -1
/// with `reason`.
int64_t workspaceFor(llvm::StringRef target, const ContractionDesc &desc,
                     int64_t gpuLimit, std::string &reason) {
  if (target == "gpu")
    return remat::lib::gpuWorkspaceBytes(desc, gpuLimit, reason);
  return remat::lib::cpuWorkspaceBytes(desc, reason);
}

bool isZero(Value v) {
  Attribute attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValue().isZero();
  return false;
}

/// On tensors: the output is a `linalg.fill` of zero used only here.
bool outputZeroedOnTensors(OpOperand *out) {
  auto fill = out->get().getDefiningOp<linalg::FillOp>();
  return fill && fill->hasOneUse() && isZero(fill.value());
}

LogicalResult checkTarget(llvm::StringRef target, Operation *op,
                          llvm::StringRef pass) {
  if (target == "cpu" || target == "gpu")
    return success();
  return op->emitError() << pass << ": target must be 'cpu' or 'gpu', not '"
                         << target << "'";
}

struct RematPlanLibraryCallsPass
    : remat::impl::RematPlanLibraryCallsPassBase<RematPlanLibraryCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (failed(checkTarget(target, func, getArgument())))
      return signalPassFailure();
    if (gpuWorkspaceLimit < 0) {
      func.emitError() << getArgument()
                       << ": gpu-workspace-limit must be >= 0";
      return signalPassFailure();
    }
    func.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      std::string why;
      std::optional<remat::MatchedContraction> match =
          remat::matchContraction(op, why);
      if (!match) {
        LLVM_DEBUG(llvm::dbgs() << getArgument() << ": " << op->getName()
                                << " at " << op->getLoc()
                                << " stays loops: " << why << "\n");
        return;
      }
      match->desc.accumulate = !outputZeroedOnTensors(match->out);
      int64_t bytes =
          workspaceFor(target, match->desc, gpuWorkspaceLimit, why);
      if (bytes < 0) {
        LLVM_DEBUG(llvm::dbgs() << getArgument() << ": "
                                << match->desc.describe() << " at "
                                << op->getLoc() << " stays loops: " << why
                                << "\n");
        return;
      }
      LLVM_DEBUG(llvm::dbgs() << getArgument() << ": "
                              << match->desc.describe() << " at "
                              << op->getLoc() << ": " << target
                              << " library, workspace " << bytes << "\n");
      Builder b(op);
      op->setAttr(kLibraryCallAttr,
                  b.getStringAttr(remat::lib::opKindName(match->desc.kind)));
      op->setAttr(kWorkspaceAttr, b.getI64IntegerAttr(bytes));
    });
  }
};

#undef DEBUG_TYPE
#define DEBUG_TYPE "remat-lower-library-calls"

/// The `linalg.fill` of zero that last wrote `buffer` before `op` in its
/// block, when nothing else touched the buffer (through any view) in
/// between; null otherwise.
linalg::FillOp zeroFillBefore(Operation *op, Value buffer) {
  // The buffer and every view of it.
  SmallVector<Value> worklist = {buffer};
  llvm::SmallPtrSet<Operation *, 8> users;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (!users.insert(user).second)
        continue;
      if (isa<ViewLikeOpInterface>(user))
        for (Value r : user->getResults())
          worklist.push_back(r);
    }
  }
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (!users.contains(prev))
      continue;
    if (isa<ViewLikeOpInterface>(prev))
      continue; // creating a view touches nothing
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.getDpsInitOperand(0)->get() == buffer &&
        isZero(fill.value()))
      return fill;
    return nullptr;
  }
  return nullptr;
}

struct RematLowerLibraryCallsPass
    : remat::impl::RematLowerLibraryCallsPassBase<RematLowerLibraryCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkTarget(target, module, getArgument())))
      return signalPassFailure();
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kLibraryCallAttr))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    OpBuilder builder(module.getContext());
    symbols.emplace(module);
    for (linalg::LinalgOp op : ops)
      if (failed(lower(builder, module, op)))
        return signalPassFailure();
  }

private:
  /// `remat_lib_contraction`, declared once.
  func::FuncOp callee;

  /// The arena of the function around `op` (the call remat-assign-arena
  /// put at its top), or null.
  Value arenaOf(Operation *op) {
    auto func = op->getParentOfType<FunctionOpInterface>();
    if (!func || func.isExternal())
      return nullptr;
    for (Operation &top : func.getFunctionBody().front())
      if (auto call = dyn_cast<func::CallOp>(top))
        if (call->hasAttr(remat::RematDialect::kArenaBytesAttr) &&
            call.getNumResults() == 1)
          return call.getResult(0);
    return nullptr;
  }
  std::optional<SymbolTable> symbols;

  func::FuncOp getCallee(OpBuilder &builder, ModuleOp module) {
    if (callee)
      return callee;
    MLIRContext *ctx = module.getContext();
    Type index = IndexType::get(ctx);
    auto type = FunctionType::get(
        ctx, {index, index, index, index, index, IntegerType::get(ctx, 64)},
        {});
    if (auto existing = module.lookupSymbol<func::FuncOp>(
            "remat_lib_contraction")) {
      if (existing.getFunctionType() != type) {
        existing.emitError() << "'remat_lib_contraction' is reserved for the "
                                "runtime's library calls";
        return nullptr;
      }
      return callee = existing;
    }
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(module.getBody());
    callee = func::FuncOp::create(builder, module.getLoc(),
                                  "remat_lib_contraction", type);
    callee.setPrivate();
    symbols->insert(callee);
    return callee;
  }

  /// The descriptor as a private constant global; its address as an index.
  Value descriptorAddress(OpBuilder &builder, ModuleOp module, Location loc,
                          const ContractionDesc &desc) {
    std::vector<int64_t> words = desc.encode();
    auto type = MemRefType::get({static_cast<int64_t>(words.size())},
                                builder.getI64Type());
    auto tensorType = RankedTensorType::get(type.getShape(),
                                            builder.getI64Type());
    auto value = DenseElementsAttr::get(tensorType, llvm::ArrayRef(words));
    memref::GlobalOp global;
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(module.getBody());
      global = memref::GlobalOp::create(
          builder, loc, "__remat_lib_desc", builder.getStringAttr("private"),
          type, value, /*constant=*/true, builder.getI64IntegerAttr(8));
      symbols->insert(global); // renames it uniquely
    }
    Value ref = memref::GetGlobalOp::create(builder, loc, type,
                                            global.getSymName());
    return memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, ref);
  }

  /// The address of the element at `extraOffset` from `buffer`'s own offset.
  Value elementAddress(OpBuilder &builder, Location loc, Value buffer,
                       int64_t extraOffset, int64_t elementBytes) {
    auto meta =
        memref::ExtractStridedMetadataOp::create(builder, loc, buffer);
    Value base =
        memref::ExtractAlignedPointerAsIndexOp::create(builder, loc, buffer);
    Value offset = meta.getOffset();
    if (extraOffset != 0)
      offset = arith::AddIOp::create(
          builder, loc, offset,
          arith::ConstantIndexOp::create(builder, loc, extraOffset));
    Value bytes = arith::MulIOp::create(
        builder, loc, offset,
        arith::ConstantIndexOp::create(builder, loc, elementBytes));
    return arith::AddIOp::create(builder, loc, base, bytes);
  }

  LogicalResult lower(OpBuilder &builder, ModuleOp module,
                      linalg::LinalgOp op) {
    auto plannedAttr = op->getAttrOfType<IntegerAttr>(kWorkspaceAttr);
    if (!op.hasPureBufferSemantics())
      return op.emitError() << getArgument()
                            << ": expected an op on buffers (run after "
                               "bufferization)";
    if (!plannedAttr || plannedAttr.getInt() < 0)
      return op.emitError() << getArgument() << ": '" << kLibraryCallAttr
                            << "' without a non-negative '" << kWorkspaceAttr
                            << "'";
    int64_t planned = plannedAttr.getInt();
    Location loc = op.getLoc();
    builder.setInsertionPoint(op);

    std::string why;
    std::optional<remat::MatchedContraction> match =
        remat::matchContraction(op, why);
    linalg::FillOp zeroFill;
    if (match) {
      zeroFill = zeroFillBefore(op, match->out->get());
      match->desc.accumulate = !zeroFill;
      int64_t needed =
          workspaceFor(target, match->desc, /*gpuLimit=*/planned, why);
      if (needed < 0 || needed > planned) {
        if (needed > planned)
          why = "it needs " + std::to_string(needed) +
                " bytes of workspace on these buffers, " +
                std::to_string(planned) + " were planned";
        match.reset();
      }
    }

    // The planned workspace, allocated and freed around the op whatever
    // runs it: the plan counted it. With an arena (remat-assign-arena ran),
    // it is the planned part of the arena instead.
    Value workspace;
    bool inArena = false;
    auto wsType = MemRefType::get({planned}, builder.getI8Type());
    if (planned > 0) {
      Value arena = arenaOf(op);
      auto offset =
          op->getAttrOfType<IntegerAttr>(remat::RematDialect::kWorkspaceOffsetAttr);
      if (arena && offset) {
        Value at = arith::ConstantIndexOp::create(builder, loc, offset.getInt());
        workspace = memref::ViewOp::create(builder, loc, wsType, arena, at,
                                           ValueRange{});
        inArena = true;
      } else {
        workspace = memref::AllocOp::create(builder, loc, wsType);
      }
    }
    auto freeWorkspace = [&](Operation *after) {
      if (!workspace || inArena)
        return;
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfter(after);
      memref::DeallocOp::create(builder, loc, workspace);
    };

    if (!match) {
      LLVM_DEBUG(llvm::dbgs() << getArgument() << ": " << op->getName()
                              << " at " << loc << " stays loops: " << why
                              << "\n");
      op->removeAttr(kLibraryCallAttr);
      freeWorkspace(op);
      return success();
    }

    func::FuncOp fn = getCallee(builder, module);
    if (!fn)
      return failure();
    const ContractionDesc &desc = match->desc;
    int64_t elementBytes = remat::lib::elementBytes(desc.type);
    Value descAddress = descriptorAddress(builder, module, loc, desc);
    Value in0 = elementAddress(builder, loc, match->in0->get(),
                               match->in0Offset, elementBytes);
    Value in1 = elementAddress(builder, loc, match->in1->get(),
                               match->in1Offset, elementBytes);
    Value out = elementAddress(builder, loc, match->out->get(),
                               match->outOffset, elementBytes);
    Value workspaceAddress =
        workspace ? Value(memref::ExtractAlignedPointerAsIndexOp::create(
                        builder, loc, workspace))
                  : Value(arith::ConstantIndexOp::create(builder, loc, 0));
    Value workspaceBytes = arith::ConstantIntOp::create(
        builder, loc, builder.getI64Type(), planned);
    auto call = func::CallOp::create(
        builder, loc, fn,
        ValueRange{descAddress, in0, in1, out, workspaceAddress,
                   workspaceBytes});
    // Keep the op's markers (phase, recompute) on the call for readers of
    // the lowered IR.
    for (NamedAttribute attr : op->getDiscardableAttrs())
      call->setAttr(attr.getName(), attr.getValue());
    freeWorkspace(call);
    LLVM_DEBUG(llvm::dbgs() << getArgument() << ": " << desc.describe()
                            << " at " << loc << ": library call, workspace "
                            << planned << (zeroFill ? ", zero fill removed" : "")
                            << "\n");
    if (zeroFill)
      zeroFill.erase();
    op.erase();
    return success();
  }
};

} // namespace
