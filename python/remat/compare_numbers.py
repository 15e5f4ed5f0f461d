#!/usr/bin/python3
"""Compare two lists of numbers, one per line, within a relative tolerance;
or tell whether a float32 mismatch with PyTorch is rounding noise or a bug.

Usage:
  compare_numbers.py REF OUT [--tol 1e-4]
  compare_numbers.py REF OUT --f64 REF64 OUT64 [--tol 1e-4] [--tol64 2e-5]
  compare_numbers.py --export MODEL [exporter options...] [--solver S]
                     [--budget B] [--keep DIR] [--tol 1e-4] [--tol64 2e-5]

REF and OUT are outputs in the format of torch_export.py (`--reference`, or
the step's @main run by remat-run): one number per line. Lines starting with
`remat-run:` and blank lines are ignored. Line k matches when

  |out_k - ref_k| <= tol * max(1, |ref_k|)

Prints one line per mismatch, then a summary with the largest error seen;
exits 1 if a line differs, the counts differ or a line is not a number.

In float32, deep networks at initialisation differ from their float64
results by more than 1e-4 in PyTorch itself, so a float32 mismatch alone
does not say whether the export is wrong. With `--f64 REF64 OUT64` (the same
model exported and run with `--dtype f64`, and PyTorch's float64 reference)
the last line is a verdict:

  MATCH      the float32 numbers agree within --tol;
  NOISE      they do not, but the float64 export matches PyTorch's float64
             (within --tol64, the 6 digits @main prints) and our float32 is
             no further from float64 than PyTorch's own float32 (at most
             twice its largest and its median error): rounding, not a bug;
  LESS-ACCURATE  the float64 export matches, but our float32 is further from
             float64 than PyTorch's float32 (more than twice): the numbers
             are right, our float32 arithmetic loses more (e.g. long
             reductions accumulated sequentially);
  BUG        the float64 export differs from PyTorch's float64: the
             translation or the compiled step computes something else
             (exit 1).

`--export MODEL ...` does it all in one command: exports the step in float32
and in float64 (python/remat/torch_export.py with the other options), runs
each with remat-run (`--solver`, `--budget`; REMAT_RUN, else build/bin, else
PATH) and PyTorch's references, and prints the verdict. Standard library
only.
"""

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

PROG = "compare_numbers.py"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def read_numbers(path):
    """(line number, text) of every line that carries a number."""
    out = []
    with open(path) as f:
        for k, line in enumerate(f, 1):
            text = line.strip()
            if text and not text.startswith("remat-run:"):
                out.append((k, text))
    return out


def parse(path, lineno, text):
    try:
        return float(text)
    except ValueError:
        raise SystemExit("%s: error: %s:%d: not a number: %r" % (PROG, path, lineno, text))


def values(path):
    return [parse(path, k, t) for k, t in read_numbers(path)]


def error(r, o):
    """The relative error of o against r (inf where only one is finite)."""
    if math.isfinite(r) and math.isfinite(o):
        return abs(o - r) / max(1.0, abs(r))
    return 0.0 if r == o or (math.isnan(r) and math.isnan(o)) else math.inf


def compare(ref_path, out_path, tol, quiet=False):
    """Prints the mismatches and a summary line; returns (mismatches, max
    error)."""
    ref, out = read_numbers(ref_path), read_numbers(out_path)
    mismatches = 0
    worst, worst_at = 0.0, None
    for k, ((rl, rt), (ol, ot)) in enumerate(zip(ref, out)):
        err = error(parse(ref_path, rl, rt), parse(out_path, ol, ot))
        if err > worst:
            worst, worst_at = err, k + 1
        if not err <= tol:
            mismatches += 1
            if not quiet:
                print("mismatch at number %d: reference %s, got %s (error %.3g)"
                      % (k + 1, rt, ot, err))
    if len(ref) != len(out):
        mismatches += 1
        print("count mismatch: %d numbers in %s, %d in %s"
              % (len(ref), ref_path, len(out), out_path))
    where = " (number %d)" % worst_at if worst_at else ""
    print("%s: %d numbers, %d mismatches, max error %.3g%s, tolerance %g"
          % ("FAIL" if mismatches else "OK", min(len(ref), len(out)), mismatches,
             worst, where, tol))
    return mismatches, worst


def errors_against(reference, other):
    return [error(r, o) for r, o in zip(reference, other)]


