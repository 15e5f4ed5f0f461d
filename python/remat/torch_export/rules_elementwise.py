"""Translation rules: pointwise ops (arithmetic, unary math, activations
and their backwards, where / masked_fill, comparisons, logical ops)."""

import math

from .errors import Unsupported
from .ir import FLOAT_TYPES
from .translate import RULES, aten_name, float_only, pointwise, result_dtype, rule


# -- pointwise ------------------------------------------------------------------


@rule("aten.add.Tensor", "aten.add.Scalar")
def _add(tr, node, a, b, alpha=1):
    """a + alpha * b."""
    if alpha == 1:
        return pointwise(tr, [a, b], lambda bb, x, y: bb.add(x, y))
    return pointwise(tr, [a, b, alpha], lambda bb, x, y, k: bb.add(x, bb.mul(k, y)))


@rule("aten.sub.Tensor", "aten.sub.Scalar")
def _sub(tr, node, a, b, alpha=1):
    """a - alpha * b."""
    if alpha == 1:
        return pointwise(tr, [a, b], lambda bb, x, y: bb.sub(x, y))
    return pointwise(tr, [a, b, alpha], lambda bb, x, y, k: bb.sub(x, bb.mul(k, y)))


@rule("aten.rsub.Scalar", "aten.rsub.Tensor")
def _rsub(tr, node, a, b, alpha=1):
    """b - alpha * a."""
    return _sub(tr, node, b, a, alpha)


@rule("aten.mul.Tensor", "aten.mul.Scalar")
def _mul(tr, node, a, b):
    return pointwise(tr, [a, b], lambda bb, x, y: bb.mul(x, y))


@rule("aten.div.Tensor", "aten.div.Scalar")
def _div(tr, node, a, b):
    """True division (integers are promoted to f32)."""
    operands = [a, b]
    dtype = result_dtype(operands)
    dtype = dtype if dtype in FLOAT_TYPES else "f32"
    return pointwise(tr, operands, lambda bb, x, y: bb.divf(x, y), compute_dtype=dtype)


def _unary(mathfn):
    def translate(tr, node, x):
        float_only(x)
        return pointwise(tr, [x], mathfn)
    return translate


RULES.update({
    "aten.neg.default": _unary(lambda b, x: b.negf(x)),
    "aten.reciprocal.default": _unary(lambda b, x: b.divf(b.cst(1.0, b.types[x]), x)),
    "aten.sqrt.default": _unary(lambda b, x: b.math("sqrt", x)),
    "aten.rsqrt.default": _unary(lambda b, x: b.math("rsqrt", x)),
    "aten.exp.default": _unary(lambda b, x: b.math("exp", x)),
    "aten.log.default": _unary(lambda b, x: b.math("log", x)),
    "aten.tanh.default": _unary(lambda b, x: b.math("tanh", x)),
    "aten.erf.default": _unary(lambda b, x: _erf(b, x)),
    "aten.abs.default": _unary(lambda b, x: b.math("absf", x)),
    "aten.relu.default": _unary(lambda b, x: b.maxf(x, b.cst(0.0, b.types[x]))),
    "aten.sigmoid.default": _unary(lambda b, x: _sigmoid(b, x)),
    "aten.silu.default": _unary(lambda b, x: b.mulf(x, _sigmoid(b, x))),
    "aten.hardsigmoid.default": _unary(lambda b, x: _hardsigmoid(b, x)),
    "aten.hardswish.default": _unary(lambda b, x: b.mulf(x, _hardsigmoid(b, x))),
})


def _sigmoid(b, x):
    """1 / (1 + exp(-x))."""
    one = b.cst(1.0, b.types[x])
    return b.divf(one, b.addf(one, b.math("exp", b.negf(x))))


def _hardsigmoid(b, x):
    """min(max(x + 3, 0), 6) / 6."""
    t = b.types[x]
    r = b.minf(b.maxf(b.addf(x, b.cst(3.0, t)), b.cst(0.0, t)), b.cst(6.0, t))
    return b.divf(r, b.cst(6.0, t))


