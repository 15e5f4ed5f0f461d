#!/usr/bin/python3
"""Export a PyTorch training step to a linalg-on-tensors MLIR training step.

Usage (run with Debian's /usr/bin/python3, which has torch 1.13 and functorch):

  torch_export.py MODEL [--batch N] [--size H W | --seq N] -o STEP.mlir
                  [--graph GRAPH.json] [--forward-only] [--reference]
                  [--classes N] [--layers N] [--vocab N] [--activation gelu|relu]
                  [--dtype f32|f64] [--decompose]
                  [--partition default|min-cut [--stats STATS.json]]
                  [--no-main | --main-only]

MODEL is a torchvision classifier (`resnet18`, `mobilenet_v2`, ...),
`transformer` (an encoder language model defined here) or `unet` (a small
segmentation U-Net defined here). The model is built in train mode, its loss
(cross entropy) traced with functorch's AOT autograd into one joint forward +
backward graph of ATen ops, and every ATen op of that graph translated to
`linalg.generic` / `linalg.fill` / `tensor` ops on statically shaped tensors
(DESIGN.md section 4):

  func.func @train_step(data, target, params {remat.param}..., buffers...,
                        dropout masks...)
      -> (tensor<f32> {remat.loss}, d(param) for every param)

The joint graph's loss tangent becomes `arith.constant {remat.seed} 1.0`;
every op carries `remat.phase` (forward = what the loss depends on) and
`remat.cost` (FLOPs: iteration points times arithmetic ops of the body, one
per point for pure data movement, zero for views). Dropout (and torchvision's
stochastic depth) is traced as a multiplication by a 0/1 mask argument, so
that the step is deterministic.

The module also holds `func.func @main()`, which builds every argument as a
formula of its element index (integer arithmetic, one conversion to f32, one
multiplication by an f32 scale; see `Init`), calls the step and prints the
loss, then for every gradient its sum and its sum of absolute values (f64).
`--reference` prints the same numbers from PyTorch eager on the same inputs;
python/remat/compare_numbers.py compares the two.

Numerics follow PyTorch's CPU kernels where they matter: contractions
(matmul, convolution) accumulate with fused multiply-adds in the tensor's
type; batch-norm statistics and softmax row sums accumulate in f64 (ATen's
accumulation type). `--dtype f64` exports and runs the reference in double
precision: float32 results of deep networks at initialization can differ
from float64 by far more than 1e-4 (PyTorch's own float32 results do), so
f64 is the exact check of the translation.

`--forward-only` writes the forward step (loss only, no backward, no seed).
`--no-main` leaves @main out. `--main-only` writes only the @main of the
training step (and the declarations it calls), with its affine maps inline
and no surrounding module: `remat-opt --remat-autodiff` turns a
`--forward-only --no-main` step into a training step, and this text, pasted
before the last `}` of its output, runs it like the exported training step.
`--graph` also writes the step's training graph as JSON, as remat-opt's
`--remat-export-graph` extracts it (REMAT_OPT, else build/bin/remat-opt,
else remat-opt on the PATH).

`--partition default|min-cut` writes the step as PyTorch itself would run it:
functorch's default_partition or min_cut_rematerialization_partition (traced
with its default decompositions) splits the joint graph into a forward graph
and a backward graph that recomputes what was not saved; the step runs the
first, then the second (`--stats` writes what was saved and recomputed).
`remat-opt --remat-report="solver=none"` then gives the peak of PyTorch's
choice in our simulator (bench/bench_models.py). `--decompose` alone traces
the joint graph with the same decompositions, the baseline of min-cut's
recompute overhead.

An ATen op without a translation rule is an error (exit code 1) that names it.
Every argument is checked before anything is traced (sizes, the model's
accepted image size, that every output can be written), and every failure
is one line naming the model and the cause (REMAT_EXPORT_TRACEBACK=1 adds
the traceback of an unexpected one). Outputs are written atomically (a
temporary file renamed over the target). The trace sees the data, target and
masks as fake tensors (shapes, no values), so that a large --batch exports
without materialising its inputs; only --reference builds them.
"""

import argparse
import importlib.util
import json
import math
import operator
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from functorch.compile import (aot_function, default_decompositions, default_partition,
                               min_cut_rematerialization_partition)
from torch.nn.utils.stateless import functional_call
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
import functorch._src.aot_autograd as _aot_autograd
import functorch._src.config as _aot_config

# The module of torchvision.ops.stochastic_depth (the package attribute of that
# name is the function), whose function StochasticDepth calls.
STOCHASTIC_DEPTH = sys.modules["torchvision.ops.stochastic_depth"]

PROG = "torch_export.py"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class ExportError(Exception):
    """A user-facing error: printed as `torch_export.py: error: ...`."""


class Unsupported(Exception):
    """Raised by a translation rule for arguments it does not handle."""


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


# ===----------------------------------------------------------------------===
# Translation of the joint graph
# ===----------------------------------------------------------------------===

RULES = {}


def rule(*names):
    """Registers a translation rule for the named ATen overloads. A rule is
    called as fn(tr, node, *args, **kwargs) with tensors as Values."""
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return register


def aten_name(target):
    return str(target)


DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64",
          torch.int32: "i32", torch.bool: "i8"}


def mlir_dtype(torch_dtype):
    if torch_dtype not in DTYPES:
        raise Unsupported("dtype %s" % torch_dtype)
    return DTYPES[torch_dtype]


class Translator:
    """Translates the live nodes of a joint graph, in order, with RULES."""

    def __init__(self, model_name, em, forward, live):
        self.model_name = model_name
        self.em = em
        self.forward = forward
        self.live = live
        self.env = {}
        self.node = None

    def used_outputs(self, node):
        """Indices of the live getitem users of a multi-output node."""
        return {u.args[1] for u in node.users if u in self.live}

    def value(self, arg):
        if isinstance(arg, torch.fx.Node):
            return self.env[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.value(a) for a in arg)
        return arg

    def run(self, nodes):
        for node in nodes:
            self.node = node
            self.em.phase = "forward" if node in self.forward else "backward"
            if node.target is operator.getitem:
                self.env[node] = self.value(node.args[0])[node.args[1]]
                continue
            fn = RULES[aten_name(node.target)]
            args = [self.value(a) for a in node.args]
            kwargs = {k: self.value(v) for k, v in node.kwargs.items()}
            try:
                self.env[node] = fn(self, node, *args, **kwargs)
            except Unsupported as e:
                raise ExportError("model '%s': cannot translate %s (node '%s': %s)"
                                  % (self.model_name, aten_name(node.target),
                                     node.name, e))