def verdict(ref32, out32, ref64, out64, tol, tol64):
    """Prints the float32 comparison, the float64 one and the verdict;
    returns the exit status."""
    print("float32: ours against PyTorch's float32")
    mismatches32, _ = compare(ref32, out32, tol, quiet=True)
    print("float64: ours against PyTorch's float64")
    mismatches64, _ = compare(ref64, out64, tol64)
    if mismatches64:
        print("BUG: the float64 export differs from PyTorch's float64 beyond %g: the "
              "translation or the compiled step computes something else than PyTorch "
              "(not rounding)" % tol64)
        return 1
    if not mismatches32:
        print("MATCH: float32 agrees with PyTorch's within %g, and float64 within %g"
              % (tol, tol64))
        return 0
    r64 = values(ref64)
    ours = errors_against(r64, values(out32))
    torch_f32 = errors_against(r64, values(ref32))
    ours_max, torch_max = max(ours), max(torch_f32)
    ours_med, torch_med = statistics.median(ours), statistics.median(torch_f32)
    print("distance from PyTorch's float64: ours in float32 max %.3g median %.3g; "
          "PyTorch's own float32 max %.3g median %.3g"
          % (ours_max, ours_med, torch_max, torch_med))
    # Twice PyTorch's own error, plus what printing 6 digits costs.
    floor = 1e-5
    if ours_max <= 2 * torch_max + floor and ours_med <= 2 * torch_med + floor:
        print("NOISE: the float64 export matches PyTorch's float64, and our float32 is "
              "no further from it than PyTorch's own float32: the float32 mismatch is "
              "rounding, not a bug")
    else:
        print("LESS-ACCURATE: the float64 export matches PyTorch's float64 (the numbers "
              "are right), but our float32 is further from it than PyTorch's own float32 "
              "(more than twice): our float32 arithmetic loses more precision")
    return 0


def find_remat_run():
    path = os.environ.get("REMAT_RUN")
    if path:
        return path
    local = os.path.join(REPO_ROOT, "build", "bin", "remat-run")
    if os.access(local, os.X_OK):
        return local
    found = shutil.which("remat-run")
    if not found:
        raise SystemExit("%s: error: cannot find remat-run: set REMAT_RUN or build "
                         "build/bin/remat-run" % PROG)
    return found


def export_and_run(model, exporter_args, a, work):
    """The four number files: (ref32, out32, ref64, out64)."""
    exporter = os.path.join(HERE, "torch_export.py")
    remat_run = find_remat_run()
    paths = []
    for dtype in ("f32", "f64"):
        base = [PYTHON, exporter, model] + exporter_args + ["--dtype", dtype]
        step = os.path.join(work, "step_%s.mlir" % dtype)
        ref = os.path.join(work, "ref_%s.txt" % dtype)
        out = os.path.join(work, "out_%s.txt" % dtype)
        for argv, target in ((base + ["-o", step], None), (base + ["--reference"], ref)):
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                                 else "%s: error: the export failed" % PROG)
            if target:
                with open(target, "w") as f:
                    f.write(proc.stdout)
        argv = [remat_run, step, "--solver=" + a.solver]
        if a.budget:
            argv.append("--budget=" + a.budget)
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
        if proc.returncode != 0:
            last = proc.stderr.strip().splitlines()
            raise SystemExit("%s: error: remat-run failed on the %s step: %s"
                             % (PROG, dtype, last[-1] if last else "exit %d"
                                % proc.returncode))
        with open(out, "w") as f:
            f.write(proc.stdout)
        paths += [ref, out]
    return paths


def main(argv):
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--tol", type=float, default=1e-4)
    common.add_argument("--tol64", type=float, default=2e-5,
                        help="tolerance of the float64 comparison (@main prints 6 "
                             "digits)")
    if any(x == "--export" or x.startswith("--export=") for x in argv):
        # One command: the options not ours go to torch_export.py.
        p = argparse.ArgumentParser(parents=[common], prog=PROG,
                                    description=__doc__.splitlines()[0])
        p.add_argument("--export", metavar="MODEL", required=True)
        p.add_argument("--solver", default="none")
        p.add_argument("--budget")
        p.add_argument("--keep", metavar="DIR", help="keep the files there")
        a, exporter_args = p.parse_known_args(argv)
        work = a.keep or tempfile.mkdtemp(prefix="compare_numbers.")
        os.makedirs(work, exist_ok=True)
        try:
            ref32, out32, ref64, out64 = export_and_run(a.export, exporter_args, a, work)
            return verdict(ref32, out32, ref64, out64, a.tol, a.tol64)
        finally:
            if not a.keep:
                shutil.rmtree(work, ignore_errors=True)
    p = argparse.ArgumentParser(parents=[common], prog=PROG,
                                description=__doc__.splitlines()[0])
    p.add_argument("ref")
    p.add_argument("out")
    p.add_argument("--f64", nargs=2, metavar=("REF64", "OUT64"),
                   help="the float64 reference and run of the same model: the last line "
                        "says whether a float32 mismatch is noise or a bug")
    a = p.parse_args(argv)
    if a.f64:
        return verdict(a.ref, a.out, a.f64[0], a.f64[1], a.tol, a.tol64)
    mismatches, _ = compare(a.ref, a.out, a.tol)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