@rule("aten.pow.Tensor_Scalar")
def _pow(tr, node, x, exponent):
    """x ** e, with ATen's special cases (x*x for 2, sqrt for 0.5, ...)."""
    float_only(x)
    special = {
        2: lambda b, v: b.mulf(v, v),
        3: lambda b, v: b.mulf(b.mulf(v, v), v),
        0.5: lambda b, v: b.math("sqrt", v),
        -0.5: lambda b, v: b.math("rsqrt", v),
        -1: lambda b, v: b.divf(b.cst(1.0, b.types[v]), v),
        -2: lambda b, v: b.divf(b.cst(1.0, b.types[v]), b.mulf(v, v)),
        1: lambda b, v: v,
    }
    if exponent in special:
        return pointwise(tr, [x], special[exponent])
    return pointwise(tr, [x, float(exponent)], lambda b, v, e: b.math("powf", v, e))


@rule("aten.hardtanh.default")
def _hardtanh(tr, node, x, min_val=-1.0, max_val=1.0):
    """min(max(x, min_val), max_val)."""
    return pointwise(tr, [x, float(min_val), float(max_val)],
                     lambda b, v, lo, hi: b.minf(b.maxf(v, lo), hi))


@rule("aten.clamp.default", "aten.clamp_min.default", "aten.clamp_max.default")
def _clamp(tr, node, x, min=None, max=None):
    if aten_name(node.target) == "aten.clamp_max.default":
        min, max = None, min
    float_only(x)

    def fn(b, v):
        if min is not None:
            v = b.maxf(v, b.cst(float(min), b.types[v]))
        if max is not None:
            v = b.minf(v, b.cst(float(max), b.types[v]))
        return v
    return pointwise(tr, [x], fn)


@rule("aten.leaky_relu.default")
def _leaky_relu(tr, node, x, negative_slope=0.01):
    """x > 0 ? x : x * slope."""
    return pointwise(tr, [x, float(negative_slope)], lambda b, v, k: b.select(
        b.cmpf("ogt", v, b.cst(0.0, b.types[v])), v, b.mulf(v, k)))


def _erf(b, x):
    """erf as PyTorch's vectorized CPU kernel computes it (Vectorized<float>
    ::erf, Abramowitz & Stegun 7.1.26, error below 1.5e-7):
      t = 1 / (p |x| + 1), r = (((p5 t + p4) t + p3) t + p2) t + p1,
      erf(x) = sign(x) (1 - exp(-x^2) t r), with fused multiply-adds.
    (math.erf has no CPU lowering in this pipeline.)"""
    t_ = b.types[x]
    c = lambda v: b.cst(v, t_)
    t = b.divf(c(1.0), b.fma(c(0.3275911), b.math("absf", x), c(1.0)))
    r = c(1.061405429)
    for k in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        r = b.fma(r, t, c(k))
    e = b.math("exp", b.negf(b.mulf(x, x)))
    y = b.fma(b.mulf(b.negf(e), t), r, c(1.0))
    return b.math("copysign", y, x)


