"""The MLIR text builder: affine expressions (Aff), tensors seen through
views (Value), literals and element types, linalg.generic bodies (Body), the
Emitter that writes a function's ops with their remat.phase / remat.cost, and
Module (affine maps and functions as text)."""

import re

import numpy as np
import torch
from torch._subclasses.fake_tensor import FakeTensor

from .errors import ExportError, Unsupported


# ===----------------------------------------------------------------------===
# Affine expressions and tensor views
# ===----------------------------------------------------------------------===


class Aff:
    """An affine expression `sum(coeff * d_i) + const` over loop dimensions."""

    __slots__ = ("coeffs", "const")

    def __init__(self, coeffs=None, const=0):
        self.coeffs = {d: c for d, c in (coeffs or {}).items() if c != 0}
        self.const = const

    @staticmethod
    def dim(i):
        return Aff({i: 1})

    def _lift(self, other):
        return other if isinstance(other, Aff) else Aff(const=other)

    def __add__(self, other):
        other = self._lift(other)
        coeffs = dict(self.coeffs)
        for d, c in other.coeffs.items():
            coeffs[d] = coeffs.get(d, 0) + c
        return Aff(coeffs, self.const + other.const)

    __radd__ = __add__

    def __mul__(self, k):
        return Aff({d: c * k for d, c in self.coeffs.items()}, self.const * k)

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-self._lift(other))

    def __rsub__(self, other):
        return self._lift(other) - self

    def compose(self, subs):
        """Substitutes `subs[i]` for dimension i."""
        out = Aff(const=self.const)
        for d, c in self.coeffs.items():
            out = out + subs[d] * c
        return out

    def pure_dim(self):
        """The dimension if the expression is exactly `d_i`, else None."""
        if self.const == 0 and len(self.coeffs) == 1:
            (d, c), = self.coeffs.items()
            if c == 1:
                return d
        return None

    def render(self):
        text = ""
        for d in sorted(self.coeffs):
            c = self.coeffs[d]
            mag = "d%d" % d if abs(c) == 1 else "d%d * %d" % (d, abs(c))
            if not text:
                text = mag if c > 0 else "-" + mag
            else:
                text += (" + " if c > 0 else " - ") + mag
        if not text:
            return str(self.const)
        if self.const:
            text += (" + %d" if self.const > 0 else " - %d") % abs(self.const)
        return text


def dims(n, start=0):
    """[d_start, ..., d_{start+n-1}] as expressions."""
    return [Aff.dim(start + i) for i in range(n)]


def prod(values):
    out = 1
    for v in values:
        out *= v
    return out


def tensor_type(shape, dtype):
    return "tensor<" + "".join("%dx" % d for d in shape) + dtype + ">"


