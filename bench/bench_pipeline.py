#!/usr/bin/python3
"""Time `remat-opt --remat-pipeline` on generated training steps.

Benchmark row of the issue: `remat-opt --remat-pipeline` on a generated step
of 10,000 ops (extract, baseline solve, apply) runs in under 2 s; print the
time of each stage.

For every size N (`--sizes`, default 1000,3000,10000) the step is generated
with `python/remat/gen_mlp.py --ops N` into a temporary directory; for every
solver (`--solvers`, default checkpoint-all,chen-sqrtn) two commands run:

  A. remat-opt FILE --remat-pipeline="solver=S" -o /dev/null --mlir-timing
     The pipeline as users run it. Its `--mlir-timing` report gives the parse
     time of the input (Parser), the pass times (RematNormalizeDestinationsPass,
     RematApplyPass; MLIR counts the verifier run after a pass in that pass's
     time), the time to print the output (Output) and MLIR's total. Python
     measures the wall time of the whole process around it: that is the
     number compared with 2 s.

  B. remat-opt FILE --pass-pipeline='builtin.module(func.func(
         remat-normalize-destinations,
         remat-apply{solver=S}))' -o /dev/null --mlir-timing -debug-only=remat-apply
     The same passes; --mlir-timing times remat-apply's stages as nested rows:
       (A) remat::TrainingGraphAnalysis   the extraction
       (A) remat solve                    the solve (with the simulator's
                                          validation of the plan)
     and the rewrite is the rest of RematApplyPass. The LLVM_DEBUG line of
     remat-apply gives the node count.

Each command runs `--repeat` times (default 3); the run with the median wall
time is reported. Columns:

  ops        top-level ops of the generated step (gen_mlp.count_ops)
  nodes      nodes of the extracted training graph (from B)
  parse_s    Parser time of A
  norm_s     RematNormalizeDestinationsPass time of A (verifier included)
  extract_s  solve_s  apply_s   stage times of remat-apply in B
  applyp_s   RematApplyPass time of A (stages + verifier + bookkeeping)
  output_s   Output time of A (printing the module to /dev/null)
  mlir_s     Total of A's --mlir-timing report
  wall_s     wall time of process A, measured by Python
  <2s        wall_s < 2

A benchmark is not a test: a slow row, a failing command or a missing line is
reported in the table (and in the JSON), and the script still exits 0 unless
its own arguments are wrong.

Usage:
  /usr/bin/python3 bench/bench_pipeline.py [--remat-opt PATH]
      [--sizes 1000,3000,10000] [--solvers checkpoint-all,chen-sqrtn]
      [--repeat 3] [--json PATH] [--keep DIR]

Standard library only.
"""

import argparse
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN_MLP = os.path.join(REPO, "python", "remat", "gen_mlp.py")
LIMIT_S = 2.0

# remat-apply's LLVM_DEBUG line (-debug-only=remat-apply), for the node count:
#   remat-apply @train_step: 3001 nodes, solver 'chen-sqrtn' peak ...
NODES_LINE = re.compile(r"remat-apply @(?P<func>\S+): (?P<nodes>\d+) nodes")
# A row of the text report of --mlir-timing (MLIR 22), e.g.
#     0.1929 ( 43.4%)  Parser
#     0.0671 ( 15.1%)    RematNormalizeDestinationsPass
# With user time as well there are two "time (pct)" columns; the last one
# before the name is the wall time (the only column by default).
REPORT_ROW = re.compile(
    r"^\s*(?:[0-9.]+\s+\(\s*[0-9.]+%\)\s+)*"
    r"(?P<wall>[0-9.]+)\s+\(\s*[0-9.]+%\)\s+(?P<name>\S.*?)\s*$")
TOTAL_LINE = re.compile(r"Total Execution Time:\s*(?P<t>[0-9.]+) seconds")


def default_remat_opt():
    candidate = os.path.join(REPO, "build", "bin", "remat-opt")
    if os.access(candidate, os.X_OK):
        return candidate
    return shutil.which("remat-opt") or candidate


def load_gen_mlp():
    """gen_mlp as a module (for count_ops), or None."""
    try:
        spec = importlib.util.spec_from_file_location("gen_mlp", GEN_MLP)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    except Exception:  # noqa: BLE001 - a benchmark reports, never fails
        return None


