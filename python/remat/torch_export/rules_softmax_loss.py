"""Translation rules: softmax and log-softmax with their backwards, the NLL
loss (forward and backward, 1-d and 2-d targets)."""

import math

from .ir import Aff, Out, dims
from .translate import float_only, norm_dim, reduce_layout, reduce_sum, rule


# -- softmax and losses -----------------------------------------------------------


def _along(x, dim):
    """Loop exprs of x's kept dims when `dim` is reduced (the reduced value
    broadcast back)."""
    return [Aff.dim(i) for i in range(len(x.shape)) if i != dim]


def _row_sum(tr, x, dim, hint, fn=None, extra=()):
    """sum over `dim` of fn(x, *extra) accumulated in f64 (a sequential loop
    in f64 is at least as accurate as ATen's vectorized float lanes), then
    rounded to x's type."""
    to64 = (lambda b, *a: b.convert(fn(b, *a) if fn else a[0], "f64"))
    s = reduce_sum(tr, x, {dim}, hint + "64", fn=to64, extra=extra, dtype="f64")
    return tr.em.map_value(hint, s, lambda b, v: b.convert(v, x.dtype), dtype=x.dtype)


def _softmax_stats(tr, hint, x, dim):
    """max over dim, then sum(exp(x - max)) over dim."""
    rank = len(x.shape)
    its, out = reduce_layout(x.shape, {dim})
    mx = tr.em.generic(hint + "_max", x.shape, its, [(x, dims(rank))],
                       [Out(x.dtype, out, -math.inf)],
                       lambda b, i, o: [b.maxf(o[0], i[0])])[0]
    s = _row_sum(tr, x, dim, hint + "_sumexp", fn=lambda b, v, m: b.math("exp", b.subf(v, m)),
                 extra=[(mx, _along(x, dim))])
    return mx, s


def _with_row_values(tr, name, full, rows, dim, body):
    """A pointwise generic over full[0]'s shape reading the tensors of that
    shape in `full`, then the per-row values in `rows` (reduced over `dim`,
    broadcast back): the last step of (log_)softmax and their backwards."""
    x = full[0]
    rank = len(x.shape)
    return tr.em.generic(name, x.shape, ["parallel"] * rank,
                         [(t, dims(rank)) for t in full] + [(r, _along(x, dim)) for r in rows],
                         [Out(x.dtype, dims(rank))],
                         lambda b, i, o: [body(b, *i)])[0]


@rule("aten._log_softmax.default")
def _log_softmax(tr, node, x, dim, half_to_float):
    """x - max - log(sum(exp(x - max))) (ATen vec_log_softmax)."""
    float_only(x)
    dim = norm_dim(dim, len(x.shape))
    mx, s = _softmax_stats(tr, node.name, x, dim)
    return _with_row_values(tr, node.name, [x], [mx, s], dim,
                            lambda b, v, m, t: b.subf(b.subf(v, m), b.math("log", t)))


@rule("aten._log_softmax_backward_data.default")
def _log_softmax_backward(tr, node, grad, output, dim, input_dtype):
    """grad - exp(output) * sum(grad over dim)."""
    dim = norm_dim(dim, len(grad.shape))
    s = _row_sum(tr, grad, dim, node.name + "_sum")
    return _with_row_values(tr, node.name, [grad, output], [s], dim,
                            lambda b, g, y, t: b.subf(g, b.mulf(b.math("exp", y), t)))


@rule("aten._softmax.default")
def _softmax(tr, node, x, dim, half_to_float):
    """exp(x - max) / sum(exp(x - max))."""
    float_only(x)
    dim = norm_dim(dim, len(x.shape))
    mx, s = _softmax_stats(tr, node.name, x, dim)
    return _with_row_values(tr, node.name, [x], [mx, s], dim,
                            lambda b, v, m, t: b.divf(b.math("exp", b.subf(v, m)), t))


