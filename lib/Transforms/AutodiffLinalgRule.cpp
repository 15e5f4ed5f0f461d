//===- AutodiffLinalgRule.cpp - reverse mode of linalg structured ops ----===//
//
// The reverse-mode rule that the RematDifferentiableOpInterface models of
// every linalg structured op apply (AutodiffRules.cpp attaches them):
//  * linalg.generic, any maps and iterators: per differentiable input, one
//    generic over the same iteration domain that reads the result adjoints
//    through the outputs' maps and accumulates into the input's adjoint
//    through the input's own map — a map that drops dims (a broadcast)
//    makes those dims reductions, a forward reduction becomes a broadcast
//    read; non-permutation maps (convolution windows) become scatter-adds.
//    The scalar body is recomputed in that generic and differentiated in
//    reverse with the scalar rules (scalarAdjoint, AutodiffRules.cpp); a
//    body op whose rule needs only its result (its model's
//    adjointFromResults: tanh, exp, ReLU) reads the saved result instead of
//    being recomputed from inputs that need not be kept. Output combiners:
//    overwrite, add/sub/fma (sums, contractions), maximumf/minimumf/select
//    over the output (max/min reductions: the adjoint goes where the element
//    equals the final result — the argmax is recomputed from the saved
//    result). Values extracted in the body from a captured tensor (gathers:
//    embeddings) get a generic with extra parallel dims over the gathered
//    tensor, masked by the index equality.
//  * named linalg ops: through their generalized form (computed on a clone,
//    the forward op is kept as written).
//
//===----------------------------------------------------------------------===//

#include "AutodiffRules.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace remat;
using namespace remat::autodiff;

namespace {

/// Whether the rule of `op`, a body op, needs only its result
/// (RematDifferentiableOpInterface::adjointFromResults).
bool adjointFromResults(Operation *op) {
  auto rule = dyn_cast<RematDifferentiableOpInterface>(op);
  return rule && rule.adjointFromResults();
}

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

/// The rule of one linalg op, emitted through `ctx`.
class LinalgRule {
public:
  explicit LinalgRule(ReverseModeContext &ctx)
      : ctx(ctx), b(ctx.getBuilder()) {}

  LogicalResult differentiateLinalg(linalg::LinalgOp op);

private:
  ReverseModeContext &ctx;
  OpBuilder &b;

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
  /// A copy of `v` made again before `before` when `v` is a forward value
  /// padded from another (tensor.pad, or insert_slice into a constant fill);
  /// null otherwise.
  Value padAgain(Value v, Operation *before);
};

LogicalResult LinalgRule::analyseOutputs(linalg::GenericOp generic,
                                             Operation *forward,
                                             SmallVectorImpl<OutputRule> &rules) {
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  unsigned nIn = generic.getNumDpsInputs();
  for (unsigned j = 0, e = generic.getNumDpsInits(); j < e; ++j) {
    OutputRule rule;
    BlockArgument out = body.getArgument(nIn + j);
    Value y = yield.getOperand(j);
    bool seeded = bool(ctx.getAdjoint(forward->getResult(j)));
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

LogicalResult LinalgRule::emitLastTaken(linalg::GenericOp generic,
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

LogicalResult LinalgRule::emitAdjointGeneric(
    linalg::GenericOp generic, Operation *forward, ArrayRef<OutputRule> rules,
    std::optional<unsigned> inputIndex, tensor::ExtractOp gather,
    Value captured) {
  Location loc = forward->getLoc();
  MLIRContext *context = generic.getContext();
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
    accMap = AffineMap::get(nDims, 0, ArrayRef<AffineExpr>{}, context);
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
        results.push_back(getAffineDimExpr(index.getDim(), context));
        continue;
      }
      gatherDims.push_back({idx, nDims});
      results.push_back(getAffineDimExpr(nDims++, context));
    }
    accMap = AffineMap::get(nDims, 0, results, context);
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
    Value resultAdjoint = ctx.getAdjoint(res);
    if (!resultAdjoint || rule.kind == Combine::Keep)
      continue;
    AffineMap outMap = withDims(fwdMaps[nIn + j], nDims);
    Operation *last = rule.expr ? rule.expr.getDefiningOp() : nullptr;
    bool readResult = rule.kind == Combine::Overwrite && last &&
                      last->getBlock() == &fwdBody && adjointFromResults(last);
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
    ins.push_back(resultAdjoint);
    maps.push_back(outMap);
  }

  // The accumulator: the adjoint so far, or a fresh one. A map that is a
  // permutation of all dims writes each element once: no zero fill needed.
  Value acc;
  bool readAcc = true;
  Value existing = ctx.getAdjoint(target);
  if (existing && !scalarTarget) {
    acc = existing;
  } else if (accMap.isPermutation()) {
    acc = tensor::EmptyOp::create(b, loc, accType.getShape(), elemType);
    readAcc = false;
  } else {
    acc = ctx.zeros(accType, loc);
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
    ctx.accumulate(target, scalar, loc);
  } else {
    ctx.setAdjoint(target, result);
  }
  return success();
}

Value LinalgRule::padAgain(Value v, Operation *before) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != before->getBlock())
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

