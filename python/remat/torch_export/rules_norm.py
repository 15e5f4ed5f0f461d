"""Translation rules: batch norm and layer norm, forward and backward, with
ATen's CPU statistics (accumulated in double)."""

from .errors import Unsupported
from .ir import Aff, Out, dims, prod
from .translate import float_only, pointwise, reduce_layout, reduce_sum, rule


# -- normalization --------------------------------------------------------------


@rule("aten.native_batch_norm.default")
def _native_batch_norm(tr, node, x, weight, bias, running_mean, running_var, training,
                       momentum, eps):
    """Training batch norm -> (y, save_mean, save_invstd), as ATen's CPU
    kernels (batch_norm_kernel.cpp), statistics accumulated in double:
      mean = f32(sum(x) / M), var_sum = sum((x - mean)^2),
      invstd = f32(1 / sqrt(var_sum / M + eps)),
      alpha = invstd * w, beta = b - mean * alpha, y = x * alpha + beta
    (M = N * spatial). The running statistics are not updated: the step does
    not return them."""
    if not training:
        raise Unsupported("inference-mode batch norm")
    float_only(x)
    rank, em, name, t = len(x.shape), tr.em, node.name, x.dtype
    red = set(range(rank)) - {1}
    count = float(x.numel // x.shape[1])
    chan = lambda v: (v, [Aff.dim(1)])
    s = reduce_sum(tr, x, red, name + "_sum", fn=lambda b, v: b.convert(v, "f64"),
                   dtype="f64")
    mean = em.map_value(name + "_mean", s, lambda b, v: b.convert(
        b.divf(v, b.cst(count, "f64")), t), dtype=t)
    var_sum = reduce_sum(tr, x, red, name + "_varsum", fn=lambda b, v, m: (
        lambda d: b.convert(b.mulf(d, d), "f64"))(b.subf(v, m)),
        extra=[chan(mean)], dtype="f64")
    ins = [(var_sum, dims(1)), (mean, dims(1))]
    if weight is not None:
        ins.append((weight, dims(1)))
    if bias is not None:
        ins.append((bias, dims(1)))

    def coeffs(b, i, o):
        c = lambda k, ty=t: b.cst(k, ty)
        var = b.addf(b.divf(i[0], c(count, "f64")), c(float(eps), "f64"))
        invstd = b.convert(b.divf(c(1.0, "f64"), b.math("sqrt", var)), t)
        alpha = b.mulf(invstd, i[2]) if weight is not None else invstd
        bb = i[2 + (weight is not None)] if bias is not None else c(0.0)
        return [invstd, alpha, b.subf(bb, b.mulf(i[1], alpha))]
    invstd, alpha, beta = em.generic(name + "_coeffs", [x.shape[1]], ["parallel"], ins,
                                     [Out(t, dims(1))] * 3, coeffs)
    y = em.generic(name, x.shape, ["parallel"] * rank,
                   [(x, dims(rank)), chan(alpha), chan(beta)], [Out(t, dims(rank))],
                   lambda b, i, o: [b.addf(b.mulf(i[0], i[1]), i[2])])[0]
    return (y, mean, invstd)


@rule("aten.native_batch_norm_backward.default")
def _native_batch_norm_backward(tr, node, grad, x, weight, running_mean, running_var,
                                save_mean, save_invstd, train, eps, output_mask):
    """ATen batch_norm_cpu_backward_contiguous_impl (training), sums in
    double: sum = sum(dy), dotp = sum((x - mean) * dy) per channel;
      k = f32(dotp) * invstd * invstd / M, grad_mean = f32(sum / M),
      dx = (dy - grad_mean - (x - mean) * k) * invstd * w;
      dw = f32(dotp * invstd), db = f32(sum)."""
    if not train:
        raise Unsupported("inference-mode batch norm backward")
    rank, em, name, t = len(x.shape), tr.em, node.name, x.dtype
    red = set(range(rank)) - {1}
    count = float(x.numel // x.shape[1])
    chan = lambda v: (v, [Aff.dim(1)])
    its, out = reduce_layout(x.shape, red)

    def sums(b, i, o):
        dot = b.mulf(b.subf(i[1], i[2]), i[0])
        return [b.addf(o[0], b.convert(i[0], "f64")), b.addf(o[1], b.convert(dot, "f64"))]
    sum_dy, dotp = em.generic(
        name + "_sums", x.shape, its, [(grad, dims(rank)), (x, dims(rank)), chan(save_mean)],
        [Out("f64", out, 0), Out("f64", out, 0)], sums)
    dx = dw = db = None
    if output_mask[0]:
        def coeffs(b, i, o):
            n = b.cst(count, t)
            k = b.divf(b.mulf(b.mulf(b.convert(i[0], t), i[2]), i[2]), n)
            return [k, b.convert(b.divf(i[1], b.cst(count, "f64")), t)]
        k, grad_mean = em.generic(name + "_coeffs", [x.shape[1]], ["parallel"],
                                  [(dotp, dims(1)), (sum_dy, dims(1)), (save_invstd, dims(1))],
                                  [Out(t, dims(1))] * 2, coeffs)
        ins = [(grad, dims(rank)), (x, dims(rank)), chan(save_mean), chan(k),
               chan(grad_mean), chan(save_invstd)]
        if weight is not None:
            ins.append(chan(weight))

        def dxfn(b, i, o):
            d = b.mulf(b.subf(b.subf(i[0], i[4]), b.mulf(b.subf(i[1], i[2]), i[3])), i[5])
            return [b.mulf(d, i[6]) if weight is not None else d]
        dx = em.generic(name + "_dx", x.shape, ["parallel"] * rank, ins,
                        [Out(t, dims(rank))], dxfn)[0]
    if output_mask[1]:
        dw = pointwise(tr, [dotp, save_invstd], lambda b, d, s: b.mulf(d, s),
                       out_dtype=t, compute_dtype="f64", hint=name + "_dw")
    if output_mask[2]:
        db = em.map_value(name + "_db", sum_dy, lambda b, v: b.convert(v, t), dtype=t)
    return (dx, dw, db)


@rule("aten.native_layer_norm.default")
def _native_layer_norm(tr, node, x, normalized_shape, weight, bias, eps):
    """-> (y, mean, rstd) over the trailing `normalized_shape` dims:
    mean = sum / D, var = sum((x - mean)^2) / D, rstd = 1 / sqrt(var + eps),
    y = (x * rstd - rstd * mean) * w + b (ATen's LayerNormKernelImpl)."""
    float_only(x)
    rank, em, name, t = len(x.shape), tr.em, node.name, x.dtype
    nn_ = len(normalized_shape)
    lead = rank - nn_
    red = set(range(lead, rank))
    count = float(prod(normalized_shape))
    row = lambda v: (v, dims(lead))
    s = reduce_sum(tr, x, red, name + "_sum")
    mean = em.map_value(name + "_mean", s, lambda b, v: b.divf(v, b.cst(count, t)))
    var_sum = reduce_sum(tr, x, red, name + "_varsum", fn=lambda b, v, m: (
        lambda d: b.mulf(d, d))(b.subf(v, m)), extra=[row(mean)])
    rstd = em.map_value(name + "_rstd", var_sum, lambda b, v: b.divf(
        b.cst(1.0, t), b.math("sqrt", b.addf(b.divf(v, b.cst(count, t)),
                                             b.cst(float(eps), t)))))
    ins = [(x, dims(rank)), row(rstd), row(mean)]
    if weight is not None:
        ins.append((weight, dims(nn_, lead)))
    if bias is not None:
        ins.append((bias, dims(nn_, lead)))

    def fn(b, i, o):
        y = b.subf(b.mulf(i[0], i[1]), b.mulf(i[1], i[2]))
        if weight is not None:
            y = b.mulf(y, i[3])
        if bias is not None:
            y = b.addf(y, i[3 + (weight is not None)])
        return [y]
    y = em.generic(name, x.shape, ["parallel"] * rank, ins, [Out(t, dims(rank))], fn)[0]
    stat_shape = list(x.shape[:lead]) + [1] * nn_
    return (y, em.reshape(mean, stat_shape, name + "_mean"),
            em.reshape(rstd, stat_shape, name + "_rstd"))


@rule("aten.native_layer_norm_backward.default")
def _native_layer_norm_backward(tr, node, grad, x, normalized_shape, mean, rstd, weight,
                                bias, output_mask):
    """ATen LayerNormBackwardKernelImplInternal, per row of D elements:
      ds = sum(dy * w * x), db = sum(dy * w), a = rstd,
      b = (db * mean - ds) * a^3 / D, c = -b * mean - db * a / D,
      dx = a * dy * w + b * x + c;
    dw = sum over rows of dy * (x - mean) * rstd, dbias = sum over rows of dy."""
    rank, em, name, t = len(x.shape), tr.em, node.name, x.dtype
    nn_ = len(normalized_shape)
    lead = rank - nn_
    count = float(prod(normalized_shape))
    stat = list(x.shape[:lead])
    mean = em.reshape(mean, stat, name + "_mean")
    rstd = em.reshape(rstd, stat, name + "_rstd")
    row = lambda v: (v, dims(lead))
    dx = dw = db = None
    if output_mask[0]:
        its, out = reduce_layout(x.shape, set(range(lead, rank)))
        ins = [(grad, dims(rank)), (x, dims(rank))]
        if weight is not None:
            ins.append((weight, dims(nn_, lead)))

        def sums(b, i, o):
            gw = b.mulf(i[0], i[2]) if weight is not None else i[0]
            return [b.addf(o[0], b.mulf(gw, i[1])), b.addf(o[1], gw)]
        ds, dbs = em.generic(name + "_sums", x.shape, its, ins,
                             [Out(t, out, 0), Out(t, out, 0)], sums)

        def coeffs(b, i, o):
            c = lambda v: b.cst(v, t)
            a = i[3]
            a3 = b.mulf(b.mulf(a, a), a)
            bb = b.divf(b.mulf(b.subf(b.mulf(i[1], i[2]), i[0]), a3), c(count))
            cc = b.subf(b.mulf(b.negf(bb), i[2]), b.divf(b.mulf(i[1], a), c(count)))
            return [bb, cc]
        bcoef, ccoef = em.generic(name + "_coeffs", stat, ["parallel"] * lead,
                                  [row(ds), row(dbs), row(mean), row(rstd)],
                                  [Out(t, dims(lead))] * 2, coeffs)
        ins = [(grad, dims(rank)), (x, dims(rank)), row(rstd), row(bcoef), row(ccoef)]
        if weight is not None:
            ins.append((weight, dims(nn_, lead)))

        def dxfn(b, i, o):
            gw = b.mulf(i[0], i[5]) if weight is not None else i[0]
            return [b.addf(b.addf(b.mulf(i[2], gw), b.mulf(i[3], i[1])), i[4])]
        dx = em.generic(name + "_dx", x.shape, ["parallel"] * rank, ins,
                        [Out(t, dims(rank))], dxfn)[0]
    if output_mask[1] or output_mask[2]:
        its, out = reduce_layout(x.shape, set(range(lead)))
        dw, db = em.generic(
            name + "_dwdb", x.shape, its,
            [(grad, dims(rank)), (x, dims(rank)), row(mean), row(rstd)],
            [Out(t, out, 0), Out(t, out, 0)],
            lambda b, i, o: [b.addf(o[0], b.mulf(b.mulf(i[0], b.subf(i[1], i[2])), i[3])),
                             b.addf(o[1], i[0])])
    return (dx, dw if output_mask[1] else None, db if output_mask[2] else None)