class Value:
    """A tensor as ops read it: the SSA tensor `ssa` (shape `base_shape`)
    seen through a view. Logical element (i_0, ..., i_r) of the value is base
    element (index[0](i), ..., index[k](i)), each an affine expression of the
    logical indices. Transposes, broadcasts, slices and splitting reshapes
    only change `index`; linalg.generic consumers compose it into their
    indexing maps, so a view costs nothing until an op needs it as a tensor
    of its own (Emitter.materialize). `contiguous` is False when the SSA
    tensor is itself a tensor.extract_slice (a strided view after
    bufferization)."""

    __slots__ = ("ssa", "shape", "dtype", "base_shape", "index", "contiguous")

    def __init__(self, ssa, shape, dtype, base_shape=None, index=None, contiguous=True):
        self.ssa = ssa
        self.shape = tuple(shape)
        self.dtype = dtype
        self.base_shape = tuple(shape if base_shape is None else base_shape)
        self.index = list(dims(len(self.shape)) if index is None else index)
        self.contiguous = contiguous

    @property
    def type(self):
        return tensor_type(self.base_shape, self.dtype)

    @property
    def numel(self):
        return prod(self.shape)

    def is_base(self):
        return (self.shape == self.base_shape and
                all(e.pure_dim() == i for i, e in enumerate(self.index)))

    def viewed(self, shape, old_dims):
        """The view of shape `shape` whose logical index i_old of this value
        is `old_dims[i_old]`, an expression of the new logical indices."""
        return Value(self.ssa, shape, self.dtype, self.base_shape,
                     [e.compose(old_dims) for e in self.index], self.contiguous)

    def slice_params(self):
        """(offsets, strides) of the view as a (rank-reducing)
        tensor.extract_slice of its base, or None if it is not one (the
        logical dims must index the base dims in order, with positive
        strides)."""
        used, offsets, strides = [], [], []
        for e in self.index:
            offsets.append(e.const)
            if not e.coeffs:
                strides.append(1)
                continue
            if len(e.coeffs) != 1:
                return None
            (d, c), = e.coeffs.items()
            if c <= 0:
                return None
            used.append(d)
            strides.append(c)
        if used != list(range(len(self.shape))):
            return None
        return offsets, strides

    def is_row_major_reshape(self):
        """True if the view reads the base's elements in row-major order
        (a reshape of the base)."""
        def linear(exprs, shape):
            out, stride = Aff(), 1
            for e, size in reversed(list(zip(exprs, shape))):
                out = out + e * stride
                stride *= size
            return out
        if prod(self.shape) != prod(self.base_shape):
            return False
        flat = linear(self.index, self.base_shape)
        want = linear(dims(len(self.shape)), self.shape)
        big = [d for d, size in enumerate(self.shape) if size != 1]
        return flat.const == 0 and all(flat.coeffs.get(d, 0) == want.coeffs.get(d, 0)
                                       for d in big)

    def permuted(self, perm):
        old = [None] * len(perm)
        for new_dim, old_dim in enumerate(perm):
            old[old_dim] = Aff.dim(new_dim)
        return self.viewed([self.shape[p] for p in perm], old)

    def broadcast_to(self, shape):
        """numpy-style broadcast (aten.expand)."""
        lead = len(shape) - len(self.shape)
        old = []
        for i, size in enumerate(self.shape):
            if size == 1 and shape[lead + i] != 1:
                old.append(Aff(const=0))
            else:
                old.append(Aff.dim(lead + i))
        return self.viewed(shape, old)

    def sliced(self, dim, start, length, step=1):
        old = dims(len(self.shape))
        old[dim] = Aff.dim(dim) * step + start
        shape = list(self.shape)
        shape[dim] = length
        return self.viewed(shape, old)

    def selected(self, dim, index):
        old = dims(dim) + [Aff(const=index)] + dims(len(self.shape) - dim - 1, dim)
        return self.viewed(self.shape[:dim] + self.shape[dim + 1:], old)


def reassociation(src, dst):
    """Groups (src dims, dst dims) of equal sizes, minimal, in order, so that
    a reshape src -> dst collapses each src group and expands it into its dst
    group. Empty for rank-0 shapes."""
    if not src or not dst:
        return []
    groups, i, j = [], 0, 0
    while i < len(src) and j < len(dst):
        gs, gd, ps, pd = [i], [j], src[i], dst[j]
        i, j = i + 1, j + 1
        while ps != pd:
            if ps < pd:
                gs.append(i)
                ps *= src[i]
                i += 1
            else:
                gd.append(j)
                pd *= dst[j]
                j += 1
        groups.append((gs, gd))
    for k in range(i, len(src)):
        groups[-1][0].append(k)
    for k in range(j, len(dst)):
        groups[-1][1].append(k)
    return groups


# ===----------------------------------------------------------------------===
# Literals
# ===----------------------------------------------------------------------===

FLOAT_TYPES = ("f32", "f64")
INT_BITS = {"i1": 1, "i8": 8, "i32": 32, "i64": 64}


def float_literal(value, dtype):
    """An exact MLIR literal of `value` rounded to `dtype`: the decimal repr
    of the rounded value (exact as a double, hence exact in f32 too), or the
    bit pattern for non-finite values."""
    if dtype == "f32":
        value = np.float32(value)
        if not np.isfinite(value):
            return "0x%08X" % int(value.view(np.uint32))
    else:
        value = np.float64(value)
        if not np.isfinite(value):
            return "0x%016X" % int(value.view(np.uint64))
    text = repr(float(value))
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = mantissa + ".0e" + exponent
    elif "e" not in text and "." not in text:
        text += ".0"
    return text


def f64_attr(value):
    return float_literal(float(value), "f64") + " : f64"