GELU_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5   # sqrt(2 / pi)
GELU_KAPPA = 0.044715
GELU_PDF = (2.0 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5   # 1 / sqrt(2 pi)


@rule("aten.gelu.default")
def _gelu(tr, node, x, approximate="none"):
    """ATen GeluKernel: x * 0.5 * (1 + erf(x / sqrt(2))), or with
    approximate='tanh' 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))."""
    def fn(b, v):
        c = lambda k: b.cst(k, b.types[v])
        if approximate == "tanh":
            inner = b.mulf(c(GELU_BETA), b.addf(v, b.mulf(c(GELU_KAPPA), b.mulf(b.mulf(v, v), v))))
            return b.mulf(b.mulf(c(0.5), v), b.addf(c(1.0), b.math("tanh", inner)))
        cdf = b.addf(c(1.0), _erf(b, b.mulf(v, c(math.sqrt(0.5)))))
        return b.mulf(b.mulf(v, c(0.5)), cdf)
    return pointwise(tr, [x], fn)


@rule("aten.gelu_backward.default")
def _gelu_backward(tr, node, grad, x, approximate="none"):
    """ATen GeluBackwardKernel. Exact: dy * (cdf + x * pdf) with
    cdf = 0.5 (1 + erf(x / sqrt 2)), pdf = exp(x^2 * -0.5) / sqrt(2 pi).
    Tanh: dy * (0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2)),
    t = tanh(beta (x + kappa x^3))."""
    def fn(b, g, v):
        c = lambda k: b.cst(k, b.types[v])
        if approximate == "tanh":
            x_sq = b.mulf(v, v)
            inner = b.mulf(c(GELU_BETA), b.addf(v, b.mulf(c(GELU_KAPPA), b.mulf(x_sq, v))))
            t = b.math("tanh", inner)
            left_d = b.mulf(c(0.5), b.addf(c(1.0), t))
            inner_d = b.mulf(c(GELU_BETA), b.addf(c(1.0), b.mulf(c(3 * GELU_KAPPA), x_sq)))
            right_d = b.mulf(b.mulf(b.mulf(c(0.5), v), b.subf(c(1.0), b.mulf(t, t))), inner_d)
            return b.mulf(g, b.addf(left_d, right_d))
        cdf = b.mulf(c(0.5), b.addf(c(1.0), _erf(b, b.mulf(v, c(math.sqrt(0.5))))))
        pdf = b.mulf(c(GELU_PDF), b.math("exp", b.mulf(b.mulf(v, v), c(-0.5))))
        return b.mulf(g, b.addf(cdf, b.mulf(v, pdf)))
    return pointwise(tr, [grad, x], fn)


@rule("aten.threshold_backward.default")
def _threshold_backward(tr, node, grad, x, threshold):
    """x <= threshold ? 0 : grad (relu's backward)."""
    return pointwise(tr, [grad, x, float(threshold)], lambda b, g, v, th: b.select(
        b.cmpf("ule", v, th), b.cst(0.0, b.types[g]), g))


@rule("aten.hardtanh_backward.default")
def _hardtanh_backward(tr, node, grad, x, min_val, max_val):
    """(x <= min || x >= max) ? 0 : grad."""
    def fn(b, g, v, lo, hi):
        out = b.ori(b.cmpf("ule", v, lo), b.cmpf("uge", v, hi))
        return b.select(out, b.cst(0.0, b.types[g]), g)
    return pointwise(tr, [grad, x, float(min_val), float(max_val)], fn)


@rule("aten.tanh_backward.default")
def _tanh_backward(tr, node, grad, y):
    """grad * (1 - y^2)."""
    return pointwise(tr, [grad, y], lambda b, g, v: b.mulf(
        g, b.subf(b.cst(1.0, b.types[v]), b.mulf(v, v))))


@rule("aten.sigmoid_backward.default")
def _sigmoid_backward(tr, node, grad, y):
    """grad * (1 - y) * y."""
    return pointwise(tr, [grad, y], lambda b, g, v: b.mulf(
        b.mulf(g, b.subf(b.cst(1.0, b.types[v]), v)), v))


@rule("aten.silu_backward.default")
def _silu_backward(tr, node, grad, x):
    """grad * s * (1 + x (1 - s)), s = sigmoid(x)."""
    def fn(b, g, v):
        one = b.cst(1.0, b.types[v])
        s = _sigmoid(b, v)
        return b.mulf(b.mulf(g, s), b.addf(one, b.mulf(v, b.subf(one, s))))
    return pointwise(tr, [grad, x], fn)


@rule("aten.hardswish_backward.default")
def _hardswish_backward(tr, node, grad, x):
    """x < -3: 0; x <= 3: grad * (x / 3 + 0.5); else grad."""
    def fn(b, g, v):
        c = lambda k: b.cst(k, b.types[v])
        mid = b.mulf(g, b.addf(b.divf(v, c(3.0)), c(0.5)))
        inner = b.select(b.cmpf("ole", v, c(3.0)), mid, g)
        return b.select(b.cmpf("olt", v, c(-3.0)), c(0.0), inner)
    return pointwise(tr, [grad, x], fn)


@rule("aten.hardsigmoid_backward.default")
def _hardsigmoid_backward(tr, node, grad, x):
    """-3 < x < 3 ? grad / 6 : 0."""
    def fn(b, g, v):
        c = lambda k: b.cst(k, b.types[v])
        inside = b.andi(b.cmpf("ogt", v, c(-3.0)), b.cmpf("olt", v, c(3.0)))
        return b.select(inside, b.divf(g, c(6.0)), c(0.0))
    return pointwise(tr, [grad, x], fn)


@rule("aten.leaky_relu_backward.default")
def _leaky_relu_backward(tr, node, grad, x, negative_slope, self_is_result):
    """x > 0 ? grad : grad * slope."""
    return pointwise(tr, [grad, x, float(negative_slope)], lambda b, g, v, k: b.select(
        b.cmpf("ogt", v, b.cst(0.0, b.types[v])), g, b.mulf(g, k)))


@rule("aten.where.self")
def _where(tr, node, cond, a, b):
    """cond ? a : b (bool tensors are i8)."""
    dtype = result_dtype([a, b])
    return pointwise(tr, [cond, a, b], lambda bb, c, x, y: bb.select(c, x, y),
                     out_dtype=dtype, operand_types=["i1", dtype, dtype])


@rule("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def _masked_fill(tr, node, x, mask, value):
    """mask ? value : x (value a number or a 0-d tensor)."""
    return pointwise(tr, [mask, value, x], lambda b, c, v, y: b.select(c, v, y),
                     out_dtype=x.dtype, operand_types=["i1", x.dtype, x.dtype])


_CMP = {"eq": ("oeq", "eq"), "ne": ("une", "ne"), "lt": ("olt", "slt"),
        "le": ("ole", "sle"), "gt": ("ogt", "sgt"), "ge": ("oge", "sge")}


def _comparison(pred):
    """aten.{eq,ne,lt,le,gt,ge}: a bool (i8) tensor, with C++'s float
    semantics (ordered predicates, except ne: NaN != anything)."""
    def translate(tr, node, a, b):
        fpred, ipred = _CMP[pred]
        compute = result_dtype([a, b])
        return pointwise(tr, [a, b], lambda bb, x, y: (
            bb.cmpf(fpred, x, y) if compute in FLOAT_TYPES else bb.cmpi(ipred, x, y)),
            out_dtype="i8", compute_dtype=compute)
    return translate


for _p in _CMP:
    RULES["aten.%s.Tensor" % _p] = RULES["aten.%s.Scalar" % _p] = _comparison(_p)


def _logical(op, negate=False):
    """aten.bitwise_{and,or} / logical_{and,or} / logical_not on bool (i8)
    tensors, as decompositions write them (hardtanh_backward: (x <= lo) |
    (x >= hi)); integer bitwise ops on other integer types."""
    def translate(tr, node, a, b=None):
        operands = [a] if b is None else [a, b]
        dtype = result_dtype(operands)
        if dtype in FLOAT_TYPES:
            raise Unsupported("%s on floating-point tensors" % aten_name(node.target))
        if dtype == "i8" or node.target.__name__.startswith("logical"):
            def body(bb, *vs):
                bits = [bb.convert(v, "i1") for v in vs]
                r = bits[0] if len(bits) == 1 else getattr(bb, op)(bits[0], bits[1])
                return bb.cmpi("eq", r, bb.cst(0, "i1")) if negate else r
            return pointwise(tr, operands, body, out_dtype="i8", compute_dtype=dtype)
        return pointwise(tr, operands, lambda bb, x, y: getattr(bb, op)(x, y),
                         out_dtype=dtype, compute_dtype=dtype)
    return translate


RULES.update({
    "aten.bitwise_or.Tensor": _logical("ori"),
    "aten.bitwise_and.Tensor": _logical("andi"),
    "aten.logical_or.default": _logical("ori"),
    "aten.logical_and.default": _logical("andi"),
    "aten.logical_not.default": _logical("ori", negate=True),
})
