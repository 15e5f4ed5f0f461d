"""The step's inputs: the deterministic element formula every argument is
built from (Init), the parameters' and buffers' inits, dropout and
stochastic depth as mask arguments (MaskedRandomness), the step's argument
list (Arg, step_arguments) and their values as torch tensors (real or fake)."""

import math
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torchvision  # noqa: F401  (imports torchvision.ops.stochastic_depth)
from torch.nn.utils.stateless import functional_call
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

from .errors import ExportError, one_line
from .ir import mlir_dtype, prod


# The module of torchvision.ops.stochastic_depth (the package attribute of that
# name is the function), whose function StochasticDepth calls.
STOCHASTIC_DEPTH = sys.modules["torchvision.ops.stochastic_depth"]


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
# The step's arguments
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


def load_state(spec, args):
    """Sets the module's parameters and buffers to their Init values."""
    with torch.no_grad():
        for a in args:
            if a.tensor is not None:
                a.tensor.copy_(to_torch(a).to(a.tensor.dtype))
