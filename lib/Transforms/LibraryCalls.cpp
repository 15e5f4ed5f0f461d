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
#include "mlir/Dialect/Utils/IndexingUtils.h"
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
      match->desc.accumulate =
          !(match->writesWholeOutput && outputZeroedOnTensors(match->out));
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

/// Every op that uses `buffer` or a view of it (through any view-like op).
llvm::SmallPtrSet<Operation *, 8> usersThroughViews(Value buffer) {
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
  return users;
}

/// The `linalg.fill` of zero that last wrote `buffer` before `op` in its
/// block, when nothing else touched the buffer (through any view) in
/// between; null otherwise.
linalg::FillOp zeroFillBefore(Operation *op, Value buffer) {
  llvm::SmallPtrSet<Operation *, 8> users = usersThroughViews(buffer);
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

/// The buffer a chain of views keeps the base pointer of (subviews,
/// reshapes, casts): a memref.alloc, an arena slice (memref.view) or a block
/// argument.
Value viewRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<memref::SubViewOp, memref::ExpandShapeOp,
             memref::CollapseShapeOp, memref::ReinterpretCastOp,
             memref::CastOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// `user`'s ancestor in `block`, or null.
Operation *inBlock(Operation *user, Block *block) {
  return block->findAncestorOpInBlock(*user);
}

/// A zero-inserted gradient folded into the backward data that reads it.
struct FoldedSpread {
  memref::CopyOp copy;
  linalg::FillOp fill;
  /// Whether the spread buffer has no other reader: its fill and copy are
  /// then erased after the call replaces `op` (the buffer stays allocated:
  /// the plan counted it).
  bool eraseSpread = false;
  /// The gradient is not readable at the call (freed after the copy in the
  /// plan, or written in between): the copy instead writes it densely into
  /// the first elements of the spread buffer, where the call reads it.
  bool viaSpreadPrefix = false;
};

/// The exporter writes the backward data of a strided convolution (and a
/// transposed convolution) as a stride-1 correlation with the flipped
/// kernel over a zero-inserted copy of the gradient (torch_export's
/// `place`: a buffer R filled with zero, the gradient S copied into
/// R[.., lo + o*s]), which matchContraction describes as a stride-1
/// backward data with padding (K-1)*d over R: s^2 times the multiply-adds
/// of the convolution for two spatial dimensions, most of them on zeros. When R is exactly that (the
/// fill and the copy are the only writes to R before `op`, R is read whole
/// in its own layout) and S is still live at `op` in the plan (a later use
/// in the block, or a function argument) and not written in between, the
/// call becomes the strided backward data of S itself:
///   out[p] = sum_r R[p + r*d] W[K-1-r],  R[lo' + o*s] = S[o]
///          = sum_{o, k: o*s + k*d - pad = p} S[o] W[k],  pad = (K-1)*d - lo'
/// (lo' = lo minus where the op's window of R starts), the backward data of
/// a convolution with stride s and padding pad whose output has S's size
/// (checked: O = (P + 2 pad - (K-1) d - 1) / s + 1). Nothing changes in the
/// plan: R stays allocated where it was; only the work on it goes.
///
/// When S is not readable at `op` (the plan frees it after the copy, so its
/// bytes may hold another buffer by then, or it is written in between) and
/// R has no other reader, the copy writes S densely, in row-major order,
/// into R's first elements (R holds at least as many) and the call reads it
/// there: the same call on the same values in the same layout when S is
/// row-major itself, so the results do not depend on the plan (which
/// decides S's last use) - before, such plans ran the stride-1 correlation
/// over R, other bits and s^2 the work.
std::optional<FoldedSpread> foldZeroInsertion(linalg::LinalgOp op,
                                              remat::MatchedContraction &m) {
  ContractionDesc &d = m.desc;
  if (d.kind != remat::lib::OpKind::ConvBackwardData)
    return std::nullopt;
  const int64_t nsp = d.spatialRank;
  for (int64_t j = 0; j < nsp; ++j)
    if (d.stride[j] != 1 || d.padBegin[j] != d.padEnd[j] ||
        d.padBegin[j] != (d.kernelSize[j] - 1) * d.dilation[j])
      return std::nullopt;
  // R: the operand through reshapes only (same row-major addresses).
  Value r = m.in0->get();
  while (Operation *def = r.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def))
      break;
    r = def->getOperand(0);
  }
  auto rType = dyn_cast<MemRefType>(r.getType());
  if (!rType || !rType.hasStaticShape() || !rType.getLayout().isIdentity() ||
      rType.getRank() != 2 + nsp)
    return std::nullopt;
  ArrayRef<int64_t> shape = rType.getShape();
  SmallVector<int64_t> rowMajor = computeSuffixProduct(shape);
  if (shape[0] != d.images || shape[1] != d.groups * d.outChannels ||
      (d.images > 1 && d.dstStrides[0] != rowMajor[0]) ||
      (shape[1] > 1 && d.dstStrides[1] != rowMajor[1]))
    return std::nullopt;
  // Where the op's window of R starts, per spatial dimension.
  SmallVector<int64_t> start(nsp, 0);
  int64_t rest = m.in0Offset;
  if (rest < 0)
    return std::nullopt;
  for (int64_t j = 0; j < nsp; ++j) {
    if (d.dstSize[j] > 1 && d.dstStrides[2 + j] != rowMajor[2 + j])
      return std::nullopt;
    start[j] = rest / rowMajor[2 + j];
    rest %= rowMajor[2 + j];
    if (start[j] + d.dstSize[j] > shape[2 + j])
      return std::nullopt;
  }
  if (rest != 0)
    return std::nullopt;

  // The writes to R before op: the copy into a strided subview of R, before
  // it the zero fill of R, nothing else (views aside).
  Block *block = op->getBlock();
  llvm::SmallPtrSet<Operation *, 8> rUsers = usersThroughViews(r);
  FoldedSpread f;
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (!rUsers.contains(prev) || isa<ViewLikeOpInterface>(prev))
      continue;
    if (!f.copy) {
      f.copy = dyn_cast<memref::CopyOp>(prev);
      if (!f.copy)
        return std::nullopt;
      continue;
    }
    f.fill = dyn_cast<linalg::FillOp>(prev);
    if (!f.fill || f.fill.getDpsInitOperand(0)->get() != r ||
        !isZero(f.fill.value()))
      return std::nullopt;
    break;
  }
  if (!f.copy || !f.fill)
    return std::nullopt;
  auto target = f.copy.getTarget().getDefiningOp<memref::SubViewOp>();
  Value s = f.copy.getSource();
  auto sType = dyn_cast<MemRefType>(s.getType());
  if (!target || target.getSource() != r || !sType ||
      !sType.hasStaticShape() ||
      target.getSourceType().getRank() != target.getType().getRank())
    return std::nullopt;
  ArrayRef<int64_t> lo = target.getStaticOffsets();
  ArrayRef<int64_t> sizes = target.getStaticSizes();
  ArrayRef<int64_t> steps = target.getStaticStrides();
  auto dynamic = [](ArrayRef<int64_t> values) {
    return llvm::any_of(values, ShapedType::isDynamic);
  };
  if (dynamic(lo) || dynamic(sizes) || dynamic(steps) ||
      lo[0] != 0 || lo[1] != 0 || sizes[0] != shape[0] ||lo[0] != 0 || lo[1] != 0 || sizes[0] != shape[0] ||
      sizes[1] != shape[1] || steps[0] != 1 || steps[1] != 1)
    return std::nullopt;
  SmallVector<int64_t> sStrides;
  int64_t sOffset;
  if (failed(sType.getStridesAndOffset(sStrides, sOffset)) ||
      llvm::any_of(sStrides, [](int64_t x) {
        return ShapedType::isDynamic(x) || x < 0;
      }))
    return std::nullopt;

  // S live at op in the plan, and not written between the copy and op.
  Value sRoot = viewRoot(s);
  bool liveAfter = isa<BlockArgument>(sRoot);
  bool writtenBetween = false;
  for (Operation *user : usersThroughViews(sRoot)) {
    Operation *at = inBlock(user, block);
    if (!at)
      continue;
    if (op->isBeforeInBlock(at))
      liveAfter = true;
    if (at == f.copy || at == op || isa<ViewLikeOpInterface>(at) ||
        !f.copy->isBeforeInBlock(at) || !at->isBeforeInBlock(op))
      continue;
    // Between the copy and op: only reads of S.
    auto reader = dyn_cast<linalg::LinalgOp>(at);
    if (!reader) {
      writtenBetween = true;
      continue;
    }
    for (OpOperand &init : reader.getDpsInitsMutable())
      if (viewRoot(init.get()) == sRoot)
        writtenBetween = true;
  }
  // R read by nothing else: its fill and copy go with op.
  f.eraseSpread = llvm::all_of(rUsers, [&](Operation *user) {
    if (user == f.fill || user == f.copy || user == target || user == op ||
        isa<memref::DeallocOp>(user))
      return true;
    // The reshapes op reads R through.
    return isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user) &&
           llvm::all_of(user->getUsers(),
                        [&](Operation *u) { return u == op.getOperation(); });
  });
  f.viaSpreadPrefix = !liveAfter || writtenBetween;
  // The prefix is written over R's zeros: nothing else may read them.
  if (f.viaSpreadPrefix && !f.eraseSpread)
    return std::nullopt;
  // S's strides as the call reads it: its own, or row-major in the prefix.
  if (f.viaSpreadPrefix)
    sStrides = computeSuffixProduct(sType.getShape());

  // The strided backward data, if cuDNN's and oneDNN's size rule holds.
  ContractionDesc folded = d;
  for (int64_t j = 0; j < nsp; ++j) {
    int64_t k = d.kernelSize[j], dil = d.dilation[j];
    int64_t loInWindow = lo[2 + j] - start[j];
    int64_t pad = (k - 1) * dil - loInWindow;
    int64_t o = sizes[2 + j], stride = steps[2 + j], p = d.srcSize[j];
    int64_t span = p + 2 * pad - (k - 1) * dil - 1;
    if (loInWindow < 0 || pad < 0 || stride < 1 || span < 0 ||
        span / stride + 1 != o)
      return std::nullopt;
    folded.dstSize[j] = o;
    folded.stride[j] = stride;
    folded.padBegin[j] = folded.padEnd[j] = pad;
    folded.dstStrides[2 + j] = sStrides[2 + j];
  }
  folded.dstStrides[0] = sStrides[0];
  folded.dstStrides[1] = sStrides[1];
  d = folded;
  // The call reads S, or the prefix at R's first element (R itself, whose
  // fill is the first write to it).
  m.in0 = f.viaSpreadPrefix ? f.fill.getDpsInitOperand(0)
                            : &f.copy.getSourceMutable();
  m.in0Offset = 0;
  return f;
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
    std::optional<FoldedSpread> spread;
    if (match) {
      spread = foldZeroInsertion(op, *match);
      if (match->writesWholeOutput)
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
                            << (spread ? spread->viaSpreadPrefix
                                             ? ", zero-inserted gradient folded "
                                               "(read densely from the spread "
                                               "buffer's prefix)"
                                             : ", zero-inserted gradient folded"
                                       : "")
                            << "\n");
    if (zeroFill)
      zeroFill.erase();
    op.erase();
    if (spread && spread->eraseSpread) {
      Value r = spread->fill.getDpsInitOperand(0)->get();
      Operation *target = spread->copy.getTarget().getDefiningOp();
      if (spread->viaSpreadPrefix) {
        // S into R's first elements, row-major.
        auto sType = cast<MemRefType>(spread->copy.getSource().getType());
        auto prefixType =
            MemRefType::get(sType.getShape(), sType.getElementType());
        builder.setInsertionPoint(spread->copy);
        Value prefix = memref::ReinterpretCastOp::create(
            builder, spread->copy.getLoc(), prefixType, r, /*offset=*/0,
            sType.getShape(), computeSuffixProduct(sType.getShape()));
        spread->copy.getTargetMutable().assign(prefix);
      } else {
        spread->copy.erase();
      }
      spread->fill.erase();
      if (target && target->use_empty())
        target->erase();
      // The reshapes the op read the spread through.
      for (Operation *user : llvm::make_early_inc_range(r.getUsers()))
        if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user) &&
            user->use_empty())
          user->erase();
    }
    return success();
  }
};

} // namespace