def norm_dim(d, rank):
    return d + rank if d < 0 else d


def pair(v, k):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * k if len(v) == 1 else v


def broadcast_shapes(shapes):
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s):
            j = rank - len(s) + i
            if d != 1:
                if out[j] not in (1, d):
                    raise Unsupported("shapes %s do not broadcast" % shapes)
                out[j] = d
    return out


def result_dtype(operands):
    """ATen type promotion for our dtypes: floats win over ints, Python
    floats make an integer computation f32, bool alone stays bool."""
    tensors = [o.dtype for o in operands if isinstance(o, Value)]
    if "f64" in tensors:
        return "f64"
    if "f32" in tensors:
        return "f32"
    if any(isinstance(o, float) for o in operands):
        return "f32"
    for t in ("i64", "i32", "i8"):
        if t in tensors:
            return t
    return "i64" if any(isinstance(o, int) and not isinstance(o, bool)
                        for o in operands) else "f32"


def pointwise(tr, operands, fn, out_dtype=None, compute_dtype=None, hint=None,
              operand_types=None):
    """Elementwise op with broadcasting: fn(body, *scalars) on the operands
    converted to the computation type, or to operand_types[k] where given
    (Python numbers become constants)."""
    compute = compute_dtype or result_dtype(operands)
    out_dtype = out_dtype or compute
    types = operand_types or [compute] * len(operands)
    tensors = [o for o in operands if isinstance(o, Value)]
    shape = broadcast_shapes([t.shape for t in tensors])
    rank = len(shape)
    ins = []
    for t in tensors:
        lead = rank - len(t.shape)
        exprs = [Aff(const=0) if size == 1 and shape[lead + i] != 1 else Aff.dim(lead + i)
                 for i, size in enumerate(t.shape)]
        ins.append((t, exprs))

    def body(b, args, outs):
        it = iter(args)
        scalars = [b.convert(next(it), t) if isinstance(o, Value) else b.cst(o, t)
                   for o, t in zip(operands, types)]
        return [b.convert(fn(b, *scalars), out_dtype)]
    return tr.em.generic(hint or tr.node.name, shape, ["parallel"] * rank, ins,
                         [Out(out_dtype, dims(rank))], body)[0]


def reduce_layout(shape, red):
    """Loops over `shape` with the dims in `red` reduced: iterators and the
    output's loop exprs (the kept dims)."""
    its = ["reduction" if i in red else "parallel" for i in range(len(shape))]
    out = [Aff.dim(i) for i in range(len(shape)) if i not in red]
    return its, out


def reduce_sum(tr, x, red, hint, fn=None, extra=(), dtype=None):
    """out[kept] = sum over `red` of fn(body, x, *extra) (default x); extra
    are (Value, exprs) inputs indexed by the loops over x's shape."""
    its, out = reduce_layout(x.shape, red)
    dtype = dtype or x.dtype
    rank = len(x.shape)

    def body(b, args, outs):
        val = fn(b, *args) if fn else args[0]
        return [b.add(outs[0], val)]
    return tr.em.generic(hint, x.shape, its, [(x, dims(rank))] + list(extra),
                         [Out(dtype, out, 0)], body)[0]


def keep_dims(tr, v, shape, red, hint):
    """A reduced value reshaped with unit dims at `red` (keepdim=True)."""
    return tr.em.reshape(v, [1 if i in red else d for i, d in enumerate(shape)], hint)


def expr_over(v, loop_dims):
    """A (Value, exprs) input whose logical dim i is loop dim loop_dims[i]
    (None: index 0 of a unit dim)."""
    return (v, [Aff(const=0) if d is None else Aff.dim(d) for d in loop_dims])


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


# -- pointwise ------------------------------------------------------------------


def _float_only(*operands):
    if any(isinstance(o, Value) and o.dtype not in FLOAT_TYPES for o in operands):
        raise Unsupported("integer operands")


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
        _float_only(x)
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
    _float_only(x)
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
    _float_only(x)

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
    _float_only(x)
    red = _reduce_dims(x, dim)
    s = reduce_sum(tr, x, red, node.name + "_sum")
    count = float(prod(x.shape[i] for i in red))
    m = tr.em.map_value(node.name, s, lambda b, v: b.divf(v, b.cst(count, b.types[v])))
    return keep_dims(tr, m, x.shape, red, node.name) if keepdim else m


@rule("aten.norm.ScalarOpt_dim", "aten.norm.Scalar")
def _norm(tr, node, x, p=2, dim=None, keepdim=False):
    """The p-norm over dim: sqrt(sum(x^2)) for p = 2, else
    (sum |x|^p)^(1 / p)."""
    _float_only(x)
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
    _float_only(x)
    red = _reduce_dims(x, dim)
    its, out = reduce_layout(x.shape, red)
    m = tr.em.generic(node.name, x.shape, its, [(x, dims(len(x.shape)))],
                      [Out(x.dtype, out, -math.inf)],
                      lambda b, i, o: [b.maxf(o[0], i[0])])[0]
    return keep_dims(tr, m, x.shape, red, node.name) if keepdim else m


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
    _float_only(x)
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
    _float_only(x)
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
    _float_only(x)
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
    _float_only(x)
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
    _float_only(x)
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


# ===----------------------------------------------------------------------===
# Models
# ===----------------------------------------------------------------------===


class SelfAttention(nn.Module):
    """Multi-head self-attention with explicit linear / bmm / softmax."""

    def __init__(self, d_model, heads, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        hd = d // h

        def split_heads(t):
            return t.reshape(b, s, h, hd).transpose(1, 2).reshape(b * h, s, hd)
        q, k, v = (split_heads(t) for t in self.qkv(x).split(d, dim=-1))
        att = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(hd)
        att = self.drop(torch.softmax(att, dim=-1))
        y = torch.bmm(att, v).reshape(b, h, s, hd).transpose(1, 2).reshape(b, s, d)
        return self.out(y)

class EncoderLayer(nn.Module):
    """Pre-norm Transformer encoder layer."""

    def __init__(self, d_model, heads, d_ff, dropout, activation):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, heads, dropout)
        self.drop1 = nn.Dropout(dropout)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, d_ff)
        self.act = nn.GELU() if activation == "gelu" else nn.ReLU()
        self.ff2 = nn.Linear(d_ff, d_model)
        self.drop2 = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop1(self.attn(self.norm1(x)))
        return x + self.drop2(self.ff2(self.act(self.ff1(self.norm2(x)))))

