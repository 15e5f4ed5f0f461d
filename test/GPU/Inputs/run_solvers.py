"""Runs a training step on the CPU and the GPU under every solver.

Usage: run_solvers.py REMAT_OPT REMAT_RUN FILE --entry=F [--solvers=a,b,...]
                      [--gpu-arg=ARG]... [--gpu-env=K=V]... [--no-cpu]

The solvers are those of `remat-opt FILE --remat-report=solver=all` unless
--solvers names some. For each solver:
  * GPU: `remat-run FILE --entry=F --solver=S --target=gpu [ARGS]` must
    report measured_peak_bytes == predicted_peak_bytes (device bytes);
  * CPU (unless --no-cpu): `remat-run FILE --entry=F --solver=S` must print
    the same `result:` lines (bit-identical results) and the same measured
    and total peaks as the GPU run.
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
TIME = re.compile(r"remat-run: step_time_ns=(-?\d+)")
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
        "time": int(time.group(1)) if time else None,
        "device": device.group(1) if device else None,
    }


def main(argv):
    positional = [a for a in argv if not a.startswith("--")]
    options = [a for a in argv if a.startswith("--")]
    remat_opt, remat_run, path = positional
    entry, solvers, gpu_args, gpu_env, cpu = None, None, [], {}, True
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

    base = [remat_run, path, f"--entry={entry}"]
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
            if not host["results"] or host["results"] != gpu["results"]:
                sys.exit(f"FAIL: {solver}: GPU results differ from the CPU's:"
                         "\n" + "\n".join(host["results"]) + "\n--- gpu\n" +
                         "\n".join(gpu["results"]))
            if (host["measured"], host["total"]) != (gpu["measured"],
                                                     gpu["total"]):
                sys.exit(f"FAIL: {solver}: CPU peaks {host['measured']}/"
                         f"{host['total']}, GPU {gpu['measured']}/"
                         f"{gpu['total']}")
            line += (f" cpu_measured={host['measured']} results=identical"
                     f"({len(host['results'])})")
        line += f" step_time_ns={gpu['time']} device={gpu['device']}"
        print(line, flush=True)
    print(f"all {len(solvers)} solvers: device peak == predicted"
          + (", results and peaks equal to the CPU's" if cpu else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
