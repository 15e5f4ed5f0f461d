"""Translation rules: matrix products (mm, bmm, addmm, baddbmm) as
multiply-add contractions."""

from .ir import Out, dims
from .translate import expr_over, pointwise, rule


# -- matrix products ------------------------------------------------------------


def _contract(tr, hint, a, b, init=0):
    """(batch..., m, k) x (batch..., k, n) -> (batch..., m, n); loops
    (batch..., m, n, k), multiply-adds. `init` is the destination:
    0 or a tensor accumulated into (addmm's bias)."""
    nb = len(a.shape) - 2
    m, k = a.shape[-2:]
    n = b.shape[-1]
    ranges = list(a.shape[:nb]) + [m, n, k]
    batch = list(range(nb))
    ins = [expr_over(a, batch + [nb, nb + 2]), expr_over(b, batch + [nb + 2, nb + 1])]
    return tr.em.generic(hint, ranges, ["parallel"] * (nb + 2) + ["reduction"], ins,
                         [Out(a.dtype, dims(nb + 2), init)],
                         lambda bb, i, o: [bb.mac(i[0], i[1], o[0])])[0]


@rule("aten.mm.default", "aten.bmm.default")
def _mm(tr, node, a, b):
    return _contract(tr, node.name, a, b)


@rule("aten.addmm.default", "aten.baddbmm.default")
def _addmm(tr, node, bias, a, b, beta=1, alpha=1):
    """beta * bias + alpha * (a @ b); with beta = alpha = 1 the broadcast
    bias is the product's destination."""
    shape = list(a.shape[:-1]) + [b.shape[-1]]
    if beta == 1 and alpha == 1:
        init = tr.em.materialize(bias.broadcast_to(shape)) if bias.shape != tuple(shape) \
            else tr.em.map_value(node.name + "_bias", bias, lambda bb, v: v)
        return _contract(tr, node.name, a, b, init)
    p = _contract(tr, node.name + "_mm", a, b)
    return pointwise(tr, [bias, p, float(beta), float(alpha)], lambda bb, c, v, kb, ka:
                     bb.addf(bb.mulf(kb, c), bb.mulf(ka, v)))
