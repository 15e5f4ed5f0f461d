"""Runs one training step under every solver and checks the rules that tie
the simulator, the solvers and the compiled program together.

Usage: check_solvers.py STEP.mlir [--budget 60%] [--jobs N] [--time-limit S]
                        [--remat-opt PATH] [--remat-run PATH] [--verbose]
                        [--known RULE:RUN ...]

1. `remat-opt STEP --remat-report="solver=all budget=B time-limit=S
   target=cpu"` (the plans remat-run's CPU lowering makes) gives
   the list of solvers that apply to the step and every plan's simulated peak.
2. `remat-run STEP --solver=X --budget=B` for each budgeted solver (rotor,
   revolve, checkmate-lp, checkmate-ilp, auto, join when it applies);
   `remat-run STEP --solver=X` (no budget) for every other solver, for `none`,
   and for rotor and revolve (their least-memory plans). Several run at once.
3. The rules, one line per violation with its numbers:
   R1  every run prints the same lines as `none` (all but `remat-run:` lines;
       the address printMemrefF32 prints is not part of the result);
   R2  every run's measured peak equals its predicted peak;
   R3  checkpoint-all's predicted and measured peaks are <= none's;
   R4  a budgeted solver whose plan in the report meets the budget runs
       within it (an "infeasible" error is a violation; its least feasible
       budget is shown). For the solvers that search until a time limit
       (auto, checkmate-*, exact), wherever a solver without a time limit
       meets it: they start from those plans, while what they find beyond
       them depends on the machine's load. (A heuristic such as rotor is not
       asked to reach a plan only the ILP finds.);
   R5  where ap-greedy's least-memory peak is below checkpoint-all's, rotor's
       and revolve's least-memory runs are below checkpoint-all's too;
   RUN a run that fails for any other reason (crash, lowering error);
   REPORT the report itself fails (the runs are then those of the solvers
       that always apply, their peaks taken from the runs).
The searching solvers (auto, checkmate-*, hong-cubic) get --time-limit
(default 5 s) in the report and in the runs. Each run's line shows its
measured and predicted peaks, the report's peak, overhead and meets_budget.
The last line is `check_solvers: STEP: N solvers, all rules hold` or
`check_solvers: STEP: N solvers, K violations` (exit status 1).

--known R4:rotor@60% names a violation that is known and explained (a limit
of the solver's model, stated in the test that passes the flag): it is
printed as KNOWN and does not fail the check; a known violation that does not
occur fails it (`... is known but did not occur`), so that the flag goes when
the limit does.

Tools are found on PATH (lit puts build/bin there) unless given.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

# Solvers whose plan depends on the budget: run at the budget.
BUDGETED = ("rotor", "revolve", "checkmate-lp", "checkmate-ilp", "auto", "join")
# Solvers that search until a time limit.
TIMED = ("auto", "checkmate-ilp", "checkmate-lp", "hong-cubic", "exact")
# Run without a budget as well, for R5 (their least-memory plans).
LEAST_MEMORY = ("rotor", "revolve")

PEAK_RE = re.compile(r"^remat-run: measured_peak_bytes=(\d+) "
                     r"predicted_peak_bytes=(\d+|none)$", re.M)
INFEASIBLE_RE = re.compile(r"budget of (\d+) bytes is infeasible.*?whose plan "
                           r"needs (\d+) bytes; the least feasible budget found is "
                           r"(\d+) bytes \(solver '([^']*)'\)")
ADDRESS_RE = re.compile(r"base@ = 0x[0-9a-fA-F]+")


class Run:
    def __init__(self, solver, budget, argv, proc, seconds):
        self.solver, self.budget, self.argv = solver, budget, argv
        self.seconds = seconds
        self.rc = proc.returncode
        self.stdout, self.stderr = proc.stdout, proc.stderr
        self.lines = [ADDRESS_RE.sub("base@ = 0x?", line)
                      for line in proc.stdout.splitlines()
                      if not line.startswith("remat-run:")]
        m = PEAK_RE.search(proc.stdout)
        self.measured = int(m.group(1)) if m else None
        self.predicted = (int(m.group(2)) if m and m.group(2) != "none"
                          else None)
        self.infeasible = INFEASIBLE_RE.search(proc.stderr)

    @property
    def ok(self):
        return self.rc == 0 and self.measured is not None

    @property
    def name(self):
        return self.solver + (f"@{self.budget}" if self.budget else "")

    def error(self):
        """The run's error message, or for a crash the frames that matter."""
        return summarize_failure(self.rc, self.stderr or self.stdout)


def summarize_failure(rc, text):
    """One line: the first error message, or for a crash (an LLVM stack
    dump) the frames of the project and of the libraries it calls."""
    lines = text.splitlines()
    if "Stack dump:" in text:
        frames = [re.sub(r"^#\d+ 0x[0-9a-f]+ ", "", l.strip())
                  for l in lines if re.match(r"\s*#\d+ 0x", l)]
        frames = [f for f in frames if "llvm::sys::" not in f
                  and not f.startswith("(")][:4]
        return f"crash (exit status {rc}): " + " <- ".join(
            f.split("(/")[0][:110] for f in frames)
    for line in lines:
        if "error" in line:
            return line.strip()[:300]
    return lines[-1][:300] if lines else f"exit status {rc}"


