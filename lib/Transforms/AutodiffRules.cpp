//===- AutodiffRules.cpp - reverse-mode rules of upstream ops -------------===//
//
// The RematDifferentiableOpInterface models of the upstream ops a forward
// graph is made of, which remat-autodiff (Autodiff.cpp) asks for the
// backward of each op:
//  * every linalg structured op: the linalg rule (AutodiffLinalgRule.cpp);
//  * tensor ops: empty, extract_slice, insert_slice, collapse/expand_shape,
//    pad, concat, cast, extract;
//  * scalar arith/math ops outside bodies: add/sub/mul/div/neg, max/min,
//    select, extf/truncf, exp/exp2/expm1, log/log2/log10/log1p, tanh, sqrt,
//    rsqrt, powf, erf, absf, copysign, fma, sin, cos.
// The scalar rules themselves stay one function, scalarAdjoint: the models
// of the scalar ops call it on an op outside a body, and the linalg rule on
// the ops of a body it recomputes (which are not differentiated through
// their own models: inside a body, the rule works on scalars of a recomputed
// iteration, not on SSA values of the function).
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"
#include "remat/Transforms/ExternalModels.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace remat;
using namespace remat::autodiff;

//===----------------------------------------------------------------------===//
// Scalar rules: the reverse-mode derivative of one scalar arith/math op.
// Shared by linalg bodies (on the recomputed primal values) and by scalar
// ops outside bodies.
//===----------------------------------------------------------------------===//

bool remat::autodiff::scalarAdjoint(
    ScalarEmitter &e, Operation *op, ArrayRef<Value> x, Value r, Value g,
    SmallVectorImpl<std::pair<unsigned, Value>> &out, bool resultSaved) {
  using P = arith::CmpFPredicate;
  auto put = [&](unsigned i, Value v) { out.push_back({i, v}); };
  Type t = g.getType();
  if (isa<arith::AddFOp>(op)) {
    put(0, g);
    put(1, g);
  } else if (isa<arith::SubFOp>(op)) {
    put(0, g);
    put(1, e.neg(g));
  } else if (isa<arith::MulFOp>(op)) {
    put(0, e.mul(g, x[1]));
    put(1, e.mul(g, x[0]));
  } else if (isa<arith::DivFOp>(op)) {
    put(0, e.div(g, x[1]));
    put(1, e.neg(e.div(e.mul(g, r), x[1])));
  } else if (isa<arith::NegFOp>(op)) {
    put(0, e.neg(g));
  } else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                 arith::MinNumFOp>(op)) {
    // Ties go to the second operand, so that max(x, 0) has derivative 0 at
    // x = 0 as PyTorch's ReLU does.
    bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
    // With a constant second operand c, x > c exactly when max(x, c) > c.
    bool fromResult = resultSaved && matchPattern(x[1], m_Constant());
    Value first = e.cmp(isMax ? P::OGT : P::OLT, fromResult ? r : x[0], x[1]);
    Value zero = e.zeroLike(g);
    put(0, e.select(first, g, zero));
    put(1, e.select(first, zero, g));
  } else if (isa<arith::SelectOp>(op)) {
    Value zero = e.zeroLike(g);
    put(1, e.select(x[0], g, zero));
    put(2, e.select(x[0], zero, g));
  } else if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    Type to = x[0].getType();
    if (to == t)
      put(0, g);
    else if (isa<arith::ExtFOp>(op))
      put(0, arith::TruncFOp::create(e.b, e.loc, to, g));
    else
      put(0, arith::ExtFOp::create(e.b, e.loc, to, g));
  } else if (isa<math::ExpOp>(op)) {
    put(0, e.mul(g, r));
  } else if (isa<math::Exp2Op>(op)) {
    put(0, e.mul(e.mul(g, r), e.cst(t, std::log(2.0))));
  } else if (isa<math::ExpM1Op>(op)) {
    put(0, e.mul(g, e.add(r, e.cst(t, 1.0))));
  } else if (isa<math::LogOp>(op)) {
    put(0, e.div(g, x[0]));
  } else if (isa<math::Log2Op>(op)) {
    put(0, e.div(g, e.mul(x[0], e.cst(t, std::log(2.0)))));
  } else if (isa<math::Log10Op>(op)) {
    put(0, e.div(g, e.mul(x[0], e.cst(t, std::log(10.0)))));
  } else if (isa<math::Log1pOp>(op)) {
    put(0, e.div(g, e.add(x[0], e.cst(t, 1.0))));
  } else if (isa<math::TanhOp>(op)) {
    put(0, e.mul(g, e.sub(e.cst(t, 1.0), e.mul(r, r))));
  } else if (isa<math::SqrtOp>(op)) {
    put(0, e.div(e.mul(g, e.cst(t, 0.5)), r));
  } else if (isa<math::RsqrtOp>(op)) {
    put(0, e.div(e.mul(e.mul(g, e.cst(t, -0.5)), r), x[0]));
  } else if (isa<math::PowFOp>(op)) {
    Value ym1 = e.sub(x[1], e.cst(t, 1.0));
    put(0, e.mul(e.mul(g, x[1]), math::PowFOp::create(e.b, e.loc, x[0], ym1)));
    put(1, e.mul(e.mul(g, r), math::LogOp::create(e.b, e.loc, x[0])));
  } else if (isa<math::ErfOp>(op)) {
    Value sq = e.mul(x[0], x[0]);
    Value gauss = math::ExpOp::create(e.b, e.loc, e.neg(sq));
    put(0, e.mul(e.mul(g, e.cst(t, 2.0 / std::sqrt(M_PI))), gauss));
  } else if (isa<math::AbsFOp>(op)) {
    Value zero = e.zeroLike(g);
    Value pos = e.cmp(P::OGT, x[0], zero);
    Value negv = e.cmp(P::OLT, x[0], zero);
    put(0, e.select(pos, g, e.select(negv, e.neg(g), zero)));
  } else if (isa<math::CopySignOp>(op)) {
    Value one = e.cst(t, 1.0);
    Value sx = math::CopySignOp::create(e.b, e.loc, one, x[0]);
    Value sy = math::CopySignOp::create(e.b, e.loc, one, x[1]);
    put(0, e.mul(g, e.mul(sx, sy)));
  } else if (isa<math::FmaOp>(op)) {
    put(0, e.mul(g, x[1]));
    put(1, e.mul(g, x[0]));
    put(2, g);
  } else if (isa<math::SinOp>(op)) {
    put(0, e.mul(g, math::CosOp::create(e.b, e.loc, x[0])));
  } else if (isa<math::CosOp>(op)) {
    put(0, e.neg(e.mul(g, math::SinOp::create(e.b, e.loc, x[0]))));
  } else {
    return false;
  }
  return true;
}

