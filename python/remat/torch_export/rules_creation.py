"""Translation rules: tensor creation (zeros, ones, full, empty, fill, the
*_like and new_* variants) as splat constants or broadcasts."""

from .ir import mlir_dtype
from .translate import aten_name, rule


# -- creation -----------------------------------------------------------------


def _full(tr, shape, value, dtype):
    dtype = mlir_dtype(dtype) if dtype is not None else (
        "f32" if isinstance(value, float) else "i64")
    return tr.em.splat(value, list(shape), dtype, tr.node.name)


@rule("aten.zeros_like.default", "aten.ones_like.default", "aten.full_like.default")
def _like(tr, node, x, *args, dtype=None, layout=None, device=None, pin_memory=None,
          memory_format=None):
    value = {"aten.zeros_like.default": 0, "aten.ones_like.default": 1}.get(
        aten_name(node.target), args[0] if args else None)
    return tr.em.splat(value, x.shape, mlir_dtype(dtype) if dtype else x.dtype, node.name)


@rule("aten.zeros.default", "aten.ones.default")
def _zeros(tr, node, size, dtype=None, layout=None, device=None, pin_memory=None):
    value = 0 if aten_name(node.target) == "aten.zeros.default" else 1
    return _full(tr, size, float(value) if dtype is None else value, dtype)


@rule("aten.full.default")
def _full_rule(tr, node, size, value, dtype=None, layout=None, device=None,
               pin_memory=None):
    return _full(tr, size, value, dtype)


@rule("aten.scalar_tensor.default")
def _scalar_tensor(tr, node, value, dtype=None, layout=None, device=None,
                   pin_memory=None):
    return _full(tr, [], float(value) if dtype is None else value, dtype)


@rule("aten.empty_like.default", "aten.zero.default")
def _empty_like(tr, node, x, dtype=None, layout=None, device=None, pin_memory=None,
                memory_format=None):
    """A tensor of x's shape: empty_like's contents are unspecified (the
    graph overwrites them, e.g. with fill), zero's are zeros."""
    return tr.em.splat(0, x.shape, mlir_dtype(dtype) if dtype else x.dtype, node.name)


@rule("aten.empty.memory_format")
def _empty(tr, node, size, dtype=None, layout=None, device=None, pin_memory=None,
           memory_format=None):
    """A tensor of unspecified contents (zeros)."""
    return _full(tr, size, 0.0 if dtype is None else 0, dtype)


@rule("aten.new_empty.default")
def _new_empty(tr, node, x, size, dtype=None, layout=None, device=None, pin_memory=None):
    return tr.em.splat(0, list(size), mlir_dtype(dtype) if dtype else x.dtype, node.name)


@rule("aten.fill.Scalar")
def _fill(tr, node, x, value):
    """A tensor of x's shape and type, every element `value`."""
    return tr.em.splat(value, x.shape, x.dtype, node.name)


@rule("aten.fill.Tensor")
def _fill_tensor(tr, node, x, value):
    """x's shape, every element the 0-d tensor `value` (a broadcast view)."""
    if value.dtype != x.dtype:
        value = tr.em.map_value(node.name, value, lambda b, v: b.convert(v, x.dtype), x.dtype)
    return value.broadcast_to(x.shape)


@rule("aten.new_zeros.default", "aten.new_ones.default")
def _new_zeros(tr, node, x, size, dtype=None, layout=None, device=None, pin_memory=None):
    value = 0 if aten_name(node.target) == "aten.new_zeros.default" else 1
    return tr.em.splat(value, list(size), mlir_dtype(dtype) if dtype else x.dtype, node.name)
