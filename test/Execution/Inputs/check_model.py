"""Exports a PyTorch model's training step, runs it under several solvers and
checks every run against PyTorch eager.

Usage: check_model.py MODEL [exporter options...] --runs R1,R2,...
                      [--tol 1e-4] [--time-limit S] [--jobs N] [--keep DIR]
                      [--autodiff]

MODEL and the exporter options (--batch, --size H W, --seq N, --layers N,
...) go to python/remat/torch_export.py unchanged. Each run is SOLVER or
SOLVER@BUDGET (`rotor@60%`). The script

1. exports the step (`torch_export.py MODEL ... -o step.mlir`) and PyTorch
   eager's numbers for the same inputs (`... --reference`);
2. runs `remat-run step.mlir --solver=S [--budget=B]` for each run (the step's
   own main prints the loss and every gradient's sum and sum of |.|);
3. checks, for each run: the numbers equal the reference within TOL relative
   to max(1, |value|), and the measured peak equals the predicted one.

A budget below what the solver can reach is not a failure of the step: the
parameter gradients are step outputs, allocated by the step and never freed,
so a small model at a small batch (resnet18 at 2x32x32: the gradients are
most of the peak) cannot meet 60% at all. The run then says so, with the
least budget it needs, and is repeated at that budget: the solver's plan for
the tightest budget it reaches, the one that recomputes the most, is what
gets checked against PyTorch. The first line gives the share of the
checkpoint-all peak that the gradients take.

With --autodiff, the step is not PyTorch's joint graph but our own reverse
mode: the exporter writes the forward-only step without @main
(`--forward-only --no-main -o fwd.mlir`), `remat-opt fwd.mlir
--remat-autodiff -o ad.mlir` differentiates it (its time is printed), and the
training step's @main (`--main-only`) is pasted before the last `}` of
ad.mlir; that module is the step of 2. and 3., checked against PyTorch
eager's training step.

Prints one line per run and a summary `check_model: MODEL: N runs, all match`
(exit 0) or `... K failures` (exit 1).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
EXPORTER = os.path.join(ROOT, "python", "remat", "torch_export.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
TIMED = ("auto", "checkmate-ilp", "checkmate-lp", "hong-cubic")

PEAK_RE = re.compile(r"^remat-run: measured_peak_bytes=(\d+) "
                     r"predicted_peak_bytes=(\d+|none)$", re.M)
INFEASIBLE_RE = re.compile(r"budget of (\d+) bytes is infeasible for solver "
                           r"'[^']*' on '[^']*', whose plan needs (\d+) bytes")


def numbers(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("remat-run:"):
            out.append(float(line))
    return out


def compare(ref, got, tol):
    """(max error, first mismatch text or None)."""
    if len(ref) != len(got):
        return float("inf"), "%d numbers, the reference has %d" % (len(got), len(ref))
    worst, bad = 0.0, None
    for k, (r, g) in enumerate(zip(ref, got)):
        err = abs(g - r) / max(1.0, abs(r))
        if err != err:  # NaN
            err = float("inf")
        if err > worst:
            worst = err
        if err > tol and bad is None:
            bad = "number %d: reference %r, got %r (error %.3g)" % (k + 1, r, g, err)
    return worst, bad


def remat_run(tool, step, solver, budget, time_limit):
    argv = [tool, step, "--solver=" + solver]
    if budget:
        argv.append("--budget=" + budget)
    if solver in TIMED:
        argv.append("--time-limit=%g" % time_limit)
    return subprocess.run(argv, capture_output=True, text=True)


def check_run(tool, step, spec, ref, tol, time_limit):
    solver, _, budget = spec.partition("@")
    start = time.monotonic()
    proc = remat_run(tool, step, solver, budget, time_limit)
    note = ""
    infeasible = INFEASIBLE_RE.search(proc.stderr)
    if proc.returncode != 0 and infeasible:
        needs = infeasible.group(2)
        note = "budget %s (%s B) infeasible, ran at the %s B its plan needs; " % (
            budget, infeasible.group(1), needs)
        proc = remat_run(tool, step, solver, needs, time_limit)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if "error" in l]
        return False, "%-20s FAILED: %s" % (spec, (lines or ["exit %d" % proc.returncode])[0][:300])
    m = PEAK_RE.search(proc.stdout)
    measured, predicted = (m.group(1), m.group(2)) if m else (None, None)
    worst, bad = compare(ref, numbers(proc.stdout), tol)
    ok = bad is None and measured is not None and measured == predicted
    text = "%-20s %snumbers %s (max error %.2g), measured=%s predicted=%s (%.1fs)" % (
        spec, note, "match" if bad is None else "DIFFER at " + bad, worst,
        measured, predicted, seconds)
    return ok, text


def splice_main(module_text, main_text):
    """module_text with main_text inserted before its last '}' (the end of
    the module that remat-opt prints)."""
    end = module_text.rstrip().rindex("}")
    return module_text[:end] + main_text + module_text[end:]


def autodiff_step(args, base, work):
    """Writes work/step.mlir from the forward-only step differentiated by
    remat-opt --remat-autodiff; returns (step path, seconds) or exits."""
    fwd = os.path.join(work, "fwd.mlir")
    ad = os.path.join(work, "ad.mlir")
    main_only = os.path.join(work, "main.mlir")
    step = os.path.join(work, "step.mlir")
    subprocess.run(base + ["--forward-only", "--no-main", "-o", fwd], check=True,
                   capture_output=True)
    subprocess.run(base + ["--main-only", "-o", main_only], check=True,
                   capture_output=True)
    start = time.monotonic()
    proc = subprocess.run([args.remat_opt, fwd, "--remat-autodiff", "-o", ad],
                          capture_output=True, text=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if "error" in l]
        print("check_model: %s: remat-opt --remat-autodiff FAILED (%.2fs): %s" % (
            args.model, seconds, (lines or proc.stderr.splitlines()
                                  or ["exit %d" % proc.returncode])[0][:500]))
        print("check_model: %s: 0 runs, autodiff failed" % args.model)
        sys.exit(1)
    with open(ad) as f, open(main_only) as g:
        text = splice_main(f.read(), g.read())
    with open(step, "w") as f:
        f.write(text)
    return step, seconds


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--runs", required=True)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--time-limit", type=float, default=10)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--keep", help="directory to keep the step in")
    parser.add_argument("--autodiff", action="store_true",
                        help="differentiate the forward-only step with remat-opt "
                             "--remat-autodiff instead of exporting PyTorch's joint graph")
    parser.add_argument("--remat-run", dest="remat_run",
                        default=shutil.which("remat-run"))
    parser.add_argument("--remat-opt", dest="remat_opt",
                        default=shutil.which("remat-opt"))
    args, exporter_args = parser.parse_known_args(argv)
    if not args.remat_run or not args.remat_opt:
        sys.exit("check_model: remat-run and remat-opt must be on PATH")
    work = args.keep or tempfile.mkdtemp(prefix="check_model.")
    os.makedirs(work, exist_ok=True)
    base = [PYTHON, EXPORTER, args.model] + exporter_args
    if args.autodiff:
        step, ad_seconds = autodiff_step(args, base, work)
    else:
        step = os.path.join(work, "step.mlir")
        subprocess.run(base + ["-o", step], check=True, capture_output=True)
    ref_text = subprocess.run(base + ["--reference"], check=True,
                              capture_output=True, text=True).stdout
    ref = numbers(ref_text)

    report = json.loads(subprocess.run(
        [args.remat_opt, step, "--remat-report=solver=checkpoint-all", "-o", "/dev/null"],
        check=True, capture_output=True, text=True).stdout)["functions"][0]
    peak = report["plans"][0]["simulation"]["peak_bytes"]
    graph = json.loads(subprocess.run(
        [args.remat_opt, step, "--pass-pipeline=builtin.module(func.func(remat-normalize-destinations),"
         "remat-print-graph{format=native})", "-o", "/dev/null"],
        check=True, capture_output=True, text=True).stdout)
    outputs = sum(v["bytes"] for v in graph["values"]
                  if v.get("output") and v.get("producer", -1) >= 0)
    print("check_model: %s: %s%d nodes, checkpoint-all peak %d B, of which step "
          "outputs (loss and parameter gradients) %d B (%.0f%%); %d numbers"
          % (args.model, "autodiff %.2fs, " % ad_seconds if args.autodiff else "",
             report["nodes"], peak, outputs, 100.0 * outputs / peak, len(ref)))

    specs = args.runs.split(",")
    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda spec: check_run(
            args.remat_run, step, spec, ref, args.tol, args.time_limit), specs))
    for ok, text in results:
        failures += not ok
        print("  " + text)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print("check_model: %s: %d runs, %s" % (
        args.model, len(specs), "all match" if not failures else "%d failures" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