bool remat::autodiff::hasFloatOperand(Operation *op) {
  return llvm::any_of(op->getOperandTypes(),
                      [](Type t) { return isa<FloatType>(t); });
}

namespace {

/// Whether the adjoint of `op` can be computed from its result (and
/// constants) alone: then the adjoint generic reads the saved result instead
/// of recomputing it from the op's inputs, which need not be kept (the
/// activations PyTorch's own backward saves: tanh, exp, ReLU outputs).
bool adjointFromResult(Operation *op) {
  if (isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::TanhOp,
          math::SqrtOp>(op))
    return true;
  return isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
             arith::MinNumFOp>(op) &&
         matchPattern(op->getOperand(1), m_Constant());
}

/// A scalar arith/math op outside a body: scalarAdjoint on its operands and
/// result. On tensors (an elementwise arith op on a tensor) it has no rule.
template <typename OpTy>
struct ScalarRule
    : RematDifferentiableOpInterface::ExternalModel<ScalarRule<OpTy>, OpTy> {
  bool adjointFromResults(Operation *op) const {
    return adjointFromResult(op);
  }

  LogicalResult buildAdjoints(Operation *op, ReverseModeContext &ctx) const {
    if (op->getNumResults() != 1 ||
        !isa<FloatType>(op->getResult(0).getType()) ||
        op->getNumRegions() != 0)
      return emitNoAdjointRule(op);
    ScalarEmitter em{ctx.getBuilder(), op->getLoc()};
    SmallVector<std::pair<unsigned, Value>> contributions;
    SmallVector<Value> operands(op->getOperands());
    if (!scalarAdjoint(em, op, operands, op->getResult(0),
                       ctx.getAdjoint(op->getResult(0)), contributions))
      return emitNoAdjointRule(op);
    for (auto [i, c] : contributions)
      if (ctx.needsAdjoint(op->getOperand(i)))
        ctx.accumulate(op->getOperand(i), c, op->getLoc());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Tensor rules
//===----------------------------------------------------------------------===//

/// The box [first, last] per dim that an insert_slice with static offsets,
/// sizes and strides writes; nothing when one of them is dynamic.
std::optional<SmallVector<std::pair<int64_t, int64_t>>>
writtenBox(tensor::InsertSliceOp insert) {
  SmallVector<std::pair<int64_t, int64_t>> box;
  for (auto [o, s, t] :
       llvm::zip(insert.getStaticOffsets(), insert.getStaticSizes(),
                 insert.getStaticStrides())) {
    if (ShapedType::isDynamic(o) || ShapedType::isDynamic(s) ||
        ShapedType::isDynamic(t))
      return std::nullopt;
    box.push_back({o, o + (s > 0 ? (s - 1) * t : -1)});
  }
  return box;
}

bool boxesDisjoint(ArrayRef<std::pair<int64_t, int64_t>> a,
                   ArrayRef<std::pair<int64_t, int64_t>> b) {
  for (auto [x, y] : llvm::zip(a, b))
    if (x.second < y.first || y.second < x.first)
      return true;
  return false;
}

/// Whether no adjoint below `insert`'s destination reads the box `insert`
/// overwrites: the destination is, down to a base without an adjoint, a
/// chain of insert_slices each used once, writing boxes disjoint from it.
bool insertedBoxUnread(tensor::InsertSliceOp insert,
                       const ReverseModeContext &ctx) {
  auto box = writtenBox(insert);
  if (!box)
    return false;
  Value dst = insert.getDest();
  while (ctx.needsAdjoint(dst)) {
    auto link = dst.getDefiningOp<tensor::InsertSliceOp>();
    if (!link || !dst.hasOneUse())
      return false;
    auto linkBox = writtenBox(link);
    if (!linkBox || !boxesDisjoint(*box, *linkBox))
      return false;
    dst = link.getDest();
  }
  return true;
}

/// tensor.empty reads nothing that carries a derivative.
LogicalResult adjointOf(tensor::EmptyOp, ReverseModeContext &) {
  return success();
}

LogicalResult adjointOf(tensor::ExtractSliceOp slice,
                        ReverseModeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = slice.getLoc();
  Value src = slice.getSource();
  if (!ctx.needsAdjoint(src))
    return success();
  Value c = tensor::InsertSliceOp::create(
      b, loc, ctx.getAdjoint(slice.getResult()), ctx.zeros(src.getType(), loc),
      slice.getMixedOffsets(), slice.getMixedSizes(), slice.getMixedStrides());
  ctx.accumulate(src, c, loc);
  return success();
}

LogicalResult adjointOf(tensor::InsertSliceOp insert,
                        ReverseModeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = insert.getLoc();
  Value g = ctx.getAdjoint(insert.getResult());
  Value src = insert.getSource(), dst = insert.getDest();
  if (ctx.needsAdjoint(src)) {
    Value c = tensor::ExtractSliceOp::create(
        b, loc, cast<RankedTensorType>(src.getType()), g,
        insert.getMixedOffsets(), insert.getMixedSizes(),
        insert.getMixedStrides());
    ctx.accumulate(src, c, loc);
  }
  if (ctx.needsAdjoint(dst)) {
    // The adjoint of the destination is g with the overwritten box zeroed.
    // In a chain that only assembles pieces (a concatenation: insert_slices
    // of disjoint boxes, each into the previous one alone, down to a base
    // that needs no adjoint), nothing below reads that box: g is passed on
    // as it is, without a zeroed copy per link.
    Value c = insertedBoxUnread(insert, ctx)
                  ? g
                  : tensor::InsertSliceOp::create(
                        b, loc, ctx.zeros(src.getType(), loc), g,
                        insert.getMixedOffsets(), insert.getMixedSizes(),
                        insert.getMixedStrides())
                        .getResult();
    ctx.accumulate(dst, c, loc);
  }
  return success();
}

LogicalResult adjointOf(tensor::CollapseShapeOp collapse,
                        ReverseModeContext &ctx) {
  Value src = collapse.getSrc();
  if (ctx.needsAdjoint(src))
    ctx.accumulate(src,
                   tensor::ExpandShapeOp::create(
                       ctx.getBuilder(), collapse.getLoc(), src.getType(),
                       ctx.getAdjoint(collapse.getResult()),
                       collapse.getReassociationIndices()),
                   collapse.getLoc());
  return success();
}

LogicalResult adjointOf(tensor::ExpandShapeOp expand,
                        ReverseModeContext &ctx) {
  Value src = expand.getSrc();
  if (ctx.needsAdjoint(src))
    ctx.accumulate(src,
                   tensor::CollapseShapeOp::create(
                       ctx.getBuilder(), expand.getLoc(), src.getType(),
                       ctx.getAdjoint(expand.getResult()),
                       expand.getReassociationIndices()),
                   expand.getLoc());
  return success();
}

LogicalResult adjointOf(tensor::PadOp pad, ReverseModeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = pad.getLoc();
  Value src = pad.getSource();
  if (ctx.needsAdjoint(pad.getConstantPaddingValue()))
    return pad->emitOpError() << "cannot be differentiated with respect to "
                                 "its padding value";
  if (!ctx.needsAdjoint(src))
    return success();
  auto srcType = cast<RankedTensorType>(src.getType());
  SmallVector<OpFoldResult> sizes, strides(srcType.getRank(),
                                           b.getIndexAttr(1));
  for (int64_t s : srcType.getShape())
    sizes.push_back(b.getIndexAttr(s));
  Value c = tensor::ExtractSliceOp::create(
      b, loc, srcType, ctx.getAdjoint(pad.getResult()), pad.getMixedLowPad(),
      sizes, strides);
  ctx.accumulate(src, c, loc);
  return success();
}

LogicalResult adjointOf(tensor::ConcatOp concat, ReverseModeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = concat.getLoc();
  Value g = ctx.getAdjoint(concat.getResult());
  int64_t dim = concat.getDim(), offset = 0;
  for (Value in : concat.getInputs()) {
    auto inType = cast<RankedTensorType>(in.getType());
    if (ctx.needsAdjoint(in)) {
      SmallVector<OpFoldResult> offsets(inType.getRank(), b.getIndexAttr(0)),
          sizes, strides(inType.getRank(), b.getIndexAttr(1));
      offsets[dim] = b.getIndexAttr(offset);
      for (int64_t s : inType.getShape())
        sizes.push_back(b.getIndexAttr(s));
      ctx.accumulate(in,
                     tensor::ExtractSliceOp::create(b, loc, inType, g, offsets,
                                                    sizes, strides),
                     loc);
    }
    offset += inType.getDimSize(dim);
  }
  return success();
}

LogicalResult adjointOf(tensor::CastOp castOp, ReverseModeContext &ctx) {
  Value src = castOp.getSource();
  if (ctx.needsAdjoint(src))
    ctx.accumulate(src,
                   tensor::CastOp::create(ctx.getBuilder(), castOp.getLoc(),
                                          src.getType(),
                                          ctx.getAdjoint(castOp.getResult())),
                   castOp.getLoc());
  return success();
}

LogicalResult adjointOf(tensor::ExtractOp extract, ReverseModeContext &ctx) {
  Location loc = extract.getLoc();
  Value src = extract.getTensor();
  if (!ctx.needsAdjoint(src))
    return success();
  Value c = tensor::InsertOp::create(
      ctx.getBuilder(), loc, ctx.getAdjoint(extract.getResult()),
      ctx.zeros(src.getType(), loc), extract.getIndices());
  ctx.accumulate(src, c, loc);
  return success();
}

/// A tensor op with a rule above.
template <typename OpTy>
struct TensorRule
    : RematDifferentiableOpInterface::ExternalModel<TensorRule<OpTy>, OpTy> {
  LogicalResult buildAdjoints(Operation *op, ReverseModeContext &ctx) const {
    return adjointOf(cast<OpTy>(op), ctx);
  }
};

/// Every linalg structured op (named ones through their generalized form).
template <typename OpTy>
struct StructuredRule
    : RematDifferentiableOpInterface::ExternalModel<StructuredRule<OpTy>, OpTy> {
  LogicalResult buildAdjoints(Operation *op, ReverseModeContext &ctx) const {
    return differentiateLinalg(cast<linalg::LinalgOp>(op), ctx);
  }
};

template <template <typename> class Model, typename... OpTys>
void attachAll(MLIRContext *ctx) {
  (OpTys::template attachInterface<Model<OpTys>>(*ctx), ...);
}

} // namespace

void remat::registerRematDifferentiableModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachAll<StructuredRule,
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
              >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attachAll<TensorRule, tensor::EmptyOp, tensor::ExtractSliceOp,
              tensor::InsertSliceOp, tensor::CollapseShapeOp,
              tensor::ExpandShapeOp, tensor::PadOp, tensor::ConcatOp,
              tensor::CastOp, tensor::ExtractOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachAll<ScalarRule, arith::AddFOp, arith::SubFOp, arith::MulFOp,
              arith::DivFOp, arith::NegFOp, arith::MaximumFOp,
              arith::MaxNumFOp, arith::MinimumFOp, arith::MinNumFOp,
              arith::SelectOp, arith::ExtFOp, arith::TruncFOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachAll<ScalarRule, math::ExpOp, math::Exp2Op, math::ExpM1Op,
              math::LogOp, math::Log2Op, math::Log10Op, math::Log1pOp,
              math::TanhOp, math::SqrtOp, math::RsqrtOp, math::PowFOp,
              math::ErfOp, math::AbsFOp, math::CopySignOp, math::FmaOp,
              math::SinOp, math::CosOp>(ctx);
  });
}
