#!/usr/bin/python3
"""Where each byte lives, measured (issue 22, item 5): the arena against the
live peak and against what the process really takes, per exported model and
plan.

For each model (`--models`; default resnet18,resnet50,mobilenet_v2,densenet121,
transformer,unet: the classifiers at `--batch` 4 and `--size` 64x64, the
transformer at `--tf-batch` 2 with `--seq` 64 tokens, the U-Net at
`--unet-batch` 2; float32):

1. `python/remat/torch_export.py MODEL ... -o M.mlir` (the step and its @main).
2. For every plan of `--plans` (`solver` or `solver@budget`) and each of
   `--dealloc` (default `arena,early`): `remat-run M.mlir --solver=S
   [--budget=B] --dealloc=D --kernels=K`, read from its output:
   `arena_bytes`, `live_peak_bytes`, `rss_growth_bytes` (the resident-set
   growth around the step as the OS sees it: /proc/self/statm and getrusage's
   high-water mark), `measured_peak_bytes` and `predicted_peak_bytes`.
   A budget the solver cannot meet is run again at the bytes its plan needs
   (the error names them), marked `*`.
3. Unless `--no-placement`: `remat-opt M.mlir --remat-export-graph` and
   `remat-bench-memory-plan` on that graph (the same plans): the arena of
   every placement heuristic and of the exact search, placement time, and the
   reordering's peak against the program's order. Its JSON is kept under
   `placement` in ours.

`--kernels` defaults to `loops`: with `library`, the first window also holds
oneDNN's primitives and JIT code, created on first use and kept for the
program (not buffers of the plan), so the RSS comparison of malloc against the
arena would mostly measure oneDNN. With loops the step's only memory is the
plan's buffers.

A benchmark, not a test: failures are reported in the table and the JSON; the
script exits 0 unless its own arguments are wrong.

Usage:
  /usr/bin/python3 bench/bench_memory_plan.py [--models M1,M2]
      [--plans none,chen-sqrtn,rotor@60%,auto@60%] [--dealloc arena,early]
      [--kernels loops|library] [--batch 4] [--size 64] [--seq 64]
      [--tf-batch 2] [--unet-batch 2] [--time-limit 5] [--timeout 900]
      [--no-placement] [--json OUT] [--markdown OUT.md] [--keep DIR]
      [--remat-run PATH] [--remat-opt PATH] [--bench PATH]
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The exporter's arguments per model, the subprocess runner, error lines and
# remat-run's figures are bench_step_time.py's: one definition of each.
from bench_step_time import (DEFAULT_MODELS, DEFAULT_PLANS, EXPORTER, PYTHON,  # noqa: E402
                             ROOT, exporter_args, first_error, log, parse_remat_run,
                             portable_paths, run)

FIGURES = ("arena_bytes", "live_peak_bytes", "rss_growth_bytes", "measured_peak_bytes",
           "predicted_peak_bytes")


def run_plan(a, step, plan, dealloc, budget_override=None):
    solver, _, budget = plan.partition("@")
    if budget_override is not None:
        budget = str(budget_override)
    argv = [a.remat_run, step, "--solver=" + solver, "--dealloc=" + dealloc,
            "--kernels=" + a.kernels, "--time-limit=%g" % a.time_limit]
    if budget:
        argv.append("--budget=" + budget)
    rc, out, err, seconds = run(argv, timeout=a.timeout)
    row = {"plan": plan, "dealloc": dealloc, "seconds": round(seconds, 2)}
    if rc != 0:
        row["error"] = first_error(err, rc)
        return row
    figures = parse_remat_run(out)
    missing = [k for k in FIGURES if k not in figures]
    if missing:
        row["error"] = "remat-run printed no %s" % ", ".join(missing)
        return row
    row.update({k: figures[k] for k in FIGURES})
    row["solver"] = solver
    return row


def run_plan_with_fallback(a, step, plan, dealloc):
    row = run_plan(a, step, plan, dealloc)
    needs = re.search(r"whose plan needs (\d+) bytes", row.get("error", ""))
    if needs:
        retry = run_plan(a, step, plan, dealloc, budget_override=int(needs.group(1)))
        retry["fallback"] = {"error": row["error"], "budget": int(needs.group(1))}
        return retry
    return row


def placement(a, step, workdir, model):
    graph = os.path.join(workdir, model + ".graph.json")
    rc, out, err, _ = run([a.remat_opt, step, "--remat-export-graph", "-o", "/dev/null"], timeout=a.timeout)
    if rc != 0:
        return {"error": "export-graph: " + first_error(err, rc)}
    # The graph's name in the C++ bench's tables is its file's stem.
    with open(graph, "w") as f:
        f.write(out)
    out_json = os.path.join(workdir, model + ".placement.json")
    rc, out, err, _ = run([a.bench, "--json", out_json, "--time-limit", "%g" % a.time_limit,
                           "--plans", ",".join(a.plans), graph], timeout=a.timeout)
    if rc != 0:
        return {"error": "remat-bench-memory-plan: " + first_error(err, rc)}
    with open(out_json) as f:
        return json.load(f)


def mb(x):
    return "%.3f" % (x / 1e6) if isinstance(x, (int, float)) else "-"


def ratio(x, y):
    return "%.4f" % (x / y) if isinstance(x, (int, float)) and isinstance(y, (int, float)) and y else "-"


def table(results, kernels):
    lines = ["Real memory of the compiled step (kernels=%s; MB = 10^6 bytes): the arena the plan places, "
             "its live peak, and the resident-set growth around the step with the arena and with one "
             "malloc per buffer (dealloc=early)" % kernels, "",
             "| model | plan | solver | live MB | arena MB | arena/live | meas==pred | RSS arena MB | "
             "RSS/arena | RSS malloc MB | RSS malloc/live |",
             "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|"]
    for model in results:
        for plan, modes in model["plans"].items():
            arena = modes.get("arena", {})
            early = modes.get("early", {})
            if "error" in arena and "error" in early:
                lines.append("| %s | %s | error: %s | | | | | | | | |"
                             % (model["model"], plan, arena["error"][:100]))
                continue
            star = "*" if "fallback" in arena else ""
            live = arena.get("live_peak_bytes", early.get("live_peak_bytes"))
            same = ("yes" if arena.get("measured_peak_bytes") == arena.get("predicted_peak_bytes")
                    else "NO") if "measured_peak_bytes" in arena else "-"
            lines.append("| %s | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                model["model"], plan, star, arena.get("solver", "-"), mb(live),
                mb(arena.get("arena_bytes")), ratio(arena.get("arena_bytes"), live), same,
                mb(arena.get("rss_growth_bytes")),
                ratio(arena.get("rss_growth_bytes"), arena.get("arena_bytes")),
                mb(early.get("rss_growth_bytes")), ratio(early.get("rss_growth_bytes"), live)))
    notes = []
    for model in results:
        for plan, modes in model["plans"].items():
            for dealloc, row in modes.items():
                if "fallback" in row:
                    notes.append("%s %s (%s): %s; ran at %d bytes" % (
                        model["model"], plan, dealloc, row["fallback"]["error"][:160],
                        row["fallback"]["budget"]))
                elif "error" in row:
                    notes.append("%s %s (%s): %s" % (model["model"], plan, dealloc, row["error"]))
    if notes:
        lines += [""] + ["note: " + n for n in notes]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--plans", default=DEFAULT_PLANS)
    p.add_argument("--dealloc", default="arena,early")
    p.add_argument("--kernels", default="loops", choices=["loops", "library"])
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--seq", type=int, default=64)
    p.add_argument("--tf-batch", type=int, default=2)
    p.add_argument("--unet-batch", type=int, default=2)
    p.add_argument("--time-limit", type=float, default=5)
    p.add_argument("--timeout", type=int, default=900, help="seconds per remat-run")
    p.add_argument("--no-placement", action="store_true")
    p.add_argument("--json")
    p.add_argument("--markdown")
    p.add_argument("--keep")
    p.add_argument("--remat-run", default=os.path.join(ROOT, "build", "bin", "remat-run"))
    p.add_argument("--remat-opt", default=os.path.join(ROOT, "build", "bin", "remat-opt"))
    p.add_argument("--bench", default=os.path.join(ROOT, "build", "bin", "remat-bench-memory-plan"))
    a = p.parse_args()
    a.plans = [x for x in a.plans.split(",") if x]
    deallocs = [x for x in a.dealloc.split(",") if x]
    for tool in (a.remat_run, a.remat_opt) + (() if a.no_placement else (a.bench,)):
        if not os.access(tool, os.X_OK):
            p.error("%s is not an executable (build the project first)" % tool)
    workdir = a.keep or tempfile.mkdtemp(prefix="bench-memory-plan-")
    os.makedirs(workdir, exist_ok=True)
    results = []
    for model in [m for m in a.models.split(",") if m]:
        step = os.path.join(workdir, model + ".mlir")
        log("%s: export" % model)
        rc, _, err, _ = run([PYTHON, EXPORTER] + exporter_args(model, a) + ["-o", step], timeout=a.timeout)
        entry = {"model": model, "export": exporter_args(model, a)[1:], "plans": {}}
        results.append(entry)
        if rc != 0:
            entry["error"] = "export: " + first_error(err, rc)
            log("  " + entry["error"])
            continue
        for plan in a.plans:
            entry["plans"][plan] = {}
            for dealloc in deallocs:
                row = run_plan_with_fallback(a, step, plan, dealloc)
                entry["plans"][plan][dealloc] = row
                log("  %s dealloc=%s: %s" % (plan, dealloc, row.get("error") or
                                            "arena %s live %s rss %s (%.0f s)" % (
                                                row["arena_bytes"], row["live_peak_bytes"],
                                                row["rss_growth_bytes"], row["seconds"])))
        if not a.no_placement:
            log("%s: placement heuristics and the exact search" % model)
            entry["placement"] = placement(a, step, workdir, model)
    text = table(results, a.kernels)
    print(text)
    document = {"date": datetime.date.today().isoformat(), "machine": platform.processor() or
                platform.machine(), "kernels": a.kernels, "plans": a.plans,
                "time_limit_seconds": a.time_limit, "models": results}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(portable_paths(document, {workdir: "WORK/", ROOT: ""}), f, indent=1,
                      sort_keys=True)
            f.write("\n")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")
    if not a.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
