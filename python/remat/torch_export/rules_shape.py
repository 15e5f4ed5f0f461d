"""Translation rules: views and identities (reshape, transpose, slice,
select, expand, as_strided ...), their scatters and backwards, cat, stack,
roll, advanced indexing (index, index_put), constant padding and embeddings
(gathers and scatter-adds of rows)."""

from .errors import Unsupported
from .ir import Aff, Out, Value, dims, mlir_dtype, prod
from .translate import broadcast_shapes, norm_dim, result_dtype, rule


# -- views and identities -----------------------------------------------------


@rule("aten.detach.default", "aten.alias.default", "aten.lift_fresh_copy.default")
def _identity(tr, node, x):
    """Value semantics: aliases are the value itself."""
    return x


@rule("aten.clone.default")
def _clone(tr, node, x, memory_format=None):
    """A copy: views become tensors of their own, tensors stay as they are."""
    return tr.em.materialize(x)


@rule("aten._to_copy.default")
def _to_copy(tr, node, x, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    """Dtype conversion (C++ casts: float->int truncates, nonzero->true)."""
    if dtype is None or mlir_dtype(dtype) == x.dtype:
        return tr.em.materialize(x)
    to = mlir_dtype(dtype)
    if to == "i8":
        return tr.em.map_value(node.name, x, lambda b, v: b.convert(b.convert(v, "i1"), "i8"),
                               dtype="i8")
    return tr.em.map_value(node.name, x, lambda b, v: b.convert(v, to), dtype=to)


@rule("aten.view.default", "aten._reshape_alias.default", "aten._unsafe_view.default",
      "aten.reshape.default")
def _view(tr, node, x, size, stride=None):
    """Row-major reshape (strides of _reshape_alias only describe the view)."""
    size = list(size)
    if -1 in size:
        k = size.index(-1)
        size[k] = x.numel // prod(s for s in size if s != -1)
    return tr.em.reshape(x, size, node.name)


@rule("aten.unsqueeze.default")
def _unsqueeze(tr, node, x, dim):
    dim = norm_dim(dim, len(x.shape) + 1)
    return tr.em.reshape(x, x.shape[:dim] + (1,) + x.shape[dim:], node.name)


@rule("aten.squeeze.dim", "aten.squeeze.default", "aten.squeeze.dims")
def _squeeze(tr, node, x, dim=None):
    rank = len(x.shape)
    if dim is None:
        drop = {i for i, s in enumerate(x.shape) if s == 1}
    else:
        drop = {norm_dim(d, rank) for d in (dim if isinstance(dim, (list, tuple)) else [dim])
                if x.shape[norm_dim(d, rank)] == 1}
    return tr.em.reshape(x, [s for i, s in enumerate(x.shape) if i not in drop], node.name)


@rule("aten.t.default")
def _t(tr, node, x):
    return x if len(x.shape) < 2 else x.permuted([1, 0])


@rule("aten.transpose.int")
def _transpose(tr, node, x, dim0, dim1):
    perm = list(range(len(x.shape)))
    a, b = norm_dim(dim0, len(perm)), norm_dim(dim1, len(perm))
    perm[a], perm[b] = perm[b], perm[a]
    return x.permuted(perm)


@rule("aten.permute.default")
def _permute(tr, node, x, perm):
    return x.permuted([norm_dim(p, len(x.shape)) for p in perm])


@rule("aten.expand.default")
def _expand(tr, node, x, size, implicit=False):
    lead = len(size) - len(x.shape)
    shape = [x.shape[i - lead] if s == -1 else s for i, s in enumerate(size)]
    return x.broadcast_to(shape)


def _slice_bounds(length, start, end, step):
    start = 0 if start is None else start
    end = length if end is None else end
    start = max(0, min(length, start + length if start < 0 else start))
    end = max(start, min(length, end + length if end < 0 else end))
    return start, (end - start + step - 1) // step


@rule("aten.slice.Tensor")
def _slice(tr, node, x, dim=0, start=None, end=None, step=1):
    dim = norm_dim(dim, len(x.shape))
    start, length = _slice_bounds(x.shape[dim], start, end, step)
    return x.sliced(dim, start, length, step)


@rule("aten.select.int")
def _select(tr, node, x, dim, index):
    dim = norm_dim(dim, len(x.shape))
    return x.selected(dim, index + x.shape[dim] if index < 0 else index)


def _split_sizes(x, sizes, dim):
    out, start = [], 0
    for s in sizes:
        out.append(x.sliced(dim, start, s))
        start += s
    return out


@rule("aten.split.Tensor")
def _split(tr, node, x, split_size, dim=0):
    dim = norm_dim(dim, len(x.shape))
    n = x.shape[dim]
    sizes = [min(split_size, n - s) for s in range(0, n, split_size)] or [0]
    return _split_sizes(x, sizes, dim)


@rule("aten.split_with_sizes.default")
def _split_with_sizes(tr, node, x, split_sizes, dim=0):
    return _split_sizes(x, split_sizes, norm_dim(dim, len(x.shape)))


@rule("aten.unbind.int")
def _unbind(tr, node, x, dim=0):
    dim = norm_dim(dim, len(x.shape))
    return [x.selected(dim, i) for i in range(x.shape[dim])]


def _flat(tr, x, hint):
    """x's elements in row-major order as a 1-d tensor (a view)."""
    return tr.em.reshape(x, [x.numel], hint)


@rule("aten.as_strided.default")
def _as_strided(tr, node, x, size, stride, storage_offset=None):
    """The view reading element offset + sum(i_k * stride_k) of x's storage,
    taken as x's elements in row-major order (functionalization replays
    views of a contiguous base this way)."""
    flat = tr.em.materialize(_flat(tr, x, node.name + "_flat"))
    index = Aff(const=storage_offset or 0)
    for d, st in enumerate(stride):
        index = index + Aff.dim(d) * (st if size[d] != 1 else 0)
    return flat.viewed(list(size), [index])


@rule("aten.as_strided_scatter.default")
def _as_strided_scatter(tr, node, x, src, size, stride, storage_offset=None):
    """x with the as_strided region (size, stride, offset) replaced by src;
    the region must be a row-major block of x's storage."""
    offset = storage_offset or 0
    dense = [prod(size[k + 1:]) for k in range(len(size))]
    if any(st != dn for st, dn, sz in zip(stride, dense, size) if sz != 1):
        raise Unsupported("as_strided_scatter of a strided region")
    if offset == 0 and prod(size) == x.numel:
        return tr.em.reshape(src, x.shape, node.name)
    flat = tr.em.map_value(node.name + "_copy", _flat(tr, x, node.name + "_flat"), lambda b, v: v)
    out = tr.em.insert_slice(_flat(tr, src, node.name + "_src"), flat, [offset], [1], node.name)
    return tr.em.reshape(out, x.shape, node.name)


def _scatter_into(tr, node, dst, src, dim, start, length, step):
    """dst with the slice [start : start + length * step : step] of `dim`
    replaced by src: dst (a fresh tensor) then a strided insert_slice."""
    rank = len(dst.shape)
    offsets, strides = [0] * rank, [1] * rank
    offsets[dim], strides[dim] = start, step
    src = tr.em.reshape(src, [length if d == dim else s for d, s in enumerate(dst.shape)],
                        node.name + "_src")
    return tr.em.insert_slice(src, dst, offsets, strides, node.name)


@rule("aten.slice_scatter.default")
def _slice_scatter(tr, node, x, src, dim=0, start=None, end=None, step=1):
    """x with x[start:end:step] along dim replaced by src."""
    dim = norm_dim(dim, len(x.shape))
    start, length = _slice_bounds(x.shape[dim], start, end, step)
    dst = tr.em.map_value(node.name + "_copy", x, lambda b, v: v)
    return _scatter_into(tr, node, dst, src, dim, start, length, step)


@rule("aten.select_scatter.default")
def _select_scatter(tr, node, x, src, dim, index):
    """x with x.select(dim, index) replaced by src."""
    dim = norm_dim(dim, len(x.shape))
    dst = tr.em.map_value(node.name + "_copy", x, lambda b, v: v)
    return _scatter_into(tr, node, dst, src, dim, index % x.shape[dim], 1, 1)


@rule("aten.slice_backward.default")
def _slice_backward(tr, node, grad, input_sizes, dim, start, end, step):
    """Zeros of the input's shape with grad at the slice."""
    dim = norm_dim(dim, len(input_sizes))
    start, length = _slice_bounds(input_sizes[dim], start, end, step)
    dst = tr.em.filled(0.0, list(input_sizes), grad.dtype, node.name)
    return _scatter_into(tr, node, dst, grad, dim, start, length, step)


@rule("aten.select_backward.default")
def _select_backward(tr, node, grad, input_sizes, dim, index):
    """Zeros of the input's shape with grad at the selected index."""
    dim = norm_dim(dim, len(input_sizes))
    dst = tr.em.filled(0.0, list(input_sizes), grad.dtype, node.name)
    return _scatter_into(tr, node, dst, grad, dim, index % input_sizes[dim], 1, 1)


@rule("aten.cat.default")
def _cat(tr, node, tensors, dim=0):
    """Concatenation as insert_slices into one tensor.empty (no tensor.concat,
    which this pipeline cannot bufferize)."""
    tensors = [t for t in tensors if not (len(t.shape) == 1 and t.shape[0] == 0)]
    if len(tensors) == 1:
        return tensors[0]
    dim = norm_dim(dim, len(tensors[0].shape))
    shape = list(tensors[0].shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    dtype = result_dtype(tensors)
    cur = Value(tr.em.empty(shape, dtype, node.name), shape, dtype)
    offset = 0
    for t in tensors:
        if t.dtype != dtype:
            t = tr.em.map_value(node.name + "_cast", t, lambda b, v: b.convert(v, dtype), dtype)
        offsets = [0] * len(shape)
        offsets[dim] = offset
        cur = tr.em.insert_slice(t, cur, offsets, [1] * len(shape), node.name)
        offset += t.shape[dim]
    return cur


@rule("aten.roll.default")
def _roll(tr, node, x, shifts, dims=()):
    """out[..., i, ...] = x[..., (i - shift) mod n, ...] along each dim: the
    two parts of x inserted in swapped order (no dims: the flattened x)."""
    shifts = list(shifts) if isinstance(shifts, (list, tuple)) else [shifts]
    dims = list(dims) if isinstance(dims, (list, tuple)) else [dims]
    if not dims:
        flat = _roll(tr, node, _flat(tr, x, node.name + "_flat"), shifts, [0])
        return tr.em.reshape(flat, x.shape, node.name)
    rank = len(x.shape)
    cur = x
    for shift, dim in zip(shifts, dims):
        dim = norm_dim(dim, rank)
        n = cur.shape[dim]
        shift %= n
        if shift == 0:
            continue
        out = Value(tr.em.empty(cur.shape, cur.dtype, node.name), cur.shape, cur.dtype)
        for src_start, length, dst_start in ((n - shift, shift, 0), (0, n - shift, shift)):
            offsets = [0] * rank
            offsets[dim] = dst_start
            out = tr.em.insert_slice(cur.sliced(dim, src_start, length), out, offsets,
                                     [1] * rank, node.name)
        cur = out
    return cur


def _index_layout(x, indices):
    """For advanced indexing x[indices] with the index tensors at adjacent
    dims k..k+m-1: k, m and the broadcast shape of the index tensors."""
    pos = [k for k, t in enumerate(indices) if t is not None]
    if pos != list(range(pos[0], pos[-1] + 1)):
        raise Unsupported("index tensors at non-adjacent dims")
    return pos[0], len(pos), broadcast_shapes([indices[p].shape for p in pos])


def _index_exprs(t, first, shape):
    """Loop exprs of an index tensor broadcast to `shape`, whose dims are the
    loops first, first+1, ..."""
    lead = len(shape) - len(t.shape)
    return [Aff(const=0) if s == 1 and shape[lead + i] != 1 else Aff.dim(first + lead + i)
            for i, s in enumerate(t.shape)]


def _index_value(b, idx, size):
    """An index tensor element as an index, negative values counting from
    the end."""
    i = b.convert(idx, "index")
    n = b.cst(size, "index")
    return b.select(b.cmpi("slt", i, b.cst(0, "index")), b.addi(i, n), i)


@rule("aten.index.Tensor")
def _index(tr, node, x, indices):
    """x[indices] with the index tensors at adjacent dims k..k+m-1:
    out[a, i, c] = x[a, idx_0[i], ..., idx_{m-1}[i], c] (a gather with
    tensor.extract)."""
    indices = list(indices) + [None] * (len(x.shape) - len(indices))
    k, m, ishape = _index_layout(x, indices)
    shape = list(x.shape[:k]) + list(ishape) + list(x.shape[k + m:])
    tensors = [t for t in indices if t is not None]
    rank, ni = len(shape), len(ishape)

    def body(b, args, outs):
        idx = [b.index(d) for d in range(k)]
        idx += [_index_value(b, v, x.shape[k + j]) for j, v in enumerate(args)]
        idx += [b.index(d) for d in range(k + ni, rank)]
        return [b.extract(x, idx)]
    return tr.em.generic(node.name, shape, ["parallel"] * rank,
                         [(t, _index_exprs(t, k, ishape)) for t in tensors],
                         [Out(x.dtype, dims(rank))], body)[0]


@rule("aten.index_put.default")
def _index_put(tr, node, x, indices, values, accumulate=False):
    """x with x[indices] = values (accumulate: +=), the index tensors at
    adjacent dims: out[a, v, c] = x[a, v, c] (+) the values of every index
    position p with idx[p] == v; a reduction over the index positions with
    a predicate (the last position wins without accumulate)."""
    indices = list(indices) + [None] * (len(x.shape) - len(indices))
    k, m, ishape = _index_layout(x, indices)
    rank, ni = len(x.shape), len(ishape)
    tensors = [t for t in indices if t is not None]
    # Loops: x's dims, then the index positions (reduced).
    ranges = list(x.shape) + list(ishape)
    its = ["parallel"] * rank + ["reduction"] * ni
    vshape = list(x.shape[:k]) + list(ishape) + list(x.shape[k + m:])
    vloops = list(range(k)) + list(range(rank, rank + ni)) + list(range(k + m, rank))
    vlead = len(vshape) - len(values.shape)
    vexprs = [Aff(const=0) if s == 1 and vshape[vlead + i] != 1 else Aff.dim(vloops[vlead + i])
              for i, s in enumerate(values.shape)]
    ins = [(t, _index_exprs(t, rank, ishape)) for t in tensors] + [(values, vexprs)]
    init = tr.em.map_value(node.name + "_init", x, lambda b, v: v)

    def body(b, args, outs):
        hits = [b.cmpi("eq", _index_value(b, v, x.shape[k + j]), b.index(k + j))
                for j, v in enumerate(args[:-1])]
        hit = b.all_of(hits)
        val = b.convert(args[-1], x.dtype)
        new = b.add(outs[0], val) if accumulate else val
        return [b.select(hit, new, outs[0])]
    return tr.em.generic(node.name, ranges, its, ins, [Out(x.dtype, dims(rank), init)], body)[0]


@rule("aten.stack.default")
def _stack(tr, node, tensors, dim=0):
    dim = norm_dim(dim, len(tensors[0].shape) + 1)
    parts = [tr.em.reshape(t, t.shape[:dim] + (1,) + t.shape[dim:], node.name + "_part")
             for t in tensors]
    return _cat(tr, node, parts, dim)


@rule("aten.constant_pad_nd.default")
def _constant_pad_nd(tr, node, x, pad, value=0):
    """pad = (last_lo, last_hi, second_last_lo, ...); negative pads crop."""
    k = len(pad) // 2
    lo = [pad[2 * (k - 1 - j)] for j in range(k)]
    hi = [pad[2 * (k - 1 - j) + 1] for j in range(k)]
    spatial = x.shape[-k:]
    size = [spatial[j] + lo[j] + hi[j] for j in range(k)]
    return tr.em.place(x, lo, [1] * k, size, value, node.name)


# -- embeddings -----------------------------------------------------------------


@rule("aten.embedding.default")
def _embedding(tr, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False,
               sparse=False):
    """out[..., d] = weight[indices[...], d] (a gather with tensor.extract)."""
    rank = len(indices.shape)
    shape = list(indices.shape) + [weight.shape[1]]

    def body(b, i, o):
        row = b.convert(i[0], "index")
        return [b.extract(weight, [row, b.index(rank)])]
    return tr.em.generic(node.name, shape, ["parallel"] * (rank + 1),
                         [(indices, dims(rank))], [Out(weight.dtype, dims(rank + 1))],
                         body)[0]


@rule("aten.embedding_dense_backward.default")
def _embedding_dense_backward(tr, node, grad, indices, num_weights, padding_idx,
                              scale_grad_by_freq):
    """dW[v, d] = sum over positions p with indices[p] == v (and v !=
    padding_idx) of grad[p, d]: a reduction over the positions with a
    predicate."""
    if scale_grad_by_freq:
        raise Unsupported("scale_grad_by_freq")
    rank = len(indices.shape)
    dmodel = grad.shape[-1]
    ranges = [num_weights, dmodel] + list(indices.shape)
    its = ["parallel", "parallel"] + ["reduction"] * rank
    ins = [(grad, dims(rank, 2) + [Aff.dim(1)]), (indices, dims(rank, 2))]

    def body(b, i, o):
        v = b.convert(b.index(0), "i64")
        hit = b.cmpi("eq", i[1], v)
        if padding_idx >= 0:
            hit = b.andi(hit, b.cmpi("ne", i[1], b.cst(padding_idx, "i64")))
        return [b.addf(o[0], b.select(hit, i[0], b.cst(0.0, grad.dtype)))]
    return tr.em.generic(node.name, ranges, its, ins, [Out(grad.dtype, dims(2), 0)], body)[0]
