//===- ContractionMatch.cpp - Recognise contractions by their maps --------===//
//
// See include/remat/Transforms/ContractionMatch.h.
//
//===----------------------------------------------------------------------===//

#include "remat/Transforms/ContractionMatch.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>

using namespace mlir;
using remat::lib::ContractionDesc;
using remat::lib::ElementType;
using remat::lib::OpKind;

namespace {

/// `sum_d coef[d] * i_d + constant`.
struct Linear {
  SmallVector<int64_t> coef;
  int64_t constant = 0;
  unsigned numDims() const {
    return llvm::count_if(coef, [](int64_t c) { return c != 0; });
  }
};

std::optional<Linear> linearize(AffineExpr expr, unsigned numLoops) {
  Linear l;
  l.coef.assign(numLoops, 0);
  std::function<bool(AffineExpr, int64_t)> add = [&](AffineExpr e,
                                                     int64_t scale) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      l.coef[dim.getPosition()] += scale;
      return true;
    }
    if (auto cst = dyn_cast<AffineConstantExpr>(e)) {
      l.constant += scale * cst.getValue();
      return true;
    }
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return false;
    if (e.getKind() == AffineExprKind::Add)
      return add(bin.getLHS(), scale) && add(bin.getRHS(), scale);
    if (e.getKind() == AffineExprKind::Mul) {
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
        return add(bin.getLHS(), scale * c.getValue());
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
        return add(bin.getRHS(), scale * c.getValue());
    }
    return false; // mod, floordiv, ceildiv, symbols
  };
  if (!add(expr, 1))
    return std::nullopt;
  return l;
}

/// Element strides of a statically strided buffer, or row-major strides of a
/// statically shaped tensor.
std::optional<SmallVector<int64_t>> elementStrides(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type)) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(memref.getStridesAndOffset(strides, offset)) ||
        llvm::any_of(strides, ShapedType::isDynamic))
      return std::nullopt;
    return strides;
  }
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> strides(tensor.getRank(), 1);
  for (int64_t i = tensor.getRank() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * tensor.getDimSize(i + 1);
  return strides;
}

/// One operand's accesses: its map as linear forms per result, and the
/// address coefficient of every loop (element units).
struct Access {
  OpOperand *operand = nullptr;
  SmallVector<Linear> results;
  SmallVector<int64_t> strides;
  SmallVector<int64_t> address;
  int64_t offset = 0;

  bool uses(unsigned loop) const {
    return llvm::any_of(results,
                        [&](const Linear &l) { return l.coef[loop] != 0; });
  }
};

std::optional<Access> analyzeAccess(linalg::LinalgOp op, OpOperand *operand,
                                    std::string &whyNot) {
  Access a;
  a.operand = operand;
  unsigned numLoops = op.getNumLoops();
  std::optional<SmallVector<int64_t>> strides =
      elementStrides(operand->get().getType());
  if (!strides) {
    whyNot = "an operand without static strides";
    return std::nullopt;
  }
  a.strides = *strides;
  a.address.assign(numLoops, 0);
  AffineMap map = op.getMatchingIndexingMap(operand);
  for (auto [t, expr] : llvm::enumerate(map.getResults())) {
    std::optional<Linear> l = linearize(expr, numLoops);
    if (!l) {
      whyNot = "an indexing map that is not linear";
      return std::nullopt;
    }
    for (unsigned d = 0; d < numLoops; ++d)
      a.address[d] += a.strides[t] * l->coef[d];
    a.offset += a.strides[t] * l->constant;
    a.results.push_back(std::move(*l));
  }
  return a;
}