def scalar_literal(value, dtype):
    if dtype in FLOAT_TYPES:
        return float_literal(value, dtype)
    if dtype == "i1":
        return "true" if value else "false"
    return str(int(value))


DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64",
          torch.int32: "i32", torch.bool: "i8"}


def mlir_dtype(torch_dtype):
    if torch_dtype not in DTYPES:
        raise Unsupported("dtype %s" % torch_dtype)
    return DTYPES[torch_dtype]


# ===----------------------------------------------------------------------===
# linalg.generic bodies
# ===----------------------------------------------------------------------===


class Body:
    """The region of one linalg.generic. Helpers append ops and return their
    SSA names; `arith_ops` counts the arith/math ops other than constants
    (the per-point cost of the op)."""

    def __init__(self, emitter, in_types, out_types):
        self.emitter = emitter
        self.types = {}
        self.ins = [self._arg("%%in%d" % i, t) for i, t in enumerate(in_types)]
        self.outs = [self._arg("%%out%d" % i, t) for i, t in enumerate(out_types)]
        self.lines = []
        self.arith_ops = 0
        self._next = 0

    def _arg(self, name, ty):
        self.types[name] = ty
        return name

    def _def(self, text, ty, counted=True):
        name = "%%v%d" % self._next
        self._next += 1
        self.lines.append("    %s = %s" % (name, text))
        self.types[name] = ty
        if counted:
            self.arith_ops += 1
        return name

    # -- constants, indices, captured tensors (not counted) -----------------
    def cst(self, value, ty):
        return self._def("arith.constant %s : %s" % (scalar_literal(value, ty), ty),
                         ty, counted=False)

    def index(self, d):
        return self._def("linalg.index %d : index" % d, "index", counted=False)

    def extract(self, value, indices):
        """`tensor.extract` of a captured tensor at index-typed `indices`."""
        base = self.emitter.materialize(value, contiguous=False)
        return self._def("tensor.extract %s[%s] : %s"
                         % (base.ssa, ", ".join(indices), base.type),
                         base.dtype, counted=False)

    # -- arithmetic ----------------------------------------------------------
    def _binary(self, op, a, b):
        return self._def("arith.%s %s, %s : %s" % (op, a, b, self.types[a]),
                         self.types[a])

    def addf(self, a, b): return self._binary("addf", a, b)
    def subf(self, a, b): return self._binary("subf", a, b)
    def mulf(self, a, b): return self._binary("mulf", a, b)
    def divf(self, a, b): return self._binary("divf", a, b)
    def maxf(self, a, b): return self._binary("maximumf", a, b)
    def minf(self, a, b): return self._binary("minimumf", a, b)
    def addi(self, a, b): return self._binary("addi", a, b)
    def subi(self, a, b): return self._binary("subi", a, b)
    def muli(self, a, b): return self._binary("muli", a, b)
    def divsi(self, a, b): return self._binary("divsi", a, b)
    def remsi(self, a, b): return self._binary("remsi", a, b)
    def andi(self, a, b): return self._binary("andi", a, b)
    def ori(self, a, b): return self._binary("ori", a, b)

    def add(self, a, b):
        return self.addf(a, b) if self.types[a] in FLOAT_TYPES else self.addi(a, b)

    def sub(self, a, b):
        return self.subf(a, b) if self.types[a] in FLOAT_TYPES else self.subi(a, b)

    def mul(self, a, b):
        return self.mulf(a, b) if self.types[a] in FLOAT_TYPES else self.muli(a, b)

    def fma(self, a, b, c):
        """a * b + c with one rounding (math.fma), as PyTorch's CPU GEMM and
        convolution kernels accumulate; counted as 2 FLOPs."""
        self.arith_ops += 1
        return self._def("math.fma %s, %s, %s : %s" % (a, b, c, self.types[a]), self.types[a])

    def mac(self, a, b, acc):
        """acc + a * b as arith.mulf + arith.addf: the body every contraction
        matcher and vectoriser recognises (linalg.matmul's own); the
        contractions run as library calls (remat-plan-library-calls), whose
        kernels round as they do."""
        return self.addf(acc, self.mulf(a, b))

    def negf(self, a):
        return self._def("arith.negf %s : %s" % (a, self.types[a]), self.types[a])

    def cmpf(self, pred, a, b):
        return self._def("arith.cmpf %s, %s, %s : %s" % (pred, a, b, self.types[a]), "i1")

    def cmpi(self, pred, a, b):
        return self._def("arith.cmpi %s, %s, %s : %s" % (pred, a, b, self.types[a]), "i1")

    def select(self, c, a, b):
        return self._def("arith.select %s, %s, %s : %s" % (c, a, b, self.types[a]),
                         self.types[a])

    def math(self, op, *args):
        return self._def("math.%s %s : %s" % (op, ", ".join(args), self.types[args[0]]),
                         self.types[args[0]])

    def convert(self, a, to):
        """Value conversion between element types (bool is i8 in tensors)."""
        frm = self.types[a]
        if frm == to:
            return a
        if frm == "index" or to == "index":
            return self._def("arith.index_cast %s : %s to %s" % (a, frm, to), to)
        if to == "i1":
            zero = self.cst(0, frm)
            return self.cmpf("une", a, zero) if frm in FLOAT_TYPES else \
                self.cmpi("ne", a, zero)
        if frm in FLOAT_TYPES and to in FLOAT_TYPES:
            op = "extf" if to == "f64" else "truncf"
        elif frm in FLOAT_TYPES:
            op = "fptosi"
        elif to in FLOAT_TYPES:
            op = "uitofp" if frm in ("i1", "i8") else "sitofp"
        else:
            wider = INT_BITS[to] > INT_BITS[frm]
            op = ("extui" if frm in ("i1", "i8") else "extsi") if wider else "trunci"
        return self._def("arith.%s %s : %s to %s" % (op, a, frm, to), to)

    def all_of(self, conds):
        out = conds[0]
        for c in conds[1:]:
            out = self.andi(out, c)
        return out


