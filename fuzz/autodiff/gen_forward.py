"""Random small forward functions for remat-autodiff, in the patterns its
rules cover (docs/autodiff.md), with the gradcheck.py directives that draw
their inputs.

  generate(seed) -> (mlir_text, info)

The function `@step` takes 1-3 parameters `{remat.param}` (f64 tensors of
rank 0-2, dims 1-4), sometimes float data and i64 index arguments, and
returns a scalar loss `{remat.loss}`. Its body is a random DAG of:

  * elementwise linalg.generic ops over one value, with other values read
    through broadcasting maps and scalars captured from outside the body;
    the body is a random expression of the arith/math ops that have rules,
    kept away from singularities (log/sqrt/div of x*x + c, exp of tanh) and
    with arith.bitcast round trips;
  * reductions over a random subset of the dims: sums (onto a fill or onto a
    parameter), max/min as maximumf/minimumf or as select(cmpf(e, out), e,
    out) (with PyTorch's NaN test sometimes), sub and fma combiners, and
    "last valid position" selects on a condition of a data argument;
  * contractions written as generics, linalg.matmul, linalg.transpose;
  * tensor ops: extract_slice, insert_slice, pad, concat, collapse_shape,
    expand_shape, and gathers (tensor.extract of a parameter row by an i64
    index inside a body: an embedding);
  * scalar arith/math ops outside bodies on a tensor.extract of a value.

The loss adds a reduction (w * tanh(v)^2, bounded) of every value nothing
else reads, chained through the reductions' initial values.

Extremum reductions (max/min) run only over values whose elements that
depend on a parameter are pairwise distinct: a value broadcast, gathered
twice or concatenated with a slice of itself ties, where the rule gives
each tied element the full adjoint (a documented limit, not a bug). With info["unsupported"], a deliberate pattern without a rule (a
product reduction, a select combiner whose condition reads the previous
value without comparing it with the element, bit manipulation of a float)
is placed on the path to the loss: remat-autodiff must reject it with a
located error.
"""

import random
import re

F = "f64"


def tensor_type(shape, elem=F):
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), elem)


def flt(x):
    """An MLIR float literal (1e+30 must be written 1.0e+30)."""
    text = repr(float(x))
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def fmt_map(ndims, results):
    dims = ", ".join("d%d" % i for i in range(ndims))
    return "affine_map<(%s) -> (%s)>" % (dims, ", ".join(results))


class Value:
    def __init__(self, name, shape, distinct=True, kind="act"):
        self.name = name
        self.shape = tuple(shape)
        # Whether no two elements that depend on a parameter can be equal (up
        # to probability 0): a max/min reduction over a value that repeats
        # one (broadcast, gathered twice, concatenated with a slice of
        # itself) ties, and the rule gives each tied element the adjoint.
        self.distinct = distinct
        self.kind = kind
        self.uses = 0

    @property
    def type(self):
        return tensor_type(self.shape)


