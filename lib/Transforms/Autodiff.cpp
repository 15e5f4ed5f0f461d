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
// Rules:
//  * linalg.generic, any maps and iterators: per differentiable input, one
//    generic over the same iteration domain that reads the result adjoints
//    through the outputs' maps and accumulates into the input's adjoint
//    through the input's own map — a map that drops dims (a broadcast)
//    makes those dims reductions, a forward reduction becomes a broadcast
//    read; non-permutation maps (convolution windows) become scatter-adds.
//    The scalar body is recomputed in that generic and differentiated in
//    reverse. Output combiners: overwrite, add/sub/fma (sums, contractions),
//    maximumf/minimumf/select over the output (max/min reductions: the
//    adjoint goes where the element equals the final result — the argmax is
//    recomputed from the saved result). Values extracted in the body from a
//    captured tensor (gathers: embeddings) get a generic with extra parallel
//    dims over the gathered tensor, masked by the index equality.
//  * named linalg ops: through their generalized form (computed on a clone,
//    the forward op is kept as written).
//  * tensor ops: empty, extract_slice, insert_slice, collapse/expand_shape,
//    pad, concat, cast, extract; scalar arith/math ops outside bodies.
// Anything else that lies on a path from a parameter to the loss is a
// located error naming the op.
//
//===----------------------------------------------------------------------===//

#include "remat/Support/Debug.h"
#include "remat/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cmath>

namespace remat {
#define GEN_PASS_DEF_REMATAUTODIFFPASS
#include "remat/Transforms/Passes.h.inc"
} // namespace remat

using namespace mlir;

// -debug-only=remat-autodiff: every op whose adjoint is built, and the size of the backward.
#define DEBUG_TYPE "remat-autodiff"

namespace {


bool isDifferentiableValue(Value v) {
  Type t = v.getType();
  if (auto ranked = dyn_cast<RankedTensorType>(t))
    return isa<FloatType>(ranked.getElementType());
  return isa<FloatType>(t);
}

//===----------------------------------------------------------------------===//
// Scalar rules: the reverse-mode derivative of one scalar arith/math op.
// Shared by linalg bodies (on the recomputed primal values) and by scalar
// ops outside bodies.
//===----------------------------------------------------------------------===//

struct ScalarEmitter {
  OpBuilder &b;
  Location loc;