LogicalResult LinalgRule::differentiateGeneric(linalg::GenericOp generic,
                                                   Operation *forward) {
  SmallVector<OutputRule> rules;
  if (failed(analyseOutputs(generic, forward, rules)))
    return failure();
  for (auto [j, rule] : llvm::enumerate(rules))
    if (rule.kind == Combine::Last && ctx.getAdjoint(forward->getResult(j)) &&
        failed(emitLastTaken(generic, forward, j, rule)))
      return failure();
  unsigned nIn = generic.getNumDpsInputs();
  for (unsigned i = 0; i < nIn; ++i) {
    Value in = forward->getOperand(i);
    if (!ctx.needsAdjoint(in))
      continue;
    if (failed(emitAdjointGeneric(generic, forward, rules, i, nullptr)))
      return failure();
  }
  // Gathers from captured tensors (embeddings, picked elements).
  Block &body = generic.getRegion().front();
  for (Operation &op : body.without_terminator()) {
    auto gather = dyn_cast<tensor::ExtractOp>(&op);
    if (!gather || gather.getTensor().getParentBlock() == &body ||
        !ctx.needsAdjoint(gather.getTensor()))
      continue;
    if (failed(emitAdjointGeneric(generic, forward, rules, std::nullopt,
                                  gather)))
      return failure();
  }
  // Scalars computed outside the body and read in it.
  llvm::SetVector<Value> capturedValues;
  getUsedValuesDefinedAbove(generic.getRegion(), capturedValues);
  for (Value v : capturedValues) {
    if (isa<ShapedType>(v.getType()) || !ctx.needsAdjoint(v))
      continue;
    if (failed(emitAdjointGeneric(generic, forward, rules, std::nullopt,
                                  nullptr, v)))
      return failure();
  }
  // Initial values that the outputs accumulate onto.
  for (auto [j, rule] : llvm::enumerate(rules)) {
    Value init = forward->getOperand(nIn + j);
    Value res = forward->getResult(j);
    Value resultAdjoint = ctx.getAdjoint(res);
    if (!resultAdjoint || !ctx.needsAdjoint(init))
      continue;
    Location loc = forward->getLoc();
    switch (rule.kind) {
    case Combine::Overwrite:
      break;
    case Combine::Keep:
    case Combine::Add:
    case Combine::Sub: // R = init - sum(e): d init = dR as well.
    case Combine::Fma:
      ctx.accumulate(init, resultAdjoint, loc);
      break;
    case Combine::Last: {
      // d init = dR where no iteration took an element.
      auto type = cast<RankedTensorType>(res.getType());
      unsigned rank = type.getRank();
      AffineMap id = b.getMultiDimIdentityMap(rank);
      SmallVector<utils::IteratorType> iters(rank,
                                             utils::IteratorType::parallel);
      SmallVector<Value> ins{resultAdjoint, rule.last};
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
      ctx.accumulate(init, g.getResult(0), loc);
      break;
    }
    case Combine::Extremum: {
      // d init = dR where init is the extremum.
      auto type = cast<RankedTensorType>(res.getType());
      unsigned rank = type.getRank();
      AffineMap id = b.getMultiDimIdentityMap(rank);
      SmallVector<utils::IteratorType> iters(rank,
                                             utils::IteratorType::parallel);
      SmallVector<Value> ins{resultAdjoint, init, res};
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
      ctx.accumulate(init, g.getResult(0), loc);
      break;
    }
    }
  }
  return success();
}

LogicalResult LinalgRule::differentiateLinalg(linalg::LinalgOp op) {
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

} // namespace

LogicalResult remat::autodiff::differentiateLinalg(linalg::LinalgOp op,
                                                   ReverseModeContext &ctx) {
  return LinalgRule(ctx).differentiateLinalg(op);
}