def generate(size, directory, gen):
    """Writes the step of about `size` ops; returns (path, ops, error)."""
    path = os.path.join(directory, "step_%d.mlir" % size)
    try:
        with open(path, "w") as out:
            proc = subprocess.run(
                [sys.executable, GEN_MLP, "--ops", str(size)],
                stdout=out, stderr=subprocess.PIPE, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        return path, None, "gen_mlp.py: %s" % e
    if proc.returncode != 0:
        return path, None, "gen_mlp.py exited %d: %s" % (
            proc.returncode, proc.stderr.strip()[-300:])
    ops = None
    try:
        with open(path) as f:
            head = f.read(400)
        m = re.search(r"(\d+)-layer", head)
        if m:
            layers = int(m.group(1))
            if gen is not None and hasattr(gen, "count_ops"):
                ops = gen.count_ops(layers)
            else:
                ops = 13 * layers + 6
    except OSError:
        pass
    return path, ops, None


def parse_report(stderr):
    """{name: wall seconds} of the --mlir-timing report, plus 'Total'."""
    times = {}
    in_report = False
    for line in stderr.splitlines():
        if "Execution time report" in line:
            in_report = True
            continue
        if not in_report:
            continue
        m = TOTAL_LINE.search(line)
        if m:
            times.setdefault("Total Execution Time", float(m.group("t")))
            continue
        m = REPORT_ROW.match(line)
        if m:
            name = m.group("name")
            # A name repeats for nested pipelines: sum them (one function
            # per step here, so it does not happen in practice).
            times[name] = times.get(name, 0.0) + float(m.group("wall"))
    return times


def run_once(cmd, timeout):
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True,
                              timeout=timeout)
        wall = time.perf_counter() - start
        return {"wall_s": wall, "rc": proc.returncode, "stderr": proc.stderr}
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return {"wall_s": time.perf_counter() - start, "rc": None,
                "stderr": err + "\n(timed out after %d s)" % timeout}
    except OSError as e:
        return {"wall_s": None, "rc": None, "stderr": str(e)}