# ===----------------------------------------------------------------------===
# The emitter: SSA names, types, ops with phase and cost
# ===----------------------------------------------------------------------===


class Out:
    """An output of a linalg.generic: element type, the loop dimension of each
    of its dims, and its destination: None (tensor.empty), a Python number
    (tensor.empty + linalg.fill) or a Value written in place."""

    def __init__(self, dtype, exprs, init=None):
        self.dtype, self.exprs, self.init = dtype, exprs, init


class Emitter:
    """Writes the ops of one function. Every op gets `remat.phase` and
    `remat.cost`; every tensor.empty has one use, as the start of a
    destination chain. Ops get the current `phase`, except views (collapse,
    expand, extract_slice), which get their source's: a view belongs to its
    source's node in the training graph, and its phase marker would
    override that node's."""

    def __init__(self, module, annotate=True):
        self.module = module
        self.annotate = annotate
        self.ops = []
        self.taken = set()
        self.phase = None
        self.scalars = {}
        self.splats = {}
        self.constants = set()
        self.arguments = set()
        self._materialized = {}
        self._phase_of = {}
        self._suffix = {}

    # -- names and attributes ------------------------------------------------
    def fresh(self, hint, phase=None):
        """A new SSA name from `hint` for a result of the given phase (default
        the current one); never one of Body's names (%in0, %out0, %v0)."""
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "t"
        if base[0].isdigit() or re.fullmatch(r"(in|out|v)\d+", base):
            base = "t_" + base
        name, k = base, self._suffix.get(base, 0)
        while name in self.taken:
            k += 1
            name = "%s_%d" % (base, k)
        self._suffix[base] = k
        self.taken.add(name)
        self._phase_of["%" + name] = phase or self.phase
        return "%" + name

    def view_phase(self, source):
        """The phase of a view of `source` (an SSA name)."""
        return self._phase_of.get(source.split("#")[0], self.phase)

    def attrs(self, cost, phase=None):
        """The op's attribute dictionary (with a leading space), or ""."""
        if not self.annotate:
            return ""
        phase = phase or self.phase
        parts = []
        if phase is not None:
            parts.append('remat.phase = "%s"' % phase)
        parts.append("remat.cost = %s" % f64_attr(cost))
        return " {" + ", ".join(parts) + "}"

    def emit(self, line):
        """Starts a new top-level op (generic bodies append to it)."""
        self.ops.append(["  " + line])

    DEF = re.compile(r"\s*(%[\w$.-]+)(?::\d+)? = ")
    USE = re.compile(r"%[\w$.-]+")

    def lines(self):
        """The function body without dead ops (a rule may compute outputs
        nothing reads, e.g. statistics that only feed an unused result)."""
        live, kept = set(), []
        for op in reversed(self.ops):
            m = self.DEF.match(op[0])
            if m and m.group(1) not in live and "func.call" not in op[0]:
                continue
            kept.append(op)
            text = "\n".join(op)
            live.update(self.USE.findall(text[m.end():] if m else text))
        return [line for op in reversed(kept) for line in op]

    # -- constants (prelude ops, no phase) -------------------------------------
    def scalar(self, value, dtype):
        key = (scalar_literal(value, dtype), dtype)
        if key not in self.scalars:
            name = self.fresh("c_" + dtype)
            self.emit("%s = arith.constant %s : %s" % (name, key[0], dtype))
            self.scalars[key] = name
        return self.scalars[key]

    def splat(self, value, shape, dtype, hint="splat"):
        """A constant tensor with every element `value` (read-only)."""
        key = (scalar_literal(value, dtype), tuple(shape), dtype)
        if key not in self.splats:
            name = self.fresh(hint)
            self.emit("%s = arith.constant dense<%s> : %s"
                      % (name, key[0], tensor_type(shape, dtype)))
            self.constants.add(name)
            self.splats[key] = Value(name, shape, dtype)
        return self.splats[key]

    def tensor_constant(self, tensor, hint):
        """A torch tensor as a constant, its bytes as a hex literal (exact)."""
        dtype = mlir_dtype(tensor.dtype)
        if isinstance(tensor, FakeTensor):
            # A constant the model made while traced on fake inputs: fake
            # tensor mode keeps its value.
            if tensor.constant is None:
                raise ExportError("the traced graph holds a tensor '%s' whose value the "
                                  "trace did not keep" % hint)
            tensor = tensor.constant
        array = tensor.detach().cpu().numpy()
        if dtype == "i8":
            array = array.astype(np.int8)
        name = self.fresh(hint)
        data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"))
        self.emit('%s = arith.constant dense<"0x%s"> : %s'
                  % (name, data.tobytes().hex().upper(), tensor_type(array.shape, dtype)))
        self.constants.add(name)
        return Value(name, array.shape, dtype)

    def dense(self, values, dtype, hint):
        """A 1-d constant tensor."""
        name = self.fresh(hint)
        text = ", ".join(scalar_literal(v, dtype) for v in values)
        self.emit("%s = arith.constant dense<[%s]> : %s"
                  % (name, text, tensor_type([len(values)], dtype)))
        self.constants.add(name)
        return Value(name, [len(values)], dtype)

    # -- destinations ----------------------------------------------------------
    def empty(self, shape, dtype, hint):
        name = self.fresh(hint + "_empty")
        self.emit("%s = tensor.empty()%s : %s"
                  % (name, self.attrs(0), tensor_type(shape, dtype)))
        return name

    def filled(self, value, shape, dtype, hint):
        """tensor.empty + linalg.fill: a fresh tensor of `value`."""
        empty = self.empty(shape, dtype, hint)
        name = self.fresh(hint + "_init")
        ty = tensor_type(shape, dtype)
        self.emit("%s = linalg.fill%s ins(%s : %s) outs(%s : %s) -> %s"
                  % (name, self.attrs(prod(shape)), self.scalar(value, dtype),
                     dtype, empty, ty, ty))
        return Value(name, shape, dtype)

    # -- linalg.generic --------------------------------------------------------
    def generic(self, hint, ranges, iterators, ins, outs, body_fn):
        """Emits a linalg.generic over the loop `ranges`. `ins` are pairs
        (Value, exprs) where exprs[i] is the loop expression of the value's
        logical dim i; `outs` are Out. `body_fn(body, in_args, out_args)`
        returns the yielded names. Its remat.cost is the number of iteration
        points times the body's arithmetic ops (at least one: a copy moves
        one element per point). Returns the results as Values."""
        ndims = len(ranges)
        ins = list(ins)
        # An operand dim indexed by a loop alone must have the loop's size
        # (linalg infers loop ranges from such dims): a sub-range view reads
        # a tensor.extract_slice of exactly its range.
        for k, (v, exprs) in enumerate(ins):
            if not v.is_base() and any(
                    e.compose(exprs).pure_dim() is not None and
                    v.base_shape[j] != ranges[e.compose(exprs).pure_dim()]
                    for j, e in enumerate(v.index)):
                ins[k] = (self.tighten(v), exprs)
        maps = [[e.compose(exprs) for e in v.index] for v, exprs in ins]
        # linalg infers every loop range from an operand dim indexed by that
        # loop alone: a loop seen only through a broadcast or strided view
        # needs the view as a tensor of its own.
        out_maps = [o.exprs for o in outs]
        for d in range(ndims):
            if self._has_pure(d, maps + out_maps):
                continue
            for k, (v, exprs) in enumerate(ins):
                if not v.is_base() and any(e.pure_dim() == d for e in exprs):
                    v = self.materialize(v, contiguous=False)
                    ins[k] = (v, exprs)
                    maps[k] = [e.compose(exprs) for e in v.index]
                    break
            else:
                raise AssertionError("loop d%d of %s is not inferable" % (d, hint))
        body = Body(self, [v.dtype for v, _ in ins], [o.dtype for o in outs])
        yields = body_fn(body, body.ins, body.outs)
        for y, o in zip(yields, outs):
            assert body.types[y] == o.dtype, (hint, body.types[y], o.dtype)
        shapes = [[ranges[e.pure_dim()] for e in o.exprs] for o in outs]
        inits = []
        for o, shape in zip(outs, shapes):
            if isinstance(o.init, Value):
                assert o.init.is_base() and list(o.init.shape) == shape
                inits.append(o.init)
            elif o.init is None:
                inits.append(Value(self.empty(shape, o.dtype, hint), shape, o.dtype))
            else:
                inits.append(self.filled(o.init, shape, o.dtype, hint))
        cost = prod(ranges) * max(1, body.arith_ops)
        name = self.fresh(hint)
        res = name if len(outs) == 1 else "%s:%d" % (name, len(outs))
        map_text = ", ".join(self.module.affine_map(ndims, m) for m in maps + out_maps)
        its = ", ".join('"%s"' % it for it in iterators)
        text = "%s = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}" \
            % (res, map_text, its)
        if ins:
            text += " ins(%s : %s)" % (", ".join(v.ssa for v, _ in ins),
                                       ", ".join(v.type for v, _ in ins))
        text += " outs(%s : %s)" % (", ".join(i.ssa for i in inits),
                                    ", ".join(i.type for i in inits))
        attrs = self.attrs(cost)
        text += (" attrs =%s {" % attrs) if attrs else " {"
        self.emit(text)
        args = ["%s: %s" % (a, body.types[a]) for a in body.ins + body.outs]
        op = self.ops[-1]
        op.append("  ^bb0(%s):" % ", ".join(args))
        op.extend(body.lines)
        op.append("    linalg.yield %s : %s"
                  % (", ".join(yields), ", ".join(body.types[y] for y in yields)))
        types = [i.type for i in inits]
        op.append("  } -> %s" % (types[0] if len(types) == 1 else "(%s)" % ", ".join(types)))
        if len(outs) == 1:
            return [Value(name, shapes[0], outs[0].dtype)]
        return [Value("%s#%d" % (name, k), s, o.dtype)
                for k, (s, o) in enumerate(zip(shapes, outs))]

    @staticmethod
    def _has_pure(d, maps):
        return any(e.pure_dim() == d for m in maps for e in m)

    def map_value(self, hint, x, fn, dtype=None):
        """out[i] = fn(x[i]) over x's shape."""
        rank = len(x.shape)
        return self.generic(hint, x.shape, ["parallel"] * rank,
                            [(x, dims(rank))],
                            [Out(dtype or x.dtype, dims(rank))],
                            lambda b, i, o: [fn(b, i[0])])[0]

    def tighten(self, v):
        """v as a view of the tensor.extract_slice of its base that covers
        exactly the elements it reads (per base dim: a strided range when
        one logical dim indexes it, else the bounding range)."""
        key = ("tight", id(v))
        if key not in self._materialized:
            offsets, sizes, strides, index = [], [], [], []
            for e in v.index:
                if len(e.coeffs) == 1 and next(iter(e.coeffs.values())) > 0:
                    (d, c), = e.coeffs.items()
                    offsets.append(e.const)
                    sizes.append(v.shape[d])
                    strides.append(c)
                    index.append(Aff.dim(d))
                    continue
                lo = e.const + sum(min(0, c * (v.shape[d] - 1)) for d, c in e.coeffs.items())
                hi = e.const + sum(max(0, c * (v.shape[d] - 1)) for d, c in e.coeffs.items())
                offsets.append(lo)
                sizes.append(hi - lo + 1)
                strides.append(1)
                index.append(e - lo)
            phase = self.view_phase(v.ssa)
            name = self.fresh(v.ssa.lstrip("%").split("#")[0] + "_slice", phase)
            self.emit("%s = tensor.extract_slice %s[%s] [%s] [%s]%s : %s to %s"
                      % (name, v.ssa, ", ".join(map(str, offsets)), ", ".join(map(str, sizes)),
                         ", ".join(map(str, strides)), self.attrs(0, phase), v.type,
                         tensor_type(sizes, v.dtype)))
            self._materialized[key] = (v, Value(name, v.shape, v.dtype, sizes, index,
                                                contiguous=False))
        return self._materialized[key][1]

    def result(self, v):
        """The value as a function result: a tensor of its own (a copy of a
        view, of an argument or of a constant, which bufferizes to a global)."""
        if v.ssa in self.constants or v.ssa in self.arguments:
            return self.map_value(v.ssa.lstrip("%") + "_copy", v, lambda b, x: x)
        return self.materialize(v)

    def materialize(self, v, contiguous=True):
        """The value as an SSA tensor: itself, a tensor.extract_slice (a view,
        unless `contiguous` is required) or a copy."""
        if v.is_base() and (v.contiguous or not contiguous):
            return v
        key = (id(v), contiguous)
        if key not in self._materialized:
            hint = v.ssa.lstrip("%").split("#")[0].split(":")[0] + "_view"
            params = None if contiguous else v.slice_params()
            if v.contiguous and v.is_row_major_reshape():
                out = self._ir_reshape(Value(v.ssa, v.base_shape, v.dtype), v.shape, hint)
            elif params is not None:
                offsets, strides = params
                sizes = [1 if not e.coeffs else v.shape[next(iter(e.coeffs))]
                         for e in v.index]
                phase = self.view_phase(v.ssa)
                name = self.fresh(hint, phase)
                self.emit("%s = tensor.extract_slice %s[%s] [%s] [%s]%s : %s to %s"
                          % (name, v.ssa, ", ".join(map(str, offsets)),
                             ", ".join(map(str, sizes)), ", ".join(map(str, strides)),
                             self.attrs(0, phase), v.type, tensor_type(v.shape, v.dtype)))
                out = Value(name, v.shape, v.dtype, contiguous=False)
            else:
                out = self.map_value(hint, v, lambda b, x: x)
            self._materialized[key] = (v, out)
        return self._materialized[key][1]

    # -- tensor ops ------------------------------------------------------------
    def insert_slice(self, src, dst, offsets, strides, hint):
        src = self.materialize(src, contiguous=False)
        name = self.fresh(hint)
        self.emit("%s = tensor.insert_slice %s into %s[%s] [%s] [%s]%s : %s into %s"
                  % (name, src.ssa, dst.ssa, ", ".join(map(str, offsets)),
                     ", ".join(map(str, src.shape)), ", ".join(map(str, strides)),
                     self.attrs(src.numel), src.type, dst.type))
        return Value(name, dst.shape, dst.dtype)

    def reshape(self, v, shape, hint):
        """aten.view/reshape semantics: the same elements in row-major order.
        A view when it only splits dims or adds/drops unit dims, else
        tensor.collapse_shape/expand_shape of the value as a tensor."""
        shape = tuple(shape)
        assert prod(shape) == v.numel, (v.shape, shape)
        if shape == v.shape:
            return v
        lazy = self._split_view(v, shape, reassociation(v.shape, shape))
        if lazy is not None:
            return lazy
        return self._ir_reshape(self.materialize(v), shape, hint)

    def _ir_reshape(self, v, shape, hint):
        """collapse_shape then expand_shape (views of a contiguous tensor)."""
        groups = reassociation(v.shape, shape)
        cur = v
        if any(len(gs) != 1 for gs, _ in groups) or not groups:
            if cur.shape:
                mid = [prod(v.shape[i] for i in gs) for gs, _ in groups]
                phase = self.view_phase(cur.ssa)
                name = self.fresh(hint, phase)
                self.emit("%s = tensor.collapse_shape %s [%s]%s : %s into %s"
                          % (name, cur.ssa, ", ".join(str(gs) for gs, _ in groups),
                             self.attrs(0, phase), cur.type, tensor_type(mid, v.dtype)))
                cur = Value(name, mid, v.dtype)
        if any(len(gd) != 1 for _, gd in groups) or not groups:
            if shape:
                phase = self.view_phase(cur.ssa)
                name = self.fresh(hint, phase)
                self.emit("%s = tensor.expand_shape %s [%s] output_shape [%s]%s : %s into %s"
                          % (name, cur.ssa, ", ".join(str(gd) for _, gd in groups),
                             ", ".join(map(str, shape)), self.attrs(0, phase), cur.type,
                             tensor_type(shape, v.dtype)))
                cur = Value(name, shape, v.dtype)
        return cur

    @staticmethod
    def _split_view(v, shape, groups):
        """The reshape as a view when it only splits dims and adds or drops
        unit dims (each old index is then affine in the new ones)."""
        old = [Aff(const=0) for _ in v.shape]
        for gs, gd in groups:
            big = [i for i in gs if v.shape[i] != 1]
            if len(big) > 1:
                return None
            if big:
                expr, stride = Aff(), 1
                for j in reversed(gd):
                    expr = expr + Aff.dim(j) * stride
                    stride *= shape[j]
                old[big[0]] = expr
        return v.viewed(shape, old)

    def place(self, x, lo, stride, size, fill, hint):
        """Spreads the trailing spatial dims of x into a tensor of spatial
        shape `size` filled with `fill`: x[..., o] lands at lo + o * stride
        (elements falling outside are dropped). Padding is stride 1,
        zero insertion stride > 1; implemented as fill + strided insert_slice
        (one destination chain)."""
        k = len(lo)
        lead, spatial = list(x.shape[:-k]), list(x.shape[-k:])
        if list(lo) == [0] * k and list(stride) == [1] * k and list(size) == spatial:
            return x
        dst = self.filled(fill, lead + list(size), x.dtype, hint)
        src, offsets = x, []
        for j in range(k):
            # o lands inside iff 0 <= lo + o * stride <= size - 1.
            o_min = 0 if lo[j] >= 0 else (-lo[j] + stride[j] - 1) // stride[j]
            o_max = min(spatial[j], (size[j] - 1 - lo[j]) // stride[j] + 1)
            if o_min >= o_max:
                return dst
            if o_min > 0 or o_max < spatial[j]:
                src = src.sliced(len(lead) + j, o_min, o_max - o_min)
            offsets.append(lo[j] + o_min * stride[j])
        return self.insert_slice(src, dst, [0] * len(lead) + offsets,
                                 [1] * len(lead) + list(stride), hint)


class Module:
    """A module's text: interned affine maps and its functions. With
    `inline_maps`, ops spell their maps out (`affine_map<...>`) instead of
    naming `#mapN` aliases: text that can be pasted into another module."""

    def __init__(self, inline_maps=False):
        self.maps = {}
        self.functions = []
        self.inline_maps = inline_maps

    def affine_map(self, ndims, results):
        text = "affine_map<(%s) -> (%s)>" % (
            ", ".join("d%d" % i for i in range(ndims)),
            ", ".join(e.render() for e in results))
        if self.inline_maps:
            return text
        if text not in self.maps:
            self.maps[text] = "#map%d" % len(self.maps)
        return self.maps[text]

    def render(self, header):
        lines = list(header) + [""]
        lines += ["%s = %s" % (alias, text) for text, alias in self.maps.items()]
        for f in self.functions:
            lines += [""] + f
        return "\n".join(lines) + "\n"