  Value cst(Type t, double v) {
    return arith::ConstantOp::create(b, loc, FloatAttr::get(t, v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value zeroLike(Value x) { return cst(x.getType(), 0.0); }
};

/// Contributions (operand index, adjoint) of the adjoint `g` of `op`'s only
/// result. `x` are the op's operands and `r` its result as seen where the
/// rule is emitted; `resultSaved` says that `r` is the saved forward result
/// rather than a recomputed one, so that rules that can be written with the
/// result alone (max/min against a constant: ReLU) do not need the operand.
/// Returns false when the op has no rule.
bool scalarAdjoint(ScalarEmitter &e, Operation *op, ArrayRef<Value> x, Value r,
                   Value g, SmallVectorImpl<std::pair<unsigned, Value>> &out,
                   bool resultSaved = false) {
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

/// The ops whose float results carry no derivative (integer and index
/// computations, comparisons) are recognised by their types: an op with no
/// float operand contributes nothing.
bool hasFloatOperand(Operation *op) {
  return llvm::any_of(op->getOperandTypes(),
                      [](Type t) { return isa<FloatType>(t); });
}

//===----------------------------------------------------------------------===//
// The differentiation of one function.
//===----------------------------------------------------------------------===//

/// How a linalg body produces output j from the output's previous value.
/// `Last`: a select of the element or the previous value on a condition
/// that does not read the previous values ("last valid position" pooling):
/// the result is the element of the last iteration, in loop order, where the
/// condition takes the element.
enum class Combine { Overwrite, Keep, Add, Sub, Fma, Extremum, Last };

struct OutputRule {
  Combine kind = Combine::Overwrite;
  Operation *combiner = nullptr; // skipped when the body is recomputed
  Value expr;                    // the combined element (Fma: unused)
  // Last: the select's condition (in the forward body), whether it takes the
  // element when true, and the linearized reduction position of the last
  // element taken per output element (-1: none, the initial value stays),
  // computed before the adjoint generics (emitLastTaken).
  Value cond;
  bool takeWhenTrue = true;
  Value last;
};

/// Whether `v`, a value of a linalg body, is computed from the body's output
/// arguments (the previous values of the outputs, arguments `nIn` and up).
bool readsPreviousValues(Value v, Block &body, unsigned nIn) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner() == &body && arg.getArgNumber() >= nIn)
        return true;
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (def->getBlock() != &body)
      continue;
    llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// Whether `cond` compares the element `e` with the previous value `out` by
/// an ordering predicate, possibly or'ed with a NaN test of `e` (PyTorch's
/// NaN-propagating max: take e if e > out or e is NaN). A select of `e` or
/// `out` on such a condition, either way round, keeps a running max or min,
/// so the final result is one of the elements equal to it: the Extremum rule
/// is right for it (ties aside). Any other condition that reads `out` is not
/// proven to be a max/min.
bool isOrderingOf(Value cond, Value e, Value out) {
  if (auto orOp = cond.getDefiningOp<arith::OrIOp>()) {
    for (unsigned k = 0; k < 2; ++k) {
      auto nan = orOp->getOperand(k).getDefiningOp<arith::CmpFOp>();
      if (nan && nan.getPredicate() == arith::CmpFPredicate::UNO &&
          nan.getLhs() == e && nan.getRhs() == e)
        return isOrderingOf(orOp->getOperand(1 - k), e, out);
    }
    return false;
  }
  auto cmp = cond.getDefiningOp<arith::CmpFOp>();
  if (!cmp)
    return false;
  using P = arith::CmpFPredicate;
  switch (cmp.getPredicate()) {
  case P::OGT:
  case P::OGE:
  case P::OLT:
  case P::OLE:
  case P::UGT:
  case P::UGE:
  case P::ULT:
  case P::ULE:
    break;
  default:
    return false;
  }
  return (cmp.getLhs() == e && cmp.getRhs() == out) ||
         (cmp.getLhs() == out && cmp.getRhs() == e);
}

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

class Differentiator {
public:
  Differentiator(func::FuncOp func) : func(func), b(func.getContext()) {}

  LogicalResult run(Value loss, ArrayRef<BlockArgument> params);
  /// After run: whether the loss depends on some parameter at all.
  bool lossDependsOnParameters() const { return lossUseful; }

private:
  func::FuncOp func;
  OpBuilder b;
  DenseMap<Value, Value> adjoints;
  DenseSet<Value> active, useful;
  /// Values that depend on a parameter in a form without derivative rules
  /// (bits, unranked tensors), with the op that first made such a value.
  DenseMap<Value, Operation *> opaque;
  Operation *returnOp = nullptr;
  bool lossUseful = false;

  // Emission helpers (at the builder's insertion point, before the return).
  Value zeros(Type type, Location loc);
  void accumulate(Value of, Value contribution, Location loc);
  Value addTensors(Value acc, Value c, Location loc);

  LogicalResult differentiate(Operation *op);
  LogicalResult differentiateLinalg(linalg::LinalgOp op);
  LogicalResult differentiateGeneric(linalg::GenericOp generic,
                                     Operation *forward);
  LogicalResult analyseOutputs(linalg::GenericOp generic, Operation *forward,
                               SmallVectorImpl<OutputRule> &rules);
  /// For a `Last` output: a generic over the forward's domain that recomputes
  /// the select's condition and keeps, per output element, the largest
  /// linearized position (in loop order) where the element is taken, -1
  /// where none is (the i64 tensor OutputRule::last).
  LogicalResult emitLastTaken(linalg::GenericOp generic, Operation *forward,
                              unsigned output, OutputRule &rule);
  /// One adjoint generic: the adjoint of input `inputIndex`, of the tensor
  /// that a tensor.extract `gather` in the body reads, or of a scalar
  /// `captured` from outside the body.
  LogicalResult emitAdjointGeneric(linalg::GenericOp generic,
                                   Operation *forward,
                                   ArrayRef<OutputRule> rules,
                                   std::optional<unsigned> inputIndex,
                                   tensor::ExtractOp gather,
                                   Value captured = nullptr);
  LogicalResult differentiateTensorOp(Operation *op);
  /// A copy of `v` made again before `before` when `v` is a forward value
  /// padded from another (tensor.pad, or insert_slice into a constant fill);
  /// null otherwise.
  Value padAgain(Value v, Operation *before);
  /// Whether no adjoint below `insert`'s destination reads the box `insert`
  /// overwrites: the destination is, down to a base without an adjoint, a
  /// chain of insert_slices each used once, writing boxes disjoint from it.
  bool insertedBoxUnread(tensor::InsertSliceOp insert);
};

bool Differentiator::insertedBoxUnread(tensor::InsertSliceOp insert) {
  auto box = writtenBox(insert);
  if (!box)
    return false;
  Value dst = insert.getDest();
  while (useful.count(dst)) {
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

Value Differentiator::zeros(Type type, Location loc) {
  auto ranked = cast<RankedTensorType>(type);
  Value empty = tensor::EmptyOp::create(b, loc, ranked.getShape(),
                                        ranked.getElementType());
  Value zero = arith::ConstantOp::create(
      b, loc, FloatAttr::get(ranked.getElementType(), 0.0));
  return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
      .getResult(0);
}

Value Differentiator::addTensors(Value acc, Value c, Location loc) {
  auto type = cast<RankedTensorType>(acc.getType());
  unsigned rank = type.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto add = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{c}, ValueRange{acc},
      ArrayRef<AffineMap>{id, id}, iters,
      [](OpBuilder &nb, Location l, ValueRange args) {
        Value s = arith::AddFOp::create(nb, l, args[1], args[0]);
        linalg::YieldOp::create(nb, l, s);
      });
  return add.getResult(0);
}

void Differentiator::accumulate(Value of, Value contribution, Location loc) {
  auto it = adjoints.find(of);
  if (it == adjoints.end()) {
    adjoints[of] = contribution;
    return;
  }
  if (isa<RankedTensorType>(of.getType()))
    it->second = addTensors(it->second, contribution, loc);
  else
    it->second = arith::AddFOp::create(b, loc, it->second, contribution);
}

LogicalResult Differentiator::analyseOutputs(linalg::GenericOp generic,
                                             Operation *forward,
                                             SmallVectorImpl<OutputRule> &rules) {
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  unsigned nIn = generic.getNumDpsInputs();
  for (unsigned j = 0, e = generic.getNumDpsInits(); j < e; ++j) {
    OutputRule rule;
    BlockArgument out = body.getArgument(nIn + j);
    Value y = yield.getOperand(j);
    bool seeded = adjoints.count(forward->getResult(j));
    if (out.use_empty()) {
      rule.kind = Combine::Overwrite;
      rule.expr = y;
      rules.push_back(rule);
      continue;
    }
    if (y == out) {
      rule.kind = Combine::Keep;
      rules.push_back(rule);
      continue;
    }
    Operation *c = y.getDefiningOp();
    auto fail = [&]() -> LogicalResult {
      if (!seeded) { // Only its own adjoint needs the rule.
        rule.kind = Combine::Keep;
        rule.combiner = nullptr;
        rules.push_back(rule);
        return success();
      }
      return forward->emitOpError()
             << "cannot be differentiated: output #" << j
             << " combines the element with its previous value in a way "
                "remat-autodiff does not know (known: overwrite, add, sub, "
                "fma, maximumf/minimumf, or a select of the element or the "
                "previous value on a comparison of the two or on a condition "
                "that does not read the previous value)";
    };
    if (!c || c->getBlock() != &body)
      return fail();
    rule.combiner = c;
    bool singleUse = out.hasOneUse();
    auto other = [&](unsigned a, unsigned bIdx) {
      return c->getOperand(a) == out ? c->getOperand(bIdx) : c->getOperand(a);
    };
    if (isa<arith::AddFOp>(c) && singleUse) {
      rule.kind = Combine::Add;
      rule.expr = other(0, 1);
    } else if (isa<arith::SubFOp>(c) && singleUse && c->getOperand(0) == out) {
      rule.kind = Combine::Sub;
      rule.expr = c->getOperand(1);
    } else if (isa<math::FmaOp>(c) && singleUse && c->getOperand(2) == out &&
               c->getOperand(0) != out && c->getOperand(1) != out) {
      rule.kind = Combine::Fma;
    } else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                   arith::MinNumFOp>(c) &&
               singleUse) {
      rule.kind = Combine::Extremum;
      rule.expr = other(0, 1);
    } else if (isa<arith::SelectOp>(c) &&
               (c->getOperand(1) == out) != (c->getOperand(2) == out)) {
      // A select of the element e or the previous value: a max/min when the
      // condition compares e with the previous value (select(cmp(e, out), e,
      // out), PyTorch's max pooling); the last position where the condition
      // takes e when the condition does not read any previous value ("last
      // valid position" pooling). Anything else is not proven right by
      // either rule: an error, never the Extremum rule on trust (which would
      // give the adjoint to every element equal to the result). Every other
      // use of the previous value must only feed the condition or values
      // without a derivative (the index of an argmax written alongside).
      rule.expr = c->getOperand(1) == out ? c->getOperand(2) : c->getOperand(1);
      Value cond = c->getOperand(0);
      if (readsPreviousValues(rule.expr, body, nIn)) {
        if (seeded)
          return fail();
        rule.kind = Combine::Keep;
        rule.combiner = nullptr;
        rules.push_back(rule);
        continue;
      }
      if (!readsPreviousValues(cond, body, nIn)) {
        rule.kind = Combine::Last;
        rule.cond = cond;
        rule.takeWhenTrue = c->getOperand(1) == rule.expr;
      } else if (isOrderingOf(cond, rule.expr, out)) {
        rule.kind = Combine::Extremum;
      } else if (seeded) {
        return forward->emitOpError()
               << "cannot be differentiated: output #" << j
               << " is a select of the element or its previous value whose "
                  "condition reads the previous value but is not a comparison "
                  "of the two (a max/min): remat-autodiff cannot tell which "
                  "element the result comes from";
      } else {
        rule.kind = Combine::Keep;
        rule.combiner = nullptr;
        rules.push_back(rule);
        continue;
      }
      SmallVector<Value> work{out};
      DenseSet<Operation *> seen;
      bool ok = true;
      while (!work.empty() && ok) {
        Value v = work.pop_back_val();
        for (Operation *user : v.getUsers()) {
          if (user == c || !seen.insert(user).second)
            continue;
          for (Value res : user->getResults()) {
            if (isa<FloatType>(res.getType()))
              ok = false;
            work.push_back(res);
          }
        }
      }
      if (!ok)
        return fail();
    } else {
      return fail();
    }
    rules.push_back(rule);
  }
  return success();
}

/// The position of an iteration among those that write one element through
/// `outMap` (a projected permutation): the dims `outMap` does not name,
/// linearized in loop order (the order in which the CPU and GPU lowerings
/// run a reduction: the loops nest in dim order), built with linalg.index
/// ops at `b`'s insertion point.
Value reductionPosition(OpBuilder &b, Location loc, AffineMap outMap,
                        ArrayRef<int64_t> loopRanges) {
  Type i64 = b.getI64Type();
  Value position = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  for (unsigned d = 0; d < loopRanges.size(); ++d) {
    if (outMap.isFunctionOfDim(d))
      continue;
    Value index = arith::IndexCastOp::create(
        b, loc, i64, linalg::IndexOp::create(b, loc, d));
    Value range =
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(loopRanges[d]));
    position = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, position, range), index);
  }
  return position;
}

/// Whether `d` appears as a plain dimension among `map`'s results.
bool hasPureDim(AffineMap map, unsigned d) {
  return llvm::any_of(map.getResults(), [&](AffineExpr e) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    return dim && dim.getPosition() == d;
  });
}

