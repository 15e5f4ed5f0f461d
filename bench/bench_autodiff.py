#!/usr/bin/python3
"""remat-autodiff on PyTorch models: its time, and the memory of the training
step it builds against PyTorch's own joint graph.

For each model (`--models`, default resnet18,resnet50,mobilenet_v2,
densenet121,transformer,unet) at bench_models.py's sizes (`--batch` 4,
224x224; the transformer `--seq` 128 tokens, 6 layers, d=256; float32):

1. The forward-only step: `python/remat/torch_export.py MODEL ...
   --forward-only --no-main -o M.fwd.mlir` (the loss of the traced forward,
   parameters marked `remat.param`).
2. Our training step: `remat-opt M.fwd.mlir --remat-autodiff -o M.ad.mlir`,
   run `--repeat` times: the median wall time of the process (parse,
   differentiate, verify, print; the target is under 1 s for densenet121),
   and, from one more run with `--mlir-timing`, the time of the pass itself
   and of parsing and printing.
3. PyTorch's training step: `torch_export.py MODEL ... --no-main -o
   M.joint.mlir` (functorch's AOT joint forward + backward graph, translated
   op by op; what bench_models.py and the execution tests use).
4. Both run in their own program order by our simulator,
   `remat-opt X --remat-report="solver=none"`: the peak (fixed bytes
   included, as everywhere in the reports), the cost and the nodes of each,
   and the ratios ours / PyTorch's (the target: peak ratio at most 1.05).
   The peak excludes the arguments (fixed bytes) but includes the step's
   outputs, the parameter gradients, which are the same bytes in both steps:
   `excl_out_ratio` compares the peaks without them (the part the backward's
   order decides). The checkpoint-all peaks are given too (independent of
   program order).

The table has one row per model; `--json` writes every number. A benchmark
is not a test: a failing command is reported in its row (and the JSON), and
the script exits 0 unless its own arguments are wrong.

Usage:
  /usr/bin/python3 bench/bench_autodiff.py [--models M1,M2] [--batch 4]
      [--size 224] [--seq 128] [--repeat 3] [--json PATH] [--keep DIR]
      [--remat-opt PATH]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EXPORTER = os.path.join(ROOT, "python", "remat", "torch_export.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
DEFAULT_MODELS = "resnet18,resnet50,mobilenet_v2,densenet121,transformer,unet"
PEAK_TARGET = 1.05
TIME_TARGET = {"densenet121": 1.0}

TIMING_RE = re.compile(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*?)\s*$", re.M)


def run(argv):
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    return proc, time.monotonic() - start


def failure(proc):
    lines = [l for l in (proc.stderr or "").splitlines() if "error" in l.lower()]
    return (lines or (proc.stderr or "").splitlines()[:1] or
            ["exit %d" % proc.returncode])[0][:300]


def model_args(model, args):
    if model == "transformer":
        return ["--batch", str(args.batch), "--seq", str(args.seq)]
    return ["--batch", str(args.batch), "--size", str(args.size), str(args.size)]


def simulate(remat_opt, step):
    """The step in its own order (solver=none): peak, cost, nodes, fixed
    bytes, checkpoint-all peak; or an error string."""
    proc, _ = run([remat_opt, step, "--remat-report=solver=none", "-o", "/dev/null"])
    if proc.returncode != 0:
        return None, failure(proc)
    entry = json.loads(proc.stdout)["functions"][0]
    sim = entry["plans"][0]["simulation"]
    out = {"peak": sim["peak_bytes"], "cost": sim["total_cost"], "nodes": entry["nodes"],
           "fixed_bytes": entry["fixed_bytes"],
           "checkpoint_all_peak": entry["checkpoint_all_peak_bytes"]}
    proc, _ = run([remat_opt, step, "--pass-pipeline=builtin.module(func.func(remat-normalize-destinations),"
                   "remat-print-graph{format=native})", "-o", "/dev/null"])
    if proc.returncode == 0:
        graph = json.loads(proc.stdout)
        out["output_bytes"] = sum(v["bytes"] for v in graph["values"]
                                  if v.get("output") and v.get("producer", -1) >= 0)
    return out, None


def mlir_timing(stderr):
    """{name: seconds} of an --mlir-timing report (the pass names as MLIR
    prints them; nested pipelines keep their own lines)."""
    return {name: float(sec) for sec, name in TIMING_RE.findall(stderr)}


def time_autodiff(remat_opt, fwd, out, repeat):
    walls = []
    for _ in range(repeat):
        proc, seconds = run([remat_opt, fwd, "--remat-autodiff", "-o", out])
        if proc.returncode != 0:
            return {"error": failure(proc)}
        walls.append(seconds)
    proc, _ = run([remat_opt, fwd, "--remat-autodiff", "-o", out, "--mlir-timing"])
    timing = mlir_timing(proc.stderr) if proc.returncode == 0 else {}
    passes = {k: v for k, v in timing.items() if "autodiff" in k.lower()}
    row = {"wall_seconds": statistics.median(walls), "wall_runs": walls,
           "mlir_timing": timing}
    if passes:
        row["pass_seconds"] = sum(passes.values())
    for key, name in (("parse_seconds", "Parser"), ("output_seconds", "Output"),
                      ("total_seconds", "Total")):
        if name in timing:
            row[key] = timing[name]
    row["output_bytes"] = os.path.getsize(out)
    return row


def bench_model(remat_opt, args, model, work):
    row = {"model": model}
    fwd = os.path.join(work, model + ".fwd.mlir")
    joint = os.path.join(work, model + ".joint.mlir")
    ad = os.path.join(work, model + ".ad.mlir")
    base = [PYTHON, EXPORTER, model] + model_args(model, args)

    proc, seconds = run(base + ["--forward-only", "--no-main", "-o", fwd])
    row["export_forward_seconds"] = round(seconds, 2)
    if proc.returncode != 0:
        row["error"] = "export --forward-only: " + failure(proc)
        return row
    row["forward_bytes"] = os.path.getsize(fwd)

    row["autodiff"] = time_autodiff(remat_opt, fwd, ad, args.repeat)
    if "error" in row["autodiff"]:
        row["error"] = "remat-autodiff: " + row["autodiff"]["error"]
    else:
        row["ours"], error = simulate(remat_opt, ad)
        if error:
            row["error"] = "report on the differentiated step: " + error

    proc, seconds = run(base + ["--no-main", "-o", joint])
    row["export_joint_seconds"] = round(seconds, 2)
    if proc.returncode != 0:
        row.setdefault("error", "export (joint graph): " + failure(proc))
        return row
    row["pytorch"], error = simulate(remat_opt, joint)
    if error:
        row.setdefault("error", "report on the joint graph: " + error)
        return row

    ours, theirs = row.get("ours"), row["pytorch"]
    if ours:
        row["peak_ratio"] = ours["peak"] / theirs["peak"]
        row["cost_ratio"] = ours["cost"] / theirs["cost"]
        row["checkpoint_all_ratio"] = ours["checkpoint_all_peak"] / theirs["checkpoint_all_peak"]
        # The peak beyond the step's outputs (loss and parameter gradients,
        # the same bytes in both steps; the peak excludes the arguments,
        # which are fixed bytes): what the backward's order decides.
        if "output_bytes" in ours and "output_bytes" in theirs:
            ours_act = ours["peak"] - ours["output_bytes"]
            theirs_act = theirs["peak"] - theirs["output_bytes"]
            if theirs_act > 0:
                row["beyond_outputs_ratio"] = ours_act / theirs_act
    return row


def mb(n):
    return "%.1f" % (n / 1e6) if isinstance(n, (int, float)) else "-"


def fmt(x, spec):
    return spec % x if isinstance(x, (int, float)) else "-"


def print_table(rows):
    head = ("model", "fwd_KB", "ad_nodes", "pt_nodes", "t_autodiff_s", "t_pass_s",
            "ad_none_MB", "pt_none_MB", "peak_ratio", "<=1.05", "excl_out_ratio",
            "cost_ratio", "ad_ckpt_MB", "pt_ckpt_MB")
    table = [head]
    for r in rows:
        ad, ours, theirs = r.get("autodiff", {}), r.get("ours", {}), r.get("pytorch", {})
        wall = ad.get("wall_seconds")
        target = TIME_TARGET.get(r["model"])
        t_text = fmt(wall, "%.3f")
        if target is not None and isinstance(wall, float):
            t_text += " (<%gs: %s)" % (target, "yes" if wall < target else "NO")
        ratio = r.get("peak_ratio")
        table.append((r["model"], fmt(r.get("forward_bytes", 0) / 1e3, "%.0f"),
                      str(ours.get("nodes", "-")), str(theirs.get("nodes", "-")), t_text,
                      fmt(ad.get("pass_seconds"), "%.3f"), mb(ours.get("peak")),
                      mb(theirs.get("peak")), fmt(ratio, "%.3f"),
                      ("yes" if ratio <= PEAK_TARGET else "NO") if ratio else "-",
                      fmt(r.get("beyond_outputs_ratio"), "%.3f"),
                      fmt(r.get("cost_ratio"), "%.3f"), mb(ours.get("checkpoint_all_peak")),
                      mb(theirs.get("checkpoint_all_peak"))))
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    for r in rows:
        if "error" in r:
            print("%s: error: %s" % (r["model"], r["error"]))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=DEFAULT_MODELS)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--keep", help="directory to keep the exported and differentiated steps in")
    parser.add_argument("--remat-opt", default=os.path.join(ROOT, "build", "bin", "remat-opt"))
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.batch < 1:
        parser.error("--repeat and --batch must be positive")
    if not os.path.exists(args.remat_opt):
        sys.exit("bench_autodiff: no remat-opt at %s (build first, or --remat-opt)"
                 % args.remat_opt)
    work = args.keep or tempfile.mkdtemp(prefix="bench_autodiff.")
    os.makedirs(work, exist_ok=True)
    rows = []
    for model in args.models.split(","):
        start = time.monotonic()
        rows.append(bench_model(args.remat_opt, args, model, work))
        rows[-1]["bench_seconds"] = round(time.monotonic() - start, 1)
        print("bench_autodiff: %s done in %.0f s" % (model, rows[-1]["bench_seconds"]),
              file=sys.stderr, flush=True)
    print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"batch": args.batch, "size": args.size, "seq": args.seq,
                       "repeat": args.repeat, "peak_target": PEAK_TARGET,
                       "models": rows}, f, indent=1)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
