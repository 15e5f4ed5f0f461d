#!/usr/bin/python3
"""Every solver's frontier on real models, against PyTorch 1.13's own choices.

For each model (`--models`, default resnet18,resnet50,mobilenet_v2,vgg11,
densenet121,transformer,unet) at `--batch` (4) and 224x224 (the transformer:
`--seq` 128 tokens, 6 layers, d=256):

1. The training step: `python/remat/torch_export.py MODEL ... -o M.mlir`
   (functorch's joint forward+backward graph, translated to linalg).
2. PyTorch's choices, exported in the order PyTorch runs them
   (`--partition default|min-cut`: the forward graph, then the backward graph
   with whatever it recomputes): the default partition (every activation the
   backward reads is saved) and functorch's min_cut_rematerialization_partition
   with its default decompositions. Each is run by our simulator in its own
   order (`remat-opt --remat-report="solver=none"`): the peak our simulator
   gives their choice, and its recompute overhead (its cost over the cost of
   the joint graph it was cut from, traced with the same decompositions). The
   exporter's statistics give the bytes they save and the ops they recompute.
3. Our frontier: `remat-opt M.mlir --remat-report="solver=all budget=B"` for
   the least-memory plans (no budget) and for `--points` budgets from the
   least peak any solver reaches to the checkpoint-all peak. Every plan gives
   (peak, recompute overhead = simulated cost / cost of computing each node
   once).
4. Compile time: `remat-opt M.mlir --remat-pipeline="solver=S"` (parse,
   extract, solve, apply, bufferize, early frees, print; wall time of the
   process) for `--timed-solvers`, without a budget (a budget a model cannot
   meet would time only the failure).

The table has one row per model: nodes, checkpoint-all peak, the default
partition's peak, min-cut's saved bytes, recomputed ops, overhead and peak,
our best peak at an overhead no larger than min-cut's (`ours@mc`) and the
ratio min-cut peak / ours@mc, the same ratio for our best plan at overheads
up to 1.05, 1.10 and 1.25, the least peak any solver reaches, and the compile
times. `--json` writes everything (every plan of every budget);
`--plot` draws each model's frontier (peak vs overhead, one line per solver,
min-cut and the default partition as points) into a PNG with matplotlib.

A benchmark is not a test: a failing command is reported in the table and the
JSON, and the script exits 0 unless its own arguments are wrong.

Usage:
  /usr/bin/python3 bench/bench_models.py [--models M1,M2] [--batch 4]
      [--size 224] [--seq 128] [--points 6] [--time-limit 20]
      [--timed-solvers feng,rotor,auto] [--json PATH] [--plot PATH]
      [--keep DIR] [--remat-opt PATH]
  /usr/bin/python3 bench/bench_models.py --from-json PATH [--plot PATH]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EXPORTER = os.path.join(ROOT, "python", "remat", "torch_export.py")
PYTHON = "/usr/bin/python3"
DEFAULT_MODELS = "resnet18,resnet50,mobilenet_v2,vgg11,densenet121,transformer,unet"


def run(argv, **kwargs):
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    return proc, time.monotonic() - start


def failure(proc):
    lines = [l for l in (proc.stderr or "").splitlines() if "error" in l.lower()]
    return (lines or (proc.stderr or "").splitlines()[-1:] or ["exit %d" % proc.returncode])[0][:300]


def model_args(model, args):
    if model == "transformer":
        return ["--batch", str(args.batch), "--seq", str(args.seq)]
    return ["--batch", str(args.batch), "--size", str(args.size), str(args.size)]


def report(remat_opt, step, solver, budget, time_limit):
    options = "solver=%s time-limit=%g" % (solver, time_limit)
    if budget:
        options += " budget=%s" % budget
    proc, seconds = run([remat_opt, step, "--remat-report=" + options, "-o", "/dev/null"])
    if proc.returncode != 0:
        return None, failure(proc), seconds
    return json.loads(proc.stdout)["functions"][0], None, seconds


def plans_of(entry):
    out = []
    for plan in entry["plans"]:
        sim = plan["simulation"]
        out.append({"solver": plan["solver"], "peak": sim["peak_bytes"],
                    "overhead": sim["overhead"], "cost": sim["total_cost"],
                    "recomputations": sim["num_recomputations"],
                    "meets_budget": plan["meets_budget"],
                    "solve_seconds": plan["solve_seconds"]})
    return out


def simulate_program_order(remat_opt, args, step):
    """The peak and cost of a step run in its own order (solver=none)."""
    entry, error, _ = report(remat_opt, step, "none", None, args.time_limit)
    return (None, error) if error else (plans_of(entry)[0], None)


def pytorch_choice(remat_opt, args, model, work, partition):
    """Export PyTorch's partition in its own order and simulate it. The
    recompute overhead is its cost over the cost of the joint graph it was
    cut from (traced with the same decompositions), each op once."""
    step = os.path.join(work, "%s.%s.mlir" % (model, partition))
    stats_path = os.path.join(work, "%s.%s.json" % (model, partition))
    proc, seconds = run([PYTHON, EXPORTER, model] + model_args(model, args) +
                        ["--partition", partition, "--stats", stats_path, "-o", step])
    if proc.returncode != 0:
        return {"error": failure(proc)}
    with open(stats_path) as f:
        stats = json.load(f)
    plan, error = simulate_program_order(remat_opt, args, step)
    if error:
        return dict(stats, error=error)
    baseline = os.path.join(work, "%s.joint-%s.mlir" % (model, partition))
    proc, _ = run([PYTHON, EXPORTER, model] + model_args(model, args) +
                  (["--decompose"] if partition == "min-cut" else []) + ["-o", baseline])
    if proc.returncode != 0:
        return dict(stats, peak=plan["peak"], error=failure(proc))
    base, error = simulate_program_order(remat_opt, args, baseline)
    if error:
        return dict(stats, peak=plan["peak"], error=error)
    return dict(stats, peak=plan["peak"], overhead=plan["cost"] / base["cost"],
                joint_peak=base["peak"], export_seconds=seconds)


def bench_model(remat_opt, args, model, work):
    row = {"model": model}
    step = os.path.join(work, model + ".mlir")
    proc, seconds = run([PYTHON, EXPORTER, model] + model_args(model, args) + ["-o", step])
    row["export_seconds"] = seconds
    if proc.returncode != 0:
        row["error"] = failure(proc)
        return row
    entry, error, _ = report(remat_opt, step, "all", None, args.time_limit)
    if error:
        row["error"] = error
        return row
    row["nodes"] = entry["nodes"]
    row["checkpoint_all_peak"] = entry["checkpoint_all_peak_bytes"]
    row["fixed_bytes"] = entry["fixed_bytes"]
    frontier = [dict(p, budget=None) for p in plans_of(entry)]
    least = min(p["peak"] for p in frontier)
    row["least_peak"] = least
    row["least_peak_solver"] = min(frontier, key=lambda p: p["peak"])["solver"]
    top = row["checkpoint_all_peak"]
    for k in range(args.points):
        budget = least + (top - least) * k // max(1, args.points - 1)
        entry, error, seconds = report(remat_opt, step, "all", budget, args.time_limit)
        if error:
            row.setdefault("budget_errors", []).append({"budget": budget, "error": error})
            continue
        frontier += [dict(p, budget=budget) for p in plans_of(entry)]
    row["frontier"] = frontier

    row["default"] = pytorch_choice(remat_opt, args, model, work, "default")
    row["min_cut"] = pytorch_choice(remat_opt, args, model, work, "min-cut")
    summarize(row)

    row["compile_seconds"] = {}
    for solver in args.timed_solvers.split(","):
        options = "solver=%s time-limit=%g" % (solver, args.time_limit)
        proc, seconds = run([remat_opt, step, "--remat-pipeline=" + options, "-o", "/dev/null"])
        row["compile_seconds"][solver] = (round(seconds, 3) if proc.returncode == 0
                                          else "failed: " + failure(proc))
    return row


# Overheads at which the table compares our best plan with min-cut's choice,
# besides min-cut's own overhead.
OVERHEAD_CAPS = (1.05, 1.10, 1.25)


def best_within(frontier, cap):
    within = [p for p in frontier if p["overhead"] <= cap + 1e-9]
    return min(within, key=lambda p: (p["peak"], p["overhead"])) if within else None


def summarize(row):
    """Our best plan at min-cut's overhead and at OVERHEAD_CAPS, and the
    ratios min-cut peak / our peak."""
    mc, frontier = row.get("min_cut", {}), row.get("frontier", [])
    if "overhead" not in mc or "peak" not in mc:
        return
    best = best_within(frontier, mc["overhead"])
    if best:
        row["ours_at_min_cut_overhead"] = best
        row["min_cut_over_ours"] = mc["peak"] / best["peak"]
    row["min_cut_over_ours_at"] = {}
    for cap in OVERHEAD_CAPS:
        best = best_within(frontier, cap)
        if best:
            row["min_cut_over_ours_at"]["%.2f" % cap] = {
                "ratio": mc["peak"] / best["peak"], "peak": best["peak"],
                "overhead": best["overhead"], "solver": best["solver"]}


def mb(n):
    return "%.1f" % (n / 1e6) if isinstance(n, (int, float)) else "-"


def print_table(rows, args):
    timed = args.timed_solvers.split(",")
    head = ("model", "nodes", "ckpt_all_MB", "default_MB", "mc_saved_MB",
            "mc_recomp_ops", "mc_ovh", "mc_MB", "ours@mc_MB", "(solver)",
            "mc/ours") + tuple("mc/ours@%.2f" % c for c in OVERHEAD_CAPS) + (
            "least_MB",) + tuple("t_%s_s" % s for s in timed)
    table = [head]
    for r in rows:
        if "error" in r:
            table.append((r["model"], "error: " + r["error"]))
            continue
        mc, ours = r.get("min_cut", {}), r.get("ours_at_min_cut_overhead", {})
        table.append((r["model"], str(r["nodes"]), mb(r["checkpoint_all_peak"]),
                      mb(r.get("default", {}).get("peak")), mb(mc.get("saved_bytes")),
                      str(mc.get("recomputed_ops", "-")),
                      "%.3f" % mc["overhead"] if "overhead" in mc else "-",
                      mb(mc.get("peak")), mb(ours.get("peak")), ours.get("solver", "-"),
                      "%.2f" % r["min_cut_over_ours"] if "min_cut_over_ours" in r else "-") +
                     tuple("%.2f" % r["min_cut_over_ours_at"]["%.2f" % c]["ratio"]
                           if "%.2f" % c in r.get("min_cut_over_ours_at", {}) else "-"
                           for c in OVERHEAD_CAPS) +
                     (mb(r["least_peak"]),) +
                     tuple(str(r["compile_seconds"].get(s)) for s in timed))
    widths = [max(len(row[i]) for row in table if i < len(row)) for i in range(len(head))]
    for row in table:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)))


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in rows if "frontier" in r]
    cols = 3
    fig, axes = plt.subplots((len(rows) + cols - 1) // cols, cols,
                             figsize=(6 * cols, 4.2 * ((len(rows) + cols - 1) // cols)),
                             squeeze=False)
    # One color and marker per solver, the same in every panel (17 solvers:
    # tab20's colors, markers cycling so that neighbours differ twice).
    names = sorted({p["solver"].split("(")[0] for r in rows for p in r["frontier"]})
    markers = "o^sDv<>pP*hX"
    style = {name: {"color": plt.cm.tab20(k % 20), "marker": markers[k % len(markers)]}
             for k, name in enumerate(names)}
    for ax, r in zip(axes.flat, rows):
        by_solver = {}
        for p in r["frontier"]:
            by_solver.setdefault(p["solver"].split("(")[0], []).append(p)
        for solver, points in sorted(by_solver.items()):
            # Each solver's Pareto front: the least overhead for each peak.
            points = sorted(points, key=lambda p: (p["peak"], p["overhead"]))
            front, best = [], float("inf")
            for p in points:
                if p["overhead"] < best:
                    front.append(p)
                    best = p["overhead"]
            ax.plot([p["overhead"] for p in front], [p["peak"] / 1e6 for p in front],
                    markersize=4, linewidth=1, label=solver, **style[solver])
        for key, marker, label in (("min_cut", "*", "PyTorch min-cut"),
                                   ("default", "X", "PyTorch default")):
            choice = r.get(key, {})
            if "peak" in choice:
                ax.scatter([choice["overhead"]], [choice["peak"] / 1e6], s=160,
                           marker=marker, color="black", zorder=5, label=label)
        ax.set_title("%s (%d nodes)" % (r["model"], r["nodes"]))
        ax.set_xlabel("recompute overhead (cost / cost without recomputation)")
        ax.set_ylabel("simulated peak (MB)")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(rows):]:
        ax.axis("off")
    handles, labels = {}, []
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    handles, labels = list(handles.values()), list(handles)
    fig.legend(handles, labels, loc="lower center", ncol=7, fontsize=8)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--points", type=int, default=6)
    parser.add_argument("--time-limit", type=float, default=20)
    parser.add_argument("--timed-solvers", default="feng,rotor,auto")
    parser.add_argument("--json")
    parser.add_argument("--plot")
    parser.add_argument("--keep")
    parser.add_argument("--remat-opt", default=os.path.join(ROOT, "build", "bin", "remat-opt"))
    parser.add_argument("--from-json", metavar="PATH",
                        help="print the table (and --plot) of a saved --json run; runs nothing")
    args = parser.parse_args(argv)
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        args.timed_solvers = saved.get("timed_solvers", args.timed_solvers)
        for row in saved["models"]:
            summarize(row)
        print_table(saved["models"], args)
        if args.plot:
            plot(saved["models"], args.plot)
        return 0
    if not os.path.exists(args.remat_opt):
        sys.exit("bench_models: no remat-opt at %s (build first, or --remat-opt)" % args.remat_opt)
    work = args.keep or tempfile.mkdtemp(prefix="bench_models.")
    os.makedirs(work, exist_ok=True)
    rows = []
    for model in args.models.split(","):
        start = time.monotonic()
        rows.append(bench_model(args.remat_opt, args, model, work))
        rows[-1]["bench_seconds"] = round(time.monotonic() - start, 1)
        print("bench_models: %s done in %.0f s" % (model, rows[-1]["bench_seconds"]),
              file=sys.stderr, flush=True)
    print_table(rows, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"batch": args.batch, "size": args.size, "seq": args.seq,
                       "time_limit": args.time_limit, "points": args.points,
                       "timed_solvers": args.timed_solvers, "models": rows}, f, indent=1)
    if args.plot:
        plot(rows, args.plot)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
