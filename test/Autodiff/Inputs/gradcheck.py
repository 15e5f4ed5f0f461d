"""Checks the gradients of `remat-opt --remat-autodiff` against central finite
differences, on the CPU.

Usage: gradcheck.py FORWARD.mlir [--train-step STEP.mlir] [--func NAME]
                    [--name NAME] [--seed N] [--eps E] [--rtol T]
                    [--solver S] [--keep OUT.mlir] [--bin-dir DIR]
                    [--autodiff-flags F] [--lower-flags F]
                    [--remat-opt PATH] [--remat-run PATH] [--verbose]

FORWARD.mlir holds a forward-only function whose result #0 is a scalar loss
(`tensor<f64>`, `f64`, or their f32 forms) marked `{remat.loss}`; it may hold
other functions (helpers it calls, functions calling it). The checker builds
one module out of
  (a) the forward function, copied as `@loss_only` with every `remat.*`
      attribute removed (so that it is not a training step);
  (b) `remat-opt FORWARD.mlir --remat-autodiff` (or, with --train-step, a
      module holding the already differentiated function, written by hand:
      the harness tests itself with it);
  (c) a `main` that builds deterministic pseudo-random arguments as dense
      constants, calls the differentiated function once and prints its loss
      and every element of every gradient, then calls `@loss_only` on the
      arguments and, for every element x_i of every parameter, on x + eps e_i
      and x - eps e_i (tensor.insert into the constant, unrolled).
Every number is printed as the i64 bit pattern of the f64 value (printI64 of
arith.bitcast), so that nothing is lost to printF64's six digits; the central
differences (L(x+h) - L(x-h)) / (2h) are formed here from the exact values.
The module runs with `remat-run MODULE --solver=S` (default none): the
differentiated step goes through the remat pipeline and the CPU lowering.
--runner=upstream runs it instead with upstream passes only (mlir-opt: the
same bufferization and lowering as remat-run's, plus convert-math-to-libm,
which math.erf needs: the remat CPU pipeline cannot lower it) and
mlir-runner, with every remat.* attribute removed: no remat pass is involved
in running the program, which tells a pipeline problem from a gradient one.

Parameters are the arguments marked `remat.param`, else every floating-point
tensor argument; the differentiated function must return the loss and then
one gradient per parameter, in argument order, of the parameter's type
(then, optionally, the forward's results other than the loss).

An analytic element a and its difference f agree when
    |a - f| <= rtol * max(1, |a|, |f|)        (rtol 1e-5 by default);
the step's loss must equal loss_only's within 1e-9 (relative). The last line
is `gradcheck: NAME: N elements, max error E, OK`, or the mismatches one per
line and `gradcheck: NAME: M of N elements mismatch, max error E, FAILED`
(exit status 1). A tool that fails is reported as
`gradcheck: NAME: ERROR: ...` with its output (exit status 2).

Arguments are drawn per argument from a seeded generator: floating-point
values are a random permutation of an evenly spaced grid over [lo, hi] with a
jitter of a quarter spacing (distinct values, so max/relu/pooling are away
from their kinks), integers uniformly in [ilo, ihi). Directives in
FORWARD.mlir comments set them:
    // gradcheck: range=LO,HI int-range=LO,HI seed=N eps=E rtol=T
    // gradcheck: arg=K range=LO,HI          (argument K only)
    // gradcheck: arg=K int-range=LO,HI
    // gradcheck: arg=K value=V              (a splat; no randomness)
Defaults: range=-1,1 int-range=0,3 seed=1 eps=1e-6 rtol=1e-5.

Tools: --remat-opt/--remat-run, else --bin-dir, else PATH (lit puts the
build's bin there), else the build/bin of this source tree; mlir-opt and mlir-runner (upstream
runner) from --llvm-bin-dir, else PATH, else /usr/lib/llvm-22/bin.
--autodiff-flags replaces `--remat-autodiff` (e.g. to inline calls first:
"--remat-inline-calls --remat-autodiff").
--lower-flags runs `remat-opt MODULE FLAGS` on the combined module before it
is run: the lowering of ops that remat-run does not know (an out-of-tree
dialect's, with --remat-opt naming that dialect's driver).
"""
import argparse
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))