class TransformerLM(nn.Module):
    """Token embedding + learned positions, encoder layers, final norm,
    a linear head over the vocabulary (token-level logits)."""

    def __init__(self, vocab, seq, d_model=256, heads=4, d_ff=1024, layers=6,
                 dropout=0.1, activation="gelu"):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(seq, d_model))
        self.drop = nn.Dropout(dropout)
        self.layers = nn.ModuleList(EncoderLayer(d_model, heads, d_ff, dropout, activation)
                                    for _ in range(layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        x = self.drop(self.embed(tokens) + self.pos)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))

class ConvBlock(nn.Sequential):
    """(conv3x3 - batch norm - ReLU) x 2."""

    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

class UNet(nn.Module):
    """A small U-Net: conv blocks, 2x2 max-pool down, ConvTranspose2d(2,
    stride 2) up, skip connections concatenated, 1x1 conv head."""

    def __init__(self, classes, cin=3, base=16, depth=3):
        super().__init__()
        ch = [base * 2 ** i for i in range(depth + 1)]
        self.down = nn.ModuleList(ConvBlock(cin if i == 0 else ch[i - 1], ch[i])
                                  for i in range(depth))
        self.pool = nn.MaxPool2d(2)
        self.mid = ConvBlock(ch[depth - 1], ch[depth])
        self.up = nn.ModuleList(nn.ConvTranspose2d(ch[i + 1], ch[i], 2, stride=2)
                                for i in reversed(range(depth)))
        self.dec = nn.ModuleList(ConvBlock(2 * ch[i], ch[i])
                                 for i in reversed(range(depth)))
        self.head = nn.Conv2d(ch[0], classes, 1)

    def forward(self, x):
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = self.pool(x)
        x = self.mid(x)
        for up, block in zip(self.up, self.dec):
            x = block(torch.cat([skips.pop(), up(x)], dim=1))
        return self.head(x)


UNET_DEPTH = 3


class ModelSpec:
    """A model with its inputs: data (shape, dtype, Init), target (shape,
    number of classes) and the loss on its output."""

    def __init__(self, name, module, data_shape, data_int, target_shape, classes, loss):
        self.name, self.module = name, module
        self.dtype = "f32"
        self.data_shape, self.data_int = list(data_shape), data_int
        self.target_shape, self.classes = list(target_shape), classes
        self.loss = loss


def build_model(args):
    """The ModelSpec of args.model, in double precision with --dtype f64."""
    spec = _build_model(args)
    if args.dtype == "f64":
        spec.module.double()
        spec.dtype = "f64"
    return spec


def _build_model(args):
    torch.manual_seed(0)
    name = args.model
    cross_entropy = lambda out, t: F.cross_entropy(out, t)
    if name == "transformer":
        if args.size:
            raise ExportError("model 'transformer' takes --seq, not --size")
        seq = 128 if args.seq is None else args.seq
        module = TransformerLM(args.vocab, seq, layers=args.layers, activation=args.activation)
        loss = lambda out, t: F.cross_entropy(out.reshape(-1, out.shape[-1]), t.reshape(-1))
        return ModelSpec(name, module, [args.batch, seq], True, [args.batch, seq],
                         args.vocab, loss)
    if args.seq:
        raise ExportError("model '%s' takes --size, not --seq" % name)
    h, w = args.size or (224, 224)
    if name == "unet":
        if h % 2 ** UNET_DEPTH or w % 2 ** UNET_DEPTH:
            raise ExportError("model 'unet': --size must be divisible by %d"
                              % 2 ** UNET_DEPTH)
        module = UNet(args.classes or 4, depth=UNET_DEPTH)
        return ModelSpec(name, module, [args.batch, 3, h, w], False, [args.batch, h, w],
                         args.classes or 4, cross_entropy)
    classes = args.classes or 1000
    if args.model_module:
        spec = importlib.util.spec_from_file_location("remat_user_model", args.model_module)
        user = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(user)
        module = user.build_model(name, classes)
    else:
        known = torchvision.models.list_models(module=torchvision.models)
        if name not in known:
            raise ExportError("unknown model '%s': expected transformer, unet or a "
                              "torchvision classifier (%s)" % (name, ", ".join(known)))
        extra = {"aux_logits": False, "init_weights": False} \
            if name in ("googlenet", "inception_v3") else {}
        module = torchvision.models.get_model(name, weights=None, num_classes=classes, **extra)
    # A vision transformer's patch embedding is built for one image size.
    fixed = getattr(module, "image_size", None)
    if isinstance(fixed, int) and (h, w) != (fixed, fixed):
        raise ExportError("model '%s' takes images of %dx%d only (--size %d %d), not %dx%d"
                          % (name, fixed, fixed, fixed, fixed, h, w))
    return ModelSpec(name, module, [args.batch, 3, h, w], False, [args.batch], classes,
                     cross_entropy)


# ===----------------------------------------------------------------------===
# Deterministic inputs
# ===----------------------------------------------------------------------===

HASH_P = 65521          # prime modulus of the element hash
HASH_M = 40503
HALF = (HASH_P - 1) // 2