/// The two factors of `out = out + a * b`: input positions, or nullopt.
std::optional<std::pair<unsigned, unsigned>>
matchMultiplyAccumulate(linalg::LinalgOp op, ElementType &type,
                        std::string &whyNot) {
  whyNot = "its body is not out + a * b";
  if (op.getNumDpsInits() != 1 || op.getNumDpsInputs() < 2)
    return std::nullopt;
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return std::nullopt;
  unsigned numInputs = op.getNumDpsInputs();
  BlockArgument out = body->getArgument(numInputs);
  Operation *def = yield.getOperand(0).getDefiningOp();
  Value a, b;
  size_t expectedOps = 0;
  if (auto fma = dyn_cast_or_null<math::FmaOp>(def)) {
    if (fma.getC() != out)
      return std::nullopt;
    a = fma.getA();
    b = fma.getB();
    expectedOps = 2;
  } else if (auto add = dyn_cast_or_null<arith::AddFOp>(def)) {
    Value other = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
    auto mul = other ? other.getDefiningOp<arith::MulFOp>() : nullptr;
    if (!mul)
      return std::nullopt;
    a = mul.getLhs();
    b = mul.getRhs();
    expectedOps = 3;
  } else {
    return std::nullopt;
  }
  if (body->getOperations().size() != expectedOps) {
    whyNot = "its body computes more than out + a * b";
    return std::nullopt;
  }
  auto argA = dyn_cast<BlockArgument>(a), argB = dyn_cast<BlockArgument>(b);
  if (!argA || !argB || argA.getOwner() != body || argB.getOwner() != body ||
      argA.getArgNumber() >= numInputs || argB.getArgNumber() >= numInputs ||
      argA == argB)
    return std::nullopt;
  Type element = out.getType();
  if (argA.getType() != element || argB.getType() != element) {
    whyNot = "its factors and result have different types";
    return std::nullopt;
  }
  if (element.isF32()) {
    type = ElementType::F32;
  } else if (element.isF64()) {
    type = ElementType::F64;
  } else {
    whyNot = "its element type is neither f32 nor f64";
    return std::nullopt;
  }
  return std::make_pair(argA.getArgNumber(), argB.getArgNumber());
}

/// Loops of one role (the batch of a matrix product, the input channels of
/// a convolution...), outermost first, merged into one library dimension:
/// every operand that indexes them must see strides that nest.
struct LoopClass {
  SmallVector<unsigned> loops;
  int64_t size = 1;
};

/// Orders `loops` outermost first by their address coefficient in the first
/// of `accesses` that uses them, dropping loops of range 1 (they move no
/// address), and checks that they nest in every access; false otherwise.
bool formClass(SmallVector<unsigned> loops, ArrayRef<int64_t> ranges,
               ArrayRef<const Access *> accesses, LoopClass &cls) {
  llvm::erase_if(loops, [&](unsigned l) { return ranges[l] == 1; });
  if (loops.empty())
    return true;
  const Access *ref = accesses.front();
  llvm::sort(loops, [&](unsigned x, unsigned y) {
    return std::abs(ref->address[x]) > std::abs(ref->address[y]);
  });
  for (const Access *a : accesses)
    for (size_t i = 0; i + 1 < loops.size(); ++i)
      if (a->address[loops[i]] !=
          ranges[loops[i + 1]] * a->address[loops[i + 1]])
        return false;
  cls.loops = std::move(loops);
  cls.size = 1;
  for (unsigned l : cls.loops)
    cls.size *= ranges[l];
  return true;
}

/// The address coefficient of the merged class in `a` (its innermost loop's).
int64_t classStride(const LoopClass &cls, const Access &a) {
  return cls.loops.empty() ? 0 : a.address[cls.loops.back()];
}

/// The stride of a channel dimension of G*C channels: the channels' own, or,
/// with one channel per group (a depthwise convolution, whose channel index
/// is the group's), the group's.
int64_t channelStride(const LoopClass &channels, const LoopClass &groups,
                      const Access &a) {
  return channels.loops.empty() ? classStride(groups, a)
                                : classStride(channels, a);
}

/// The expected address coefficients of an operand: each class's loops
/// with `stride` for the merged dimension.
struct Expectation {
  SmallVector<int64_t> coef;
  ArrayRef<int64_t> ranges;
  void add(const LoopClass &cls, int64_t stride) {
    int64_t s = stride;
    for (unsigned l : llvm::reverse(cls.loops)) {
      coef[l] += s;
      s *= ranges[l];
    }
  }
  void addLoop(unsigned loop, int64_t stride) { coef[loop] += stride; }
  /// True when every loop of range > 1 moves `a` as expected.
  bool matches(const Access &a) const {
    for (size_t l = 0; l < coef.size(); ++l)
      if (ranges[l] > 1 && coef[l] != a.address[l])
        return false;
    return true;
  }
};

