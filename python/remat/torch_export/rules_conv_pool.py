"""Translation rules: convolution (regular and transposed, any spatial rank,
groups) and its backward; pooling (max with indices, average, adaptive
average) and their backwards."""

import math

from .ir import Aff, Out, dims
from .translate import pair, reduce_sum, rule


# -- convolution ------------------------------------------------------------------


def _conv_contract(tr, hint, act, weight, groups, fo, out_spatial, stride, dil, flip,
                   bias=None):
    """out[n, g, f, o] = sum_{c, k} act[n, g, c, o * stride + k * dil]
                                     * W[g, f, c, k]
    over act (N, G*C, S...) and the weight split into (G, ...). W is read as
    weight[g, f, c, k] ("direct", wlayout (G, F, C)) or, for the correlations
    of the transposed direction, weight[g, c, f, K-1-k] ("flip", wlayout
    (G, C, F)). Loops (n, g, f, o..., c, k...); result (N, G*F, O...), the
    bias (if any) as the destination."""
    nsp = len(out_spatial)
    ksize = list(weight.shape[2:])
    n = act.shape[0]
    cr = act.shape[1] // groups
    # Loop dims: 0 n, 1 g, 2 f, 3..3+nsp o, then c, then k...
    lo, lc, lk = 3, 3 + nsp, 4 + nsp
    ranges = [n, groups, fo] + list(out_spatial) + [cr] + ksize
    its = ["parallel"] * (3 + nsp) + ["reduction"] * (1 + nsp)
    a = act.viewed([n, groups, cr] + list(act.shape[2:]),
                   [Aff.dim(0), Aff.dim(1) * cr + Aff.dim(2)] + dims(nsp, 3))
    a_exprs = [Aff.dim(0), Aff.dim(1), Aff.dim(lc)] + \
        [Aff.dim(lo + j) * stride[j] + Aff.dim(lk + j) * dil[j] for j in range(nsp)]
    w = weight.viewed([groups, weight.shape[0] // groups] + list(weight.shape[1:]),
                      [Aff.dim(0) * (weight.shape[0] // groups) + Aff.dim(1)] +
                      dims(1 + nsp, 2))
    ins = [(a, a_exprs)]
    if flip:
        w_exprs = [Aff.dim(1), Aff.dim(lc), Aff.dim(2)] + \
            [(ksize[j] - 1) - Aff.dim(lk + j) for j in range(nsp)]
    else:
        w_exprs = [Aff.dim(1), Aff.dim(2), Aff.dim(lc)] + dims(nsp, lk)
    ins.append((w, w_exprs))
    if flip:
        # The flipped kernel loops appear in no map alone.
        ins.append((_window(tr, ksize), dims(nsp, lk)))
    out_shape = [n, groups, fo] + list(out_spatial)
    init = 0
    if bias is not None:
        bview = bias.viewed([groups, fo], [Aff.dim(0) * fo + Aff.dim(1)])
        init = tr.em.generic(hint + "_bias", out_shape, ["parallel"] * len(out_shape),
                             [(bview, [Aff.dim(1), Aff.dim(2)])],
                             [Out(act.dtype, dims(len(out_shape)))],
                             lambda b, i, o: [i[0]])[0]
    r = tr.em.generic(hint, ranges, its, ins, [Out(act.dtype, dims(3 + nsp), init)],
                      lambda b, i, o: [b.mac(i[0], i[1], o[0])])[0]
    return tr.em.reshape(r, [n, groups * fo] + list(out_spatial), hint)


def _conv_weight_grad(tr, hint, a, bsrc, groups, stride, dil, ksize):
    """dw[g, p, q, k] = sum_{n, o} a[n, g, p, o] * bsrc[n, g, q, o * stride + k * dil]
    over a (N, G*P, O...) and bsrc (N, G*Q, T...). Loops (g, p, q, k..., n,
    o...); result (G*P, Q, K...)."""
    nsp = len(ksize)
    n = a.shape[0]
    pp = a.shape[1] // groups
    qq = bsrc.shape[1] // groups
    osp = list(a.shape[2:])
    lk, ln, lo = 3, 3 + nsp, 4 + nsp
    ranges = [groups, pp, qq] + list(ksize) + [n] + osp
    its = ["parallel"] * (3 + nsp) + ["reduction"] * (1 + nsp)
    av = a.viewed([n, groups, pp] + osp, [Aff.dim(0), Aff.dim(1) * pp + Aff.dim(2)] + dims(nsp, 3))
    bv = bsrc.viewed([n, groups, qq] + list(bsrc.shape[2:]),
                     [Aff.dim(0), Aff.dim(1) * qq + Aff.dim(2)] + dims(nsp, 3))
    a_exprs = [Aff.dim(ln), Aff.dim(0), Aff.dim(1)] + dims(nsp, lo)
    b_exprs = [Aff.dim(ln), Aff.dim(0), Aff.dim(2)] + \
        [Aff.dim(lo + j) * stride[j] + Aff.dim(lk + j) * dil[j] for j in range(nsp)]
    r = tr.em.generic(hint, ranges, its, [(av, a_exprs), (bv, b_exprs)],
                      [Out(a.dtype, dims(3 + nsp), 0)],
                      lambda b, i, o: [b.mac(i[0], i[1], o[0])])[0]
    return tr.em.reshape(r, [groups * pp, qq] + list(ksize), hint)


def _conv_out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


@rule("aten.convolution.default")
def _convolution(tr, node, x, weight, bias, stride, padding, dilation, transposed,
                 output_padding, groups):
    """ATen convolution, any spatial rank, groups (depthwise included).
    Regular: y[o] = sum_k x[o*s + k*d - p] w[k]: the input padded by p, then
    a strided correlation. Transposed: y[o] = sum_{i,k: i*s + k*d - p = o}
    x[i] w[k] = sum_k' xz[o + k'*d] w[K-1-k'], xz = x zero-inserted by s and
    padded by (K-1)*d - p, i.e. a stride-1 correlation with the flipped
    kernel (in/out channels of the weight swapped)."""
    nsp = len(x.shape) - 2
    stride, padding, dilation = pair(stride, nsp), pair(padding, nsp), pair(dilation, nsp)
    ksize = list(weight.shape[2:])
    spatial = list(x.shape[2:])
    if not transposed:
        out = [_conv_out_size(spatial[j], ksize[j], stride[j], padding[j], dilation[j])
               for j in range(nsp)]
        need = [(out[j] - 1) * stride[j] + (ksize[j] - 1) * dilation[j] + 1 for j in range(nsp)]
        xp = tr.em.place(x, padding, [1] * nsp, need, 0.0, node.name + "_pad")
        return _conv_contract(tr, node.name, xp, weight, groups,
                              weight.shape[0] // groups, out, stride, dilation, False, bias)
    output_padding = pair(output_padding, nsp)
    out = [(spatial[j] - 1) * stride[j] - 2 * padding[j] + dilation[j] * (ksize[j] - 1) +
           output_padding[j] + 1 for j in range(nsp)]
    lo = [(ksize[j] - 1) * dilation[j] - padding[j] for j in range(nsp)]
    size = [out[j] + (ksize[j] - 1) * dilation[j] for j in range(nsp)]
    xz = tr.em.place(x, lo, stride, size, 0.0, node.name + "_spread")
    return _conv_contract(tr, node.name, xz, weight, groups, weight.shape[1], out,
                          [1] * nsp, dilation, True, bias)


@rule("aten.convolution_backward.default")
def _convolution_backward(tr, node, grad, x, weight, bias_sizes, stride, padding, dilation,
                          transposed, output_padding, groups, output_mask):
    """ATen convolution_backward -> (grad_input, grad_weight, grad_bias).
    Regular conv, y[o] = sum_k x[o*s + k*d - p] w[k]:
      dx[i] = sum_k dz[i + (K-1-k)*d] w[k] with dz = dy zero-inserted by s
              and padded by (K-1)*d - p (the transposed convolution of dy);
      dw[k] = sum_o dy[o] xp[o*s + k*d], xp = x padded by p.
    Transposed conv, y[i*s + k*d - p] += x[i] w[k]:
      dx[i] = sum_k dyp[i*s + k*d] w[k], dyp = dy padded by p (a regular
              strided convolution of dy);
      dw[k] = sum_i x[i] dyp[i*s + k*d].
    grad_bias = sum of dy over all dims but the channels."""
    nsp = len(x.shape) - 2
    stride, padding, dilation = pair(stride, nsp), pair(padding, nsp), pair(dilation, nsp)
    ksize = list(weight.shape[2:])
    spatial = list(x.shape[2:])
    out_sp = list(grad.shape[2:])
    name = node.name
    em = tr.em
    dx = dw = db = None
    span = [(ksize[j] - 1) * dilation[j] for j in range(nsp)]
    if not transposed:
        if output_mask[0]:
            dz = em.place(grad, [span[j] - padding[j] for j in range(nsp)], stride,
                          [spatial[j] + span[j] for j in range(nsp)], 0.0, name + "_spread")
            dx = _conv_contract(tr, name + "_dx", dz, weight, groups,
                                x.shape[1] // groups, spatial, [1] * nsp, dilation, True)
        if output_mask[1]:
            need = [(out_sp[j] - 1) * stride[j] + span[j] + 1 for j in range(nsp)]
            xp = em.place(x, padding, [1] * nsp, need, 0.0, name + "_pad")
            dw = _conv_weight_grad(tr, name + "_dw", grad, xp, groups, stride, dilation, ksize)
    else:
        need = [(spatial[j] - 1) * stride[j] + span[j] + 1 for j in range(nsp)]
        dyp = None
        if output_mask[0] or output_mask[1]:
            dyp = em.place(grad, padding, [1] * nsp, need, 0.0, name + "_pad")
        if output_mask[0]:
            dx = _conv_contract(tr, name + "_dx", dyp, weight, groups,
                                x.shape[1] // groups, spatial, stride, dilation, False)
        if output_mask[1]:
            dw = _conv_weight_grad(tr, name + "_dw", x, dyp, groups, stride, dilation, ksize)
    if output_mask[2]:
        db = reduce_sum(tr, grad, set(range(len(grad.shape))) - {1}, name + "_db")
    return (dx, dw, db)


# -- pooling ----------------------------------------------------------------------


def _pool_out_size(size, k, s, p, d, ceil_mode):
    """ATen pooling_output_shape."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_params(x, kernel, stride, padding, dilation=1, ceil_mode=False):
    kernel = pair(kernel, 2)
    stride = pair(stride, 2) if stride else kernel
    padding, dilation = pair(padding, 2), pair(dilation, 2)
    spatial = list(x.shape[-2:])
    out = [_pool_out_size(spatial[j], kernel[j], stride[j], padding[j], dilation[j], ceil_mode)
           for j in range(2)]
    return kernel, stride, padding, dilation, out


def _window(tr, kernel):
    """A constant operand of the kernel's shape that gives a generic the
    range of window loops that no other operand indexes alone."""
    return tr.em.splat(0, kernel, "i8", "window")


def _pool_windows(tr, hint, xp, kernel, stride, dilation, out, outs, body_fn):
    """A generic over (lead..., oh, ow, kh, kw) reading
    xp[lead..., oh*s + kh*d, ow*s + kw*d] (the window loops reduced)."""
    lead = len(xp.shape) - 2
    ranges = list(xp.shape[:lead]) + list(out) + list(kernel)
    its = ["parallel"] * (lead + 2) + ["reduction"] * 2
    x_exprs = dims(lead) + [Aff.dim(lead + j) * stride[j] + Aff.dim(lead + 2 + j) * dilation[j]
                            for j in range(2)]
    ins = [(xp, x_exprs), (_window(tr, kernel), dims(2, lead + 2))]
    return tr.em.generic(hint, ranges, its, ins, outs, body_fn)


def _pool_gather(tr, hint, x, kernel, stride, padding, dilation, out, contribution):
    """grad_input of a pooling: a generic over (lead..., ih, iw, kh, kw) that
    sums, over the windows containing input (ih, iw), contribution(b, lead
    indices, (oh, ow), (ih, iw), valid) where valid says that
    o = (i + p - k*d) / s is a whole window index in range (o clamped to 0
    otherwise, so that reads stay in bounds)."""
    lead = len(x.shape) - 2
    ranges = list(x.shape)[:lead] + list(x.shape[-2:]) + list(kernel)
    its = ["parallel"] * (lead + 2) + ["reduction"] * 2

    def body(b, i, o):
        c = lambda v: b.cst(v, "index")
        lead_idx = [b.index(d) for d in range(lead)]
        in_idx, out_idx, valid = [], [], []
        for j in range(2):
            ii = b.index(lead + j)
            kk = b.index(lead + 2 + j)
            num = b.subi(b.addi(ii, c(padding[j])), b.muli(kk, c(dilation[j])))
            q = b.divsi(num, c(stride[j]))
            valid.append(b.cmpi("sge", num, c(0)))
            valid.append(b.cmpi("eq", b.remsi(num, c(stride[j])), c(0)))
            valid.append(b.cmpi("slt", q, c(out[j])))
            in_idx.append(ii)
            out_idx.append(q)
        ok = b.all_of(valid)
        out_idx = [b.select(ok, q, c(0)) for q in out_idx]
        return [b.addf(o[0], contribution(b, lead_idx, out_idx, in_idx, ok))]
    return tr.em.generic(hint, ranges, its, [(_window(tr, kernel), dims(2, lead + 2))],
                         [Out(x.dtype, dims(lead + 2), 0)], body)[0]


@rule("aten.max_pool2d_with_indices.default")
def _max_pool2d_with_indices(tr, node, x, kernel_size, stride=(), padding=0, dilation=1,
                             ceil_mode=False):
    """-> (values, indices): the first maximum of each window (ATen: take v
    if v > max or v is NaN) and its flat index ih * W + iw in the input
    plane (i64). The input is padded with -inf."""
    kernel, stride, padding, dilation, out = _pool_params(x, kernel_size, stride, padding,
                                                          dilation, ceil_mode)
    lead = len(x.shape) - 2
    width = x.shape[-1]
    need = [(out[j] - 1) * stride[j] + (kernel[j] - 1) * dilation[j] + 1 for j in range(2)]
    xp = tr.em.place(x, padding, [1, 1], need, -math.inf, node.name + "_pad")
    with_indices = 1 in tr.used_outputs(node)
    outs = [Out(x.dtype, dims(lead + 2), -math.inf)]
    if with_indices:
        outs.append(Out("i64", dims(lead + 2), 0))

    def body(b, i, o):
        take = b.ori(b.cmpf("ogt", i[0], o[0]), b.cmpf("uno", i[0], i[0]))
        res = [b.select(take, i[0], o[0])]
        if with_indices:
            c = lambda v: b.cst(v, "index")
            pos = [b.subi(b.addi(b.muli(b.index(lead + j), c(stride[j])),
                                 b.muli(b.index(lead + 2 + j), c(dilation[j]))),
                          c(padding[j])) for j in range(2)]
            flat = b.convert(b.addi(b.muli(pos[0], c(width)), pos[1]), "i64")
            res.append(b.select(take, flat, o[1]))
        return res
    results = _pool_windows(tr, node.name, xp, kernel, stride, dilation, out, outs, body)
    return (results[0], results[1] if with_indices else None)


@rule("aten.max_pool2d_with_indices_backward.default")
def _max_pool2d_with_indices_backward(tr, node, grad, x, kernel_size, stride, padding,
                                      dilation, ceil_mode, indices):
    """grad_input[i] = sum of grad[o] over the windows o containing i whose
    recorded index is i (the gather form of ATen's scatter-add)."""
    kernel, stride, padding, dilation, out = _pool_params(x, kernel_size, stride, padding,
                                                          dilation, ceil_mode)
    width = x.shape[-1]

    def contribution(b, lead, o, i, ok):
        g = b.extract(grad, lead + o)
        idx = b.extract(indices, lead + o)
        flat = b.convert(b.addi(b.muli(i[0], b.cst(width, "index")), i[1]), "i64")
        hit = b.andi(ok, b.cmpi("eq", idx, flat))
        return b.select(hit, g, b.cst(0.0, x.dtype))
    return _pool_gather(tr, node.name, x, kernel, stride, padding, dilation, out, contribution)


def _avg_divisors(size, k, s, p, out, count_include_pad):
    """ATen avg_pool2d's divide_factor per output index along one dim."""
    divs = []
    for o in range(out):
        start = o * s - p
        end = min(start + k, size + p)
        pool = end - start
        start, end = max(start, 0), min(end, size)
        divs.append(pool if count_include_pad else end - start)
    return divs


def _divide_windows(tr, hint, v, divisors):
    """v[..., oh, ow] / (dh[oh] * dw[ow]); a constant when uniform."""
    lead = len(v.shape) - 2
    if all(len(set(d)) == 1 for d in divisors):
        factor = float(divisors[0][0] * divisors[1][0])
        return tr.em.map_value(hint, v, lambda b, x: b.divf(x, b.cst(factor, v.dtype)))
    dh = tr.em.dense([float(d) for d in divisors[0]], v.dtype, hint + "_dh")
    dw = tr.em.dense([float(d) for d in divisors[1]], v.dtype, hint + "_dw")
    rank = len(v.shape)
    return tr.em.generic(hint, v.shape, ["parallel"] * rank,
                         [(v, dims(rank)), (dh, [Aff.dim(lead)]), (dw, [Aff.dim(lead + 1)])],
                         [Out(v.dtype, dims(rank))],
                         lambda b, i, o: [b.divf(i[0], b.mulf(i[1], i[2]))])[0]


def _avg_params(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    kernel, stride, padding, dilation, out = _pool_params(x, kernel_size, stride, padding,
                                                          1, ceil_mode)
    if divisor_override:
        divisors = [[divisor_override] * out[0], [1] * out[1]]
    else:
        divisors = [_avg_divisors(x.shape[-2 + j], kernel[j], stride[j], padding[j], out[j],
                                  count_include_pad) for j in range(2)]
    return kernel, stride, padding, out, divisors


@rule("aten.avg_pool2d.default")
def _avg_pool2d(tr, node, x, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """Window sums of the zero-padded input divided by ATen's divide_factor."""
    kernel, stride, padding, out, divisors = _avg_params(
        x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    lead = len(x.shape) - 2
    need = [(out[j] - 1) * stride[j] + kernel[j] for j in range(2)]
    xp = tr.em.place(x, padding, [1, 1], need, 0.0, node.name + "_pad")
    s = _pool_windows(tr, node.name + "_sum", xp, kernel, stride, [1, 1], out,
                      [Out(x.dtype, dims(lead + 2), 0)],
                      lambda b, i, o: [b.addf(o[0], i[0])])[0]
    return _divide_windows(tr, node.name, s, divisors)


@rule("aten.avg_pool2d_backward.default")
def _avg_pool2d_backward(tr, node, grad, x, kernel_size, stride, padding, ceil_mode,
                         count_include_pad, divisor_override):
    """grad_input[i] = sum over windows o containing i of grad[o] / div[o]."""
    kernel, stride, padding, out, divisors = _avg_params(
        x, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    gd = _divide_windows(tr, node.name + "_div", grad, divisors)
    return _pool_gather(tr, node.name, x, kernel, stride, padding, [1, 1], out,
                        lambda b, lead, o, i, ok: b.select(ok, b.extract(gd, lead + o),
                                                           b.cst(0.0, x.dtype)))


def _adaptive_bins(size, out):
    """ATen adaptive pooling bins: [floor(o*L/O), ceil((o+1)*L/O))."""
    return [((o * size) // out, -(-((o + 1) * size) // out)) for o in range(out)]


@rule("aten._adaptive_avg_pool2d.default")
def _adaptive_avg_pool2d(tr, node, x, output_size):
    """Average over ATen's adaptive bins. Uniform bins (L divisible by O) are
    an average pool with kernel = stride = L / O; otherwise a sum over every
    input element with a bin-membership predicate, then the division."""
    out = pair(output_size, 2)
    spatial = list(x.shape[-2:])
    bins = [_adaptive_bins(spatial[j], out[j]) for j in range(2)]
    divisors = [[e - s for s, e in bins[j]] for j in range(2)]
    lead = len(x.shape) - 2
    if all(spatial[j] % out[j] == 0 for j in range(2)):
        k = [spatial[j] // out[j] for j in range(2)]
        s = _pool_windows(tr, node.name + "_sum", x, k, k, [1, 1], out,
                          [Out(x.dtype, dims(lead + 2), 0)],
                          lambda b, i, o: [b.addf(o[0], i[0])])[0]
        return _divide_windows(tr, node.name, s, divisors)
    ranges = list(x.shape[:lead]) + out + spatial
    its = ["parallel"] * (lead + 2) + ["reduction"] * 2

    def body(b, i, o):
        inside = []
        for j in range(2):
            oo, ii = b.index(lead + j), b.index(lead + 2 + j)
            inside += _in_bin(b, oo, ii, spatial[j], out[j])
        return [b.addf(o[0], b.select(b.all_of(inside), i[0], b.cst(0.0, x.dtype)))]
    s = tr.em.generic(node.name + "_sum", ranges, its,
                      [(x, dims(lead) + dims(2, lead + 2))],
                      [Out(x.dtype, dims(lead + 2), 0)], body)[0]
    return _divide_windows(tr, node.name, s, divisors)


def _in_bin(b, o, i, size, out):
    """Conditions floor(o*L/O) <= i < ceil((o+1)*L/O) (index arithmetic)."""
    c = lambda v: b.cst(v, "index")
    start = b.divsi(b.muli(o, c(size)), c(out))
    end = b.divsi(b.addi(b.muli(b.addi(o, c(1)), c(size)), c(out - 1)), c(out))
    return [b.cmpi("sge", i, start), b.cmpi("slt", i, end)]


@rule("aten._adaptive_avg_pool2d_backward.default")
def _adaptive_avg_pool2d_backward(tr, node, grad, x):
    """grad_input[i] = sum over bins o containing i of grad[o] / |bin o|."""
    out = list(grad.shape[-2:])
    spatial = list(x.shape[-2:])
    bins = [_adaptive_bins(spatial[j], out[j]) for j in range(2)]
    divisors = [[e - s for s, e in bins[j]] for j in range(2)]
    lead = len(x.shape) - 2
    gd = _divide_windows(tr, node.name + "_div", grad, divisors)
    if all(spatial[j] % out[j] == 0 for j in range(2)):
        k = [spatial[j] // out[j] for j in range(2)]
        return _pool_gather(tr, node.name, x, k, k, [0, 0], [1, 1], out,
                            lambda b, ld, o, i, ok: b.select(ok, b.extract(gd, ld + o),
                                                             b.cst(0.0, x.dtype)))
    ranges = list(x.shape[:lead]) + spatial + out
    its = ["parallel"] * (lead + 2) + ["reduction"] * 2

    def body(b, i, o):
        inside = []
        for j in range(2):
            ii, oo = b.index(lead + j), b.index(lead + 2 + j)
            inside += _in_bin(b, oo, ii, spatial[j], out[j])
        return [b.addf(o[0], b.select(b.all_of(inside), i[0], b.cst(0.0, x.dtype)))]
    return tr.em.generic(node.name, ranges, its, [(gd, dims(lead) + dims(2, lead + 2))],
                         [Out(x.dtype, dims(lead + 2), 0)], body)[0]
