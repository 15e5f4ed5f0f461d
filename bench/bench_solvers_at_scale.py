#!/usr/bin/python3
"""Solvers at scale (issue 24): `auto` against the best plan known and a valid bound.

For each PyTorch model (`--models`, default resnet50, mobilenet_v2, inception_v3,
densenet201, transformer, unet) at `--batch` 4 (224x224 images; the transformer
128 tokens) and for the shipped examples `examples/mlp8.mlir` and
`examples/siamese.mlir`, at budgets `--budgets` (default 50,60,70,80) percent of
the checkpoint-all peak:

1. `auto` at its default time limit (`remat-solve G --solver=auto --budget=B%`):
   its simulated cost (as overhead: cost / cost of computing every node once),
   its status, the lower bound it reports, and the wall time of the process.
2. The long runs: each solver of `--long-solvers` (default: every registered
   solver that applies, `auto` included) with `--time-limit=--long-limit`
   seconds. Every plan within the budget is a candidate for the best plan known;
   every reported `lower_bound` is collected.
3. Best known: the cheapest plan within the budget over all those runs and over
   the runs of the JSON files given with `--merge` (e.g. the run of another
   build), so that before and after are compared against the same reference.
4. Bounds: the largest reported lower bound of each run. A bound above the cost
   of a plan that fits the budget is *invalid* (a plan proves it wrong); the
   table says so instead of using it.

Graphs: `<graph-dir>/<model>.json` when present (default
`../shared/graphs/torch-b4` beside the checkout, when it exists), else the model is exported with
`python/remat/torch_export.py` and `remat-opt --remat-export-graph` into
`--cache` (default: a temporary directory). A benchmark is not a test: failures
are reported in the table and the JSON, and the script exits 0 unless its own
arguments are wrong.

Usage:
  /usr/bin/python3 bench/bench_solvers_at_scale.py [--remat-solve build/bin/remat-solve]
      [--remat-opt build/bin/remat-opt] [--models resnet50,...] [--examples mlp8,siamese]
      [--budgets 50,60,70,80] [--long-limit 600] [--long-solvers all|none|a,b]
      [--graph-dir DIR] [--cache DIR] [--merge OTHER.json ...] [--label NAME] [--json OUT.json]
  /usr/bin/python3 bench/bench_solvers_at_scale.py --from-json A.json [B.json ...] [--show LABELS]   # tables only
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EXPORTER = os.path.join(ROOT, "python", "remat", "torch_export.py")
PYTHON = "/usr/bin/python3"
DEFAULT_MODELS = "resnet50,mobilenet_v2,inception_v3,densenet201,transformer,unet"
DEFAULT_EXAMPLES = "mlp8,siamese"
# ../shared beside the checkout (the team's exported graphs), when present.
SHARED_GRAPHS = os.path.join(os.path.dirname(ROOT), "shared", "graphs", "torch-b4")


def run(argv, timeout=None):
    start = time.monotonic()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start
    return proc, time.monotonic() - start


def graph_file(name, args, example):
    """The node-link graph of a model or an example, exported when missing."""
    for directory in [args.graph_dir] if args.graph_dir else []:
        path = os.path.join(directory, name + ".json")
        if os.path.exists(path):
            return path, None
    path = os.path.join(args.cache, name + ".json")
    if os.path.exists(path):
        return path, None
    if example:
        mlir = os.path.join(ROOT, "examples", name + ".mlir")
    else:
        mlir = os.path.join(args.cache, name + ".mlir")
        extra = (["--batch", str(args.batch), "--seq", "128"] if name == "transformer"
                 else ["--batch", str(args.batch), "--size", "224", "224"])
        proc, _ = run([PYTHON, EXPORTER, name] + extra + ["-o", mlir])
        if proc is None or proc.returncode != 0:
            return None, "export failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
    with open(path, "w") as out:
        proc = subprocess.run([args.remat_opt, mlir, "--remat-export-graph", "-o", "/dev/null"],
                              stdout=out, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        os.unlink(path)
        return None, "remat-opt --remat-export-graph failed: " + proc.stderr.strip()[:200]
    return path, None


def solve(args, graph, solvers, budget, limit=None):
    """remat-solve --json; the rows (schedules dropped) and the wall time."""
    argv = [args.remat_solve, graph, "--solver=" + solvers, "--budget=%d%%" % budget, "--json"]
    if limit is not None:
        argv.append("--time-limit=%g" % limit)
    proc, wall = run(argv, timeout=args.timeout)
    if proc is None:
        return {"error": "timed out after %g s" % wall, "wall_s": wall}
    try:
        document = json.loads(proc.stdout)
    except ValueError:
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:300], "wall_s": wall}
    rows = []
    for row in document.get("results", []):
        row.pop("schedule", None)
        rows.append(row)
    return {"rows": rows, "wall_s": wall, "graph": document.get("graph"),
            "budget_bytes": document.get("budget")}


def applicable_solvers(args, graph):
    proc, _ = run([args.remat_solve, "--list"])
    names = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    return names


def measure(args):
    entries = [(m, False) for m in args.models.split(",") if m] + \
              [(e, True) for e in args.examples.split(",") if e]
    result = {"label": args.label, "remat_solve": args.remat_solve, "budgets": args.budgets,
              "long_limit": args.long_limit, "graphs": {}}
    for name, example in entries:
        path, error = graph_file(name, args, example)
        entry = {"file": path, "error": error, "budgets": {}}
        result["graphs"][name] = entry
        if not path:
            print("%s: %s" % (name, error), file=sys.stderr)
            continue
        for budget in args.budgets:
            record = {}
            record["auto"] = solve(args, path, "auto", budget)
            if record["auto"].get("graph"):
                entry["graph"] = record["auto"]["graph"]
            if args.long_solvers != "none":
                names = args.long_solvers
                if names == "all":
                    names = ",".join(applicable_solvers(args, path))
                # One process per solver: a crash or a timeout loses one row.
                record["long"] = {}
                for solver in names.split(","):
                    record["long"][solver] = solve(args, path, solver, budget, args.long_limit)
            entry["budgets"][str(budget)] = record
            auto = record["auto"]
            print("%s %d%%: auto %s in %.1f s" % (
                name, budget,
                "%.4f" % auto["rows"][0]["cost_overhead"] if auto.get("rows") else auto.get("error"),
                auto["wall_s"]), file=sys.stderr, flush=True)
    return result


def rows_of(record):
    rows = list(record.get("auto", {}).get("rows", []))
    for run_ in record.get("long", {}).values():
        rows += run_.get("rows", [])
    return rows


def summarise(results):
    """Per graph and budget: every run's auto, the best plan over all runs, bounds."""
    table = []
    names = []
    for result in results:
        for name in result["graphs"]:
            if name not in names:
                names.append(name)
    for name in names:
        budgets = []
        for result in results:
            for b in result["graphs"].get(name, {}).get("budgets", {}):
                if b not in budgets:
                    budgets.append(b)
        for b in sorted(budgets, key=int):
            best, best_solver = None, None
            for result in results:
                record = result["graphs"].get(name, {}).get("budgets", {}).get(b)
                if not record:
                    continue
                for row in rows_of(record):
                    if row.get("meets_budget") and "cost_overhead" in row:
                        if best is None or row["cost_overhead"] < best:
                            best, best_solver = row["cost_overhead"], row["solver"]
            for result in results:
                record = result["graphs"].get(name, {}).get("budgets", {}).get(b)
                if not record:
                    continue
                auto = (record.get("auto", {}).get("rows") or [{}])[0]
                base = auto.get("base_cost")
                # The largest bound this run reports, as an overhead, and
                # whether a plan that fits proves it wrong.
                bound, bound_solver = None, None
                for row in rows_of(record):
                    lb = row.get("lower_bound")
                    if lb is not None and row.get("base_cost"):
                        value = lb / row["base_cost"]
                        if bound is None or value > bound:
                            bound, bound_solver = value, row["solver"]
                invalid = bound is not None and best is not None and bound > best * (1 + 1e-9)
                table.append({
                    "graph": name, "budget": int(b), "run": result["label"],
                    "nodes": (result["graphs"][name].get("graph") or {}).get("nodes"),
                    "auto": auto.get("cost_overhead") if auto.get("meets_budget") else None,
                    "auto_solver": auto.get("solver"),
                    "auto_status": auto.get("status"),
                    "auto_wall_s": record.get("auto", {}).get("wall_s"),
                    "auto_error": record.get("auto", {}).get("error"),
                    "best": best, "best_solver": best_solver,
                    "bound": bound, "bound_solver": bound_solver, "bound_invalid": invalid,
                })
    return table