AffineMap withDims(AffineMap map, unsigned numDims) {
  return AffineMap::get(numDims, map.getNumSymbols(), map.getResults(),
                        map.getContext());
}

LogicalResult Differentiator::emitLastTaken(linalg::GenericOp generic,
                                            Operation *forward,
                                            unsigned output,
                                            OutputRule &rule) {
  Location loc = forward->getLoc();
  unsigned nIn = generic.getNumDpsInputs();
  AffineMap outMap = generic.getIndexingMapsArray()[nIn + output];
  SmallVector<int64_t> loopRanges = generic.getStaticLoopRanges();
  if (!outMap.isProjectedPermutation() ||
      llvm::any_of(loopRanges, ShapedType::isDynamic))
    return forward->emitOpError()
           << "cannot be differentiated: output #" << output
           << " keeps the element of the last iteration where a condition "
              "holds, which remat-autodiff recovers only through an output "
              "map that is a projected permutation over static loop ranges";
  auto resultType = cast<RankedTensorType>(forward->getResult(output).getType());
  Type i64 = b.getI64Type();
  auto lastType = RankedTensorType::get(resultType.getShape(), i64);
  Value none = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(-1));
  Value init =
      linalg::FillOp::create(
          b, loc, ValueRange{none},
          ValueRange{tensor::EmptyOp::create(b, loc, lastType.getShape(), i64)})
          .getResult(0);
  // The condition's ops, recomputed (it reads no previous value), and the
  // inputs they read: only those, so that the backward keeps no input the
  // condition does not need (plus, for a loop no kept operand spans, one
  // input that gives it its range).
  Block &fwdBody = generic.getRegion().front();
  llvm::SetVector<Operation *> slice;
  llvm::SmallBitVector read(nIn);
  SmallVector<Value> work{rule.cond};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &fwdBody && arg.getArgNumber() < nIn)
        read.set(arg.getArgNumber());
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != &fwdBody || !slice.insert(def))
      continue;
    llvm::append_range(work, def->getOperands());
  }
  SmallVector<AffineMap> fwdMaps = generic.getIndexingMapsArray();
  for (unsigned d = 0; d < loopRanges.size(); ++d) {
    bool covered = hasPureDim(outMap, d);
    for (unsigned i = 0; i < nIn && !covered; ++i)
      covered = read.test(i) && hasPureDim(fwdMaps[i], d);
    for (unsigned i = 0; i < nIn && !covered; ++i)
      if (hasPureDim(fwdMaps[i], d)) {
        read.set(i);
        covered = true;
      }
    // Only a window expression spans it (a convolution): keep every input,
    // as the forward's loop ranges came from all of them.
    if (!covered)
      read.set();
  }
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (unsigned i = 0; i < nIn; ++i)
    if (read.test(i)) {
      ins.push_back(generic.getDpsInputs()[i]);
      maps.push_back(fwdMaps[i]);
    }
  maps.push_back(outMap);
  auto last = linalg::GenericOp::create(
      b, loc, TypeRange{lastType}, ins, ValueRange{init}, maps,
      generic.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        IRMapping map;
        for (unsigned i = 0, k = 0; i < nIn; ++i)
          if (read.test(i))
            map.map(fwdBody.getArgument(i), args[k++]);
        for (Operation &op : fwdBody.without_terminator())
          if (slice.contains(&op))
            nb.clone(op, map);
        Value take = map.lookupOrDefault(rule.cond);
        if (!rule.takeWhenTrue)
          take = arith::XOrIOp::create(
              nb, l, take,
              arith::ConstantOp::create(nb, l, nb.getBoolAttr(true)));
        Value position = reductionPosition(nb, l, outMap, loopRanges);
        Value noneHere =
            arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(-1));
        Value candidate = arith::SelectOp::create(nb, l, take, position,
                                                  noneHere);
        // A max of positions: the same whatever order the lowering picks.
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::MaxSIOp::create(nb, l, args.back(), candidate)});
      });
  rule.last = last.getResult(0);
  return success();
}