def find_tool(given, name):
    path = given or shutil.which(name)
    if not path:
        sys.exit(f"check_solvers: cannot find {name} (put it on PATH or "
                 f"pass --{name})")
    return path


def run_step(remat_run, step, solver, budget, time_limit):
    argv = [remat_run, step, f"--solver={solver}"]
    if budget:
        argv.append(f"--budget={budget}")
    if solver in TIMED:
        argv.append(f"--time-limit={time_limit}")
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True)
    return Run(solver, budget, argv, proc, time.monotonic() - start)


def get_report(remat_opt, step, budget, time_limit):
    """The report's entry for the step, or (None, error text) on failure."""
    argv = [remat_opt, step,
            # The plans of remat-run's CPU lowering: the workspace of the
            # library calls counted (target=cpu).
            f"--remat-report=solver=all budget={budget} time-limit={time_limit} target=cpu",
            "-o", "/dev/null"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        return None, summarize_failure(proc.returncode, proc.stderr)
    report = json.loads(proc.stdout)
    steps = [f for f in report["functions"] if f.get("plans")]
    if len(steps) != 1:
        sys.exit(f"check_solvers: {step}: expected one training step in the "
                 f"report, found {len(steps)}")
    return steps[0], None


def base_solver(name):
    return name.split("(")[0]  # "auto(rotor)" -> "auto"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step")
    parser.add_argument("--budget", default="60%")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--time-limit", type=float, default=5)
    parser.add_argument("--remat-opt", dest="remat_opt")
    parser.add_argument("--remat-run", dest="remat_run")
    parser.add_argument("--verbose", action="store_true",
                        help="print every run's command and error output")
    parser.add_argument("--known", action="append", default=[],
                        metavar="RULE:RUN",
                        help="an expected violation, e.g. R4:rotor@60%%")
    args = parser.parse_args(argv)
    remat_opt = find_tool(args.remat_opt, "remat-opt")
    remat_run = find_tool(args.remat_run, "remat-run")
    time_limit = f"{args.time_limit:g}"
    started = time.monotonic()

    # The report and the runs whose solvers always apply go together; the
    # report then says which other solvers (join) apply and which do not.
    always = ["none", "checkpoint-all", "chen-sqrtn", "chen-greedy",
              "ap-sqrtn", "ap-greedy", "sequential", "hong-cubic",
              "hong-quadratic", "hong-linear", "feng-linear", "feng",
              "rotor", "revolve", "checkmate-lp", "checkmate-ilp", "auto"]
    # The slow ones (time limits) first so that they overlap the others.
    always.sort(key=lambda s: s not in TIMED)
    pool = concurrent.futures.ThreadPoolExecutor(max(1, args.jobs))
    report_future = pool.submit(get_report, remat_opt, args.step, args.budget,
                                time_limit)

    def jobs_for(solver):
        out = []
        if solver in BUDGETED:
            out.append((solver, args.budget))
        if solver not in BUDGETED or solver in LEAST_MEMORY:
            out.append((solver, None))
        return out

    futures = {}
    for solver in always:
        for job in jobs_for(solver):
            futures[job] = pool.submit(run_step, remat_run, args.step, *job,
                                       time_limit)
    report, report_error = report_future.result()
    if report is None:
        # Without the report: the solvers that always apply, the peaks of
        # the runs.
        report = {"plans": [], "nodes": "?", "budget_bytes": None,
                  "checkpoint_all_peak_bytes": None, "fixed_bytes": "?"}
    solvers = []
    for plan in report["plans"] or [{"solver": s} for s in always]:
        name = base_solver(plan["solver"])
        if name not in solvers:
            solvers.append(name)
    if "none" not in solvers:
        solvers.insert(0, "none")
    for solver in solvers:
        for job in jobs_for(solver):
            if job not in futures:
                futures[job] = pool.submit(run_step, remat_run, args.step,
                                           *job, time_limit)
    runs = {job: f.result() for job, f in futures.items()}
    pool.shutdown()
    # Runs of solvers that the report does not list (they do not apply).
    for job in list(runs):
        if job[0] not in solvers:
            del runs[job]
    if report_error:
        ckpt_run = runs.get(("checkpoint-all", None))
        report["checkpoint_all_peak_bytes"] = (ckpt_run.predicted
                                               if ckpt_run else None)

    plans = {base_solver(p["solver"]): p for p in report["plans"]}
    budget_bytes = report.get("budget_bytes")
    ckpt_peak = report["checkpoint_all_peak_bytes"]
    step = args.step
    print(f"check_solvers: {os.path.basename(step)}: nodes={report['nodes']} "
          f"checkpoint_all_peak={ckpt_peak} budget={budget_bytes} "
          f"fixed={report['fixed_bytes']}")
    for job, run in sorted(runs.items(), key=lambda kv: solvers.index(kv[0][0])):
        plan = plans.get(job[0], {})
        sim = plan.get("simulation", {})
        if run.ok:
            status = f"measured={run.measured} predicted={run.predicted}"
        elif run.infeasible:
            m = run.infeasible
            status = (f"infeasible: plan needs {m.group(2)}, least feasible "
                      f"budget {m.group(3)} ({m.group(4)})")
        else:
            status = f"FAILED: {run.error()}"
        print(f"  {run.name:<24} {status}  report_peak={sim.get('peak_bytes')} "
              f"overhead={sim.get('overhead', 0):.3f} "
              f"meets_budget={plan.get('meets_budget')} ({run.seconds:.1f}s)")
        if args.verbose:
            print("    " + " ".join(run.argv))
            if not run.ok:
                print("    " + run.stderr[-2000:].replace("\n", "\n    "))

    violations, known = [], []
    expected = set(args.known)

    def violate(solver, rule, text):
        key = f"{rule}:{solver}"
        if key in expected:
            known.append(key)
            print(f"KNOWN {rule} {solver}: {text}")
            return
        violations.append(f"VIOLATION {rule} {solver}: {text}")

    if report_error:
        violate("all", "REPORT", f"remat-opt --remat-report failed, {report_error}")

    none = runs.get(("none", None))
    any_meets = any(p.get("meets_budget") for p in report["plans"])
    untimed_meets = any(p.get("meets_budget") for p in report["plans"]
                        if base_solver(p["solver"]) not in TIMED)

    own_meets = {}
    for p in report["plans"]:
        own_meets[base_solver(p["solver"])] = (
            own_meets.get(base_solver(p["solver"]), False)
            or bool(p.get("meets_budget")))

    def must_meet(solver):
        if solver in TIMED:
            return untimed_meets
        return own_meets.get(solver, any_meets)
    for job, run in runs.items():
        if not run.ok:
            if job[1] and run.infeasible:
                if must_meet(job[0]):
                    m = run.infeasible
                    violate(run.name, "R4",
                            f"budget {m.group(1)} B infeasible, its plan needs "
                            f"{m.group(2)} B; least feasible budget {m.group(3)} "
                            f"B ({m.group(4)})")
                continue  # nobody meets the budget: failing is right
            violate(run.name, "RUN", run.error())
            continue
        if none is not None and none.ok and run is not none:
            if run.lines != none.lines:
                diff = next((i for i, (a, b) in
                             enumerate(zip(run.lines, none.lines)) if a != b),
                            min(len(run.lines), len(none.lines)))
                got = run.lines[diff] if diff < len(run.lines) else "<none>"
                want = none.lines[diff] if diff < len(none.lines) else "<none>"
                violate(run.name, "R1",
                        f"output line {diff + 1} differs from none's: "
                        f"{got!r} vs {want!r}")
        if run.measured != run.predicted:
            violate(run.name, "R2", f"measured {run.measured} != predicted "
                    f"{run.predicted}")
        if job[1] and must_meet(job[0]) and run.measured > budget_bytes:
            violate(run.name, "R4", f"measured {run.measured} > budget "
                    f"{budget_bytes}")
    ckpt = runs.get(("checkpoint-all", None))
    if ckpt and ckpt.ok and none and none.ok:
        if ckpt.predicted is None or none.predicted is None or \
                ckpt.predicted > none.predicted:
            violate("checkpoint-all", "R3", f"predicted {ckpt.predicted} > "
                    f"none's {none.predicted}")
        if ckpt.measured > none.measured:
            violate("checkpoint-all", "R3", f"measured {ckpt.measured} > "
                    f"none's {none.measured}")
    apg = plans.get("ap-greedy")
    apg_run = runs.get(("ap-greedy", None))
    if not apg and apg_run and apg_run.ok:  # no report: the run's prediction
        apg = {"simulation": {"peak_bytes": apg_run.predicted}}
    if apg and ckpt_peak and apg["simulation"]["peak_bytes"] < ckpt_peak:
        for solver in LEAST_MEMORY:
            run = runs.get((solver, None))
            if run is None or not run.ok:
                continue  # reported as RUN above
            if run.predicted is None or run.predicted >= ckpt_peak or \
                    run.measured >= ckpt_peak:
                violate(solver, "R5",
                        f"least-memory peak {run.measured} (predicted "
                        f"{run.predicted}) not below checkpoint-all's "
                        f"{ckpt_peak}, ap-greedy reaches "
                        f"{apg['simulation']['peak_bytes']}")

    for key in sorted(expected - set(known)):
        violations.append(f"VIOLATION {key} is known but did not occur")
    for line in violations:
        print(line)
    elapsed = time.monotonic() - started
    n = len(solvers)
    verdict = ("all rules hold" if not violations
               else f"{len(violations)} violations")
    if known and not violations:
        verdict += f" but {len(known)} known"
    print(f"check_solvers: {len(runs)} runs in {elapsed:.1f}s")
    print(f"check_solvers: {step}: {n} solvers, {verdict}")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
