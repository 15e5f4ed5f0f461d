"""Runs checkmate-ilp (and auto) on a step under many short time limits, several
runs at once so that the machine is loaded and CBC is stopped at every stage of
its search, and checks that every run exits normally with a plan.

Usage: sweep_time_limits.py STEP.mlir [--limits 0.3,1,2,3] [--parallel 4]
Prints one line per failed run and a summary; exits 1 on any failure.
"""
import argparse
import concurrent.futures
import json
import shutil
import subprocess
import sys


def run(remat_opt, step, solver, limit):
    cmd = [remat_opt, step, "--remat-report=solver=%s budget=60%% time-limit=%s"
           % (solver, limit), "-o", "/dev/null"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return "%s time-limit=%s: exit %d: %s" % (
            solver, limit, proc.returncode, proc.stderr.strip()[:200])
    try:
        plans = json.loads(proc.stdout)["functions"][0]["plans"]
    except (ValueError, KeyError, IndexError) as err:
        return "%s time-limit=%s: bad report: %s" % (solver, limit, err)
    if not plans or not plans[0]["simulation"]["valid"]:
        return "%s time-limit=%s: no valid plan" % (solver, limit)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("step")
    parser.add_argument("--limits", default="0.3,1,2,3")
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--remat-opt", default=shutil.which("remat-opt"))
    args = parser.parse_args()
    jobs = [(solver, limit) for limit in args.limits.split(",")
            for solver in ("checkmate-ilp", "auto")
            for _ in range(args.parallel // 2 or 1)]
    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
        for result in pool.map(lambda job: run(args.remat_opt, args.step, *job),
                               jobs):
            if result:
                failures.append(result)
    for failure in failures:
        print("FAILED:", failure)
    print("sweep_time_limits: %d runs, %d failed" % (len(jobs), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