/// An activation's layout [images, G*channels, spatial...] as the library
/// reads it (`strides[0]`, `strides[1]`; the spatial ones are set by the
/// caller) and what it means for the op's loops (`e`): the images' class,
/// the channels' class within a group, and the group times the group's
/// `numChannels`.
void describeActivation(int64_t *strides, const LoopClass &images,
                        const LoopClass &channels, const LoopClass &groups,
                        int64_t numChannels, const Access &a, Expectation &e) {
  strides[0] = classStride(images, a);
  strides[1] = channelStride(channels, groups, a);
  e.add(images, strides[0]);
  e.add(channels, strides[1]);
  e.add(groups, numChannels * strides[1]);
}

/// A weight's layout [G, OC, IC, spatial...] (`strides[0..2]`) and what it
/// means for the op's loops (`e`).
void describeWeights(int64_t *strides, const LoopClass &groups,
                     const LoopClass &outChannels, const LoopClass &inChannels,
                     const Access &a, Expectation &e) {
  strides[0] = classStride(groups, a);
  strides[1] = classStride(outChannels, a);
  strides[2] = classStride(inChannels, a);
  e.add(groups, strides[0]);
  e.add(outChannels, strides[1]);
  e.add(inChannels, strides[2]);
}

/// One spatial window of the image: index `cp * p + cr * r + constant` of
/// its dimension `dim`.
struct Window {
  unsigned dim, p, r;
  int64_t cp, cr;
};

/// The loops of a contraction by the operands they index: all three (the
/// batch, or a convolution's groups), x and the output (rows, images), y and
/// the output (columns, output channels), x and y (the reduction); `skip`
/// (a convolution's window loops) aside. False when another loop moves
/// (one that only one operand, or none, indexes).
bool classifyLoops(const Access &x, const Access &y, const Access &out,
                   ArrayRef<int64_t> ranges,
                   const llvm::SmallDenseSet<unsigned> &skip,
                   SmallVector<unsigned> &all, SmallVector<unsigned> &xo,
                   SmallVector<unsigned> &yo, SmallVector<unsigned> &xy) {
  for (unsigned l = 0; l < ranges.size(); ++l) {
    if (skip.contains(l))
      continue;
    bool inX = x.uses(l), inY = y.uses(l), inO = out.uses(l);
    if (inX && inY && inO)
      all.push_back(l);
    else if (inX && inO && !inY)
      xo.push_back(l);
    else if (inY && inO && !inX)
      yo.push_back(l);
    else if (inX && inY && !inO)
      xy.push_back(l);
    else if (ranges[l] != 1)
      return false;
  }
  return true;
}

/// Why the loops of a contraction have no roles, if they do not.
enum class RolesError { None, StrayLoop, NotNested };

/// classifyLoops, then each role's loops merged into one library dimension
/// (formClass): `all` the batch or groups, `xo`, `yo`, `xy` as there.
RolesError formRoles(const Access &x, const Access &y, const Access &out,
                     ArrayRef<int64_t> ranges,
                     const llvm::SmallDenseSet<unsigned> &skip, LoopClass &all,
                     LoopClass &xo, LoopClass &yo, LoopClass &xy) {
  SmallVector<unsigned> lAll, lXo, lYo, lXy;
  if (!classifyLoops(x, y, out, ranges, skip, lAll, lXo, lYo, lXy))
    return RolesError::StrayLoop;
  if (!formClass(lAll, ranges, {&x, &y, &out}, all) ||
      !formClass(lXo, ranges, {&x, &out}, xo) ||
      !formClass(lYo, ranges, {&y, &out}, yo) ||
      !formClass(lXy, ranges, {&x, &y}, xy))
    return RolesError::NotNested;
  return RolesError::None;
}

