"""Translation rules: reductions (sum, mean, norm, amax)."""

import math

from .ir import Out, dims, mlir_dtype, prod
from .translate import float_only, keep_dims, norm_dim, reduce_layout, reduce_sum, rule


# -- reductions -----------------------------------------------------------------


def _reduce_dims(x, dim):
    rank = len(x.shape)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return set(range(rank))
    return {norm_dim(d, rank) for d in (dim if isinstance(dim, (list, tuple)) else [dim])}


@rule("aten.sum.dim_IntList", "aten.sum.default")
def _sum(tr, node, x, dim=None, keepdim=False, dtype=None):
    red = _reduce_dims(x, dim)
    out_dtype = mlir_dtype(dtype) if dtype else (x.dtype if x.dtype != "i8" else "i64")
    s = reduce_sum(tr, x, red, node.name, fn=lambda b, v: b.convert(v, out_dtype),
                   dtype=out_dtype)
    return keep_dims(tr, s, x.shape, red, node.name) if keepdim else s


@rule("aten.mean.dim", "aten.mean.default")
def _mean(tr, node, x, dim=None, keepdim=False, dtype=None):
    """sum / count (ATen's CPU mean: sum_out then div_)."""
    float_only(x)
    red = _reduce_dims(x, dim)
    s = reduce_sum(tr, x, red, node.name + "_sum")
    count = float(prod(x.shape[i] for i in red))
    m = tr.em.map_value(node.name, s, lambda b, v: b.divf(v, b.cst(count, b.types[v])))
    return keep_dims(tr, m, x.shape, red, node.name) if keepdim else m


@rule("aten.norm.ScalarOpt_dim", "aten.norm.Scalar")
def _norm(tr, node, x, p=2, dim=None, keepdim=False):
    """The p-norm over dim: sqrt(sum(x^2)) for p = 2, else
    (sum |x|^p)^(1 / p)."""
    float_only(x)
    p = 2.0 if p is None else float(p)
    red = _reduce_dims(x, dim)
    if p == 2.0:
        s = reduce_sum(tr, x, red, node.name + "_sum", fn=lambda b, v: b.mulf(v, v))
        n = tr.em.map_value(node.name, s, lambda b, v: b.math("sqrt", v))
    else:
        s = reduce_sum(tr, x, red, node.name + "_sum", fn=lambda b, v: b.math(
            "powf", b.math("absf", v), b.cst(p, b.types[v])))
        n = tr.em.map_value(node.name, s, lambda b, v: b.math(
            "powf", v, b.cst(1.0 / p, b.types[v])))
    return keep_dims(tr, n, x.shape, red, node.name) if keepdim else n


@rule("aten.amax.default")
def _amax(tr, node, x, dim=(), keepdim=False):
    float_only(x)
    red = _reduce_dims(x, dim)
    its, out = reduce_layout(x.shape, red)
    m = tr.em.generic(node.name, x.shape, its, [(x, dims(len(x.shape)))],
                      [Out(x.dtype, out, -math.inf)],
                      lambda b, i, o: [b.maxf(o[0], i[0])])[0]
    return keep_dims(tr, m, x.shape, red, node.name) if keepdim else m
