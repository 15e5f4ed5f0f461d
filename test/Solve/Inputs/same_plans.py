"""Checks that remat-solve on a step's exported graph and remat-opt's report on
the step solve the same problem: the same checkpoint-all peak and, for every
solver both ran, the same simulated peak, cost and schedule — and that both
tools speak one JSON style (docs/formats.md): every key of both documents is
snake_case, a plan carries the same keys in both (solver, status, meets_budget,
lower_bound, solve_seconds, simulation, schedule) and the two `simulation`
objects are equal, key for key.

Usage: same_plans.py REPORT.json SOLVE.json [--skip S1,S2]
Solvers whose search a time limit may cut (auto, checkmate-ilp) can be
skipped: two runs need not find the same plan. REPORT.json is `remat-opt STEP --remat-report=... -o /dev/null`, SOLVE.json is
`remat-solve GRAPH.json --json ...` with the same solvers and budget.
"""
import json
import re
import sys

SNAKE_CASE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
PLAN_KEYS = {"solver", "status", "meets_budget", "lower_bound", "solve_seconds",
             "simulation", "schedule"}


def keys_not_snake_case(value, path, out):
    if isinstance(value, dict):
        for key, item in value.items():
            if not SNAKE_CASE.match(key):
                out.append("%s.%s" % (path, key))
            keys_not_snake_case(item, "%s.%s" % (path, key), out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            keys_not_snake_case(item, "%s[%d]" % (path, i), out)
    return out


def main(report_path, solve_path, skip=()):
    with open(report_path) as f:
        report_document = json.load(f)
    report = report_document["functions"][0]
    with open(solve_path) as f:
        solve = json.load(f)
    problems = []
    for name, document in (("report", report_document), ("remat-solve", solve)):
        for key in keys_not_snake_case(document, name, []):
            problems.append("key not snake_case: %s" % key)
    if report["checkpoint_all_peak_bytes"] != solve["graph"]["checkpoint_all_peak_bytes"]:
        problems.append("checkpoint-all peaks differ: %d vs %d" % (
            report["checkpoint_all_peak_bytes"],
            solve["graph"]["checkpoint_all_peak_bytes"]))
    plans = {p["solver"]: p for p in report["plans"]}
    compared = 0
    for result in solve["results"]:
        plan = plans.get(result["solver"])
        if plan is None or result["solver"] in skip:
            continue
        compared += 1
        sim = plan["simulation"]
        for name, row in (("report", plan), ("remat-solve", result)):
            missing = PLAN_KEYS - set(row)
            if missing:
                problems.append("%s: %s plan lacks %s" % (
                    result["solver"], name, ", ".join(sorted(missing))))
        if sim != result.get("simulation"):
            problems.append("%s: simulation objects differ: %s vs %s" % (
                result["solver"], sorted(sim), sorted(result.get("simulation", {}))))
        if sim["peak_bytes"] != result["peak_bytes"]:
            problems.append("%s: peak %d vs %d" % (
                result["solver"], sim["peak_bytes"], result["peak_bytes"]))
        if abs(sim["overhead"] - result["cost_overhead"]) > 1e-9:
            problems.append("%s: overhead %g vs %g" % (
                result["solver"], sim["overhead"], result["cost_overhead"]))
        if plan["schedule"] != result["schedule"]:
            problems.append("%s: schedules differ" % result["solver"])
    for p in problems:
        print("mismatch:", p)
    print("same_plans: %d solvers compared, %d mismatches" % (compared, len(problems)))
    return 1 if problems or compared == 0 else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    skip = ()
    if "--skip" in args:
        i = args.index("--skip")
        skip = tuple(args[i + 1].split(","))
        del args[i:i + 2]
    sys.exit(main(*args, skip=skip))
