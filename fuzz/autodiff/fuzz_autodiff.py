#!/usr/bin/python3
"""Fuzzes remat-autodiff: random small forward functions (gen_forward.py),
each differentiated by `remat-opt --remat-autodiff` and, when accepted, its
gradients checked against central finite differences
(test/Autodiff/Inputs/gradcheck.py: the step compiled and run by remat-run
under a solver drawn from none, checkpoint-all and chen-sqrtn).

Usage: fuzz_autodiff.py [--seconds N | --count N] [--start-seed S]
                        [--jobs J] [--out DIR] [--bin-dir DIR]
                        [--unsupported-every K]

Every K-th input (default 7) also holds a pattern without a rule (a product
reduction, a select combiner that is neither a max/min nor a last position,
a bit manipulation of a float) on the path to the loss, which must be
rejected with a located error. A failure is:

  crash             remat-opt or remat-run died on a signal, or printed an
                    LLVM ERROR / stack dump;
  wrong gradient    gradcheck.py found an element whose derivative disagrees
                    with the finite difference;
  silent acceptance an input with a pattern without a rule differentiated
                    without an error;
  rejection         a supported input rejected;
  error             anything else between (invalid IR from the generator, a
                    lowering or run failure).

The reproducer of each failure is kept in DIR (default
build-fuzz/fuzz-out/autodiff) with the tool's output. The last line is

  fuzz: autodiff: N inputs, E executions, G gradient elements checked,
        R rejected as expected, crashes: C, wrong gradients: W, other failures: F

and the exit status is non-zero on any failure.
"""
import argparse
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
GRADCHECK = os.path.join(ROOT, "test", "Autodiff", "Inputs", "gradcheck.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
sys.path.insert(0, HERE)
import gen_forward  # noqa: E402

CRASH_RE = re.compile(r"LLVM ERROR|PLEASE submit a bug report|Stack dump|Segmentation fault|"
                      r"Aborted|AddressSanitizer|runtime error:")
LOCATED_ERROR_RE = re.compile(r"^[^:\s]+:\d+:\d+: error: ", re.M)
RESULT_RE = re.compile(r"gradcheck: \S+: (\d+) elements, max error \S+, OK")


def run(argv, timeout):
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timeout after %d s" % timeout
    return proc.returncode, proc.stdout, proc.stderr


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.inputs = self.executions = self.elements = self.rejected = 0
        self.crashes = self.wrong = self.other = 0
        self.features = {}


def check_one(seed, opts, stats):
    """Generates, differentiates and checks input `seed`; returns a failure
    description or None."""
    unsupported = opts.unsupported_every > 0 and seed % opts.unsupported_every == 0
    text, info = gen_forward.generate(seed, unsupported)
    with tempfile.TemporaryDirectory(prefix="fuzz-autodiff-") as tmp:
        path = os.path.join(tmp, "fuzz_%d.mlir" % seed)
        with open(path, "w") as f:
            f.write(text)
        rc, out, err = run([opts.remat_opt, path, "--remat-autodiff", "-o", os.devnull],
                           opts.timeout)
        executions = 1
        failure = None
        kind = None
        elements = 0
        if rc is None or rc < 0 or CRASH_RE.search(err):
            kind, failure = "crash", "remat-opt --remat-autodiff: " + (err or "signal %s" % rc)
        elif rc != 0:
            if not LOCATED_ERROR_RE.search(err):
                kind, failure = "other", "an error without a location: " + err
            elif not info["unsupported"]:
                kind, failure = "other", "a supported input rejected: " + err
        elif info["unsupported"]:
            kind, failure = "other", "a pattern without a rule differentiated silently"
        else:
            solver = random.Random(seed).choice(["none", "checkpoint-all", "chen-sqrtn"])
            rc, out, err = run([PYTHON, GRADCHECK, path, "--remat-opt", opts.remat_opt,
                                "--remat-run", opts.remat_run, "--solver", solver],
                               opts.timeout)
            executions += 1
            text_out = out + err
            m = RESULT_RE.search(out)
            if m:
                elements = int(m.group(1))
            elif rc is None or CRASH_RE.search(text_out):
                kind, failure = "crash", "gradcheck (%s): %s" % (solver, text_out)
            elif rc == 1:
                kind, failure = "wrong", "gradcheck (%s): %s" % (solver, text_out)
            else:
                kind, failure = "other", "gradcheck (%s): %s" % (solver, text_out)
        with stats.lock:
            stats.inputs += 1
            stats.executions += executions
            stats.elements += elements
            if rc != 0 and info["unsupported"] and kind is None:
                stats.rejected += 1
            if kind == "crash":
                stats.crashes += 1
            elif kind == "wrong":
                stats.wrong += 1
            elif kind == "other":
                stats.other += 1
            for feature in info["features"]:
                stats.features[feature] = stats.features.get(feature, 0) + 1
        if failure:
            os.makedirs(opts.out, exist_ok=True)
            keep = os.path.join(opts.out, "%s-%d.mlir" % (kind, seed))
            shutil.copy(path, keep)
            with open(keep + ".log", "w") as f:
                f.write(failure)
            return "seed %d: %s (%s)" % (seed, kind, keep)
    return None


def find(name, bin_dir):
    if bin_dir:
        return os.path.join(bin_dir, name)
    local = os.path.join(ROOT, "build", "bin", name)
    if os.access(local, os.X_OK):
        return local
    found = shutil.which(name)
    if not found:
        sys.exit("fuzz: autodiff: cannot find %s (--bin-dir)" % name)
    return found


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--count", type=int)
    ap.add_argument("--start-seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", default=os.path.join(ROOT, "build-fuzz", "fuzz-out", "autodiff"))
    ap.add_argument("--bin-dir")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--unsupported-every", type=int, default=7)
    ap.add_argument("--features", action="store_true",
                    help="print how often each pattern was generated")
    opts = ap.parse_args(argv)
    if (opts.seconds is None) == (opts.count is None):
        ap.error("give one of --seconds and --count")
    opts.remat_opt = find("remat-opt", opts.bin_dir)
    opts.remat_run = find("remat-run", opts.bin_dir)
    stats = Stats()
    failures = []
    start = time.monotonic()
    deadline = start + opts.seconds if opts.seconds is not None else None
    seeds = iter(range(opts.start_seed, opts.start_seed + (opts.count or 10 ** 9)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        running = set()

        def submit():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            seed = next(seeds, None)
            if seed is None:
                return False
            running.add(pool.submit(check_one, seed, opts, stats))
            return True

        for _ in range(opts.jobs):
            submit()
        while running:
            done, _ = concurrent.futures.wait(
                running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                running.discard(future)
                result = future.result()
                if result:
                    failures.append(result)
                    print("fuzz: autodiff: FAILED " + result, flush=True)
                submit()
    for failure in failures:
        print("fuzz: autodiff: " + failure)
    if opts.features:
        for feature, n in sorted(stats.features.items()):
            print("fuzz: autodiff: feature %-24s %d inputs" % (feature, n))
    print("fuzz: autodiff: %d inputs, %d executions, %d gradient elements checked, "
          "%d rejected as expected, crashes: %d, wrong gradients: %d, other failures: %d "
          "(%.0f s, seeds %d..%d)"
          % (stats.inputs, stats.executions, stats.elements, stats.rejected, stats.crashes,
             stats.wrong, stats.other, time.monotonic() - start, opts.start_seed,
             opts.start_seed + stats.inputs - 1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