class Init:
    """How @main fills one argument, reproducible bit for bit by numpy:
      x = (linear index + salt) mod P
      h = (((x * M + 1) mod P) * x + salt) mod P         in [0, P), i64
      float:  f32(h + offset) * f32(scale)
      int:    h mod modulo
      mask:   f32((h mod 1000) < keep) * 1.0             (0/1 dropout mask)"""

    def __init__(self, kind, salt, offset=0, scale=1.0, modulo=1, keep=1000):
        self.kind, self.salt = kind, salt
        self.offset, self.scale = offset, np.float32(scale)
        self.modulo, self.keep = modulo, keep

    @staticmethod
    def uniform(salt, bound):
        """Uniform-ish in [-bound, bound]."""
        return Init("float", salt, -HALF, bound / HALF)

    @staticmethod
    def around_one(salt):
        """In [0.9, 1.1] (normalization weights, variances)."""
        return Init("float", salt, 9 * HALF, 0.1 / HALF)

    # Elements computed at a time: the int64 temporaries of the formula cost
    # 8 bytes per element each, several times the result, if made for all.
    CHUNK = 1 << 20

    def numpy(self, shape):
        """The values, built chunk by chunk into the result: no more memory
        than the result (and a chunk's temporaries) is ever used."""
        n = prod(shape)
        out = np.empty(n, dtype=np.int64 if self.kind == "int" else np.float32)
        for start in range(0, n, Init.CHUNK):
            lin = np.arange(start, min(n, start + Init.CHUNK), dtype=np.int64)
            x = (lin + self.salt) % HASH_P
            h = (((x * HASH_M + 1) % HASH_P) * x + self.salt) % HASH_P
            if self.kind == "int":
                out[start:start + len(lin)] = h % self.modulo
                continue
            if self.kind == "mask":
                v = ((h % 1000) < self.keep).astype(np.int64)
            else:
                v = h + self.offset
            out[start:start + len(lin)] = v.astype(np.float32) * self.scale
        return out.reshape(shape)

    def body(self, b, shape):
        """The element of the linear index of the generic's iteration point."""
        lin = None
        for d, size in enumerate(shape):
            i = b.convert(b.index(d), "i64")
            lin = i if lin is None else b.addi(b.muli(lin, b.cst(size, "i64")), i)
        lin = lin if lin is not None else b.cst(0, "i64")
        c = lambda v: b.cst(v, "i64")
        x = b.remsi(b.addi(lin, c(self.salt)), c(HASH_P))
        h = b.remsi(b.addi(b.muli(b.remsi(b.addi(b.muli(x, c(HASH_M)), c(1)), c(HASH_P)), x),
                           c(self.salt)), c(HASH_P))
        if self.kind == "int":
            return b.remsi(h, c(self.modulo))
        if self.kind == "mask":
            v = b.convert(b.cmpi("slt", b.remsi(h, c(1000)), c(self.keep)), "i64")
        else:
            v = b.addi(h, c(self.offset))
        return b.mulf(b.convert(v, "f32"), b.cst(float(self.scale), "f32"))


NORM_MODULES = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm",
                "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")


