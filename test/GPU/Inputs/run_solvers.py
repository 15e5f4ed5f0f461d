"""Runs a training step on the CPU and the GPU under every solver.

Usage: run_solvers.py REMAT_OPT REMAT_RUN FILE --entry=F [--solvers=a,b,...]
                      [--gpu-arg=ARG]... [--gpu-env=K=V]... [--no-cpu]
                      [--kernels=library|loops] [--tolerance=T]

The solvers are those of `remat-opt FILE --remat-report=solver=all` unless
--solvers names some. For each solver:
  * GPU: `remat-run FILE --entry=F --solver=S --target=gpu [ARGS]` must
    report measured_peak_bytes == predicted_peak_bytes (device bytes);
  * CPU (unless --no-cpu): `remat-run FILE --entry=F --solver=S` must
    report its own measured == predicted peak and print results equal to
    the GPU's. With --kernels=loops (compiled loop nests on both), the same
    `result:` lines (bit-identical) and the same measured and total peaks;
    with library calls (default: oneDNN on the CPU, cuBLAS/cuDNN on the
    GPU, whose summation orders and workspaces differ), every result's sum
    within --tolerance (default 1e-4) relative to max(1, |sum|).
Prints one line per solver (with the step's device time) and a summary;
exits non-zero on the first failure.
"""
import json
import os
import re
import subprocess
import sys

PEAK = re.compile(r"remat-run: measured_peak_bytes=(\d+) "
                  r"predicted_peak_bytes=(\d+|none)")
TOTAL = re.compile(r"remat-run: fixed_bytes=(\d+|none) total_peak_bytes=(\d+)")
TIME = re.compile(r"remat-run: step_seconds=([0-9.eE+-]+)")
SUM = re.compile(r"^result: shape=(\[[0-9,]*\]) fnv1a=\S+ sum=(\S+)")
DEVICE = re.compile(r"remat-cuda: device=(\S+)")


def run(cmd, env=None):
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} (exit {result.returncode}):\n"
                 f"{result.stdout}\n{result.stderr}")
    return result.stdout


def parse(output, what):
    results = [l for l in output.splitlines() if l.startswith("result:")]
    peak, total = PEAK.search(output), TOTAL.search(output)
    if not peak or not total:
        sys.exit(f"FAIL: {what}: no remat-run peak lines in:\n{output}")
    time, device = TIME.search(output), DEVICE.search(output)
    return {
        "results": results,
        "measured": int(peak.group(1)),
        "predicted": peak.group(2),
        "total": int(total.group(2)),
        "time": float(time.group(1)) if time else None,
        "device": device.group(1) if device else None,
    }


def compare_sums(host, gpu, solver):
    """The largest difference of two runs' result sums, relative to
    max(1, |sum|); exits when the results do not correspond."""
    if not host or len(host) != len(gpu):
        sys.exit(f"FAIL: {solver}: {len(gpu)} GPU results, {len(host)} CPU")
    worst = 0.0
    for h, g in zip(host, gpu):
        mh, mg = SUM.match(h), SUM.match(g)
        if not mh or not mg or mh.group(1) != mg.group(1):
            sys.exit(f"FAIL: {solver}: results differ in shape:\n{h}\n{g}")
        a, b = float(mh.group(2)), float(mg.group(2))
        worst = max(worst, abs(a - b) / max(1.0, abs(a)))
    return worst


def main(argv):
    positional = [a for a in argv if not a.startswith("--")]
    options = [a for a in argv if a.startswith("--")]
    remat_opt, remat_run, path = positional
    entry, solvers, gpu_args, gpu_env, cpu = None, None, [], {}, True
    kernels, tolerance = "library", 1e-4
    for o in options:
        key, _, value = o.partition("=")
        if key == "--entry":
            entry = value
        elif key == "--solvers":
            solvers = value.split(",")
        elif key == "--gpu-arg":
            gpu_args.append(value)
        elif key == "--gpu-env":
            k, _, v = value.partition("=")
            gpu_env[k] = v
        elif key == "--no-cpu":
            cpu = False
        elif key == "--kernels":
            kernels = value
        elif key == "--tolerance":
            tolerance = float(value)
        else:
            sys.exit(f"unknown option {o}")

    if solvers is None:
        # The portfolio (`auto`, reported as "auto(<winner>)") repeats the
        # others, and Checkmate's searches are covered by their own tests:
        # keep this to the solvers that answer at once.
        report = json.loads(run([remat_opt, path,
                                 "--remat-report=solver=all time-limit=1",
                                 "-o", os.devnull]))
        solvers = []
        for function in report["functions"]:
            for plan in function["plans"]:
                name = plan["solver"]
                if name.startswith("auto") or name.startswith("checkmate"):
                    continue
                if name not in solvers:
                    solvers.append(name)
    env = dict(os.environ)
    env.update(gpu_env)

    base = [remat_run, path, f"--entry={entry}", f"--kernels={kernels}"]
    for solver in solvers:
        gpu = parse(run(base + [f"--solver={solver}", "--target=gpu"] +
                        gpu_args, env), f"{solver} (gpu)")
        if str(gpu["measured"]) != gpu["predicted"]:
            sys.exit(f"FAIL: {solver}: device peak {gpu['measured']} != "
                     f"predicted {gpu['predicted']}")
        line = (f"solver={solver} predicted={gpu['predicted']} "
                f"gpu_measured={gpu['measured']} gpu_total={gpu['total']}")
        if cpu:
            host = parse(run(base + [f"--solver={solver}"]), f"{solver} (cpu)")
            if str(host["measured"]) != host["predicted"]:
                sys.exit(f"FAIL: {solver}: CPU peak {host['measured']} != "
                         f"predicted {host['predicted']}")
            if kernels == "loops":
                if not host["results"] or host["results"] != gpu["results"]:
                    sys.exit(f"FAIL: {solver}: GPU results differ from the "
                             "CPU's:\n" + "\n".join(host["results"]) +
                             "\n--- gpu\n" + "\n".join(gpu["results"]))
                if (host["measured"], host["total"]) != (gpu["measured"],
                                                         gpu["total"]):
                    sys.exit(f"FAIL: {solver}: CPU peaks {host['measured']}/"
                             f"{host['total']}, GPU {gpu['measured']}/"
                             f"{gpu['total']}")
                line += (f" cpu_measured={host['measured']} "
                         f"results=identical({len(host['results'])})")
            else:
                worst = compare_sums(host["results"], gpu["results"], solver)
                if worst > tolerance:
                    sys.exit(f"FAIL: {solver}: a GPU result is {worst:.3g} "
                             f"away from the CPU's (tolerance {tolerance})")
                line += (f" cpu_measured={host['measured']} results=within"
                         f"({len(host['results'])}, {worst:.2g})")
        line += f" step_seconds={gpu['time']} device={gpu['device']}"
        print(line, flush=True)
    print(f"all {len(solvers)} solvers: device peak == predicted"
          + ((", results and peaks equal to the CPU's" if kernels == "loops"
              else ", results within the tolerance of the CPU's")
             if cpu else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