class CheckError(Exception):
    pass


# ----------------------------------------------------------------------------
# Tools
# ----------------------------------------------------------------------------

def find_tool(name, explicit, bin_dir):
    if explicit:
        return explicit
    if bin_dir:
        return os.path.join(bin_dir, name)
    found = shutil.which(name)
    if found:
        return found
    local = os.path.join(SRC_ROOT, "build", "bin", name)
    if os.access(local, os.X_OK):
        return local
    raise CheckError("cannot find %s (use --bin-dir)" % name)


def find_llvm_tool(name, llvm_bin_dir):
    if llvm_bin_dir:
        return os.path.join(llvm_bin_dir, name)
    found = shutil.which(name)
    if found:
        return found
    for d in ("/usr/lib/llvm-22/bin",):
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    raise CheckError("cannot find %s (use --llvm-bin-dir)" % name)


def find_c_runner_utils(mlir_runner):
    lib = os.path.join(os.path.dirname(os.path.dirname(
        os.path.realpath(mlir_runner))), "lib", "libmlir_c_runner_utils.so")
    if not os.path.exists(lib):
        raise CheckError("cannot find " + lib)
    return lib


# remat-run's CPU lowering (lib/Transforms/Pipelines.cpp) with upstream's
# allocation functions; math ops to LLVM first, libm calls for those LLVM
# cannot lower (math.erf).
UPSTREAM_PIPELINE = (
    "builtin.module(convert-math-to-llvm,convert-math-to-libm,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "func.func(convert-linalg-to-loops),lower-affine,convert-scf-to-cf,"
    "expand-strided-metadata,lower-affine,finalize-memref-to-llvm,"
    "convert-math-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,"
    "convert-cf-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)")