LogicalResult Differentiator::emitAdjointGeneric(
    linalg::GenericOp generic, Operation *forward, ArrayRef<OutputRule> rules,
    std::optional<unsigned> inputIndex, tensor::ExtractOp gather,
    Value captured) {
  Location loc = forward->getLoc();
  MLIRContext *ctx = func.getContext();
  Block &fwdBody = generic.getRegion().front();
  unsigned nIn = generic.getNumDpsInputs();
  unsigned nLoops = generic.getNumLoops();
  SmallVector<AffineMap> fwdMaps = generic.getIndexingMapsArray();

  // The value whose adjoint this generic accumulates, its type and its map.
  Value target;
  AffineMap accMap;
  unsigned nDims = nLoops;
  SmallVector<std::pair<Value, unsigned>> gatherDims; // index value -> dim
  if (inputIndex) {
    target = forward->getOperand(*inputIndex);
    accMap = fwdMaps[*inputIndex];
  } else if (captured) {
    // A scalar read by every iteration: its adjoint sums over all of them.
    target = captured;
    accMap = AffineMap::get(nDims, 0, ArrayRef<AffineExpr>{}, ctx);
  } else {
    target = gather.getTensor();
    SmallVector<AffineExpr> results;
    DenseSet<unsigned> used;
    for (Value idx : gather.getIndices()) {
      // An index that is a loop index of a dimension not yet used addresses
      // the gathered tensor through that dimension; any other index gets a
      // dimension of its own, matched against the index in the body.
      Value base = idx;
      if (auto cast = base.getDefiningOp<arith::IndexCastOp>())
        base = cast.getIn();
      if (auto index = base.getDefiningOp<linalg::IndexOp>();
          index && base == idx && !used.count(index.getDim())) {
        used.insert(index.getDim());
        results.push_back(getAffineDimExpr(index.getDim(), ctx));
        continue;
      }
      gatherDims.push_back({idx, nDims});
      results.push_back(getAffineDimExpr(nDims++, ctx));
    }
    accMap = AffineMap::get(nDims, 0, results, ctx);
  }
  accMap = withDims(accMap, nDims);
  Type targetType = target.getType();
  auto accType = dyn_cast<RankedTensorType>(targetType);
  bool scalarTarget = !accType;
  if (scalarTarget)
    accType = RankedTensorType::get({}, targetType);
  Type elemType = accType.getElementType();

  // Operands: the forward inputs, then per seeded output its final value
  // (extremum rules) and its adjoint.
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (unsigned i = 0; i < nIn; ++i) {
    ins.push_back(generic.getDpsInputs()[i]);
    maps.push_back(withDims(fwdMaps[i], nDims));
  }
  SmallVector<int> resultArg(rules.size(), -1), adjointArg(rules.size(), -1),
      lastArg(rules.size(), -1);
  for (auto [j, rule] : llvm::enumerate(rules)) {
    Value res = forward->getResult(j);
    auto it = adjoints.find(res);
    if (it == adjoints.end() || rule.kind == Combine::Keep)
      continue;
    AffineMap outMap = withDims(fwdMaps[nIn + j], nDims);
    Operation *last = rule.expr ? rule.expr.getDefiningOp() : nullptr;
    bool readResult = rule.kind == Combine::Overwrite && last &&
                      last->getBlock() == &fwdBody && adjointFromResult(last);
    if (rule.kind == Combine::Last) {
      // The position of the element taken last, not the result.
      lastArg[j] = ins.size();
      ins.push_back(rule.last);
      maps.push_back(outMap);
    } else if (rule.kind == Combine::Extremum || readResult) {
      resultArg[j] = ins.size();
      ins.push_back(res);
      maps.push_back(outMap);
    }
    adjointArg[j] = ins.size();
    ins.push_back(it->second);
    maps.push_back(outMap);
  }

  // The accumulator: the adjoint so far, or a fresh one. A map that is a
  // permutation of all dims writes each element once: no zero fill needed.
  Value acc;
  bool readAcc = true;
  auto existing = adjoints.find(target);
  if (existing != adjoints.end() && !scalarTarget) {
    acc = existing->second;
  } else if (accMap.isPermutation()) {
    acc = tensor::EmptyOp::create(b, loc, accType.getShape(), elemType);
    readAcc = false;
  } else {
    acc = zeros(accType, loc);
  }
  maps.push_back(accMap);
  SmallVector<utils::IteratorType> iters;
  for (unsigned d = 0; d < nDims; ++d)
    iters.push_back(hasPureDim(accMap, d) ? utils::IteratorType::parallel
                                          : utils::IteratorType::reduction);

  auto adj = linalg::GenericOp::create(b, loc, TypeRange{accType}, ins,
                                       ValueRange{acc}, maps, iters);
  Block *block = new Block();
  adj.getRegion().push_back(block);
  for (Value v : ins)
    block->addArgument(getElementTypeOrSelf(v.getType()), loc);
  BlockArgument accArg = block->addArgument(elemType, loc);

  LogicalResult status = success();
  bool emitted = false;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(block);
    ScalarEmitter em{b, loc};
    // Recompute the forward body without the combiners.
    IRMapping map;
    for (unsigned i = 0; i < nIn; ++i)
      map.map(fwdBody.getArgument(i), block->getArgument(i));
    for (auto [j, rule] : llvm::enumerate(rules)) {
      // The previous output value only feeds combiners (and, for selects,
      // their conditions): the final value stands in for it.
      Type outType = fwdBody.getArgument(nIn + j).getType();
      Value stand =
          resultArg[j] >= 0
              ? Value(block->getArgument(resultArg[j]))
              : Value(arith::ConstantOp::create(
                    b, loc, cast<TypedAttr>(b.getZeroAttr(outType))));
      map.map(fwdBody.getArgument(nIn + j), stand);
    }
    DenseSet<Operation *> combiners;
    for (const OutputRule &rule : rules)
      if (rule.combiner)
        combiners.insert(rule.combiner);
    SmallVector<Operation *> cloned;
    for (Operation &op : fwdBody.without_terminator()) {
      if (combiners.count(&op))
        continue;
      cloned.push_back(b.clone(op, map));
    }
    Value targetInBody = inputIndex ? Value(block->getArgument(*inputIndex))
                         : captured ? captured
                                    : map.lookup(gather.getResult());

    // Results saved by the forward stand for their recomputation in the
    // rules of the ops that yield them.
    DenseMap<Value, Value> savedResult;
    for (auto [j, rule] : llvm::enumerate(rules))
      if (rule.kind == Combine::Overwrite && resultArg[j] >= 0)
        savedResult[map.lookupOrDefault(rule.expr)] =
            block->getArgument(resultArg[j]);
    // Values of the body that depend on the target. Integers that carry
    // the target's bits (an arith.bitcast of a float that depends on it, and
    // what is computed from them) are followed apart: a float computed from
    // them depends on the target in a way no rule describes, unless it is
    // the bitcast back of the same bits (the identity).
    DenseSet<Value> depends{targetInBody};
    DenseSet<Value> bits;
    for (Operation *op : cloned) {
      bool fromTarget = llvm::any_of(op->getOperands(),
                                     [&](Value v) { return depends.count(v); });
      bool fromBits = llvm::any_of(op->getOperands(),
                                   [&](Value v) { return bits.count(v); });
      if (!fromTarget && !fromBits)
        continue;
      for (Value r : op->getResults()) {
        if (isa<FloatType>(r.getType()))
          depends.insert(r);
        else if (fromBits || isa<arith::BitcastOp>(op))
          bits.insert(r);
      }
    }

    // Seeds from the result adjoints.
    DenseMap<Value, Value> bodyAdj;
    auto seed = [&](Value v, Value g) {
      if (!v || !depends.count(v))
        return;
      Value previous = bodyAdj.lookup(v);
      Value sum = previous ? em.add(previous, g) : g;
      bodyAdj[v] = sum;
    };
    for (auto [j, rule] : llvm::enumerate(rules)) {
      if (adjointArg[j] < 0)
        continue;
      Value g = block->getArgument(adjointArg[j]);
      switch (rule.kind) {
      case Combine::Overwrite:
      case Combine::Add:
        seed(map.lookupOrDefault(rule.expr), g);
        break;
      case Combine::Sub:
        seed(map.lookupOrDefault(rule.expr), em.neg(g));
        break;
      case Combine::Fma: {
        Value x = map.lookupOrDefault(rule.combiner->getOperand(0));
        Value y = map.lookupOrDefault(rule.combiner->getOperand(1));
        seed(x, em.mul(g, y));
        seed(y, em.mul(g, x));
        break;
      }
      case Combine::Extremum: {
        Value x = map.lookupOrDefault(rule.expr);
        Value hit = em.cmp(arith::CmpFPredicate::OEQ, x,
                           block->getArgument(resultArg[j]));
        seed(x, em.select(hit, g, em.zeroLike(g)));
        break;
      }
      case Combine::Last: {
        // The element of this iteration was the one kept exactly when the
        // condition takes it here and no later iteration took another.
        Value take = map.lookupOrDefault(rule.cond);
        if (!rule.takeWhenTrue)
          take = arith::XOrIOp::create(
              b, loc, take, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
        Value position = reductionPosition(
            b, loc, generic.getIndexingMapsArray()[nIn + j],
            generic.getStaticLoopRanges());
        Value isLast =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, position,
                                  block->getArgument(lastArg[j]));
        Value hit = arith::AndIOp::create(b, loc, take, isLast);
        Value x = map.lookupOrDefault(rule.expr);
        seed(x, em.select(hit, g, em.zeroLike(g)));
        break;
      }
      case Combine::Keep:
        break;
      }
    }
    // Reverse through the recomputed body.
    for (Operation *op : llvm::reverse(cloned)) {
      if (op->getNumResults() != 1)
        continue;
      auto it = bodyAdj.find(op->getResult(0));
      if (it == bodyAdj.end())
        continue;
      if (llvm::any_of(op->getOperands(),
                       [&](Value v) { return bits.count(v); })) {
        // bitcast(bitcast(x : f -> i) : i -> f) is x: the adjoint passes.
        auto back = dyn_cast<arith::BitcastOp>(op);
        auto there = back ? back.getIn().getDefiningOp<arith::BitcastOp>()
                          : arith::BitcastOp();
        if (there && there.getIn().getType() == back.getType()) {
          seed(there.getIn(), it->second);
          continue;
        }
        // A select whose condition alone was computed from the bits (a sign
        // test) has the usual rule; anything else has none.
        auto sel = dyn_cast<arith::SelectOp>(op);
        if (!sel || bits.count(sel.getTrueValue()) ||
            bits.count(sel.getFalseValue())) {
          status = forward->emitOpError()
                   << "cannot be differentiated: its body computes '"
                   << op->getName()
                   << "' from the bits of a value that depends on the "
                      "differentiated operand (reinterpreted by "
                      "'arith.bitcast'), which has no derivative "
                      "remat-autodiff knows (only a bitcast back to the same "
                      "type, the identity, has one)";
          break;
        }
      }
      if (!llvm::any_of(op->getOperands(),
                        [&](Value v) { return depends.count(v); }) ||
          !hasFloatOperand(op))
        continue;
      SmallVector<std::pair<unsigned, Value>> contributions;
      SmallVector<Value> operands(op->getOperands());
      Value saved = savedResult.lookup(op->getResult(0));
      if (!scalarAdjoint(em, op, operands, saved ? saved : op->getResult(0),
                         it->second, contributions, bool(saved))) {
        status = forward->emitOpError()
                 << "cannot be differentiated: its body computes '"
                 << op->getName() << "', which remat-autodiff has no rule for";
        break;
      }
      for (auto [i, c] : contributions)
        seed(op->getOperand(i), c);
    }
    Value c = bodyAdj.lookup(targetInBody);
    if (succeeded(status) && c) {
      if (!gatherDims.empty()) {
        Value all;
        for (auto [idx, d] : gatherDims) {
          Value loopIndex = linalg::IndexOp::create(b, loc, d);
          Value eq = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           map.lookupOrDefault(idx), loopIndex);
          all = all ? arith::AndIOp::create(b, loc, all, eq).getResult() : eq;
        }
        c = em.select(all, c, em.zeroLike(c));
      }
      if (readAcc)
        c = em.add(accArg, c);
      linalg::YieldOp::create(b, loc, c);
      emitted = true;
    }
  }
  if (failed(status) || !emitted) {
    // An error, or a structurally zero adjoint (the target reaches the
    // results only through comparisons): no generic at all. The unused
    // accumulator is removed by the final clean-up.
    adj->erase();
    return failed(status) ? failure() : success();
  }

  // Drop the recomputed ops that the adjoint does not need, then the
  // operands that the body no longer reads — unless an operand is the only
  // one that gives a loop its range.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*block)))
    if (&op != block->getTerminator() && isOpTriviallyDead(&op))
      op.erase();
  llvm::BitVector drop(block->getNumArguments());
  SmallVector<Value> keptIns;
  SmallVector<AffineMap> keptMaps;
  for (unsigned i = 0; i < ins.size(); ++i)
    if (block->getArgument(i).use_empty())
      drop.set(i);
  for (unsigned d = 0; d < nDims; ++d) {
    auto covers = [&](unsigned i) { return hasPureDim(maps[i], d); };
    bool covered = covers(ins.size());
    for (unsigned i = 0; i < ins.size() && !covered; ++i)
      covered = !drop.test(i) && covers(i);
    for (unsigned i = 0; i < ins.size() && !covered; ++i)
      if (covers(i)) {
        drop.reset(i);
        covered = true;
      }
  }
  for (unsigned i = 0; i < ins.size(); ++i)
    if (!drop.test(i)) {
      keptIns.push_back(ins[i]);
      keptMaps.push_back(maps[i]);
    }
  keptMaps.push_back(accMap);
  if (drop.any()) {
    auto pruned = linalg::GenericOp::create(b, loc, TypeRange{accType}, keptIns,
                                            ValueRange{acc}, keptMaps, iters);
    pruned.getRegion().takeBody(adj.getRegion());
    pruned.getRegion().front().eraseArguments(drop);
    adj->erase();
    adj = pruned;
  }
  // A padded copy that the adjoint reads is padded again right here rather
  // than kept from the forward: the backward then keeps the unpadded source,
  // which it usually keeps anyway (PyTorch's convolution and pooling
  // backward read their unpadded input the same way).
  for (OpOperand &operand : adj->getOpOperands()) {
    if (operand.getOperandNumber() >= adj.getNumDpsInputs())
      break;
    if (Value again = padAgain(operand.get(), adj))
      operand.set(again);
  }
  Value result = adj.getResult(0);
  if (scalarTarget) {
    Value scalar = tensor::ExtractOp::create(b, loc, result, ValueRange{});
    accumulate(target, scalar, loc);
  } else {
    adjoints[target] = result;
  }
  return success();
}