class Gen:
    def __init__(self, seed, unsupported=False):
        self.rng = random.Random(seed)
        self.seed = seed
        self.unsupported = unsupported
        self.unsupported_kind = None
        self.lines = []
        self.args = []          # (text, Value or None, directive or None)
        self.values = []        # float tensor values usable as operands
        self.counter = 0
        self.param_elements = 0
        self.features = set()

    # -- naming and emission ------------------------------------------------

    def fresh(self, base="v"):
        self.counter += 1
        return "%%%s%d" % (base, self.counter)

    def emit(self, line, indent=2):
        self.lines.append(" " * indent + line)

    def cst(self, value, indent=4):
        name = self.fresh("c")
        self.emit("%s = arith.constant %s : f64" % (name, flt(value)), indent)
        return name

    # -- arguments ----------------------------------------------------------

    def rand_shape(self, rank=None):
        rank = self.rng.choice([0, 1, 1, 2, 2]) if rank is None else rank
        return tuple(self.rng.randint(1, 4) for _ in range(rank))

    def add_param(self, shape=None):
        shape = self.rand_shape() if shape is None else tuple(shape)
        n = 1
        for d in shape:
            n *= d
        name = "%%p%d" % len(self.args)
        v = Value(name, shape, kind="param")
        self.args.append(("%s: %s {remat.param}" % (name, v.type), v, None))
        self.values.append(v)
        self.param_elements += n
        return v

    def add_data(self, shape, directive=None):
        name = "%%x%d" % len(self.args)
        v = Value(name, shape, kind="data")
        self.args.append(("%s: %s" % (name, v.type), v, directive))
        return v

    def add_index(self, shape, limit):
        name = "%%i%d" % len(self.args)
        k = len(self.args)
        self.args.append(("%s: %s" % (name, tensor_type(shape, "i64")), None,
                          "arg=%d int-range=0,%d" % (k, limit)))
        return name

    # -- helpers ------------------------------------------------------------

    def pick(self, pred=lambda v: True, fresh_bias=True):
        choices = [v for v in self.values if pred(v)]
        if not choices:
            return None
        if fresh_bias and self.rng.random() < 0.6:
            unused = [v for v in choices if v.uses == 0]
            if unused:
                choices = unused
        v = self.rng.choice(choices)
        return v

    def use(self, v):
        v.uses += 1
        return v

    def new_value(self, shape, distinct=True):
        v = Value(self.fresh(), shape, distinct)
        self.values.append(v)
        return v

    def empty(self, shape):
        name = self.fresh("e")
        self.emit("%s = tensor.empty() : %s" % (name, tensor_type(shape)))
        return name

    def fill(self, shape, value):
        e = self.empty(shape)
        c = self.fresh("c")
        self.emit("%s = arith.constant %s : f64" % (c, flt(value)))
        name = self.fresh("f")
        self.emit("%s = linalg.fill ins(%s : f64) outs(%s : %s) -> %s"
                  % (name, c, e, tensor_type(shape), tensor_type(shape)))
        return name

    # -- scalar expressions (inside or outside bodies) ------------------------

    def expr(self, leaves, depth, indent=4):
        """A random f64 expression of the SSA names `leaves`; returns its
        name. Every op has a reverse-mode rule."""
        rng = self.rng
        if depth <= 0 or rng.random() < 0.25:
            return rng.choice(leaves)
        kind = rng.random()
        e = lambda line: self.emit(line, indent)
        x = self.expr(leaves, depth - 1, indent)
        r = self.fresh("s")
        if kind < 0.45:
            op = rng.choice(["negf", "tanh", "sin", "cos", "erf", "exp", "log", "sqrt",
                             "rsqrt", "expm1", "exp2", "log1p", "log2", "log10", "absf",
                             "relu", "clamp", "bitcast", "powf", "square"])
            self.features.add("unary:" + op)
            if op == "negf":
                e("%s = arith.negf %s : f64" % (r, x))
            elif op in ("tanh", "sin", "cos", "erf", "absf"):
                e("%s = math.%s %s : f64" % (r, op, x))
            elif op in ("exp", "expm1", "exp2"):
                t = self.fresh("s")
                e("%s = math.tanh %s : f64" % (t, x))
                e("%s = math.%s %s : f64" % (r, op, t))
            elif op in ("log", "sqrt", "rsqrt", "log2", "log10", "log1p", "powf"):
                sq, pos = self.fresh("s"), self.fresh("s")
                c = self.cst(rng.choice([0.5, 1.0, 2.0]), indent)
                e("%s = arith.mulf %s, %s : f64" % (sq, x, x))
                e("%s = arith.addf %s, %s : f64" % (pos, sq, c))
                if op == "powf":
                    p = self.cst(rng.choice([1.5, -0.5, 2.5]), indent)
                    e("%s = math.powf %s, %s : f64" % (r, pos, p))
                else:
                    e("%s = math.%s %s : f64" % (r, op, pos))
            elif op == "relu":
                c = self.cst(0.0, indent)
                e("%s = arith.maximumf %s, %s : f64" % (r, x, c))
            elif op == "clamp":
                c = self.cst(rng.choice([-0.3, 0.2, 0.6]), indent)
                e("%s = arith.%s %s, %s : f64"
                  % (r, rng.choice(["minimumf", "maxnumf", "minnumf"]), x, c))
            elif op == "bitcast":
                b = self.fresh("b")
                e("%s = arith.bitcast %s : f64 to i64" % (b, x))
                e("%s = arith.bitcast %s : i64 to f64" % (r, b))
            elif op == "square":
                e("%s = arith.mulf %s, %s : f64" % (r, x, x))
            return r
        y = self.expr(leaves, depth - 1, indent)
        op = rng.choice(["addf", "subf", "mulf", "div", "maximumf", "minimumf", "fma",
                         "select", "copysign"])
        self.features.add("binary:" + op)
        if op in ("addf", "subf", "mulf", "maximumf", "minimumf"):
            e("%s = arith.%s %s, %s : f64" % (r, op, x, y))
        elif op == "div":
            sq, den = self.fresh("s"), self.fresh("s")
            c = self.cst(1.0, indent)
            e("%s = arith.mulf %s, %s : f64" % (sq, y, y))
            e("%s = arith.addf %s, %s : f64" % (den, sq, c))
            e("%s = arith.divf %s, %s : f64" % (r, x, den))
        elif op == "fma":
            z = self.expr(leaves, depth - 1, indent)
            e("%s = math.fma %s, %s, %s : f64" % (r, x, y, z))
        elif op == "select":
            c = self.fresh("k")
            e("%s = arith.cmpf %s, %s, %s : f64"
              % (c, rng.choice(["ogt", "olt", "oge", "ule"]), x, y))
            e("%s = arith.select %s, %s, %s : f64" % (r, c, x, y))
        elif op == "copysign":
            e("%s = math.copysign %s, %s : f64" % (r, x, y))
        return r

    # -- ops producing tensors ----------------------------------------------

    def elementwise(self):
        v = self.use(self.pick(lambda v: True))
        rank = len(v.shape)
        ins = [(v, ["d%d" % i for i in range(rank)])]
        # Other operands: values whose shape is v's restricted to some dims.
        for _ in range(self.rng.randint(0, 2)):
            dims = [d for d in range(rank) if self.rng.random() < 0.6]
            shape = tuple(v.shape[d] for d in dims)
            w = self.pick(lambda u: u.shape == shape and u is not v)
            if w is None:
                continue
            self.use(w)
            ins.append((w, ["d%d" % d for d in dims]))
        captured = None
        if self.rng.random() < 0.2:
            captured = self.scalar_outside()
        out = self.new_value(v.shape)
        e = self.empty(v.shape)
        maps = [fmt_map(rank, res) for _, res in ins] + [fmt_map(rank, ["d%d" % i for i in range(rank)])]
        self.emit("%s = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}"
                  % (out.name, ", ".join(maps), ", ".join(['"parallel"'] * rank)))
        self.emit("    ins(%s : %s) outs(%s : %s) {"
                  % (", ".join(w.name for w, _ in ins), ", ".join(w.type for w, _ in ins),
                     e, out.type))
        args = [self.fresh("a") for _ in ins]
        o = self.fresh("o")
        self.emit("^bb0(%s):" % ", ".join("%s: f64" % a for a in args + [o]))
        leaves = args + ([captured] if captured else [])
        first = len(self.lines)
        r = self.expr(leaves, self.rng.randint(1, 3))
        body = "\n".join(self.lines[first:]) + " " + r
        # Distinct when the body reads the full-shape operand (the others
        # are broadcast along some dims) and that operand is, and does not
        # choose between it and another operand or a captured scalar
        # (max(x, s) ties at s wherever x < s: elements equal to one function
        # of a parameter, which a later max/min reduction would count once
        # per tied element, the rule's documented limit).
        reads = lambda name: re.search(re.escape(name) + r"\b", body) is not None
        chooses = re.search(r"\b(maximumf|minimumf|maxnumf|minnumf|select)\b", body)
        others = any(reads(leaf) for leaf in leaves[1:])
        out.distinct = v.distinct and reads(args[0]) and not (chooses and others)
        self.emit("  linalg.yield %s : f64" % r)
        self.emit("} -> %s" % out.type)
        self.features.add("elementwise")
        return out

    def scalar_outside(self):
        """A scalar computed outside bodies from an element of a value."""
        v = self.use(self.pick(lambda v: True, fresh_bias=False))
        idx = []
        for d in v.shape:
            i = self.fresh("n")
            self.emit("%s = arith.constant %d : index" % (i, self.rng.randrange(d)))
            idx.append(i)
        s = self.fresh("s")
        self.emit("%s = tensor.extract %s[%s] : %s" % (s, v.name, ", ".join(idx), v.type))
        r = self.expr([s], self.rng.randint(0, 2), indent=2)
        self.features.add("scalar-outside")
        return r

    def reduction(self):
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return None
        self.use(v)
        rank = len(v.shape)
        red = [d for d in range(rank) if self.rng.random() < 0.5] or [self.rng.randrange(rank)]
        keep = [d for d in range(rank) if d not in red]
        out_shape = tuple(v.shape[d] for d in keep)
        kinds = ["sum", "sum", "sub", "fma", "last"]
        if v.distinct:
            kinds += ["max", "min", "selmax", "selmin", "nanmax"]
        kind = self.rng.choice(kinds)
        if self.unsupported_kind in ("product", "selbad"):
            kind, self.unsupported_kind = self.unsupported_kind, "placed"
            self.features.add("unsupported")
        ins = [(v, ["d%d" % i for i in range(rank)])]
        mask = None
        if kind == "last":
            mask = self.add_data(v.shape, None)
            ins.append((mask, ["d%d" % i for i in range(rank)]))
        if kind == "fma":
            w = self.pick(lambda u: u.shape == v.shape and u is not v)
            if w is None:
                kind = "sum"
            else:
                ins.append((self.use(w), ["d%d" % i for i in range(rank)]))
        # The initial value: a fill, or (for sums) a parameter of the result's
        # shape, whose adjoint is then the result's.
        if kind in ("sum", "sub", "fma") and self.rng.random() < 0.3:
            init = self.add_param(out_shape).name
            self.values.pop()  # not an operand elsewhere
            self.features.add("init-param")
        else:
            start = {"max": -1e30, "selmax": -1e30, "nanmax": -1e30, "min": 1e30,
                     "selmin": 1e30, "product": 1.0}.get(kind, 0.0)
            init = self.fill(out_shape, start)
        out = self.new_value(out_shape, v.distinct)
        maps = [fmt_map(rank, res) for _, res in ins] + [fmt_map(rank, ["d%d" % d for d in keep])]
        iters = ['"reduction"' if d in red else '"parallel"' for d in range(rank)]
        self.emit("%s = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}"
                  % (out.name, ", ".join(maps), ", ".join(iters)))
        self.emit("    ins(%s : %s) outs(%s : %s) {"
                  % (", ".join(w.name for w, _ in ins), ", ".join(w.type for w, _ in ins),
                     init, out.type))
        args = [self.fresh("a") for _ in ins]
        o = self.fresh("o")
        self.emit("^bb0(%s):" % ", ".join("%s: f64" % a for a in args + [o]))
        # The element: the input itself or an injective function of it (a max
        # over tanh(x) keeps the distinct values distinct).
        el = args[0]
        if kind not in ("max", "min", "selmax", "selmin", "nanmax") and self.rng.random() < 0.5:
            el = self.expr([args[0]], 2)
        elif self.rng.random() < 0.3:
            el = self.fresh("s")
            self.emit("  %s = math.tanh %s : f64" % (el, args[0]))
        r = self.fresh("s")
        if kind == "sum":
            self.emit("  %s = arith.addf %s, %s : f64" % (r, o, el))
        elif kind == "sub":
            self.emit("  %s = arith.subf %s, %s : f64" % (r, o, el))
        elif kind == "fma":
            self.emit("  %s = math.fma %s, %s, %s : f64" % (r, el, args[1], o))
        elif kind in ("max", "min"):
            self.emit("  %s = arith.%s %s, %s : f64"
                      % (r, "maximumf" if kind == "max" else "minimumf", o, el))
        elif kind in ("selmax", "selmin"):
            c = self.fresh("k")
            pred = self.rng.choice(["ogt", "oge"] if kind == "selmax" else ["olt", "ole"])
            if self.rng.random() < 0.5:
                self.emit("  %s = arith.cmpf %s, %s, %s : f64" % (c, pred, el, o))
                self.emit("  %s = arith.select %s, %s, %s : f64" % (r, c, el, o))
            else:  # the same extremum, the comparison written the other way
                self.emit("  %s = arith.cmpf %s, %s, %s : f64" % (c, pred, o, el))
                self.emit("  %s = arith.select %s, %s, %s : f64" % (r, c, o, el))
        elif kind == "nanmax":
            c, n, t = self.fresh("k"), self.fresh("k"), self.fresh("k")
            self.emit("  %s = arith.cmpf ogt, %s, %s : f64" % (c, el, o))
            self.emit("  %s = arith.cmpf uno, %s, %s : f64" % (n, el, el))
            self.emit("  %s = arith.ori %s, %s : i1" % (t, c, n))
            self.emit("  %s = arith.select %s, %s, %s : f64" % (r, t, el, o))
        elif kind == "last":
            c = self.fresh("k")
            half = self.fresh("c")
            self.emit("  %s = arith.constant 0.5 : f64" % half)
            if self.rng.random() < 0.5:
                self.emit("  %s = arith.cmpf ogt, %s, %s : f64" % (c, args[1], half))
                self.emit("  %s = arith.select %s, %s, %s : f64" % (r, c, el, o))
            else:
                self.emit("  %s = arith.cmpf ole, %s, %s : f64" % (c, args[1], half))
                self.emit("  %s = arith.select %s, %s, %s : f64" % (r, c, o, el))
        elif kind == "product":
            self.emit("  %s = arith.mulf %s, %s : f64" % (r, o, el))
        elif kind == "selbad":
            c, z = self.fresh("k"), self.fresh("c")
            self.emit("  %s = arith.constant 0.25 : f64" % z)
            self.emit("  %s = arith.cmpf olt, %s, %s : f64" % (c, o, z))
            self.emit("  %s = arith.select %s, %s, %s : f64" % (r, c, el, o))
        self.emit("  linalg.yield %s : f64" % r)
        self.emit("} -> %s" % out.type)
        self.features.add("reduce:" + kind)
        return out

    def contraction(self):
        a = self.pick(lambda v: len(v.shape) == 2)
        if a is None:
            return None
        self.use(a)
        m, k = a.shape
        n = self.rng.randint(1, 3)
        b = self.pick(lambda v: v.shape == (k, n)) or self.add_param((k, n))
        self.use(b)
        out = self.new_value((m, n), a.distinct)
        if self.rng.random() < 0.5:
            init = self.fill((m, n), 0.0)
            self.emit("%s = linalg.matmul ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                      % (out.name, a.name, b.name, a.type, b.type, init, out.type, out.type))
            self.features.add("matmul")
            return out
        init = self.fill((m, n), 0.0)
        maps = [fmt_map(3, ["d0", "d2"]), fmt_map(3, ["d2", "d1"]), fmt_map(3, ["d0", "d1"])]
        self.emit("%s = linalg.generic {indexing_maps = [%s], iterator_types = "
                  "[\"parallel\", \"parallel\", \"reduction\"]}" % (out.name, ", ".join(maps)))
        self.emit("    ins(%s, %s : %s, %s) outs(%s : %s) {"
                  % (a.name, b.name, a.type, b.type, init, out.type))
        x, y, o, p, s = (self.fresh(t) for t in "aaoss")
        self.emit("^bb0(%s: f64, %s: f64, %s: f64):" % (x, y, o))
        self.emit("  %s = arith.mulf %s, %s : f64" % (p, x, y))
        self.emit("  %s = arith.addf %s, %s : f64" % (s, o, p))
        self.emit("  linalg.yield %s : f64" % s)
        self.emit("} -> %s" % out.type)
        self.features.add("contraction")
        return out

    def transpose(self):
        v = self.pick(lambda v: len(v.shape) == 2)
        if v is None:
            return None
        self.use(v)
        shape = (v.shape[1], v.shape[0])
        out = self.new_value(shape, v.distinct)
        e = self.empty(shape)
        self.emit("%s = linalg.transpose ins(%s : %s) outs(%s : %s) permutation = [1, 0]"
                  % (out.name, v.name, v.type, e, out.type))
        self.features.add("transpose")
        return out

    def slice(self):
        v = self.pick(lambda v: len(v.shape) >= 1 and max(v.shape) >= 2)
        if v is None:
            return None
        self.use(v)
        offs, sizes = [], []
        for d in v.shape:
            s = self.rng.randint(1, d)
            offs.append(self.rng.randint(0, d - s))
            sizes.append(s)
        out = self.new_value(tuple(sizes), v.distinct)
        self.emit("%s = tensor.extract_slice %s[%s] [%s] [%s] : %s to %s"
                  % (out.name, v.name, ", ".join(map(str, offs)), ", ".join(map(str, sizes)),
                     ", ".join("1" for _ in sizes), v.type, out.type))
        self.features.add("extract_slice")
        return out

    def insert(self):
        dst = self.pick(lambda v: len(v.shape) >= 1 and max(v.shape) >= 2)
        if dst is None:
            return None
        src = self.pick(lambda v: len(v.shape) == len(dst.shape) and v is not dst and
                        all(a <= b for a, b in zip(v.shape, dst.shape)))
        if src is None:
            return None
        self.use(dst)
        self.use(src)
        offs = [self.rng.randint(0, b - a) for a, b in zip(src.shape, dst.shape)]
        out = self.new_value(dst.shape, False)
        self.emit("%s = tensor.insert_slice %s into %s[%s] [%s] [%s] : %s into %s"
                  % (out.name, src.name, dst.name, ", ".join(map(str, offs)),
                     ", ".join(map(str, src.shape)), ", ".join("1" for _ in src.shape),
                     src.type, dst.type))
        self.features.add("insert_slice")
        return out

    def pad(self):
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return None
        self.use(v)
        lo = [self.rng.randint(0, 1) for _ in v.shape]
        hi = [self.rng.randint(0, 1) for _ in v.shape]
        shape = tuple(d + a + b for d, a, b in zip(v.shape, lo, hi))
        # The padding repeats a constant, which carries no derivative.
        out = self.new_value(shape, v.distinct)
        c = self.fresh("c")
        self.emit("%s = arith.constant %s : f64" % (c, flt(self.rng.choice([0.0, -0.5]))))
        self.emit("%s = tensor.pad %s low[%s] high[%s] {" % (out.name, v.name,
                  ", ".join(map(str, lo)), ", ".join(map(str, hi))))
        idx = ", ".join("%s: index" % self.fresh("j") for _ in v.shape)
        self.emit("^bb0(%s):" % idx)
        self.emit("  tensor.yield %s : f64" % c)
        self.emit("} : %s to %s" % (v.type, out.type))
        self.features.add("pad")
        return out

    def concat(self):
        v = self.pick(lambda v: len(v.shape) >= 1)
        if v is None:
            return None
        d = self.rng.randrange(len(v.shape))
        w = self.pick(lambda u: len(u.shape) == len(v.shape) and u is not v and
                      all(a == b for i, (a, b) in enumerate(zip(u.shape, v.shape)) if i != d))
        if w is None:
            return None
        self.use(v)
        self.use(w)
        shape = list(v.shape)
        shape[d] += w.shape[d]
        out = self.new_value(tuple(shape), False)
        self.emit("%s = tensor.concat dim(%d) %s, %s : (%s, %s) -> %s"
                  % (out.name, d, v.name, w.name, v.type, w.type, out.type))
        self.features.add("concat")
        return out

    def reshape(self):
        v = self.pick(lambda v: len(v.shape) in (1, 2))
        if v is None:
            return None
        self.use(v)
        if len(v.shape) == 2:
            out = self.new_value((v.shape[0] * v.shape[1],), v.distinct)
            self.emit("%s = tensor.collapse_shape %s [[0, 1]] : %s into %s"
                      % (out.name, v.name, v.type, out.type))
            self.features.add("collapse_shape")
            return out
        n = v.shape[0]
        a = self.rng.choice([f for f in range(1, n + 1) if n % f == 0])
        out = self.new_value((a, n // a), v.distinct)
        self.emit("%s = tensor.expand_shape %s [[0, 1]] output_shape [%d, %d] : %s into %s"
                  % (out.name, v.name, a, n // a, v.type, out.type))
        self.features.add("expand_shape")
        return out

    def gather(self):
        table = self.pick(lambda v: len(v.shape) == 2 and v.kind == "param")
        if table is None:
            if self.param_elements > 24:
                return None
            table = self.add_param((self.rng.randint(2, 4), self.rng.randint(1, 3)))
        self.use(table)
        rows, width = table.shape
        n = self.rng.randint(2, 4)
        idx = self.add_index((n,), rows)
        out = self.new_value((n, width), False)
        e = self.empty((n, width))
        maps = [fmt_map(2, ["d0"]), fmt_map(2, ["d0", "d1"])]
        self.emit("%s = linalg.generic {indexing_maps = [%s], iterator_types = "
                  "[\"parallel\", \"parallel\"]}" % (out.name, ", ".join(maps)))
        self.emit("    ins(%s : %s) outs(%s : %s) {" % (idx, tensor_type((n,), "i64"), e, out.type))
        t, o, r, j, g = (self.fresh(x) for x in ("t", "o", "r", "j", "g"))
        self.emit("^bb0(%s: i64, %s: f64):" % (t, o))
        self.emit("  %s = arith.index_cast %s : i64 to index" % (r, t))
        self.emit("  %s = linalg.index 1 : index" % j)
        self.emit("  %s = tensor.extract %s[%s, %s] : %s" % (g, table.name, r, j, table.type))
        self.emit("  linalg.yield %s : f64" % g)
        self.emit("} -> %s" % out.type)
        self.features.add("gather")
        return out

    # -- the function -------------------------------------------------------

    def loss(self):
        sinks = [v for v in self.values if v.uses == 0] or [self.values[-1]]
        acc = self.fill((), 0.0)
        for v in sinks:
            rank = len(v.shape)
            r = self.fresh("l")
            maps = [fmt_map(rank, ["d%d" % i for i in range(rank)]), fmt_map(rank, [])]
            self.emit("%s = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}"
                      % (r, ", ".join(maps), ", ".join(['"reduction"'] * rank)))
            self.emit("    ins(%s : %s) outs(%s : %s) {" % (v.name, v.type, acc, tensor_type(())))
            a, o = self.fresh("a"), self.fresh("o")
            self.emit("^bb0(%s: f64, %s: f64):" % (a, o))
            # w * tanh(v)^2: every term is bounded, so the loss stays small
            # whatever the body's values. The central differences' rounding
            # error grows with |loss| / eps: an unbounded loss (0.5 v^2 with
            # v = 1e5, seed 3490 of the second long run) made the finite
            # differences, not the gradients, wrong by 4%.
            w = self.cst(self.rng.choice([0.5, -1.0, 0.75]))
            th, m, t, s = self.fresh("s"), self.fresh("s"), self.fresh("s"), self.fresh("s")
            self.emit("  %s = math.tanh %s : f64" % (th, a))
            a = th
            self.emit("  %s = arith.mulf %s, %s : f64" % (m, a, a))
            self.emit("  %s = arith.mulf %s, %s : f64" % (t, m, w))
            self.emit("  %s = arith.addf %s, %s : f64" % (s, o, t))
            self.emit("  linalg.yield %s : f64" % s)
            self.emit("} -> %s" % tensor_type(()))
            acc = r
        return acc

    def build(self):
        for _ in range(self.rng.randint(1, 3)):
            self.add_param()
        ops = [self.elementwise] * 4 + [self.reduction] * 3 + [
            self.contraction, self.transpose, self.slice, self.insert, self.pad,
            self.concat, self.reshape, self.gather]
        for _ in range(self.rng.randint(2, 6)):
            self.rng.choice(ops)()
        if self.unsupported:
            self.unsupported_tail()
        loss = self.loss()
        self.emit("return %s : %s" % (loss, tensor_type(())))
        directives = ["// gradcheck: seed=%d" % self.seed]
        for k, (_, v, d) in enumerate(self.args):
            if v is not None and v.kind == "data":
                directives.append("// gradcheck: arg=%d range=0,1" % k)
            if d:
                directives.append("// gradcheck: " + d)
        head = "func.func @step(%s) -> (%s {remat.loss}) {" % (
            ", ".join(text for text, _, _ in self.args), tensor_type(()))
        return "\n".join(["// remat-autodiff fuzz input, seed %d: %s"
                          % (self.seed, " ".join(sorted(self.features)))] + directives +
                         [head] + self.lines + ["}", ""])

    def unsupported_tail(self):
        """A pattern without a rule, applied to a parameter and read by the
        loss alone (it has no other use): a product reduction, a select
        combiner that is neither a max/min nor a last position, or a bit
        manipulation of a float."""
        self.unsupported_kind = self.rng.choice(["product", "selbad", "bitmask"])
        param = self.rng.choice([v for v in self.values if v.kind == "param"])
        if self.unsupported_kind != "bitmask" and param.shape:
            keep = self.values
            self.values = [param]
            out = self.reduction()
            self.values = keep + [out]
            return
        self.unsupported_kind = "bitmask"
        v = self.use(param)
        rank = len(v.shape)
        out = self.new_value(v.shape)
        e = self.empty(v.shape)
        maps = [fmt_map(rank, ["d%d" % i for i in range(rank)])] * 2
        self.emit("%s = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}"
                  % (out.name, ", ".join(maps), ", ".join(['"parallel"'] * rank)))
        self.emit("    ins(%s : %s) outs(%s : %s) {" % (v.name, v.type, e, out.type))
        a, o, b, m, k, r = (self.fresh(x) for x in ("a", "o", "b", "m", "b", "s"))
        self.emit("^bb0(%s: f64, %s: f64):" % (a, o))
        self.emit("  %s = arith.bitcast %s : f64 to i64" % (b, a))
        self.emit("  %s = arith.constant 9223372036854775807 : i64" % m)
        self.emit("  %s = arith.andi %s, %s : i64" % (k, b, m))
        self.emit("  %s = arith.bitcast %s : i64 to f64" % (r, k))
        self.emit("  linalg.yield %s : f64" % r)
        self.emit("} -> %s" % out.type)
        self.features.add("unsupported")
        self.features.add("bitmask")


def generate(seed, unsupported=False):
    """The MLIR text of a random forward function, and what it contains."""
    g = Gen(seed, unsupported)
    text = g.build()
    return text, {"features": sorted(g.features), "param_elements": g.param_elements,
                  "unsupported": "unsupported" in g.features}
