//===- AssignArena.cpp - Every buffer at its planned offset of one arena --===//
//
// remat-assign-arena (Passes.td): the plan's placement (remat-apply with
// `arena`, MemoryPlacement.h) applied to the bufferized step.
//
//===----------------------------------------------------------------------===//

#include "remat/Dialect/RematDialect.h"
#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <map>

namespace remat {
#define GEN_PASS_DEF_REMATASSIGNARENAPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;
using remat::RematDialect;

#define DEBUG_TYPE "remat-assign-arena"

namespace {

/// The bytes of a statically shaped identity-layout buffer, as bufferBytes
/// counts them (whole bytes per element).
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  return type.getNumElements() *
         static_cast<int64_t>(llvm::divideCeil(type.getElementTypeBitWidth(),
                                               8));
}

/// The planned offset of `buffer`: from the first op (in block order) that
/// uses it, or a view of it, and carries remat.operand_offsets.
std::optional<int64_t>
plannedOffset(Value buffer, const llvm::DenseMap<Operation *, size_t> &order) {
  SmallVector<Value> worklist = {buffer};
  std::optional<int64_t> offset;
  size_t best = std::numeric_limits<size_t>::max();
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<ViewLikeOpInterface>(user) && !isa<memref::DeallocOp>(user))
        for (Value r : user->getResults())
          worklist.push_back(r);
      auto offsets =
          user->getAttrOfType<ArrayAttr>(RematDialect::kOperandOffsetsAttr);
      if (!offsets || use.getOperandNumber() >= offsets.size())
        continue;
      int64_t o =
          cast<IntegerAttr>(offsets[use.getOperandNumber()]).getInt();
      // The op's position: its ancestor in the function's block.
      Operation *top = user;
      while (top && !order.count(top))
        top = top->getParentOp();
      if (o < 0 || !top)
        continue;
      size_t at = order.lookup(top);
      if (at < best) {
        best = at;
        offset = o;
      }
    }
  }
  return offset;
}