def parameter_inits(module, salt0):
    """Inits of the named parameters then the named buffers: Kaiming-uniform
    weights (bound sqrt(6 / fan_in)), unit-variance embeddings, normalization
    weights near 1, biases within 1 / sqrt(fan_in); buffers: variances near
    1, other floats small, integers (counters) 0."""
    owner = {}
    for mname, m in module.named_modules():
        for pname, _ in m.named_parameters(recurse=False):
            owner[(mname + "." if mname else "") + pname] = (m, pname)
        for bname, _ in m.named_buffers(recurse=False):
            owner[(mname + "." if mname else "") + bname] = (m, bname)
    params, buffers = [], []
    salt = salt0
    for name, p in module.named_parameters():
        m, local = owner[name]
        kind = type(m).__name__
        if kind in NORM_MODULES:
            init = Init.around_one(salt) if local == "weight" else Init.uniform(salt, 0.1)
        elif kind == "Embedding":
            init = Init.uniform(salt, math.sqrt(3.0))
        elif p.dim() >= 2:
            init = Init.uniform(salt, math.sqrt(6.0 / (p.numel() // p.shape[0])))
        elif local == "bias" and getattr(m, "weight", None) is not None and m.weight.dim() >= 2:
            init = Init.uniform(salt, 1.0 / math.sqrt(m.weight.numel() // m.weight.shape[0]))
        else:
            init = Init.uniform(salt, 0.1)
        params.append((name, p, init))
        salt += 1
    for name, buf in module.named_buffers():
        if not buf.dtype.is_floating_point:
            init = Init("int", salt, modulo=1)
        elif name.endswith("running_var"):
            init = Init.around_one(salt)
        else:
            init = Init.uniform(salt, 0.1)
        buffers.append((name, buf, init))
        salt += 1
    return params, buffers


# ===----------------------------------------------------------------------===
# Dropout as a mask argument
# ===----------------------------------------------------------------------===


class MaskedRandomness:
    """Replaces the random ops of a model while active: dropout
    (torch.nn.functional.dropout, which nn.Dropout calls) and torchvision's
    stochastic depth. In training, the k-th call returns
    input * mask_k * (1 / (1 - p)) with mask_k the k-th 0/1 tensor of
    `masks`, of the input's shape for dropout, (N, 1, ...) or (1, ...) for
    stochastic depth by row or by batch; with `masks` None it records the
    (mask shape, p) of each call instead and returns the input."""

    def __init__(self, masks=None):
        self.masks = masks
        self.calls = []

    def __enter__(self):
        self._saved = F.dropout, STOCHASTIC_DEPTH.stochastic_depth
        F.dropout = self._dropout
        STOCHASTIC_DEPTH.stochastic_depth = self._stochastic_depth
        return self

    def __exit__(self, *exc):
        F.dropout, STOCHASTIC_DEPTH.stochastic_depth = self._saved

    def _dropout(self, input, p=0.5, training=True, inplace=False):
        if not training or p == 0:
            return input
        return self._masked(input, list(input.shape), p)

    def _stochastic_depth(self, input, p, mode, training=True):
        if not training or p == 0:
            return input
        shape = [input.shape[0]] + [1] * (input.dim() - 1) if mode == "row" \
            else [1] * input.dim()
        return self._masked(input, shape, p)

    def _masked(self, input, shape, p):
        if p >= 1:
            return input * 0
        k = len(self.calls)
        self.calls.append((shape, p))
        if self.masks is None:
            return input
        return input * self.masks[k] * (1.0 / (1.0 - p))


# ===----------------------------------------------------------------------===
# The step: arguments, trace, translation
# ===----------------------------------------------------------------------===


class Arg:
    """An argument of @train_step: element type `dtype` (float arguments
    are built as f32 values, then widened when the step is f64)."""

    def __init__(self, name, shape, init, role, dtype, tensor=None):
        self.name, self.shape, self.init, self.role = name, list(shape), init, role
        self.dtype = dtype
        self.tensor = tensor   # the torch parameter / buffer, if any


def step_arguments(spec):
    """The arguments in order: data, target, parameters, buffers, masks
    (masks discovered by running the model once, recording its random ops)."""
    fdt = spec.dtype
    data_init = Init("int", 1, modulo=spec.classes) if spec.data_int else Init.uniform(1, 1.0)
    args = [Arg("data", spec.data_shape, data_init, "data", "i64" if spec.data_int else fdt),
            Arg("target", spec.target_shape, Init("int", 2, modulo=spec.classes), "target",
                "i64")]
    params, buffers = parameter_inits(spec.module, 3)
    args += [Arg(n, p.shape, i, "param", mlir_dtype(p.dtype), p) for n, p, i in params]
    args += [Arg(n, b.shape, i, "buffer", mlir_dtype(b.dtype), b) for n, b, i in buffers]
    spec.module.train()
    recorder = MaskedRandomness()
    # The model runs once on fake tensors (shapes only, no data): it records
    # the random ops' shapes and checks that PyTorch accepts the input shape
    # (a ViT's image size, batch norm's batch), without materialising the
    # data or any activation, whatever the batch.
    mode = FakeTensorMode()
    state = {n: mode.from_tensor(t) for n, t in
             list(spec.module.named_parameters()) + list(spec.module.named_buffers())}
    data = fake_input(mode, args[0])
    try:
        with torch.no_grad(), recorder, mode:
            functional_call(spec.module, state, (data,))
    except Exception as e:  # PyTorch's checks raise all kinds.
        raise ExportError("model '%s': PyTorch cannot run it on inputs of shape %s: %s"
                          % (spec.name, "x".join(map(str, spec.data_shape)),
                             one_line(e)))
    salt = 3 + len(params) + len(buffers)
    for k, (shape, p) in enumerate(recorder.calls):
        args.append(Arg("mask%d" % k, shape,
                        Init("mask", salt + k, keep=int(round((1 - p) * 1000))), "mask", fdt))
    return args


# Shape functions (Meta kernels) for the ATen ops that PyTorch 1.13 traces
# without one: fake tensor mode would otherwise run them for real on zeros of
# the inputs' shapes (10 GB for one convolution's backward at batch 100000).
# Registered only where PyTorch has none, for the traces of this process.
_META_LIBRARY = torch.library.Library("aten", "IMPL", "Meta")


def _meta_convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
                               dilation, transposed, output_padding, groups, output_mask):
    return (input.new_empty(input.shape) if output_mask[0] else None,
            weight.new_empty(weight.shape) if output_mask[1] else None,
            grad_output.new_empty(bias_sizes) if output_mask[2] and bias_sizes is not None
            else None)


def _meta_nll_loss2d_forward(input, target, weight, reduction, ignore_index):
    shape = target.shape if reduction == 0 else ()
    return input.new_empty(shape), input.new_empty(())


for _op, _fn in (("convolution_backward", _meta_convolution_backward),
                 ("nll_loss2d_forward", _meta_nll_loss2d_forward)):
    if not torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + _op, "Meta"):
        _META_LIBRARY.impl(_op, _fn)


def to_torch(arg):
    value = arg.init.numpy(arg.shape)
    return torch.from_numpy(value.astype(np.float64) if arg.dtype == "f64" else value)


def torch_dtype(arg):
    return {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64,
            "i32": torch.int32}[arg.dtype]


def fake_input(mode, arg):
    """A fake tensor of `arg`'s shape and type on the CPU: what tracing needs
    of the data, the target and the masks, without their values. Made
    outside the mode (inside it, the meta tensor would be faked again)."""
    return FakeTensor(mode, torch.empty(arg.shape, dtype=torch_dtype(arg), device="meta"),
                      torch.device("cpu"))


def one_line(error):
    """An exception's message on one line (PyTorch's span several)."""
    text = " ".join(str(error).split())
    return text if text else type(error).__name__


def load_state(spec, args):
    """Sets the module's parameters and buffers to their Init values."""
    with torch.no_grad():
        for a in args:
            if a.tensor is not None:
                a.tensor.copy_(to_torch(a).to(a.tensor.dtype))


class _JointCaptured(Exception):
    pass


def trace_joint(spec, args, decompose=False, partition=None):
    """The AOT-autograd joint graph module of loss(model(data), target):
    placeholders primals_1.. (the step's arguments in order) and tangents_1
    (the loss gradient), get_attr nodes for tensors the trace created;
    outputs [loss, grad of each primal (None if none)].

    `decompose` traces with functorch's default decompositions (the graph its
    min-cut partitioner works on). With `partition` (functorch's
    default_partition or min_cut_rematerialization_partition), the joint
    graph is split the way PyTorch runs it, and the module returned runs the
    forward graph, then the backward graph with what it recomputes, with the
    same placeholders and outputs (sequence_partitions); its `partition_stats`
    attribute says what the partitioner chose."""
    names = [a.name for a in args]
    roles = [a.role for a in args]
    module = spec.module

    def step(*flat):
        state = {n: t for n, t, r in zip(names, flat, roles) if r in ("param", "buffer")}
        masks = [t for t, r in zip(flat, roles) if r == "mask"]
        with MaskedRandomness(masks):
            out = functional_call(module, state, (flat[0],))
        if isinstance(out, tuple):
            out = out[0]
        return spec.loss(out, flat[1])

    captured = {}

    def capture(joint, joint_inputs, **kwargs):
        if partition is None:
            captured["graph"] = joint
        else:
            forward, backward = partition(joint, joint_inputs, **kwargs)
            captured["graph"] = sequence_partitions(forward, backward)
        raise _JointCaptured

    # The trace needs the shapes of the data, the target and the masks, not
    # their values: they are fake tensors of one FakeTensorMode, which
    # functorch is made to trace in (it would otherwise make fake copies of
    # real inputs, which at --batch 100000 means 56 GiB of data first).
    # Parameters and buffers are real: the model holds them anyway.
    mode = FakeTensorMode()
    inputs = []
    for a in args:
        if a.role in ("data", "target", "mask"):
            inputs.append(fake_input(mode, a))
            continue
        t = to_torch(a)
        if a.role == "param":
            t.requires_grad_(True)
        inputs.append(t)
    compiled = aot_function(step, fw_compiler=lambda g, i: g, partition_fn=capture,
                            decompositions=default_decompositions if decompose else {})
    saved = _aot_config.use_fake_tensor, _aot_autograd.FakeTensorMode
    _aot_config.use_fake_tensor = True
    _aot_autograd.FakeTensorMode = lambda: mode
    try:
        compiled(*inputs)
    except _JointCaptured:
        pass
    finally:
        _aot_config.use_fake_tensor, _aot_autograd.FakeTensorMode = saved
    if "graph" not in captured:
        raise ExportError("model '%s': functorch did not produce a joint graph" % spec.name)
    return captured["graph"]


def _tensor_bytes(node):
    meta = node.meta.get("tensor_meta")
    if meta is None:
        return 0
    return int(np.prod(meta.shape, dtype=np.int64)) * torch.empty(
        (), dtype=meta.dtype).element_size()


def sequence_partitions(forward, backward):
    """One graph module that runs a partitioned step the way PyTorch does:
    `forward` (placeholders: the primals; outputs: the loss, then the values
    it saves), then `backward` (placeholders: the saved values, then the
    tangent; outputs: a gradient per primal), wired through the saved values.
    Its `partition_stats` count what the partitioner chose: the values saved
    (activations and primals apart: a saved primal costs no memory) and the
    forward ops the backward computes again."""
    graph = torch.fx.Graph()
    root = torch.nn.Module()
    env = {}
    fw_inputs = [n for n in forward.graph.nodes if n.op == "placeholder"]
    bw_inputs = [n for n in backward.graph.nodes if n.op == "placeholder"]
    saved = [n for n in bw_inputs if not n.name.startswith("tangents")]
    tangents = [n for n in bw_inputs if n.name.startswith("tangents")]
    for n in fw_inputs:
        env[n] = graph.placeholder(n.name)
    tangent = graph.placeholder("tangents_1")
    for n in tangents:
        env[n] = tangent

    def copy(source, prefix):
        for n in source.graph.nodes:
            if n.op in ("placeholder", "output"):
                continue
            if n.op == "get_attr":
                name = prefix + n.target
                setattr(root, name, getattr(source, n.target))
                env[n] = graph.get_attr(name)
                continue
            env[n] = graph.node_copy(n, lambda m: env[m])
        out = next(n for n in source.graph.nodes if n.op == "output")
        return [env[a] if a is not None else None for a in out.args[0]]

    fw_outputs = copy(forward, "fw_")
    if len(fw_outputs) != 1 + len(saved):
        raise ExportError("the partitioned forward returns %d values, its backward "
                          "reads %d saved ones" % (len(fw_outputs), len(saved)))
    env.update(zip(saved, fw_outputs[1:]))
    grads = copy(backward, "bw_")
    graph.output([fw_outputs[0]] + grads)
    module = torch.fx.GraphModule(root, graph)

    # Recomputations: the backward's ops that the forward computes too (both
    # graphs are cut from the same joint graph, whose node names they keep),
    # except views and other ops whose result aliases an input.
    forward_names = {n.name for n in forward.graph.nodes if n.op == "call_function"}
    recomputed = {}
    for n in backward.graph.nodes:
        if (n.op == "call_function" and n.name in forward_names and
                n.target is not operator.getitem and
                not any(r.alias_info is not None for r in n.target._schema.returns)):
            name = aten_name(n.target)
            recomputed[name] = recomputed.get(name, 0) + 1
    activations = [n for n in saved if not n.name.startswith("primals")]
    module.partition_stats = {
        "saved_values": len(activations),
        "saved_bytes": sum(_tensor_bytes(n) for n in activations),
        "saved_primals": len(saved) - len(activations),
        "recomputed_ops": sum(recomputed.values()),
        "recomputed_op_names": dict(sorted(recomputed.items())),
        "forward_ops": sum(n.op == "call_function" for n in forward.graph.nodes),
        "backward_ops": sum(n.op == "call_function" for n in backward.graph.nodes),
    }
    return module


def _ancestors(roots):
    seen, stack = set(), [r for r in roots if r is not None]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.all_input_nodes)
    return seen


def translate_step(spec, args, joint, module, forward_only):
    """Writes @train_step into `module` (a Module); returns its results
    (Values): the loss, then the gradients unless forward_only."""
    graph = joint.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    output = next(n for n in graph.nodes if n.op == "output")
    outs = list(output.args[0])
    loss_node = outs[0]
    grad_nodes = outs[1:1 + len(args)]
    forward = _ancestors([loss_node])
    roots = [loss_node] + ([] if forward_only else
                           [g for g, a in zip(grad_nodes, args) if a.role == "param"])
    live = _ancestors(roots)
    calls = [n for n in graph.nodes if n in live and n.op == "call_function"]
    missing = {}
    for n in calls:
        if n.target is not operator.getitem and aten_name(n.target) not in RULES:
            missing.setdefault(aten_name(n.target), []).append(n.name)
    if missing:
        (op, users), rest = next(iter(missing.items())), list(missing)[1:]
        more = " and %d more" % (len(users) - 1) if len(users) > 1 else ""
        others = ", and %d other untranslatable ops: %s" % (len(rest), ", ".join(rest)) \
            if rest else ""
        raise ExportError("model '%s': cannot translate %s (no translation rule; node '%s'%s%s)"
                          % (spec.name, op, users[0], more, others))

    em = Emitter(module)
    tr = Translator(spec.name, em, forward, live)
    arg_text = []
    for a, ph in zip(args, placeholders):
        ssa = em.fresh(a.name)
        em.arguments.add(ssa)
        tr.env[ph] = Value(ssa, a.shape, a.dtype)
        attr = " {remat.param}" if a.role == "param" else ""
        arg_text.append("%s: %s%s" % (ssa, tensor_type(a.shape, a.dtype), attr))
    tangents = placeholders[len(args):]
    if not forward_only:
        em.emit("%%seed = arith.constant {remat.seed} dense<1.0> : tensor<%s>" % spec.dtype)
        em.taken.add("seed")
        tr.env[tangents[0]] = Value("%seed", [], spec.dtype)
    for node in graph.nodes:
        if node.op == "get_attr" and node in live:
            tr.env[node] = em.tensor_constant(getattr(joint, node.target), node.name)
    tr.run(calls)

    loss = tr.env[loss_node]
    if not isinstance(loss, Value) or loss.shape != () or loss.dtype != spec.dtype:
        raise ExportError("model '%s': the loss must be a scalar %s tensor"
                          % (spec.name, spec.dtype))
    em.phase = "forward"
    results = [em.result(loss)]
    if not forward_only:
        em.phase = "backward"
        for g, a in zip(grad_nodes, args):
            if a.role != "param":
                continue
            if g is None:
                results.append(em.filled(0.0, a.shape, a.dtype, "zero_grad_" + a.name))
            else:
                results.append(em.result(tr.env[g]))
    em.emit("return %s : %s" % (", ".join(r.ssa for r in results),
                                ", ".join(r.type for r in results)))
    result_text = ["%s {remat.loss}" % results[0].type] + [r.type for r in results[1:]]
    lines = ["func.func @train_step(%s)" % ", ".join(arg_text),
             "    -> (%s) {" % ", ".join(result_text)]
    module.functions.append(lines + em.lines() + ["}"])
    return results


def training_step_results(spec, args):
    """The results of the training step as @main sees them: the loss, then
    the gradient of every parameter (its argument's type). Only their types
    matter (write_main names the call's results itself)."""
    return [Value("%loss", [], spec.dtype)] + [
        Value("%d_" + a.name, a.shape, a.dtype) for a in args if a.role == "param"]


def write_main(module, args, results):
    """@main: builds every argument from its Init, calls @train_step once and
    prints the loss, then for each gradient its sum and sum of |x| (f64)."""
    em = Emitter(module, annotate=False)
    arg_values = []
    for a in args:
        rank = len(a.shape)

        def body(b, i, o, a=a):
            return [b.convert(a.init.body(b, a.shape), a.dtype)]
        v = em.generic("arg_" + a.name, a.shape, ["parallel"] * rank, [],
                       [Out(a.dtype, dims(rank))], body)[0]
        arg_values.append(v)
    res = em.fresh("results")
    n = len(results)
    result_types = [r.type for r in results]
    em.emit("%s%s = func.call @train_step(%s) : (%s) -> (%s)"
            % (res, ":%d" % n if n > 1 else "", ", ".join(v.ssa for v in arg_values),
               ", ".join(v.type for v in arg_values), ", ".join(result_types)))
    ref = (lambda k: "%s#%d" % (res, k)) if n > 1 else (lambda k: res)

    def show(scalar_tensor):
        x = em.fresh("x")
        em.emit("%s = tensor.extract %s[] : %s" % (x, scalar_tensor.ssa, scalar_tensor.type))
        if scalar_tensor.dtype != "f64":
            y = em.fresh("x")
            em.emit("%s = arith.extf %s : f32 to f64" % (y, x))
            x = y
        em.emit("func.call @printF64(%s) : (f64) -> ()" % x)
        em.emit("func.call @printNewline() : () -> ()")
    def sums(b, i, o):
        x = b.convert(i[0], "f64")
        return [b.addf(o[0], x), b.addf(o[1], b.math("absf", x))]
    show(Value(ref(0), [], results[0].dtype))
    for k in range(1, n):
        g = Value(ref(k), results[k].shape, results[k].dtype)
        rank = len(g.shape)
        total, total_abs = em.generic("sums", g.shape, ["reduction"] * rank,
                                      [(g, dims(rank))],
                                      [Out("f64", [], 0), Out("f64", [], 0)], sums)
        show(total)
        show(total_abs)
    em.emit("return")
    module.functions.append(["func.func private @printF64(f64)",
                             "func.func private @printNewline()", "",
                             "func.func @main() {"] + em.lines() + ["}"])


# ===----------------------------------------------------------------------===
# Driver
# ===----------------------------------------------------------------------===


def reference(spec, args, forward_only):
    """PyTorch eager's numbers for the same inputs, in @main's format."""
    load_state(spec, args)
    spec.module.train()
    inputs = {a.name: to_torch(a) for a in args if a.role in ("data", "target")}
    masks = [to_torch(a) for a in args if a.role == "mask"]
    spec.module.zero_grad(set_to_none=True)
    with MaskedRandomness(masks):
        out = spec.module(inputs["data"])
    if isinstance(out, tuple):
        out = out[0]
    loss = spec.loss(out, inputs["target"])
    lines = [repr(float(loss))]
    if not forward_only:
        loss.backward()
        for a in args:
            if a.role != "param":
                continue
            g = a.tensor.grad
            g = torch.zeros(a.shape, dtype=torch.float64) if g is None else g.double()
            lines += [repr(float(g.sum())), repr(float(g.abs().sum()))]
    return "\n".join(lines) + "\n"


def find_remat_opt():
    path = os.environ.get("REMAT_OPT")
    if path:
        return path
    local = os.path.join(REPO_ROOT, "build", "bin", "remat-opt")
    if os.access(local, os.X_OK):
        return local
    found = shutil.which("remat-opt")
    if not found:
        raise ExportError("--graph needs remat-opt: set REMAT_OPT or build build/bin/remat-opt")
    return found


def export_graph(step_path, graph_path):
    """The step's training graph as remat-opt extracts it (exact sizes and
    costs of the .mlir)."""
    tool = find_remat_opt()
    proc = subprocess.run([tool, step_path, "--remat-export-graph", "-o", os.devnull],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise ExportError("%s --remat-export-graph failed on %s:\n%s"
                          % (tool, step_path, proc.stderr.strip()))
    write_atomically(graph_path, proc.stdout)


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (no usage text before them)."""

    def error(self, message):
        raise ExportError(message)


def parse_args(argv):
    p = _Parser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("model", metavar="MODEL",
                   help="torchvision classifier name, 'transformer' or 'unet'")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--size", type=int, nargs=2, metavar=("H", "W"),
                   help="image size (default 224 224)")
    p.add_argument("--seq", type=int, help="transformer sequence length (default 128)")
    p.add_argument("--classes", type=int,
                   help="classes of a classifier (default 1000) or of the U-Net (default 4)")
    p.add_argument("--layers", type=int, default=6, help="transformer layers")
    p.add_argument("--vocab", type=int, default=512, help="transformer vocabulary")
    p.add_argument("--activation", choices=["gelu", "relu"], default="gelu",
                   help="transformer MLP activation")
    p.add_argument("--dtype", choices=["f32", "f64"], default="f32",
                   help="precision of the step and of --reference (f64 separates "
                        "translation errors from float32 rounding in chaotic models)")
    p.add_argument("-o", dest="output", metavar="STEP.mlir")
    p.add_argument("--graph", metavar="GRAPH.json")
    p.add_argument("--forward-only", action="store_true")
    p.add_argument("--no-main", action="store_true",
                   help="write the step without @main (e.g. a forward-only step for "
                        "remat-opt --remat-autodiff, whose output gets --main-only's @main)")
    p.add_argument("--main-only", action="store_true",
                   help="write only the training step's @main and its declarations, "
                        "affine maps inline and no module: text to paste into the body "
                        "of a module that holds @train_step (remat-opt --remat-autodiff's "
                        "output, before its last '}')")
    p.add_argument("--reference", action="store_true",
                   help="print PyTorch eager's numbers instead of writing the step")
    p.add_argument("--decompose", action="store_true",
                   help="trace with functorch's default decompositions (the graph its "
                        "min-cut partitioner works on)")
    p.add_argument("--partition", choices=["default", "min-cut"],
                   help="write the step as PyTorch runs it: the forward graph, then the "
                        "backward graph with what it recomputes, as functorch's "
                        "default_partition or min_cut_rematerialization_partition (with "
                        "its default decompositions) split the joint graph")
    p.add_argument("--stats", metavar="STATS.json",
                   help="with --partition: the partitioner's choice as JSON (values and "
                        "bytes saved, ops recomputed)")
    p.add_argument("--model-module", metavar="FILE.py", help=argparse.SUPPRESS)
    a = p.parse_args(argv)

    def fail(message):
        raise ExportError("model '%s': %s" % (a.model, message))
    if a.partition and a.forward_only:
        fail("--partition splits a training step: not with --forward-only")
    if a.stats and not a.partition:
        fail("--stats needs --partition")
    if a.main_only:
        clash = [flag for flag, on in (("--forward-only", a.forward_only),
                                       ("--no-main", a.no_main),
                                       ("--reference", a.reference),
                                       ("--partition", a.partition),
                                       ("--decompose", a.decompose),
                                       ("--graph", a.graph)) if on]
        if clash:
            fail("--main-only writes the training step's @main alone: not with %s"
                    % clash[0])
    if not a.reference and not a.output:
        fail("-o STEP.mlir is required (unless --reference)")
    if a.graph and not a.output:
        fail("--graph needs -o")
    validate_args(a)
    return a


def validate_args(a):
    """Every argument checked before anything is built or traced: each
    failure one line that names the model and the cause."""
    def bad(message):
        raise ExportError("model '%s': %s" % (a.model, message))
    for flag, value, least in (("--batch", a.batch, 1), ("--layers", a.layers, 1),
                               ("--vocab", a.vocab, 2), ("--classes", a.classes, 1),
                               ("--seq", a.seq, 1)):
        if value is not None and value < least:
            bad("%s must be at least %d, not %d" % (flag, least, value))
    if a.size is not None and min(a.size) < 1:
        bad("--size must be positive, not %d %d" % tuple(a.size))
    if a.model == "transformer" and a.size:
        raise ExportError("model 'transformer' takes --seq, not --size")
    if a.model != "transformer" and a.seq is not None:
        raise ExportError("model '%s' takes --size, not --seq" % a.model)
    if a.model_module and not os.path.isfile(a.model_module):
        bad("no model module '%s'" % a.model_module)
    for flag, path in (("-o", a.output), ("--graph", a.graph), ("--stats", a.stats)):
        if path is None or (flag == "-o" and a.reference):
            continue
        why = unwritable(path)
        if why:
            bad("cannot write %s %s: %s" % (flag, path, why))


def unwritable(path):
    """Why `path` cannot be written as a file (checked before the export, which
    may take minutes), or None."""
    if os.path.isdir(path):
        return "it is a directory"
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return "no directory %s" % directory
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return "the file is not writable"
    # The output is written through a temporary file of that directory
    # (write_atomically): make one now. Permission bits alone do not tell
    # (root passes them on a read-only file system or in /proc).
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".remat-export-probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return "cannot create a file in %s (%s)" % (directory, e.strerror or e)
    return None


def write_atomically(path, text):
    """Writes `text` to `path` through a temporary file in the same directory
    renamed over it: a failed or interrupted export never leaves a partial
    file, and an existing one stays as it was until the new one is whole."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def available_memory():
    """Bytes of memory available now (MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_reference_memory(spec, args):
    """--reference runs PyTorch eager on the real inputs: refuse, in one line,
    inputs that alone exceed the memory available (the activations need more
    still), instead of a MemoryError after minutes."""
    sizes = {"f32": 4, "f64": 8, "i64": 8, "i32": 4}
    need = sum(prod(a.shape) * sizes[a.dtype] for a in args if a.role in
               ("data", "target", "mask"))
    have = available_memory()
    if have is not None and need > have:
        raise ExportError("model '%s': --reference runs PyTorch on inputs of %.1f GiB "
                          "(batch %d), more than the %.1f GiB of memory available"
                          % (spec.name, need / 2 ** 30, spec.data_shape[0], have / 2 ** 30))


def run(argv):
    a = parse_args(argv)
    start = time.time()
    spec = build_model(a)
    args = step_arguments(spec)
    if a.reference:
        check_reference_memory(spec, args)
        sys.stdout.write(reference(spec, args, a.forward_only))
        return 0
    if a.main_only:
        module = Module(inline_maps=True)
        write_main(module, args, training_step_results(spec, args))
        write_atomically(a.output, "\n".join(module.functions[-1]) + "\n")
        sys.stderr.write("%s: wrote %s (%d bytes) in %.1f s\n"
                         % (PROG, a.output, os.path.getsize(a.output), time.time() - start))
        return 0
    partitioners = {"default": default_partition,
                    "min-cut": min_cut_rematerialization_partition}
    joint = trace_joint(spec, args, decompose=a.decompose or a.partition == "min-cut",
                        partition=partitioners.get(a.partition))
    module = Module()
    results = translate_step(spec, args, joint, module, a.forward_only)
    if a.stats:
        write_atomically(a.stats, json.dumps(dict(joint.partition_stats,
                                                  partition=a.partition), indent=1))
    if not a.no_main:
        write_main(module, args, results)
    kind = ("forward-only step" if a.forward_only else
            "training step, as PyTorch's %s partition runs it," % a.partition
            if a.partition else "training step")
    header = ["// %s of '%s' (%s), exported from PyTorch by python/remat/torch_export.py."
              % (kind[0].upper() + kind[1:], spec.name, "x".join(map(str, spec.data_shape))),
              "//   /usr/bin/python3 python/remat/torch_export.py " + " ".join(argv),
              "// Arguments: data, target, parameters {remat.param}, buffers, dropout masks.",
              "// No @main (--no-main)." if a.no_main else
              "// @main builds them deterministically and prints the loss%s."
              % ("" if a.forward_only else ", then each gradient's sum and sum of |x|")]
    write_atomically(a.output, module.render(header))
    if a.graph:
        export_graph(a.output, a.graph)
    sys.stderr.write("%s: wrote %s (%d bytes) in %.1f s\n"
                     % (PROG, a.output, os.path.getsize(a.output), time.time() - start))
    return 0


def main(argv):
    try:
        return run(argv)
    except ExportError as e:
        sys.stderr.write("%s: error: %s\n" % (PROG, e))
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % PROG)
        return 130
    except Exception as e:  # Anything else is one line too, not a traceback.
        model = next((x for x in argv if not x.startswith("-")), "?")
        what = "out of memory" if isinstance(e, MemoryError) else type(e).__name__
        sys.stderr.write("%s: error: model '%s': %s: %s%s\n"
                         % (PROG, model, what, one_line(e),
                            "" if os.environ.get("REMAT_EXPORT_TRACEBACK") else
                            " (REMAT_EXPORT_TRACEBACK=1 prints the traceback)"))
        if os.environ.get("REMAT_EXPORT_TRACEBACK"):
            traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