/// The library's output region as (stride, size) per dimension, in the
/// descriptor's sizes and strides.
SmallVector<std::pair<int64_t, int64_t>>
libraryOutputLayout(const ContractionDesc &d) {
  SmallVector<std::pair<int64_t, int64_t>> dims;
  if (d.kind == OpKind::Gemm) {
    dims = {{d.cStrides[0], d.batch}, {d.cStrides[1], d.m},
            {d.cStrides[2], d.n}};
    return dims;
  }
  const int64_t *strides = d.dstStrides, *spatial = d.dstSize;
  if (d.kind == OpKind::ConvBackwardWeights) {
    dims = {{d.weightStrides[0], d.groups},
            {d.weightStrides[1], d.outChannels},
            {d.weightStrides[2], d.inChannels}};
    for (int64_t j = 0; j < d.spatialRank; ++j)
      dims.push_back({d.weightStrides[3 + j], d.kernelSize[j]});
    return dims;
  }
  int64_t channels = d.groups * d.outChannels;
  if (d.kind == OpKind::ConvBackwardData) {
    strides = d.srcStrides;
    spatial = d.srcSize;
    channels = d.groups * d.inChannels;
  }
  dims = {{strides[0], d.images}, {strides[1], channels}};
  for (int64_t j = 0; j < d.spatialRank; ++j)
    dims.push_back({strides[2 + j], spatial[j]});
  return dims;
}

/// `m` when the library writes each element of its output region once (a
/// library sums into distinct elements; the op's own sum over several
/// points per element is the library's reduction), with whether that region
/// is the whole output operand (so that a zero fill before the call can go:
/// the call overwrites). The backward data of a windowed output writes only
/// the positions its windows reach, which may stop short of the buffer's end.
std::optional<remat::MatchedContraction>
finishMatch(remat::MatchedContraction m, const Access &out,
            std::string &whyNot) {
  SmallVector<std::pair<int64_t, int64_t>> dims =
      libraryOutputLayout(m.desc);
  llvm::erase_if(dims, [](auto dim) { return dim.second == 1; });
  llvm::sort(dims, [](auto a, auto b) {
    return std::abs(a.first) < std::abs(b.first);
  });
  // Distinct addresses: each stride is beyond the extent of the finer
  // dimensions.
  int64_t extent = 0, elements = 1;
  for (auto [stride, size] : dims) {
    if (std::abs(stride) <= extent) {
      whyNot = "an output element written from two library positions";
      return std::nullopt;
    }
    extent += std::abs(stride) * (size - 1);
    elements *= size;
  }
  auto shaped = cast<ShapedType>(out.operand->get().getType());
  m.writesWholeOutput = m.outOffset == 0 && shaped.hasStaticShape() &&
                        elements == shaped.getNumElements();
  return m;
}

} // namespace