/// The offset remat-apply put in the location of a fresh destination (a
/// fused location whose metadata has remat.arena_offset), if any.
std::optional<int64_t> offsetFromLocation(Location loc) {
  std::optional<int64_t> offset;
  loc->walk([&](Location nested) {
    auto fused = dyn_cast<FusedLoc>(nested);
    if (!fused)
      return WalkResult::advance();
    auto metadata = dyn_cast_or_null<DictionaryAttr>(fused.getMetadata());
    if (!metadata)
      return WalkResult::advance();
    if (auto value = metadata.getAs<IntegerAttr>(
            RematDialect::kArenaOffsetLocKey)) {
      offset = value.getInt();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return offset;
}

struct RematAssignArenaPass
    : remat::impl::RematAssignArenaPassBase<RematAssignArenaPass> {
  using Base::Base;

  func::FuncOp arenaFunction;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> steps;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          func->getAttrOfType<IntegerAttr>(RematDialect::kArenaBytesAttr))
        steps.push_back(func);
    for (auto [id, func] : llvm::enumerate(steps))
      if (failed(assign(module, func, id)))
        return signalPassFailure();
  }

  /// Results of `func` that are views of its arena: a caller's free of the
  /// call's result would free a view, so it goes.
  void dropCallerFrees(ModuleOp module, func::FuncOp func,
                       const llvm::SmallDenseSet<unsigned> &arenaResults) {
    if (arenaResults.empty())
      return;
    SmallVector<Operation *> frees;
    module.walk([&](func::CallOp call) {
      if (call.getCallee() != func.getSymName())
        return;
      for (unsigned k : arenaResults)
        for (Operation *user : call.getResult(k).getUsers())
          if (isa<memref::DeallocOp>(user))
            frees.push_back(user);
    });
    for (Operation *free : frees)
      free->erase();
  }

  func::FuncOp getArenaFunction(OpBuilder &builder, ModuleOp module) {
    if (arenaFunction)
      return arenaFunction;
    MLIRContext *ctx = module.getContext();
    auto type = FunctionType::get(
        ctx, {IntegerType::get(ctx, 64), IntegerType::get(ctx, 64)},
        {MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8))});
    if (auto existing = module.lookupSymbol<func::FuncOp>("remat_rt_arena")) {
      if (existing.getFunctionType() != type) {
        existing.emitError()
            << "'remat_rt_arena' is reserved for the runtime's arena";
        return nullptr;
      }
      return arenaFunction = existing;
    }
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(module.getBody());
    arenaFunction = func::FuncOp::create(builder, module.getLoc(),
                                         "remat_rt_arena", type);
    arenaFunction.setPrivate();
    arenaFunction->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
    return arenaFunction;
  }

  LogicalResult assign(ModuleOp module, func::FuncOp func, int64_t id) {
    int64_t arenaBytes =
        func->getAttrOfType<IntegerAttr>(RematDialect::kArenaBytesAttr)
            .getInt();
    Block &block = func.getBody().front();
    llvm::DenseMap<Operation *, size_t> order;
    for (auto [i, op] : llvm::enumerate(block))
      order[&op] = i;

    // The buffers the body allocates and frees, with their planned offsets.
    struct Placed {
      memref::AllocOp alloc;
      SmallVector<memref::DeallocOp> frees;
      int64_t offset, bytes;
      size_t begin, end;
    };
    SmallVector<Placed> placed;
    for (auto alloc : block.getOps<memref::AllocOp>()) {
      SmallVector<memref::DeallocOp> frees;
      for (Operation *user : alloc->getUsers())
        if (auto dealloc = dyn_cast<memref::DeallocOp>(user))
          frees.push_back(dealloc);
      std::optional<int64_t> bytes = staticBytes(alloc.getType());
      if (!bytes)
        continue; // dynamic: an allocation of its own
      std::optional<int64_t> offset = plannedOffset(alloc, order);
      if (!offset)
        offset = offsetFromLocation(alloc.getLoc());
      if (!offset) {
        // Nothing the plan placed uses it: the program holds memory the
        // plan did not count. Said, not hidden.
        alloc.emitWarning("remat-assign-arena: no op of the plan uses this "
                          "buffer (")
            << *bytes << " bytes): it stays an allocation of its own, "
            << "outside the arena and the plan's figure";
        continue;
      }
      // Alive to its free, or to the end for a result.
      size_t end = frees.empty() ? block.getOperations().size() : 0;
      for (memref::DeallocOp f : frees)
        end = std::max(end, order.lookup(f.getOperation()));
      placed.push_back({alloc, frees, *offset, *bytes,
                        order.lookup(alloc.getOperation()), end});
    }

    // Buffers alive at once never share a byte: a sweep in program order.
    llvm::sort(placed, [](const Placed &a, const Placed &b) {
      return a.begin < b.begin;
    });
    std::multimap<size_t, Placed *> active; // by end
    for (Placed &p : placed) {
      if (p.offset + p.bytes > arenaBytes)
        return p.alloc.emitError()
               << getArgument() << ": buffer of " << p.bytes
               << " bytes at offset " << p.offset
               << " does not fit the arena of " << arenaBytes << " bytes";
      while (!active.empty() && active.begin()->first < p.begin)
        active.erase(active.begin());
      for (auto &[end, q] : active)
        if (p.offset < q->offset + q->bytes && q->offset < p.offset + p.bytes)
          return p.alloc.emitError()
                 << getArgument() << ": this buffer (" << p.bytes
                 << " bytes at offset " << p.offset
                 << ") overlaps a buffer alive at the same time ("
                 << q->bytes << " bytes at offset " << q->offset
                 << ", allocated at " << q->alloc.getLoc()
                 << "): the plan's placement does not match the program";
      if (p.bytes > 0)
        active.insert({p.end, &p});
    }

    OpBuilder builder(module.getContext());
    func::FuncOp arenaFn = getArenaFunction(builder, module);
    if (!arenaFn)
      return failure();
    builder.setInsertionPointToStart(&block);
    Location loc = func.getLoc();
    Value key =
        arith::ConstantIntOp::create(builder, loc, builder.getI64Type(), id);
    Value size = arith::ConstantIntOp::create(builder, loc,
                                              builder.getI64Type(), arenaBytes);
    auto arena =
        func::CallOp::create(builder, loc, arenaFn, ValueRange{key, size});
    arena->setAttr(RematDialect::kArenaBytesAttr,
                   builder.getI64IntegerAttr(arenaBytes));
    for (Placed &p : placed) {
      builder.setInsertionPoint(p.alloc);
      Value offset =
          arith::ConstantIndexOp::create(builder, p.alloc.getLoc(), p.offset);
      Value view = memref::ViewOp::create(builder, p.alloc.getLoc(),
                                          p.alloc.getType(),
                                          arena.getResult(0), offset,
                                          ValueRange{});
      p.alloc.getResult().replaceAllUsesExcept(view, {});
      for (memref::DeallocOp f : p.frees)
        f.erase();
      p.alloc.erase();
    }
    // The results that are (views of) arena buffers.
    llvm::SmallDenseSet<unsigned> arenaResults;
    Operation *terminator = block.getTerminator();
    for (OpOperand &returned : terminator->getOpOperands()) {
      Value v = returned.get();
      while (Operation *def = v.getDefiningOp()) {
        if (isa<memref::ViewOp>(def) &&
            cast<memref::ViewOp>(def).getSource() == arena.getResult(0)) {
          arenaResults.insert(returned.getOperandNumber());
          break;
        }
        auto view = dyn_cast<ViewLikeOpInterface>(def);
        if (!view)
          break;
        v = view.getViewSource();
      }
    }
    dropCallerFrees(module, func, arenaResults);
    LLVM_DEBUG(llvm::dbgs() << getArgument() << " @" << func.getName() << ": "
                            << placed.size() << " buffers in an arena of "
                            << arenaBytes << " bytes, " << arenaResults.size()
                            << " results in it\n");
    return success();
  }
};

} // namespace