def fmt(value, digits=4):
    return "-" if value is None else ("%.*f" % (digits, value))


def print_table(table, out=sys.stdout):
    header = ("graph", "nodes", "budget", "run", "auto", "auto_s", "status", "winner", "best",
              "best_by", "auto/best", "bound", "auto/bound", "bound_by")
    lines = [header]
    for r in table:
        ratio_best = r["auto"] / r["best"] if r["auto"] and r["best"] else None
        valid_bound = r["bound"] if r["bound"] is not None and not r["bound_invalid"] else None
        ratio_bound = r["auto"] / valid_bound if r["auto"] and valid_bound else None
        bound_text = fmt(r["bound"])
        if r["bound_invalid"]:
            bound_text += " INVALID"
        lines.append((r["graph"], str(r["nodes"] or "-"), "%d%%" % r["budget"], r["run"],
                      fmt(r["auto"]) if r["auto"] else (r["auto_error"] or "misses")[:20],
                      fmt(r["auto_wall_s"], 1), r["auto_status"] or "-",
                      (r["auto_solver"] or "-").replace("auto(", "").rstrip(")"),
                      fmt(r["best"]), r["best_solver"] or "-", fmt(ratio_best),
                      bound_text, fmt(ratio_bound), r["bound_solver"] or "-"))
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(header))]
    for line in lines:
        out.write("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--remat-solve", default=os.path.join(ROOT, "build", "bin", "remat-solve"))
    parser.add_argument("--remat-opt", default=os.path.join(ROOT, "build", "bin", "remat-opt"))
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--examples", default=DEFAULT_EXAMPLES)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--budgets", default="50,60,70,80")
    parser.add_argument("--long-limit", type=float, default=600)
    parser.add_argument("--long-solvers", default="all",
                        help="'all' (every registered solver that applies), 'none', or a list")
    parser.add_argument("--timeout", type=float, default=None,
                        help="kill a remat-solve process after this many seconds")
    parser.add_argument("--graph-dir", default=SHARED_GRAPHS if os.path.isdir(SHARED_GRAPHS) else None)
    parser.add_argument("--cache", default=None)
    parser.add_argument("--merge", nargs="*", default=[])
    parser.add_argument("--label", default="run")
    parser.add_argument("--json", default=None)
    parser.add_argument("--from-json", nargs="*", default=None)
    parser.add_argument("--show", default=None,
                        help="print the rows of these runs only (labels, comma-separated); "
                             "every run still counts for the best plan known")
    args = parser.parse_args()
    try:
        args.budgets = [int(b) for b in args.budgets.split(",") if b]
    except ValueError:
        parser.error("--budgets takes integers (percent)")

    results = []
    if args.from_json is not None:
        for path in args.from_json:
            with open(path) as f:
                results.append(json.load(f))
    else:
        if not os.path.exists(args.remat_solve):
            parser.error("no remat-solve at %s (build it or pass --remat-solve)" % args.remat_solve)
        if args.cache is None:
            args.cache = tempfile.mkdtemp(prefix="remat-bench-scale-")
        os.makedirs(args.cache, exist_ok=True)
        measured = measure(args)
        results.append(measured)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(measured, f, indent=1)
        for path in args.merge:
            with open(path) as f:
                results.append(json.load(f))
    table = summarise(results)
    if args.show:
        shown = args.show.split(",")
        table = [r for r in table if r["run"] in shown]
    print_table(table)


if __name__ == "__main__":
    main()