std::optional<remat::MatchedContraction>
remat::matchContraction(linalg::LinalgOp op, std::string &whyNot) {
  ElementType type;
  auto factors = matchMultiplyAccumulate(op, type, whyNot);
  if (!factors)
    return std::nullopt;
  unsigned numLoops = op.getNumLoops();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic)) {
    whyNot = "dynamic loop ranges";
    return std::nullopt;
  }
  // The roles of the loops come from the maps alone, not from the declared
  // iterator types: the body is `out + a * b`, so the op adds the product of
  // every point of its iteration space into the output element that point
  // maps to, whichever loops are declared parallel (remat-autodiff's
  // transposes declare a loop of a compound output index, such as a weight
  // gradient's g * OC + oc, a reduction).
  std::optional<Access> first =
      analyzeAccess(op, op.getDpsInputOperand(factors->first), whyNot);
  std::optional<Access> second =
      analyzeAccess(op, op.getDpsInputOperand(factors->second), whyNot);
  std::optional<Access> out =
      analyzeAccess(op, op.getDpsInitOperand(0), whyNot);
  if (!first || !second || !out)
    return std::nullopt;

  // Windows: a dimension of one operand (the image) indexed
  // `cp * p + cr * r`, with p and r loops of the two other operands, one
  // each. Read from a factor: p a loop of the output that the other factor
  // does not index and r a loop of the other factor that the output does not
  // index (a forward correlation, or a weight gradient). Written to the
  // output: p a loop of the first factor only, r of the second only (the
  // backward data of a convolution in the forward convolution's loops).
  auto windowsOf = [&](const Access &image, const Access &a, const Access &b) {
    SmallVector<Window> windows;
    for (auto [t, l] : llvm::enumerate(image.results)) {
      if (l.numDims() != 2)
        continue;
      SmallVector<unsigned> loops;
      for (unsigned d = 0; d < numLoops; ++d)
        if (l.coef[d] != 0)
          loops.push_back(d);
      for (int swap = 0; swap < 2; ++swap) {
        unsigned p = loops[swap], r = loops[1 - swap];
        if (a.uses(p) && !b.uses(p) && b.uses(r) && !a.uses(r) &&
            l.coef[p] > 0 && l.coef[r] > 0)
          windows.push_back(
              {static_cast<unsigned>(t), p, r, l.coef[p], l.coef[r]});
      }
    }
    return windows;
  };
  SmallVector<Window> firstWindows = windowsOf(*first, *out, *second);
  SmallVector<Window> secondWindows = windowsOf(*second, *out, *first);
  if (!firstWindows.empty() && !secondWindows.empty()) {
    whyNot = "both factors are read through windows";
    return std::nullopt;
  }
  bool isConv = !firstWindows.empty() || !secondWindows.empty();
  // The output's windows, with the first factor as p's (the output
  // gradient) or with the second.
  SmallVector<Window> outWindowsFirst, outWindowsSecond;
  if (!isConv) {
    outWindowsFirst = windowsOf(*out, *first, *second);
    outWindowsSecond = windowsOf(*out, *second, *first);
  } else if (!windowsOf(*out, *first, *second).empty() ||
             !windowsOf(*out, *second, *first).empty()) {
    whyNot = "a factor and the output are both indexed through windows";
    return std::nullopt;
  }

  if (!isConv && outWindowsFirst.empty()) {
    // C[b, m, n] += A[b, m, k] * B[b, k, n], with the factors in the body's
    // order first, then the other way round (C^T = B^T A^T) where that
    // gives the output unit-stride columns: oneDNN's matrix product runs a
    // column-major output on its reference code (an attention gradient of
    // 8 x 64x64x64 took 30 ms there), and every library prefers rows.
    auto gemmOf = [&](const Access &x, const Access &y)
        -> std::optional<MatchedContraction> {
      LoopClass b, mm, nn, kk;
      switch (formRoles(x, y, *out, ranges, {}, b, mm, nn, kk)) {
      case RolesError::StrayLoop:
        whyNot = "a loop that is neither a batch, row, column nor "
                 "reduction loop of a contraction";
        return std::nullopt;
      case RolesError::NotNested:
        whyNot = "loops of one role whose strides do not nest";
        return std::nullopt;
      case RolesError::None:
        break;
      }
      // A product of one matrix dimension or none is an elementwise or
      // broadcast multiply-add: a library call per element or row (oneDNN
      // ran 32768 products of 1x1x1 on its reference code, 1 ms each) where
      // a vectorised loop takes microseconds.
      if ((mm.size > 1) + (nn.size > 1) + (kk.size > 1) < 2) {
        whyNot = "a product with fewer than two matrix dimensions (an "
                 "elementwise or broadcast multiply-add)";
        return std::nullopt;
      }
      MatchedContraction m;
      ContractionDesc &d = m.desc;
      d.type = type;
      d.accumulate = true;
      Expectation ex{SmallVector<int64_t>(numLoops, 0), ranges};
      Expectation ey = ex, eo = ex;
      d.kind = OpKind::Gemm;
      d.batch = b.size;
      d.m = mm.size;
      d.n = nn.size;
      d.k = kk.size;
      int64_t as[3] = {classStride(b, x), classStride(mm, x),
                       classStride(kk, x)};
      int64_t bs[3] = {classStride(b, y), classStride(kk, y),
                       classStride(nn, y)};
      int64_t cs[3] = {classStride(b, *out), classStride(mm, *out),
                       classStride(nn, *out)};
      std::copy(as, as + 3, d.aStrides);
      std::copy(bs, bs + 3, d.bStrides);
      std::copy(cs, cs + 3, d.cStrides);
      ex.add(b, as[0]), ex.add(mm, as[1]), ex.add(kk, as[2]);
      ey.add(b, bs[0]), ey.add(kk, bs[1]), ey.add(nn, bs[2]);
      eo.add(b, cs[0]), eo.add(mm, cs[1]), eo.add(nn, cs[2]);
      m.in0 = x.operand;
      m.in1 = y.operand;
      m.out = out->operand;
      m.in0Offset = x.offset;
      m.in1Offset = y.offset;
      m.outOffset = out->offset;
      // The proof: the library's indexing of each operand is the op's.
      if (ex.matches(x) && ey.matches(y) && eo.matches(*out))
        return finishMatch(m, *out, whyNot);
      whyNot = "operand strides the library's layouts cannot express";
      return std::nullopt;
    };
    std::optional<MatchedContraction> m = gemmOf(*first, *second);
    auto columnMajor = [](const MatchedContraction &c) {
      return c.desc.n > 1 && c.desc.m > 1 && c.desc.cStrides[2] != 1 &&
             c.desc.cStrides[1] == 1;
    };
    if (m && columnMajor(*m))
      if (std::optional<MatchedContraction> t = gemmOf(*second, *first))
        return t;
    return m;
  }

  // A convolution, in one or two orientations: x the image (or, with the
  // window on the output, the output gradient), y the weights.
  struct Orientation {
    const Access *x, *y;
    SmallVector<Window> windows;
    bool outputWindowed;
  };
  SmallVector<Orientation, 2> orientations;
  if (isConv) {
    bool firstIsImage = secondWindows.empty();
    orientations.push_back({firstIsImage ? &*first : &*second,
                            firstIsImage ? &*second : &*first,
                            firstIsImage ? firstWindows : secondWindows,
                            false});
  } else {
    // dX[n, g, c, o*s + k*d] += dY[n, g, f, o] * W[g, f, c, k] reads the
    // same either way round (dY's positions as taps of W's); the output
    // gradient is the factor that shares the output's outermost loop (its
    // images) first, the other reading where its layouts do not fit.
    auto outermostShared = [&](const Access &factor) {
      int64_t best = -1;
      for (unsigned l = 0; l < numLoops; ++l)
        if (ranges[l] > 1 && factor.uses(l) && out->uses(l))
          best = std::max(best, std::abs(out->address[l]));
      return best;
    };
    Orientation a{&*first, &*second, outWindowsFirst, true};
    Orientation b{&*second, &*first, outWindowsSecond, true};
    if (outermostShared(*second) > outermostShared(*first))
      std::swap(a, b);
    orientations.push_back(std::move(a));
    if (!b.windows.empty())
      orientations.push_back(std::move(b));
  }

  for (const Orientation &o : orientations) {
    const Access &x = *o.x, &y = *o.y;
    ArrayRef<Window> windows = o.windows;
    if (windows.size() > static_cast<size_t>(lib::kMaxSpatial)) {
      whyNot = "more than 3 spatial dimensions";
      return std::nullopt;
    }
    llvm::SmallDenseSet<unsigned> windowLoops;
    for (const Window &w : windows) {
      windowLoops.insert(w.p);
      windowLoops.insert(w.r);
    }
    LoopClass g, cxo, cxy, cyo;
    RolesError roles =
        formRoles(x, y, *out, ranges, windowLoops, g, cxo, cyo, cxy);
    if (roles != RolesError::None) {
      whyNot = roles == RolesError::StrayLoop
                   ? "a loop that is neither a batch, channel, window nor "
                     "reduction loop of a convolution"
                   : "loops of one role whose strides do not nest";
      continue;
    }

    // Readings of a window on a factor. The kernel is read flipped
    // (K - 1 - r) along every window or none.
    size_t flippedCount = llvm::count_if(
        windows, [&](const Window &w) { return y.address[w.r] < 0; });
    if (flippedCount != 0 && flippedCount != windows.size()) {
      whyNot = "a kernel flipped along some spatial dimensions only";
      return std::nullopt;
    }
    bool flipped = flippedCount != 0;
    // The image's batch is its outermost non-spatial loop: among the
    // output's loops for a forward correlation, among the reduced ones for
    // a weight gradient.
    auto outermost = [&](ArrayRef<unsigned> loops) {
      int64_t best = -1;
      for (unsigned l : loops)
        if (ranges[l] > 1)
          best = std::max(best, std::abs(x.address[l]));
      return best;
    };
    // Without a real batch loop among the output's, two readings compute
    // the same sum: a forward correlation of one image whose reduced loops
    // are its input channels, or a weight gradient with one input channel
    // per group (a depthwise convolution's) whose reduced loops are the
    // images. The forward reading first; the other where the forward one's
    // layouts do not fit the operands' strides.
    SmallVector<bool, 2> readings;
    if (flipped || o.outputWindowed)
      readings = {false};
    else if (outermost(cxo.loops) >= 0)
      readings = {outermost(cxy.loops) > outermost(cxo.loops)};
    else if (outermost(cxy.loops) >= 0)
      readings = {false, true};
    else
      readings = {false};

    for (bool weightGradient : readings) {
      MatchedContraction m;
      ContractionDesc &d = m.desc;
      d.type = type;
      d.accumulate = true;
      Expectation ex{SmallVector<int64_t>(numLoops, 0), ranges};
      Expectation ey = ex, eo = ex;
      d.spatialRank = windows.size();
      d.groups = g.size;
      m.in0 = x.operand;
      m.in1 = y.operand;
      m.out = out->operand;
      m.in0Offset = x.offset;
      m.in1Offset = y.offset;
      m.outOffset = out->offset;
      // The image's spatial strides are its dimensions' strides; its other
      // loops are the batch and the channels (the group merged with them).
      const Access &image = o.outputWindowed ? *out : x;
      Expectation &eImage = o.outputWindowed ? eo : ex;
      for (const Window &w : windows) {
        eImage.addLoop(w.p, w.cp * image.strides[w.dim]);
        eImage.addLoop(w.r, w.cr * image.strides[w.dim]);
      }
      if (o.outputWindowed) {
        // dX[n, g, c, o*s + k*d] += dY[n, g, f, o] * W[g, f, c, k]: the
        // backward data of a convolution with stride s, dilation d and no
        // padding whose diff_dst is x (channels f) and diff_src the output
        // (channels c); it writes the (O-1)*s + (K-1)*d + 1 positions the
        // window reaches.
        d.kind = OpKind::ConvBackwardData;
        d.images = cxo.size;
        d.outChannels = cxy.size;
        d.inChannels = cyo.size;
        bool reversed = false;
        for (auto [j, w] : llvm::enumerate(windows)) {
          reversed |= (ranges[w.p] > 1 && x.address[w.p] <= 0) ||
                      (ranges[w.r] > 1 && y.address[w.r] <= 0);
          d.dstSize[j] = ranges[w.p];
          d.kernelSize[j] = ranges[w.r];
          d.stride[j] = w.cp;
          d.dilation[j] = w.cr;
          d.srcSize[j] =
              (ranges[w.p] - 1) * w.cp + (ranges[w.r] - 1) * w.cr + 1;
          d.srcStrides[2 + j] = out->strides[w.dim];
          d.dstStrides[2 + j] = x.address[w.p];
          d.weightStrides[3 + j] = y.address[w.r];
          ex.addLoop(w.p, x.address[w.p]);
          ey.addLoop(w.r, y.address[w.r]);
        }
        if (reversed) {
          whyNot = "a backward data whose output gradient or kernel is read "
                   "reversed";
          continue;
        }
        describeActivation(d.dstStrides, cxo, cxy, g, d.outChannels, x, ex);
        describeWeights(d.weightStrides, g, cxy, cyo, y, ey);
        describeActivation(d.srcStrides, cxo, cyo, g, d.inChannels, *out, eo);
      } else if (!weightGradient && !flipped) {
        // dst[n, g, oc, o] += src[n, g, ic, o*s + k*d] * wei[g, oc, ic, k]
        d.kind = OpKind::ConvForward;
        d.images = cxo.size;
        d.inChannels = cxy.size;
        d.outChannels = cyo.size;
        for (auto [j, w] : llvm::enumerate(windows)) {
          d.dstSize[j] = ranges[w.p];
          d.kernelSize[j] = ranges[w.r];
          d.stride[j] = w.cp;
          d.dilation[j] = w.cr;
          d.srcSize[j] =
              (ranges[w.p] - 1) * w.cp + (ranges[w.r] - 1) * w.cr + 1;
          d.srcStrides[2 + j] = x.strides[w.dim];
          d.weightStrides[3 + j] = y.address[w.r];
          d.dstStrides[2 + j] = out->address[w.p];
          ey.addLoop(w.r, y.address[w.r]);
          eo.addLoop(w.p, out->address[w.p]);
        }
        describeActivation(d.srcStrides, cxo, cxy, g, d.inChannels, x, ex);
        describeWeights(d.weightStrides, g, cyo, cxy, y, ey);
        describeActivation(d.dstStrides, cxo, cyo, g, d.outChannels, *out, eo);
      } else if (flipped) {
        // out[n, g, f, p] += X[n, g, c, p + r*d] * W[g, c, f, K-1-r]: the
        // backward data of a stride-1 convolution with padding (K-1)*d whose
        // diff_dst is X (channels c) and diff_src the output (channels f).
        d.kind = OpKind::ConvBackwardData;
        d.images = cxo.size;
        d.outChannels = cxy.size;
        d.inChannels = cyo.size;
        for (auto [j, w] : llvm::enumerate(windows)) {
          if (w.cp != 1) {
            whyNot = "a flipped kernel with a stride";
            return std::nullopt;
          }
          int64_t k = ranges[w.r];
          d.srcSize[j] = ranges[w.p];
          d.kernelSize[j] = k;
          d.dstSize[j] = ranges[w.p] + (k - 1) * w.cr;
          d.stride[j] = 1;
          d.dilation[j] = w.cr;
          d.padBegin[j] = d.padEnd[j] = (k - 1) * w.cr;
          d.dstStrides[2 + j] = x.strides[w.dim];
          d.weightStrides[3 + j] = -y.address[w.r];
          d.srcStrides[2 + j] = out->address[w.p];
          // Tap 0 of the library's kernel is tap K-1 of the op's loop.
          m.in1Offset += y.address[w.r] * (k - 1);
          ey.addLoop(w.r, y.address[w.r]);
          eo.addLoop(w.p, out->address[w.p]);
        }
        describeActivation(d.dstStrides, cxo, cxy, g, d.outChannels, x, ex);
        describeWeights(d.weightStrides, g, cxy, cyo, y, ey);
        describeActivation(d.srcStrides, cxo, cyo, g, d.inChannels, *out, eo);
      } else {
        // dw[g, oc, ic, k] += src[n, g, ic, o*s + k*d] * dy[n, g, oc, o]: the
        // window reads the kernel tap (an output loop) times the dilation and
        // the output position (reduced) times the stride.
        d.kind = OpKind::ConvBackwardWeights;
        d.images = cxy.size;
        d.inChannels = cxo.size;
        d.outChannels = cyo.size;
        for (auto [j, w] : llvm::enumerate(windows)) {
          if (y.address[w.r] <= 0) {
            whyNot = "a weight gradient whose output gradient is read reversed";
            return std::nullopt;
          }
          d.kernelSize[j] = ranges[w.p];
          d.dstSize[j] = ranges[w.r];
          d.stride[j] = w.cr;
          d.dilation[j] = w.cp;
          d.srcSize[j] =
              (ranges[w.r] - 1) * w.cr + (ranges[w.p] - 1) * w.cp + 1;
          d.srcStrides[2 + j] = x.strides[w.dim];
          d.dstStrides[2 + j] = y.address[w.r];
          d.weightStrides[3 + j] = out->address[w.p];
          ey.addLoop(w.r, y.address[w.r]);
          eo.addLoop(w.p, out->address[w.p]);
        }
        describeActivation(d.srcStrides, cxy, cxo, g, d.inChannels, x, ex);
        describeActivation(d.dstStrides, cxy, cyo, g, d.outChannels, y, ey);
        describeWeights(d.weightStrides, g, cyo, cxo, *out, eo);
      }
      // The proof: the library's indexing of each operand is the op's.
      if (ex.matches(x) && ey.matches(y) && eo.matches(*out))
        return finishMatch(m, *out, whyNot);
      whyNot = "operand strides the library's layouts cannot express (e.g. "
               "groups whose channels are not contiguous)";
    }
  }
  return std::nullopt;
}
std::optional<llvm::SmallVector<int64_t>>
remat::loopAddressCoefficients(linalg::LinalgOp op, OpOperand *operand) {
  std::string whyNot;
  std::optional<Access> access = analyzeAccess(op, operand, whyNot);
  if (!access)
    return std::nullopt;
  return access->address;
}