@rule("aten._softmax_backward_data.default")
def _softmax_backward(tr, node, grad, output, dim, input_dtype):
    """output * (grad - sum(grad * output over dim))."""
    dim = norm_dim(dim, len(grad.shape))
    rank = len(grad.shape)
    s = _row_sum(tr, grad, dim, node.name + "_sum", fn=lambda b, g, y: b.mulf(g, y),
                 extra=[(output, dims(rank))])
    return _with_row_values(tr, node.name, [grad, output], [s], dim,
                            lambda b, g, y, t: b.mulf(y, b.subf(g, t)))


def _nll_layout(x):
    """The class dim of an nll_loss input and the loop exprs of the target
    (all other dims)."""
    cls = 1 if len(x.shape) > 1 else 0
    return cls, [Aff.dim(i) for i in range(len(x.shape)) if i != cls]


def _nll_hit(b, target, cls_dim, ignore_index):
    """target == class index and target != ignore_index."""
    t = b.convert(target, "i64")
    c = b.convert(b.index(cls_dim), "i64")
    return b.andi(b.cmpi("eq", t, c), b.cmpi("ne", t, b.cst(ignore_index, "i64")))


@rule("aten.nll_loss_forward.default", "aten.nll_loss2d_forward.default")
def _nll_loss_forward(tr, node, x, target, weight, reduction, ignore_index):
    """-> (output, total_weight): output = -sum_i w[t_i] x[i, t_i] over the
    non-ignored i, divided by total_weight = sum_i w[t_i] for reduction=mean
    (1), summed for sum (2), per element for none (0). The gather x[i, t_i]
    is a reduction over the classes with a predicate."""
    float_only(x)
    rank, em, name, t = len(x.shape), tr.em, node.name, x.dtype
    cls, t_exprs = _nll_layout(x)
    ins = [(x, dims(rank)), (target, t_exprs)]
    if weight is not None:
        ins.append((weight, [Aff.dim(cls)]))

    def picked(b, i):
        hit = _nll_hit(b, i[1], cls, ignore_index)
        w = i[2] if weight is not None else b.cst(1.0, t)
        zero = b.cst(0.0, t)
        return b.select(hit, b.mulf(i[0], w), zero), b.select(hit, w, zero)
    if reduction == 0:
        its, out = reduce_layout(x.shape, {cls})
        per = em.generic(name, x.shape, its, ins, [Out(t, out, 0)],
                         lambda b, i, o: [b.subf(o[0], picked(b, i)[0])])[0]
        return (per, em.splat(0.0, [], t, name + "_total_weight"))
    def sums(b, i, o):
        val, w = picked(b, i)
        return [b.addf(o[0], val), b.addf(o[1], w)]
    total, wsum = em.generic(name + "_sums", x.shape, ["reduction"] * rank, ins,
                             [Out(t, [], 0), Out(t, [], 0)], sums)
    if reduction == 2:
        loss = em.map_value(name, total, lambda b, v: b.negf(v))
    else:
        loss = em.generic(name, [], [], [(total, []), (wsum, [])], [Out(t, [])],
                          lambda b, i, o: [b.negf(b.divf(i[0], i[1]))])[0]
    return (loss, wsum)


@rule("aten.nll_loss_backward.default", "aten.nll_loss2d_backward.default")
def _nll_loss_backward(tr, node, grad, x, target, weight, reduction, ignore_index,
                       total_weight):
    """ATen nll_loss_backward_out_frame: grad_input[i, t_i] =
    w[t_i] * -(mean ? grad / total_weight : grad[i]) for non-ignored i, 0
    elsewhere."""
    rank = len(x.shape)
    cls, t_exprs = _nll_layout(x)
    ins = [(target, t_exprs), (grad, [] if reduction != 0 else t_exprs), (total_weight, [])]
    if weight is not None:
        ins.append((weight, [Aff.dim(cls)]))

    def body(b, i, o):
        hit = _nll_hit(b, i[0], cls, ignore_index)
        g = b.divf(i[1], i[2]) if reduction == 1 else i[1]
        g = b.negf(g)
        if weight is not None:
            g = b.mulf(i[3], g)
        return [b.select(hit, g, b.cst(0.0, x.dtype))]
    return tr.em.generic(node.name, x.shape, ["parallel"] * rank, ins,
                         [Out(x.dtype, dims(rank))], body)[0]