Value Differentiator::padAgain(Value v, Operation *before) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != &func.getBody().front())
    return nullptr;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(before);
  if (auto pad = dyn_cast<tensor::PadOp>(def)) {
    if (!pad.getConstantPaddingValue())
      return nullptr;
    return b.clone(*pad)->getResult(0);
  }
  // A reshape of a padded copy (the exporter's group dimension over a padded
  // or spread input) is padded and reshaped again.
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
    Value src = def->getOperand(0);
    Value again = padAgain(src, before);
    if (!again)
      return nullptr;
    IRMapping map;
    map.map(src, again);
    return b.clone(*def, map)->getResult(0);
  }
  auto insert = dyn_cast<tensor::InsertSliceOp>(def);
  if (!insert)
    return nullptr;
  auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_Constant()) ||
      !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return nullptr;
  Operation *empty = b.clone(*fill.getOutputs()[0].getDefiningOp());
  IRMapping map;
  map.map(fill.getOutputs()[0], empty->getResult(0));
  Operation *filled = b.clone(*fill, map);
  map.map(fill.getResult(0), filled->getResult(0));
  return b.clone(*insert, map)->getResult(0);
}

LogicalResult Differentiator::differentiateGeneric(linalg::GenericOp generic,
                                                   Operation *forward) {
  SmallVector<OutputRule> rules;
  if (failed(analyseOutputs(generic, forward, rules)))
    return failure();
  for (auto [j, rule] : llvm::enumerate(rules))
    if (rule.kind == Combine::Last && adjoints.count(forward->getResult(j)) &&
        failed(emitLastTaken(generic, forward, j, rule)))
      return failure();
  unsigned nIn = generic.getNumDpsInputs();
  for (unsigned i = 0; i < nIn; ++i) {
    Value in = forward->getOperand(i);
    if (!useful.count(in))
      continue;
    if (failed(emitAdjointGeneric(generic, forward, rules, i, nullptr)))
      return failure();
  }
  // Gathers from captured tensors (embeddings, picked elements).
  Block &body = generic.getRegion().front();
  for (Operation &op : body.without_terminator()) {
    auto gather = dyn_cast<tensor::ExtractOp>(&op);
    if (!gather || gather.getTensor().getParentBlock() == &body ||
        !useful.count(gather.getTensor()))
      continue;
    if (failed(emitAdjointGeneric(generic, forward, rules, std::nullopt,
                                  gather)))
      return failure();
  }
  // Scalars computed outside the body and read in it.
  llvm::SetVector<Value> capturedValues;
  getUsedValuesDefinedAbove(generic.getRegion(), capturedValues);
  for (Value v : capturedValues) {
    if (isa<ShapedType>(v.getType()) || !useful.count(v))
      continue;
    if (failed(emitAdjointGeneric(generic, forward, rules, std::nullopt,
                                  nullptr, v)))
      return failure();
  }
  // Initial values that the outputs accumulate onto.
  for (auto [j, rule] : llvm::enumerate(rules)) {
    Value init = forward->getOperand(nIn + j);
    Value res = forward->getResult(j);
    auto it = adjoints.find(res);
    if (it == adjoints.end() || !useful.count(init))
      continue;
    Location loc = forward->getLoc();
    switch (rule.kind) {
    case Combine::Overwrite:
      break;
    case Combine::Keep:
    case Combine::Add:
    case Combine::Sub: // R = init - sum(e): d init = dR as well.
    case Combine::Fma:
      accumulate(init, it->second, loc);
      break;
    case Combine::Last: {
      // d init = dR where no iteration took an element.
      auto type = cast<RankedTensorType>(res.getType());
      unsigned rank = type.getRank();
      AffineMap id = b.getMultiDimIdentityMap(rank);
      SmallVector<utils::IteratorType> iters(rank,
                                             utils::IteratorType::parallel);
      SmallVector<Value> ins{it->second, rule.last};
      SmallVector<AffineMap> maps(ins.size() + 1, id);
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      auto g = linalg::GenericOp::create(
          b, loc, TypeRange{type}, ins, ValueRange{empty}, maps, iters,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            ScalarEmitter em{nb, l};
            Value none = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::slt, args[1],
                arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(0)));
            linalg::YieldOp::create(
                nb, l, em.select(none, args[0], em.zeroLike(args[0])));
          });
      accumulate(init, g.getResult(0), loc);
      break;
    }
    case Combine::Extremum: {
      // d init = dR where init is the extremum.
      auto type = cast<RankedTensorType>(res.getType());
      unsigned rank = type.getRank();
      AffineMap id = b.getMultiDimIdentityMap(rank);
      SmallVector<utils::IteratorType> iters(rank,
                                             utils::IteratorType::parallel);
      SmallVector<Value> ins{it->second, init, res};
      SmallVector<AffineMap> maps(ins.size() + 1, id);
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      auto g = linalg::GenericOp::create(
          b, loc, TypeRange{type}, ins, ValueRange{empty}, maps, iters,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            ScalarEmitter em{nb, l};
            Value v = em.select(
                em.cmp(arith::CmpFPredicate::OEQ, args[1], args[2]), args[0],
                em.zeroLike(args[0]));
            linalg::YieldOp::create(nb, l, v);
          });
      accumulate(init, g.getResult(0), loc);
      break;
    }
    }
  }
  return success();
}