def run_tool(args, what):
    try:
        proc = subprocess.run(args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise CheckError("%s: cannot run %s: %s" % (what, args[0], e))
    if proc.returncode != 0:
        raise CheckError("%s failed (exit %d): %s\n%s%s" % (
            what, proc.returncode, " ".join(args), proc.stdout[-4000:],
            proc.stderr[-8000:]))
    return proc.stdout


# ----------------------------------------------------------------------------
# Printed MLIR: top-level ops, function signatures
# ----------------------------------------------------------------------------

def top_level_ops(printed):
    """Splits `remat-opt --mlir-print-local-scope` output into its top-level
    ops (text blocks at two spaces of indentation inside `module {`)."""
    lines = printed.split("\n")
    start = None
    for i, line in enumerate(lines):
        if line.startswith("module"):
            start = i + 1
            break
    if start is None:
        raise CheckError("no module in the printed IR")
    ops = []
    current = None
    for line in lines[start:]:
        if line == "}":
            break
        if line.startswith("  ") and not line.startswith("   ") \
                and line.strip() != "}":
            if current is not None:
                ops.append("\n".join(current))
            current = [line]
        else:
            if current is None:
                current = []
            current.append(line)
    if current:
        ops.append("\n".join(current))
    return ops


def split_top(text, sep=","):
    """Splits at `sep` outside (), <>, [], {} and strings."""
    parts, depth, cur, in_str = [], 0, [], False
    i = 0
    while i < len(text):
        c = text[i]
        if in_str:
            cur.append(c)
            if c == "\\":
                cur.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            cur.append(c)
        elif c in "(<[{":
            depth += 1
            cur.append(c)
        elif c in ")>]}":
            # `->` is not a closing bracket.
            if c == ">" and i > 0 and text[i - 1] == "-":
                cur.append(c)
            else:
                depth -= 1
                cur.append(c)
        elif c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def matching(text, i):
    """Index of the bracket closing the one at text[i]."""
    open_c = text[i]
    close_c = {"(": ")", "<": ">", "[": "]", "{": "}"}[open_c]
    depth = 0
    in_str = False
    j = i
    while j < len(text):
        c = text[j]
        if in_str:
            if c == "\\":
                j += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "(<[{":
            depth += 1
        elif c in ")>]}":
            if not (c == ">" and text[j - 1] == "-"):
                depth -= 1
                if depth == 0:
                    if c != close_c:
                        raise CheckError("unbalanced brackets in: " + text)
                    return j
        j += 1
    raise CheckError("unbalanced brackets in: " + text)


class Func:
    def __init__(self, text):
        self.text = text
        header = text.split("\n", 1)[0]
        m = re.match(r"\s*func\.func\s+(?:(private|public|nested)\s+)?@([\w$.-]+)\(",
                     header)
        if not m:
            raise CheckError("not a function: " + header)
        self.visibility = m.group(1)
        self.name = m.group(2)
        self.external = not header.rstrip().endswith("{")
        open_paren = m.end() - 1
        close_paren = matching(header, open_paren)
        self.args = []      # (type, attrs text or "")
        for part in split_top(header[open_paren + 1:close_paren]):
            # `%arg0: tensor<3xf64> {remat.param}` or just a type (external)
            mm = re.match(r"%[\w$.-]+\s*:\s*(.*)$", part, re.S)
            body = mm.group(1) if mm else part
            self.args.append(split_type_attrs(body))
        rest = header[close_paren + 1:].strip()
        self.results = []
        if rest.startswith("->"):
            rest = rest[2:].strip()
            if rest.startswith("("):
                close = matching(rest, 0)
                for part in split_top(rest[1:close]):
                    self.results.append(split_type_attrs(part))
            else:
                # A single type, up to ` attributes` or the body's `{`.
                end = len(rest)
                for stop in (" attributes ", " {"):
                    k = rest.find(stop)
                    if k >= 0:
                        end = min(end, k)
                self.results.append((rest[:end].strip(), ""))

    def arg_types(self):
        return [t for t, _ in self.args]

    def result_types(self):
        return [t for t, _ in self.results]


def split_type_attrs(text):
    text = text.strip()
    k = None
    depth = 0
    for i, c in enumerate(text):
        if c in "(<[":
            depth += 1
        elif c in ")>]" and not (c == ">" and i > 0 and text[i - 1] == "-"):
            depth -= 1
        elif c == "{" and depth == 0:
            k = i
            break
    if k is None:
        return text, ""
    return text[:k].strip(), text[k:].strip()


def strip_remat_attrs(text):
    """Removes every `remat.*` attribute (with or without a value) from the
    attribute dictionaries in `text`; empty dictionaries go too."""
    value = r'(?:"(?:[^"\\]|\\.)*"|[^,{}]+?)'
    pat = re.compile(r"remat\.[\w.]+(?:\s*=\s*" + value + r")?(?=\s*[,}])")
    text = pat.sub("", text)
    # Clean up the separators left behind.
    for _ in range(4):
        text = re.sub(r"\{\s*,\s*", "{", text)
        text = re.sub(r",\s*,", ",", text)
        text = re.sub(r",\s*\}", "}", text)
    text = re.sub(r"\s+attributes\s*\{\s*\}", "", text)
    text = re.sub(r"\s+attrs\s*=\s*\{\s*\}", "", text)
    text = re.sub(r"\s*\{\s*\}(?=[\s,)])", "", text)
    return text


# ----------------------------------------------------------------------------
# Types and values
# ----------------------------------------------------------------------------

class TType:
    """A ranked tensor type or a scalar."""

    def __init__(self, text):
        self.text = text.strip()
        m = re.match(r"tensor<(.*)>$", self.text)
        if m:
            self.is_tensor = True
            dims = m.group(1).split("x")
            self.elem = dims[-1]
            try:
                self.shape = [int(d) for d in dims[:-1]]
            except ValueError:
                raise CheckError("only static shapes are supported: " + text)
        else:
            self.is_tensor = False
            self.elem = self.text
            self.shape = []

    @property
    def num_elements(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def is_float(self):
        return self.elem in ("f64", "f32", "f16", "bf16")

    @property
    def is_int(self):
        return re.match(r"^(i\d+|index)$", self.elem) is not None


def indices(shape):
    if not shape:
        yield ()
        return
    first, rest = shape[0], shape[1:]
    for i in range(first):
        for r in indices(rest):
            yield (i,) + r


def fmt_float(x, elem):
    if elem == "f32":
        x = struct.unpack("<f", struct.pack("<f", x))[0]
    return "%.17e" % x


def round_to(x, elem):
    if elem == "f32":
        return struct.unpack("<f", struct.pack("<f", x))[0]
    return x


def dense_literal(values, shape, elem):
    """values: flat list in row-major order."""
    def fmt(v):
        return fmt_float(v, elem) if elem.startswith(("f", "bf")) else str(v)
    if not shape:
        return fmt(values[0])

    def rec(vals, dims):
        if len(dims) == 1:
            return "[" + ", ".join(fmt(v) for v in vals) + "]"
        step = len(vals) // dims[0]
        return "[" + ", ".join(rec(vals[i * step:(i + 1) * step], dims[1:])
                               for i in range(dims[0])) + "]"
    return rec(values, shape)


# ----------------------------------------------------------------------------
# Directives
# ----------------------------------------------------------------------------

class Settings:
    def __init__(self):
        self.range = (-1.0, 1.0)
        self.int_range = (0, 3)
        self.seed = 1
        self.eps = 1e-6
        self.rtol = 1e-5
        self.per_arg = {}   # k -> dict


def parse_pair(text, conv):
    a, b = text.split(",")
    return conv(a), conv(b)


def read_directives(source, settings):
    for line in source.split("\n"):
        m = re.match(r"\s*//\s*gradcheck:\s*(.*)$", line)
        if not m:
            continue
        fields = dict(f.split("=", 1) for f in m.group(1).split())
        if "arg" in fields:
            k = int(fields.pop("arg"))
            d = settings.per_arg.setdefault(k, {})
            for key, val in fields.items():
                if key == "range":
                    d["range"] = parse_pair(val, float)
                elif key == "int-range":
                    d["int_range"] = parse_pair(val, int)
                elif key == "value":
                    d["value"] = float(val)
                else:
                    raise CheckError("unknown directive field '%s'" % key)
            continue
        for key, val in fields.items():
            if key == "range":
                settings.range = parse_pair(val, float)
            elif key == "int-range":
                settings.int_range = parse_pair(val, int)
            elif key == "seed":
                settings.seed = int(val)
            elif key == "eps":
                settings.eps = float(val)
            elif key == "rtol":
                settings.rtol = float(val)
            else:
                raise CheckError("unknown directive field '%s'" % key)


def make_values(ttype, k, settings, rng):
    n = ttype.num_elements
    d = settings.per_arg.get(k, {})
    if ttype.is_float:
        if "value" in d:
            return [round_to(d["value"], ttype.elem)] * n
        lo, hi = d.get("range", settings.range)
        spacing = (hi - lo) / n
        grid = [lo + spacing * (i + 0.5) + spacing * rng.uniform(-0.25, 0.25)
                for i in range(n)]
        rng.shuffle(grid)
        return [round_to(v, ttype.elem) for v in grid]
    if ttype.is_int:
        if "value" in d:
            return [int(d["value"])] * n
        lo, hi = d.get("int_range", settings.int_range)
        if ttype.elem == "i1":
            lo, hi = 0, 2
        return [rng.randrange(lo, hi) for _ in range(n)]
    raise CheckError("cannot make values of type " + ttype.text)


# ----------------------------------------------------------------------------
# The main function
# ----------------------------------------------------------------------------

class MainBuilder:
    def __init__(self):
        self.lines = []
        self.counter = 0
        self.index_consts = {}

    def fresh(self, base="v"):
        self.counter += 1
        return "%%%s%d" % (base, self.counter)

    def emit(self, line):
        self.lines.append("    " + line)

    def index(self, i):
        if i not in self.index_consts:
            name = "%%c%d" % i
            self.index_consts[i] = name
            # Hoisted: emitted at the top of main.
        return self.index_consts[i]

    def print_f(self, value, elem):
        """Prints an f64/f32 scalar SSA value as the i64 bits of its f64."""
        if elem == "f32":
            ext = self.fresh("x")
            self.emit("%s = arith.extf %s : f32 to f64" % (ext, value))
            value = ext
        elif elem != "f64":
            raise CheckError("cannot print element type " + elem)
        bits = self.fresh("b")
        self.emit("%s = arith.bitcast %s : f64 to i64" % (bits, value))
        self.emit("func.call @printI64(%s) : (i64) -> ()" % bits)
        self.emit("func.call @printNewline() : () -> ()")

    def print_scalar_result(self, value, ttype):
        """Prints result `value` of scalar type or rank-0 tensor type."""
        if ttype.is_tensor:
            if ttype.shape:
                raise CheckError("the loss must be a scalar, not " + ttype.text)
            ex = self.fresh("e")
            self.emit("%s = tensor.extract %s[] : %s" % (ex, value, ttype.text))
            value = ex
        self.print_f(value, ttype.elem)

    def print_all(self, value, ttype):
        if not ttype.is_tensor:
            self.print_f(value, ttype.elem)
            return
        for idx in indices(ttype.shape):
            ex = self.fresh("e")
            self.emit("%s = tensor.extract %s[%s] : %s" % (
                ex, value, ", ".join(self.index(i) for i in idx), ttype.text))
            self.print_f(ex, ttype.elem)


def build_main(loss_func, step_func, params, arg_values, settings):
    """Returns (main text, plan). plan lists what each printed line is."""
    mb = MainBuilder()
    arg_types = [TType(t) for t in loss_func.arg_types()]
    arg_names = []
    for k, (tt, vals) in enumerate(zip(arg_types, arg_values)):
        name = "%%arg_%d" % k
        arg_names.append(name)
        if tt.is_tensor:
            mb.emit("%s = arith.constant dense<%s> : %s" % (
                name, dense_literal(vals, tt.shape, tt.elem), tt.text))
        else:
            mb.emit("%s = arith.constant %s : %s" % (
                name, dense_literal(vals, [], tt.elem), tt.text))
    plan = []
    step_types = step_func.result_types()
    loss_types = loss_func.result_types()
    arg_sig = ", ".join(t.text for t in arg_types)
    arg_list = ", ".join(arg_names)

    # The step.
    res = mb.fresh("step")
    n = len(step_types)
    res_def = res if n == 1 else "%s:%d" % (res, n)
    mb.emit("%s = func.call @%s(%s) : (%s) -> (%s)" % (
        res_def, step_func.name, arg_list, arg_sig, ", ".join(step_types)))

    def result(r, i, count):
        return r if count == 1 else "%s#%d" % (r, i)

    mb.print_scalar_result(result(res, 0, n), TType(step_types[0]))
    plan.append(("step_loss",))
    for p, k in enumerate(params):
        tt = arg_types[k]
        mb.print_all(result(res, p + 1, n), tt)
        for idx in indices(tt.shape):
            plan.append(("grad", p, idx))

    # loss_only at x.
    nl = len(loss_types)
    loss_sig = ", ".join(loss_types)

    def call_loss(args):
        r = mb.fresh("l")
        rdef = r if nl == 1 else "%s:%d" % (r, nl)
        mb.emit("%s = func.call @loss_only(%s) : (%s) -> (%s)" % (
            rdef, ", ".join(args), arg_sig, loss_sig))
        mb.print_scalar_result(result(r, 0, nl), TType(loss_types[0]))

    call_loss(arg_names)
    plan.append(("loss",))

    # Perturbations.
    perturb = []     # (p, idx, xp, xm)
    for p, k in enumerate(params):
        tt = arg_types[k]
        vals = arg_values[k]
        for flat, idx in enumerate(indices(tt.shape)):
            x = vals[flat]
            h = settings.eps * max(1.0, abs(x))
            for sign in (1, -1):
                xv = round_to(x + sign * h, tt.elem)
                if tt.is_tensor:
                    c = mb.fresh("s")
                    mb.emit("%s = arith.constant %s : %s" % (
                        c, fmt_float(xv, tt.elem), tt.elem))
                    t = mb.fresh("t")
                    mb.emit("%s = tensor.insert %s into %s[%s] : %s" % (
                        t, c, arg_names[k],
                        ", ".join(mb.index(i) for i in idx), tt.text))
                else:
                    t = mb.fresh("s")
                    mb.emit("%s = arith.constant %s : %s" % (
                        t, fmt_float(xv, tt.elem), tt.elem))
                args = list(arg_names)
                args[k] = t
                call_loss(args)
                plan.append(("fd", p, idx, sign, xv))

    consts = ["    %s = arith.constant %d : index" % (name, i)
              for i, name in sorted(mb.index_consts.items())]
    text = "\n".join(
        ["  func.func @main() {"] + consts + mb.lines +
        ["    return", "  }"])
    return text, plan


# ----------------------------------------------------------------------------
# Checking
# ----------------------------------------------------------------------------

def bits_to_f64(v):
    return struct.unpack("<d", struct.pack("<q", v))[0]


def check(name, output, plan, params, arg_types, loss_type, settings,
          verbose):
    numbers = []
    for line in output.split("\n"):
        line = line.strip()
        if re.match(r"^-?\d+$", line):
            numbers.append(bits_to_f64(int(line)))
    if len(numbers) != len(plan):
        raise CheckError("the program printed %d numbers, expected %d:\n%s" % (
            len(numbers), len(plan), output[-4000:]))
    grads = {}
    fd = {}
    step_loss = loss = None
    for item, v in zip(plan, numbers):
        if item[0] == "step_loss":
            step_loss = v
        elif item[0] == "loss":
            loss = v
        elif item[0] == "grad":
            grads[(item[1], item[2])] = v
        else:
            _, p, idx, sign, xv = item
            fd.setdefault((p, idx), {})[sign] = (xv, v)
    mismatches = []
    loss_tol = 1e-9 if loss_type.elem == "f64" else 1e-5
    if not (abs(step_loss - loss) <= loss_tol * max(1.0, abs(loss))):
        mismatches.append("loss: differentiated function %r, forward %r" % (
            step_loss, loss))
    max_err = 0.0
    count = 0
    for p, k in enumerate(params):
        tt = arg_types[k]
        for idx in indices(tt.shape):
            (xp, lp), (xm, lm) = fd[(p, idx)][1], fd[(p, idx)][-1]
            f = (lp - lm) / (xp - xm)
            a = grads[(p, idx)]
            scale = max(1.0, abs(a), abs(f))
            err = abs(a - f) / scale
            if err != err:      # NaN
                err = float("inf")
            max_err = max(max_err, err)
            count += 1
            where = "arg %d (param %d) element [%s]" % (
                k, p, ", ".join(str(i) for i in idx))
            if verbose:
                print("gradcheck: %s: %s: analytic %.17g, finite-difference "
                      "%.17g" % (name, where, a, f))
            if not err <= settings.rtol:
                mismatches.append("%s: analytic %.17g, finite-difference "
                                  "%.17g, error %.3g" % (where, a, f, err))
    if mismatches:
        for m in mismatches:
            print("gradcheck: %s: MISMATCH %s" % (name, m))
        print("gradcheck: %s: %d of %d elements mismatch, max error %.3g, "
              "FAILED" % (name, len(mismatches), count, max_err))
        return False
    print("gradcheck: %s: %d elements, max error %.3g, OK" % (
        name, count, max_err))
    return True


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------

def find_loss_func(funcs, wanted):
    if wanted:
        for f in funcs:
            if f.name == wanted:
                return f
        raise CheckError("no function @%s" % wanted)
    marked = [f for f in funcs if not f.external and
              any("remat.loss" in a for _, a in f.results)]
    if len(marked) != 1:
        raise CheckError("expected exactly one function with a {remat.loss} "
                         "result, found %d (use --func)" % len(marked))
    return marked[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("forward")
    ap.add_argument("--train-step", help="an already differentiated module "
                    "used instead of remat-opt --remat-autodiff")
    ap.add_argument("--func", help="the function to differentiate")
    ap.add_argument("--name", help="name in the report (default: file stem)")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--eps", type=float)
    ap.add_argument("--rtol", type=float)
    ap.add_argument("--solver", default="none")
    ap.add_argument("--autodiff-flags", default="--remat-autodiff",
                    help="remat-opt flags that differentiate (default "
                    "--remat-autodiff)")
    ap.add_argument("--lower-flags", default="",
                    help="remat-opt flags applied to the combined module "
                    "before it runs (lowering ops remat-run does not know)")
    ap.add_argument("--runner", choices=("remat-run", "upstream"),
                    default="remat-run")
    ap.add_argument("--llvm-bin-dir")
    ap.add_argument("--keep", help="write the combined module here")
    ap.add_argument("--bin-dir")
    ap.add_argument("--remat-opt")
    ap.add_argument("--remat-run")
    ap.add_argument("--verbose", action="store_true")
    opts = ap.parse_args()
    name = opts.name or os.path.splitext(os.path.basename(opts.forward))[0]
    try:
        return run(opts, name)
    except CheckError as e:
        print("gradcheck: %s: ERROR: %s" % (name, e))
        return 2


def run_upstream(path, module, llvm_bin_dir):
    mlir_opt = find_llvm_tool("mlir-opt", llvm_bin_dir)
    mlir_runner = find_llvm_tool("mlir-runner", llvm_bin_dir)
    with tempfile.TemporaryDirectory(prefix="gradcheck-") as tmp:
        plain = os.path.join(tmp, "plain.mlir")
        with open(plain, "w") as f:
            f.write(strip_remat_attrs(module))
        lowered = os.path.join(tmp, "lowered.mlir")
        run_tool([mlir_opt, plain, "--pass-pipeline=" + UPSTREAM_PIPELINE,
                  "-o", lowered], "mlir-opt (upstream lowering of %s)" % path)
        return run_tool([mlir_runner, lowered, "-e", "main",
                         "-entry-point-result=void",
                         "-shared-libs=" + find_c_runner_utils(mlir_runner)],
                        "mlir-runner")


def run(opts, name):
    remat_opt = find_tool("remat-opt", opts.remat_opt, opts.bin_dir)
    remat_run = find_tool("remat-run", opts.remat_run, opts.bin_dir)
    with open(opts.forward) as f:
        source = f.read()
    settings = Settings()
    read_directives(source, settings)
    if opts.seed is not None:
        settings.seed = opts.seed
    if opts.eps is not None:
        settings.eps = opts.eps
    if opts.rtol is not None:
        settings.rtol = opts.rtol

    forward_printed = run_tool(
        [remat_opt, opts.forward, "--mlir-print-local-scope"],
        "parsing the forward module")
    forward_ops = top_level_ops(forward_printed)
    forward_funcs = [Func(op) for op in forward_ops
                     if op.lstrip().startswith("func.func")]
    loss_func = find_loss_func(forward_funcs, opts.func)

    if opts.train_step:
        step_printed = run_tool(
            [remat_opt, opts.train_step, "--mlir-print-local-scope"],
            "parsing the training step")
    else:
        step_printed = run_tool(
            [remat_opt, opts.forward] + opts.autodiff_flags.split() +
            ["--mlir-print-local-scope"],
            "remat-opt " + opts.autodiff_flags)
    step_ops = top_level_ops(step_printed)
    step_funcs = {}
    others = []
    for op in step_ops:
        if op.lstrip().startswith("func.func"):
            f = Func(op)
            if f.name == "main":
                continue
            step_funcs[f.name] = f
        else:
            others.append(op)
    if loss_func.name not in step_funcs:
        raise CheckError("the differentiated module has no @%s" %
                         loss_func.name)
    step_func = step_funcs[loss_func.name]

    # Parameters and the signature of the step.
    arg_types = [TType(t) for t in loss_func.arg_types()]
    marked = [k for k, (_, a) in enumerate(loss_func.args)
              if "remat.param" in a]
    if marked:
        params = marked
    else:
        params = [k for k, t in enumerate(arg_types)
                  if t.is_tensor and t.is_float]
    if not params:
        raise CheckError("no parameters")
    if step_func.arg_types() != loss_func.arg_types():
        raise CheckError("the differentiated function's arguments (%s) differ "
                         "from the forward's (%s)" % (
                             ", ".join(step_func.arg_types()),
                             ", ".join(loss_func.arg_types())))
    expected = [loss_func.result_types()[0]] + \
        [arg_types[k].text for k in params]
    # The forward's other results (not the loss), when it has any, may
    # follow the gradients.
    with_extras = expected + loss_func.result_types()[1:]
    if step_func.result_types() not in (expected, with_extras):
        raise CheckError("the differentiated function returns (%s), expected "
                         "(%s)" % (", ".join(step_func.result_types()),
                                   ", ".join(expected)))

    # Arguments.
    rng = random.Random(settings.seed)
    arg_values = [make_values(t, k, settings, rng)
                  for k, t in enumerate(arg_types)]

    # The module.
    loss_only = strip_remat_attrs(loss_func.text)
    loss_only = re.sub(r"^(\s*func\.func\s+(?:(?:private|public)\s+)?)@"
                       + re.escape(loss_func.name) + r"\(",
                       r"\1@loss_only(", loss_only, count=1)
    main_text, plan = build_main(loss_func, step_func, params, arg_values,
                                 settings)
    parts = list(others)
    parts += [f.text for f in step_funcs.values()]
    for f in forward_funcs:       # helpers the pass dropped
        if f.name not in step_funcs and f.name != "main":
            parts.append(f.text)
    parts.append(loss_only)
    for decl, sig in (("printI64", "(i64)"), ("printNewline", "()")):
        if decl not in step_funcs:
            parts.append("  func.func private @%s%s" % (decl, sig))
    parts.append(main_text)
    module = "module {\n" + "\n".join(parts) + "\n}\n"

    if opts.keep:
        path = opts.keep
        with open(path, "w") as f:
            f.write(module)
        cleanup = None
    else:
        fd, path = tempfile.mkstemp(prefix="gradcheck-", suffix=".mlir")
        with os.fdopen(fd, "w") as f:
            f.write(module)
        cleanup = path
    extra_cleanup = []
    try:
        if opts.lower_flags:
            lowered = path + ".lowered.mlir"
            if cleanup:
                extra_cleanup.append(lowered)
            run_tool([remat_opt, path] + opts.lower_flags.split() +
                     ["-o", lowered], "remat-opt " + opts.lower_flags)
            path = lowered
            with open(path) as f:
                module = f.read()
        if opts.runner == "remat-run":
            output = run_tool([remat_run, path, "--solver=" + opts.solver],
                              "remat-run")
        else:
            output = run_upstream(path, module, opts.llvm_bin_dir)
    finally:
        if cleanup:
            os.unlink(cleanup)
        for extra in extra_cleanup:
            if os.path.exists(extra):
                os.unlink(extra)
    ok = check(name, output, plan, params, arg_types,
               TType(loss_func.result_types()[0]), settings, opts.verbose)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