def run_median(cmd, repeat, timeout):
    runs = [run_once(cmd, timeout) for _ in range(max(1, repeat))]
    timed = [r for r in runs if r["wall_s"] is not None and r["rc"] == 0]
    if not timed:
        return runs[-1]
    timed.sort(key=lambda r: r["wall_s"])
    return timed[(len(timed) - 1) // 2]


def last_error_line(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()
             and "Execution time report" not in l and not l.startswith("===")]
    for l in lines:
        if "error" in l:
            return l.strip()[:200]
    return lines[-1].strip()[:200] if lines else ""


def bench_one(remat_opt, path, ops, solver, repeat, timeout):
    row = {"ops": ops, "nodes": None, "solver": solver,
           "parse_s": None, "normalize_s": None, "extract_s": None,
           "solve_s": None, "apply_s": None, "apply_pass_s": None,
           "output_s": None, "mlir_total_s": None, "wall_s": None,
           "under_2s": None, "stage_wall_s": None, "errors": []}

    pipeline = [remat_opt, path, "--remat-pipeline=solver=%s" % solver,
                "-o", os.devnull, "--mlir-timing"]
    a = run_median(pipeline, repeat, timeout)
    if a["rc"] != 0:
        row["errors"].append("--remat-pipeline: exit %s: %s" % (
            a["rc"], last_error_line(a["stderr"])))
    if a["wall_s"] is not None:
        row["wall_s"] = a["wall_s"]
        row["under_2s"] = a["wall_s"] < LIMIT_S if a["rc"] == 0 else None
    report = parse_report(a["stderr"])
    row["parse_s"] = report.get("Parser")
    row["normalize_s"] = report.get("RematNormalizeDestinationsPass")
    row["apply_pass_s"] = report.get("RematApplyPass")
    row["output_s"] = report.get("Output")
    row["mlir_total_s"] = report.get("Total",
                                     report.get("Total Execution Time"))
    if a["rc"] == 0 and not report:
        row["errors"].append("--remat-pipeline: no --mlir-timing report")

    # The stages of remat-apply are rows of --mlir-timing: the extraction is
    # the TrainingGraphAnalysis, the solve (with the simulation) "(A) remat
    # solve"; the rewrite is the rest of the pass.
    staged = [remat_opt, path,
              "--pass-pipeline=builtin.module(func.func("
              "remat-normalize-destinations,"
              "remat-apply{solver=%s}))" % solver,
              "-o", os.devnull, "--mlir-timing", "-debug-only=remat-apply"]
    b = run_median(staged, repeat, timeout)
    row["stage_wall_s"] = b["wall_s"]
    if b["rc"] != 0:
        row["errors"].append("remat-apply: exit %s: %s" % (
            b["rc"], last_error_line(b["stderr"])))
    m = NODES_LINE.search(b["stderr"] or "")
    if m:
        row["nodes"] = int(m.group("nodes"))
    stages = parse_report(b["stderr"] or "")
    extract = stages.get("(A) remat::TrainingGraphAnalysis")
    solve = stages.get("(A) remat solve")
    apply_pass = stages.get("RematApplyPass")
    if extract is not None and solve is not None and apply_pass is not None:
        row["extract_s"] = extract
        row["solve_s"] = solve
        row["apply_s"] = max(0.0, apply_pass - extract - solve)
    elif b["rc"] == 0:
        row["errors"].append("no '(A) remat solve' row in --mlir-timing "
                             "(is this remat-opt older than the timed "
                             "stages?)")
    return row


def fmt(value, digits=4):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return "%.*f" % (digits, value)
    return str(value)


COLUMNS = [("ops", "ops"), ("nodes", "nodes"), ("solver", "solver"),
           ("parse_s", "parse_s"), ("normalize_s", "norm_s"),
           ("extract_s", "extract_s"), ("solve_s", "solve_s"),
           ("apply_s", "apply_s"), ("apply_pass_s", "applyp_s"),
           ("output_s", "output_s"), ("mlir_total_s", "mlir_s"),
           ("wall_s", "wall_s"), ("under_2s", "<2s")]


def print_table(rows, out):
    cells = [[h for _, h in COLUMNS]]
    for row in rows:
        cells.append([fmt(row[k]) for k, _ in COLUMNS])
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    for n, line in enumerate(cells):
        out.write("  ".join(
            (c.ljust(w) if i == 2 else c.rjust(w))
            for i, (c, w) in enumerate(zip(line, widths))).rstrip() + "\n")
        if n == 0:
            out.write("  ".join("-" * w for w in widths) + "\n")
    for row in rows:
        for e in row["errors"]:
            out.write("note: ops=%s solver=%s: %s\n" % (
                row["ops"], row["solver"], e))


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--remat-opt", default=None,
                   help="remat-opt binary (default: build/bin/remat-opt in "
                        "the repository, else remat-opt on PATH)")
    p.add_argument("--sizes", default="1000,3000,10000",
                   help="comma-separated op counts for gen_mlp.py --ops")
    p.add_argument("--solvers", default="checkpoint-all,chen-sqrtn",
                   help="comma-separated solver names")
    p.add_argument("--repeat", type=int, default=3,
                   help="runs per command; the median (by wall time) is "
                        "reported")
    p.add_argument("--timeout", type=int, default=300,
                   help="seconds before one remat-opt run is abandoned")
    p.add_argument("--json", default=None, help="also write the rows here")
    p.add_argument("--keep", default=None,
                   help="write the generated steps to this directory "
                        "instead of a temporary one")
    args = p.parse_args(argv)

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        p.error("--sizes must be comma-separated integers")
    solvers = [s.strip() for s in args.solvers.split(",") if s.strip()]
    remat_opt = args.remat_opt or default_remat_opt()
    gen = load_gen_mlp()

    out = sys.stdout
    out.write("remat-opt: %s\n" % remat_opt)
    out.write("host: %s, %d CPUs, Python %s\n" % (
        platform.node(), os.cpu_count() or 0, platform.python_version()))
    out.write("limit: wall_s < %.1f s for `remat-opt --remat-pipeline` "
              "(median of %d runs)\n\n" % (LIMIT_S, max(1, args.repeat)))

    rows = []
    tmp = None
    directory = args.keep
    if directory:
        os.makedirs(directory, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="remat-bench-")
        directory = tmp.name
    try:
        for size in sizes:
            path, ops, error = generate(size, directory, gen)
            for solver in solvers:
                if error:
                    row = {k: None for k, _ in COLUMNS}
                    row.update(ops=ops, solver=solver, errors=[error],
                               stage_wall_s=None)
                else:
                    row = bench_one(remat_opt, path, ops, solver,
                                    args.repeat, args.timeout)
                row["requested_ops"] = size
                rows.append(row)
    finally:
        if tmp is not None:
            tmp.cleanup()

    print_table(rows, out)
    slow = [r for r in rows if r.get("under_2s") is False]
    if slow:
        out.write("\n%d row(s) at or over %.1f s (reported, not a failure)\n"
                  % (len(slow), LIMIT_S))

    if args.json:
        doc = {"remat_opt": remat_opt, "limit_s": LIMIT_S,
               "repeat": max(1, args.repeat), "cpus": os.cpu_count(),
               "rows": rows}
        try:
            with open(args.json, "w") as f:
                json.dump(doc, f, indent=2)
                f.write("\n")
            out.write("wrote %s\n" % args.json)
        except OSError as e:
            out.write("could not write %s: %s\n" % (args.json, e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