LogicalResult Differentiator::differentiateLinalg(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics())
    return op->emitOpError()
           << "cannot be differentiated: remat-autodiff works on tensors, "
              "not on buffers";
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    return differentiateGeneric(generic, op);
  // A named op: differentiate its generalized form, computed on a clone so
  // that the forward op stays as written.
  IRRewriter rewriter(op->getContext());
  rewriter.setInsertionPointAfter(op);
  auto clone = cast<linalg::LinalgOp>(rewriter.clone(*op));
  FailureOr<linalg::GenericOp> generic =
      linalg::generalizeNamedOp(rewriter, clone);
  if (failed(generic)) {
    clone->erase();
    return op->emitOpError()
           << "cannot be differentiated: it has no generalized form";
  }
  LogicalResult result = differentiateGeneric(*generic, op);
  (*generic)->erase();
  return result;
}

LogicalResult Differentiator::differentiateTensorOp(Operation *op) {
  Location loc = op->getLoc();
  auto adjointOf = [&](Value v) { return adjoints.lookup(v); };
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    Value src = slice.getSource();
    if (!useful.count(src))
      return success();
    Value c = tensor::InsertSliceOp::create(
        b, loc, adjointOf(slice.getResult()), zeros(src.getType(), loc),
        slice.getMixedOffsets(), slice.getMixedSizes(),
        slice.getMixedStrides());
    accumulate(src, c, loc);
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    Value g = adjointOf(insert.getResult());
    Value src = insert.getSource(), dst = insert.getDest();
    if (useful.count(src)) {
      Value c = tensor::ExtractSliceOp::create(
          b, loc, cast<RankedTensorType>(src.getType()), g,
          insert.getMixedOffsets(), insert.getMixedSizes(),
          insert.getMixedStrides());
      accumulate(src, c, loc);
    }
    if (useful.count(dst)) {
      // The adjoint of the destination is g with the overwritten box zeroed.
      // In a chain that only assembles pieces (a concatenation: insert_slices
      // of disjoint boxes, each into the previous one alone, down to a base
      // that needs no adjoint), nothing below reads that box: g is passed on
      // as it is, without a zeroed copy per link.
      Value c = insertedBoxUnread(insert)
                    ? g
                    : tensor::InsertSliceOp::create(
                          b, loc, zeros(src.getType(), loc), g,
                          insert.getMixedOffsets(), insert.getMixedSizes(),
                          insert.getMixedStrides())
                          .getResult();
      accumulate(dst, c, loc);
    }
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    Value src = collapse.getSrc();
    if (useful.count(src))
      accumulate(src,
                 tensor::ExpandShapeOp::create(
                     b, loc, src.getType(), adjointOf(collapse.getResult()),
                     collapse.getReassociationIndices()),
                 loc);
    return success();
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    Value src = expand.getSrc();
    if (useful.count(src))
      accumulate(src,
                 tensor::CollapseShapeOp::create(
                     b, loc, src.getType(), adjointOf(expand.getResult()),
                     expand.getReassociationIndices()),
                 loc);
    return success();
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    Value src = pad.getSource();
    if (useful.count(pad.getConstantPaddingValue()))
      return op->emitOpError() << "cannot be differentiated with respect to "
                                  "its padding value";
    if (!useful.count(src))
      return success();
    auto srcType = cast<RankedTensorType>(src.getType());
    SmallVector<OpFoldResult> sizes, strides(srcType.getRank(),
                                             b.getIndexAttr(1));
    for (int64_t s : srcType.getShape())
      sizes.push_back(b.getIndexAttr(s));
    Value c = tensor::ExtractSliceOp::create(
        b, loc, srcType, adjointOf(pad.getResult()), pad.getMixedLowPad(),
        sizes, strides);
    accumulate(src, c, loc);
    return success();
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    Value g = adjointOf(concat.getResult());
    int64_t dim = concat.getDim(), offset = 0;
    for (Value in : concat.getInputs()) {
      auto inType = cast<RankedTensorType>(in.getType());
      if (useful.count(in)) {
        SmallVector<OpFoldResult> offsets(inType.getRank(), b.getIndexAttr(0)),
            sizes, strides(inType.getRank(), b.getIndexAttr(1));
        offsets[dim] = b.getIndexAttr(offset);
        for (int64_t s : inType.getShape())
          sizes.push_back(b.getIndexAttr(s));
        accumulate(in,
                   tensor::ExtractSliceOp::create(b, loc, inType, g, offsets,
                                                  sizes, strides),
                   loc);
      }
      offset += inType.getDimSize(dim);
    }
    return success();
  }
  if (auto castOp = dyn_cast<tensor::CastOp>(op)) {
    Value src = castOp.getSource();
    if (useful.count(src))
      accumulate(src,
                 tensor::CastOp::create(b, loc, src.getType(),
                                        adjointOf(castOp.getResult())),
                 loc);
    return success();
  }
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    Value src = extract.getTensor();
    if (!useful.count(src))
      return success();
    Value c = tensor::InsertOp::create(b, loc, adjointOf(extract.getResult()),
                                       zeros(src.getType(), loc),
                                       extract.getIndices());
    accumulate(src, c, loc);
    return success();
  }
  return failure();
}

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
      if (useful.count(there.getIn()))
        accumulate(there.getIn(), adjoints.lookup(back.getResult()),
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
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return differentiateLinalg(linalgOp);
  if (isa<tensor::ExtractSliceOp, tensor::InsertSliceOp,
          tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::PadOp,
          tensor::ConcatOp, tensor::CastOp, tensor::ExtractOp>(op))
    return differentiateTensorOp(op);
  if (op->getNumResults() == 1 && isa<FloatType>(op->getResult(0).getType()) &&
      op->getNumRegions() == 0) {
    ScalarEmitter em{b, op->getLoc()};
    SmallVector<std::pair<unsigned, Value>> contributions;
    SmallVector<Value> operands(op->getOperands());
    if (scalarAdjoint(em, op, operands, op->getResult(0),
                      adjoints.lookup(op->getResult(0)), contributions)) {
      for (auto [i, c] : contributions)
        if (useful.count(op->getOperand(i)))
          accumulate(op->getOperand(i), c, op->getLoc());
      return success();
    }
  }
  if (isa<func::CallOp>(op))
    return op->emitOpError()
           << "cannot be differentiated: calls must be inlined first "
              "(remat-inline-calls, which the remat pipelines run before "
              "remat-autodiff)";
  return op->emitOpError()
         << "cannot be differentiated: remat-autodiff has no rule for '"
         << op->getName() << "' (it lies between a parameter and the loss)";
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
      if (isDifferentiableValue(r)) {
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
    useful.insert(loss);
  lossUseful = useful.count(loss);
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getResults(),
                      [&](Value r) { return useful.count(r); }))
      continue;
    for (Value v : inputsOf(op))
      if (active.count(v) || opaque.count(v))
        useful.insert(v);
  }

  // Static shapes: every adjoint has its value's type and is built from
  // tensor.empty of its shape.
  for (Operation *op : ops)
    for (OpResult r : op->getResults()) {
      auto shaped = dyn_cast<ShapedType>(r.getType());
      if (!useful.count(r) || opaque.count(r) || !shaped ||
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
  if (useful.count(loss))
    adjoints[loss] = seed;
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getResults(),
                      [&](Value r) { return adjoints.count(r); }))
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
    Value g = adjoints.lookup(p);
    results.push_back(g ? g : zeros(p.getType(), loc));
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
