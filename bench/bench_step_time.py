#!/usr/bin/python3
"""Step time of the compiled training step against PyTorch eager (issue 21, items 5 and 6).

For each model (`--models`, default resnet18,resnet50,mobilenet_v2,densenet121,
transformer,unet; the classifiers at `--batch` 4 and `--size` 64x64, the
transformer at `--tf-batch` 2 and `--seq` 64, the U-Net at `--unet-batch` 2 and
`--size`; float32):

1. The step: `python/remat/torch_export.py MODEL ... -o M.export.mlir`; its
   @main's `printF64` / `printNewline` calls are rewritten to the runtime's
   `remat_rt_print_scalar_f64` (M.step.mlir), so that the CPU and the GPU
   executable print the same `result:` lines (the GPU executable links no
   MLIR runner utilities, and `--entry`'s generated inputs are not valid
   class indices / token ids).
2. Costs: `remat-run M.step.mlir --profile-costs=M.prof.mlir --repeat N`
   (each op timed on this CPU) unless `--no-profile`; the op-class
   breakdown comes from M.prof.mlir's costs and, for the library calls,
   `remat-opt M.prof.mlir --remat-pipeline="solver=none target=cpu"`.
3. Predictions: `remat-opt STEP --remat-report="solver=S budget=B
   time-limit=T target=cpu"` on M.step.mlir (FLOP costs) and on M.prof.mlir
   (profiled costs): status, winner, predicted peak and cost overhead.
4. `--rounds` rounds, alternating: PyTorch eager (`--warmup` steps, then
   `--repeat` timed forward+backward steps of the exporter's own model, loss
   and inputs, `torch.set_num_threads(--threads)`), then ours for one plan
   (`remat-run STEP --solver=S [--budget=B] --repeat N --print-ir`, with
   OMP_NUM_THREADS=--threads), for every plan of `--plans` on both cost
   models, PyTorch again before each. A budget a solver cannot meet is run
   again at the bytes its plan needs (the error names them), marked `*`.

A benchmark, not a test: failures are reported in the table and the JSON,
and the script exits 0 unless its own arguments are wrong.

`--gpu-build DIR` also builds, for every model and plan (FLOP costs), the
executable `remat-run ... --target=gpu --gpu-compile-only --gpu-format=cubin`
(stored gzipped), saves the CPU's `result:` lines, copies the exporter and
bench/gpu_step_time_device.py into DIR and writes DIR/manifest.json:
`python3 DIR/gpu_step_time_device.py DIR` runs it all on a GPU machine.

Usage:
  /usr/bin/python3 bench/bench_step_time.py [--models M1,M2] [--quick]
      [--batch 4] [--size 64] [--seq 64] [--tf-batch 2] [--unet-batch 2]
      [--threads 1] [--rounds 3] [--repeat 5] [--warmup 2]
      [--plans none,chen-sqrtn,rotor@60%,auto@60%] [--time-limit 5]
      [--no-profile] [--json OUT] [--plot OUT.png] [--keep DIR]
      [--gpu-build DIR [--gpu-repeat 10] [--gpu-chip sm_90] [--no-cpu-timing]
       [--gpu-profile]]
      [--remat-run PATH] [--remat-opt PATH]
  /usr/bin/python3 bench/bench_step_time.py --from-json OUT [--plot OUT.png]
"""

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import gpu_step_time_device  # same directory: the op classes of the CPU and GPU tables

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EXPORTER = os.path.join(ROOT, "python", "remat", "torch_export.py")
DEVICE_SCRIPT = os.path.join(ROOT, "bench", "gpu_step_time_device.py")
PYTHON = "/usr/bin/python3"
PROG = "bench_step_time.py"
DEFAULT_MODELS = "resnet18,resnet50,mobilenet_v2,densenet121,transformer,unet"
DEFAULT_PLANS = "none,chen-sqrtn,rotor@60%,auto@60%"


class BenchError(Exception):
    """An error in the script's own arguments or set-up: exit 2."""


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


# ===----------------------------------------------------------------------===
# Subprocesses
# ===----------------------------------------------------------------------===


def run(argv, env=None, timeout=None):
    """(returncode, stdout, stderr, seconds); a timeout or a missing program
    is a returncode of None with the reason in stderr."""
    start = time.monotonic()
    try:
        if os.path.isabs(argv[0]) and not os.access(argv[0], os.X_OK):
            wait_for_binary(argv[0], os.path.basename(argv[0]))
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
        return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, "timed out after %d s" % timeout, time.monotonic() - start
    except (OSError, BenchError) as e:
        return None, "", "cannot run %s: %s" % (argv[0], e), time.monotonic() - start


def first_error(stderr, rc):
    """The line that says what went wrong (remat tools print `error:`)."""
    lines = [l.strip() for l in (stderr or "").splitlines() if l.strip()]
    if any("PLEASE submit a bug report" in l or l.startswith("Stack dump") for l in lines):
        # A crash: name the project's frame nearest the top of the stack.
        frames = [re.sub(r"^#\d+ 0x[0-9a-f]+ ", "", l) for l in lines if re.match(r"#\d+ 0x", l)]
        ours = next((f for f in frames if re.search(r"remat|Remat", f)), frames[0] if frames else "")
        said = next((l for l in lines if re.search(r"error:|fatal", l)), None)
        return ("%scrashed (exit code %s) in %s" % (said + "; " if said else "", rc,
                                                     ours.split(" (/")[0]))[:400]
    for l in lines:
        if "error" in l.lower():
            return l[:400]
    return (lines[-1][:400] if lines else "exit code %s" % rc)


def wait_for_binary(path, what):
    """The lead relinks build/ now and then: wait up to 3 minutes for it."""
    for _ in range(18):
        if os.access(path, os.X_OK):
            return
        log("%s %s is missing (relinking?): retrying in 10 s" % (what, path))
        time.sleep(10)
    raise BenchError("%s not found or not executable: %s" % (what, path))


# ===----------------------------------------------------------------------===
# Plans
# ===----------------------------------------------------------------------===


class Plan:
    """`solver` or `solver@budget` (a remat budget: bytes or N%)."""

    def __init__(self, text):
        self.text = text
        self.solver, _, self.budget = text.partition("@")
        if not self.solver:
            raise BenchError("bad plan '%s': expected SOLVER or SOLVER@BUDGET" % text)
        self.budget = self.budget or None

    def slug(self):
        return re.sub(r"[^A-Za-z0-9_.-]", "", self.text.replace("@", "-").replace("%", "pct"))


def parse_plans(text):
    plans = [Plan(t.strip()) for t in text.split(",") if t.strip()]
    if not plans:
        raise BenchError("--plans is empty")
    if plans[0].text != "none":
        # Measured overheads are relative to the program order.
        plans = [Plan("none")] + [p for p in plans if p.text != "none"]
    return plans


# ===----------------------------------------------------------------------===
# Parsing the tools' output
# ===----------------------------------------------------------------------===


def parse_float(text):
    """An MLIR float literal: decimal or the hexadecimal bits of an f64."""
    if text.lower().startswith("0x"):
        return struct.unpack(">d", bytes.fromhex(text[2:].zfill(16)))[0]
    return float(text)


FLOAT = r"(0x[0-9A-Fa-f]+|[-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?|[-+]?inf|nan)"


def parse_remat_run(stdout):
    """The figures of a remat-run (CPU or GPU) output."""
    out = {"results": []}
    for line in stdout.splitlines():
        if line.startswith("result:"):
            out["results"].append(line.strip())
        elif line.startswith("remat-run:"):
            for key, value in re.findall(r"(\w+)=(\S+)", line):
                try:
                    out[key] = float(value) if key == "step_seconds" else int(value)
                except ValueError:
                    out[key] = value
        elif "func.func @train_step(" in line:
            m = re.search(r"remat\.predicted_cost = " + FLOAT, line)
            if m:
                out["predicted_cost"] = parse_float(m.group(1))
            m = re.search(r'remat\.solver = "([^"]*)"', line)
            if m:
                out["solver_chosen"] = m.group(1)
    return out


def result_sums(lines):
    """The sums of `result:` lines (floats), in order."""
    sums = []
    for l in lines:
        m = re.search(r"sum=(\S+)", l)
        sums.append(float(m.group(1)) if m else float("nan"))
    return sums


def parse_report(stdout):
    entry = json.loads(stdout)["functions"][0]
    plan = entry["plans"][0]
    sim = plan["simulation"]
    return {"solver_chosen": plan["solver"], "status": plan.get("status"),
            "meets_budget": plan.get("meets_budget"), "budget_bytes": entry.get("budget_bytes"),
            "checkpoint_all_peak_bytes": entry.get("checkpoint_all_peak_bytes"),
            "predicted_peak_bytes": sim["peak_bytes"], "fixed_bytes": sim.get("fixed_bytes"),
            "base_cost": sim["base_cost"], "total_cost": sim["total_cost"],
            "predicted_overhead": sim["overhead"],
            "recomputations": sim["num_recomputations"], "solve_seconds": plan.get("solve_seconds"),
            "nodes": entry.get("nodes")}


# ===----------------------------------------------------------------------===
# The step's ops (for the breakdown by op class)
# ===----------------------------------------------------------------------===

OP_START = re.compile(r'^\s*(?:%[^=]*=\s*)?"?([a-z_][\w]*\.[\w.]+)')


def step_ops(path, func="train_step"):
    """The top-level ops of @func in an .mlir file: [{line, name, cost,
    reduction, library_call}] in program order (`line` is 1-based)."""
    with open(path) as f:
        lines = f.read().split("\n")
    head = re.compile(r"^\s*func\.func\s+(?:\w+\s+)?@%s\(" % re.escape(func))
    start = next((i for i, l in enumerate(lines) if head.match(l)), None)
    if start is None:
        raise ValueError("no @%s in %s" % (func, path))
    func_indent = len(lines[start]) - len(lines[start].lstrip())
    i = start
    while i < len(lines) and not lines[i].rstrip().endswith("{"):
        i += 1
    i += 1
    op_indent, ops, cur = None, [], None
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if stripped.startswith("}") and indent <= func_indent:
            break
        if stripped and op_indent is None:
            op_indent = indent
        if stripped and indent == op_indent and not stripped.startswith(("}", "^")):
            m = OP_START.match(line)
            cur = {"line": i + 1, "name": m.group(1) if m else stripped.split()[0],
                   "cost": None, "reduction": '"reduction"' in line,
                   "library_call": None, "loc": None, "profile_id": None}
            ops.append(cur)
        if cur is not None and stripped:
            if cur["cost"] is None:
                m = re.search(r"remat\.cost = " + FLOAT, line)
                if m:
                    cur["cost"] = parse_float(m.group(1))
            if cur["profile_id"] is None:
                m = re.search(r"remat\.profile_id = (\d+)", line)
                if m:
                    cur["profile_id"] = int(m.group(1))
            if cur["library_call"] is None:
                m = re.search(r'remat\.library_call = "([^"]*)"', line)
                if m:
                    cur["library_call"] = m.group(1)
            if indent == op_indent:
                m = re.search(r"loc\(([^()]*(?:\([^()]*\))?[^()]*)\)\s*$", line)
                if m:
                    cur["loc"] = m.group(1)
        i += 1
    aliases = {}
    for l in lines:
        m = re.match(r"^(#loc\d*) = loc\((.*)\)\s*$", l)
        if m:
            aliases[m.group(1)] = m.group(2)
    for op in ops:
        loc = op["loc"]
        if loc is not None:
            loc = aliases.get(loc, loc)
            # A fused location (remat-assign-arena's, with the buffer's
            # offset) names the op's own one through another alias.
            for _ in range(8):
                if re.search(r'"[^"]*":\d+:\d+', loc):
                    break
                inner = re.search(r"#loc\d*", loc)
                if not inner or inner.group(0) not in aliases:
                    break
                loc = aliases[inner.group(0)]
            m = re.search(r'"[^"]*":(\d+):\d+', loc)
            op["loc_line"] = int(m.group(1)) if m else None
    return ops


def classify(op, library_lines):
    """The op class of a profiled op (the same classes as the GPU tables)."""
    kind = library_lines.get(op["line"])
    if kind:
        return "lib:" + kind
    return gpu_step_time_device.compiled_op_class(op["name"], op["reduction"])


def op_breakdown(remat_opt, step_path, prof_path, work, model):
    """Measured time per op class from the profiled step; the library calls
    are the ops that remat-plan-library-calls marks (matched by location)."""
    prof = step_ops(prof_path)
    pipe = os.path.join(work, "%s.prof.pipeline.mlir" % model)
    rc, _, err, _ = run([remat_opt, prof_path, "--remat-pipeline=solver=none target=cpu",
                         "--mlir-print-debuginfo", "-o", pipe])
    out = {"library_matched": 0, "errors": []}
    library_lines = {}
    if rc != 0:
        out["errors"].append("library calls not identified: " + first_error(err, rc))
    else:
        for op in step_ops(pipe):
            if op["library_call"] and op.get("loc_line"):
                library_lines[op["loc_line"]] = op["library_call"]
        out["library_matched"] = len(library_lines)
        if not library_lines:
            out["errors"].append("no library call found in the pipeline's output (locations?)")
    # FLOPs of the same ops in the exported step (same program order).
    flops = None
    try:
        orig = step_ops(step_path)
        if [o["name"] for o in orig] == [o["name"] for o in prof]:
            flops = [o["cost"] or 0.0 for o in orig]
        else:
            out["errors"].append("exported and profiled steps differ in their ops: no FLOPs per class")
    except (OSError, ValueError) as e:
        out["errors"].append("cannot read %s: %s" % (step_path, e))
    classes = {}
    total = 0.0
    for k, op in enumerate(prof):
        ns = op["cost"] or 0.0
        c = classes.setdefault(classify(op, library_lines), {"ns": 0.0, "ops": 0, "flops": 0.0})
        c["ns"] += ns
        c["ops"] += 1
        if flops is not None:
            c["flops"] += flops[k]
        total += ns
    for c in classes.values():
        c["share"] = c["ns"] / total if total else 0.0
        c["gflops_per_s"] = c["flops"] / c["ns"] if flops is not None and c["ns"] > 0 else None
        if flops is None:
            c["flops"] = None
    lib_ns = sum(c["ns"] for k, c in classes.items() if k.startswith("lib:"))
    out.update({"total_ns": total, "ops": len(prof), "classes": classes,
                "library_share": lib_ns / total if total else 0.0})
    return out


# ===----------------------------------------------------------------------===
# Exporting
# ===----------------------------------------------------------------------===


def exporter_args(model, a):
    if model == "transformer":
        return ["transformer", "--batch", str(a.tf_batch), "--seq", str(a.seq)]
    if model == "unet":
        return ["unet", "--batch", str(a.unet_batch), "--size", str(a.size), str(a.size)]
    return [model, "--batch", str(a.batch), "--size", str(a.size), str(a.size)]


def rewrite_prints(src, dst):
    """@main prints through the runtime (`result:` lines, on the CPU and in a
    GPU executable) instead of the runner utilities' printF64."""
    with open(src) as f:
        text = f.read()
    if "@printF64" not in text:
        raise ValueError("%s: no printF64 in its @main (exporter changed?)" % src)
    text = text.replace("@printF64(", "@remat_rt_print_scalar_f64(")
    text = re.sub(r"^\s*func\.call @printNewline\(\) : \(\) -> \(\)\s*\n", "", text, flags=re.M)
    text = re.sub(r"^\s*func\.func private @printNewline\(\)\s*\n", "", text, flags=re.M)
    with open(dst, "w") as f:
        f.write(text)


# ===----------------------------------------------------------------------===
# PyTorch eager
# ===----------------------------------------------------------------------===


_TE = None


def torch_export_module():
    global _TE
    if _TE is None:
        sys.path.insert(0, os.path.dirname(EXPORTER))
        import torch_export  # noqa: E402  (Debian's torch 1.13)
        _TE = torch_export
    return _TE


def limit_blas_threads(threads):
    """Debian's torch 1.13 runs its matrix products through OpenBLAS, whose
    own thread pool `torch.set_num_threads` does not touch: left alone it
    keeps one thread per core, and "one thread" PyTorch steps used two cores
    (process CPU time / wall time 2.0 in every earlier round of this bench).
    Sets OpenBLAS's threads (and MKL's, where torch links MKL) to `threads`;
    returns what OpenBLAS reports afterwards (None without OpenBLAS)."""
    import ctypes

    def first_with(names, symbol):
        for name in names:
            try:
                lib = ctypes.CDLL(name)
            except OSError:
                continue
            if hasattr(lib, symbol):
                return lib
        return None

    got = None
    openblas = first_with(("libopenblas.so.0", "libopenblasp.so.0", "libopenblas.so"),
                          "openblas_set_num_threads")
    if openblas:
        openblas.openblas_set_num_threads(int(threads))
        got = int(openblas.openblas_get_num_threads())
    mkl = first_with(("libmkl_rt.so.2", "libmkl_rt.so"), "MKL_Set_Num_Threads")
    if mkl:
        mkl.MKL_Set_Num_Threads(int(threads))
    return got


def loaded_blas():
    """The BLAS library this process (PyTorch) has loaded, from
    /proc/self/maps: Debian's torch links libblas.so.3, whichever package
    provides it. Without an optimised one (OpenBLAS: libopenblas0-pthread,
    which scripts/setup.sh installs) it is netlib's reference BLAS, whose
    matrix products run at a few GFLOP/s: PyTorch's times are then not
    PyTorch's (a fresh machine measured mobilenet_v2's step at 169 ms on it
    against 34.6 ms on OpenBLAS)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/" in line}
    except OSError:
        return None
    # libblas.so.3 is what torch links; libopenblas.so.0 may be loaded too
    # (limit_blas_threads opens it by name).
    blas = sorted(p for p in paths if "blas" in os.path.basename(p))
    linked = [p for p in blas if os.path.basename(p).startswith("libblas.so")]
    return (linked or blas or [None])[0]


def is_reference_blas(path):
    """Debian's netlib reference BLAS lives in .../blas/ (OpenBLAS, BLIS and
    ATLAS in openblas-*/, blis-*/, atlas/)."""
    return bool(path) and "/blas/libblas.so" in path


class TorchStep:
    """The exporter's model, inputs and loss in PyTorch eager: one step is
    zero_grad, forward with the exporter's dropout masks, loss, backward."""

    def __init__(self, argv, threads):
        import torch
        te = torch_export_module()
        torch.set_num_threads(threads)
        self.blas_threads = limit_blas_threads(threads)
        self.blas = loaded_blas()
        self.torch, self.te = torch, te
        ns = te.parse_args(argv + ["-o", os.devnull])
        self.spec = te.build_model(ns)
        args = te.step_arguments(self.spec)
        te.load_state(self.spec, args)
        self.data = te.to_torch(args[0])
        self.target = te.to_torch(args[1])
        self.masks = [te.to_torch(x) for x in args if x.role == "mask"]
        self.spec.module.train()

    def step(self):
        module = self.spec.module
        module.zero_grad(set_to_none=True)
        with self.te.MaskedRandomness(self.masks):
            out = module(self.data)
        if isinstance(out, tuple):
            out = out[0]
        loss = self.spec.loss(out, self.target)
        loss.backward()
        return loss

    def time(self, warmup, repeat):
        """Wall and process-CPU seconds of `repeat` steps after `warmup`."""
        for _ in range(warmup):
            self.step()
        wall, cpu = [], []
        for _ in range(repeat):
            w0, c0 = time.perf_counter(), time.process_time()
            self.step()
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
        return wall, cpu


# ===----------------------------------------------------------------------===
# One model
# ===----------------------------------------------------------------------===


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def remat_run_plan(a, env, step, plan, budget, repeat, extra=()):
    argv = [a.remat_run, step, "--solver=" + plan.solver, "--repeat=%d" % repeat]
    if budget:
        argv.append("--budget=" + budget)
    argv.append("--time-limit=%g" % a.time_limit)
    argv += list(extra)
    rc, out, err, seconds = run(argv, env=env, timeout=a.timeout)
    if rc != 0 and re.search(r"cannot (find|run|load)|No such file", err or ""):
        # build/ being relinked: once more after a minute.
        log("  %s: %s; retrying in 60 s" % (plan.text, first_error(err, rc)))
        time.sleep(60)
        rc, out, err, seconds = run(argv, env=env, timeout=a.timeout)
    res = parse_remat_run(out)
    res["wall_s"] = seconds
    res["argv"] = " ".join(argv)
    if rc != 0:
        res["error"] = first_error(err, rc)
        res["stderr"] = err[-2000:]
    elif ("step_seconds" not in res and repeat > 0
          and "--gpu-compile-only" not in extra):  # a build prints no time
        res["error"] = "no step_seconds line"
    return res


def fallback_budget(error, plan, policy, checkpoint_all=None):
    """The budget to run a plan at when remat says its budget is infeasible:
    `needs`, the bytes the solver's plan needs (its least-memory plan, often
    far more recomputation than the budget asked for), or `mid`, halfway from
    there to the checkpoint-all peak (taken from the error's budget when the
    plan's budget is a percentage, else `checkpoint_all`). Returns (budget,
    the checkpoint-all peak used); (None, None): no retry."""
    if policy == "none" or not error or "infeasible" not in error:
        return None, None
    # "... whose plan needs N bytes; the least feasible budget found is M
    # bytes" or,
    # with arena placement, "... the plan of L live bytes needs N bytes with
    # its arena ...".
    m = re.search(r"needs (\d+) bytes", error) or \
        re.search(r"least feasible budget (?:found )?is (\d+) bytes", error)
    if not m:
        return None, None
    need = int(m.group(1))
    asked = re.search(r"budget of (\d+) bytes", error)
    if plan.budget and plan.budget.endswith("%") and asked:
        checkpoint_all = int(asked.group(1)) / (float(plan.budget[:-1]) / 100.0)
    if policy == "needs" or not checkpoint_all or checkpoint_all <= need:
        return need, checkpoint_all
    return int(need + (checkpoint_all - need) / 2), checkpoint_all


def run_plan_with_fallback(a, env, step, plan, cfg, repeat, extra=()):
    """remat-run at the plan's budget, or at the budget fixed by an earlier
    round's fallback; an infeasible budget is retried once at the budget
    --fallback picks (fallback_budget)."""
    res = remat_run_plan(a, env, step, plan, cfg["budget_used"], repeat, extra)
    if res.get("error") and cfg["budget_used"] == plan.budget:
        budget, ckpt = fallback_budget(res["error"], plan, a.fallback, cfg.get("checkpoint_all"))
        if budget:
            log("  %s: %s; again at %d bytes (--fallback %s)"
                % (plan.text, res["error"][:120], budget, a.fallback))
            cfg["fallback"] = {"error": res["error"], "budget": str(budget), "policy": a.fallback,
                               "checkpoint_all": ckpt,
                               "percent": 100.0 * budget / ckpt if ckpt else None}
            cfg["budget_used"] = str(budget)
            res = remat_run_plan(a, env, step, plan, str(budget), repeat, extra)
    return res


def report_plan(a, step, plan, budget):
    options = "solver=%s time-limit=%g target=cpu" % (plan.solver, a.time_limit)
    if budget:
        options += " budget=%s" % budget
    rc, out, err, _ = run([a.remat_opt, step, "--remat-report=" + options, "-o", os.devnull],
                          timeout=a.timeout)
    if rc != 0:
        return {"error": first_error(err, rc)}
    try:
        return parse_report(out)
    except (ValueError, KeyError, IndexError) as e:
        return {"error": "unreadable report: %s" % e}


def export_autodiff_step(a, argv, work, model, export):
    """--autodiff: the forward-only export differentiated by remat-opt
    --remat-autodiff, with the training step's @main pasted in (as
    test/Execution/Inputs/check_model.py --autodiff does). Returns (exit
    code, stderr, seconds of the differentiation)."""
    fwd = os.path.join(work, "%s.fwd.mlir" % model)
    main_only = os.path.join(work, "%s.main.mlir" % model)
    ad = os.path.join(work, "%s.ad.mlir" % model)
    for extra, path in ((["--forward-only", "--no-main"], fwd), (["--main-only"], main_only)):
        rc, _, err, _ = run([PYTHON, EXPORTER] + argv + extra + ["-o", path], timeout=a.timeout)
        if rc != 0:
            return rc, err, 0.0
    rc, _, err, secs = run([a.remat_opt, fwd, "--remat-autodiff", "-o", ad], timeout=a.timeout)
    if rc != 0:
        return rc, err, secs
    with open(ad) as f:
        module = f.read().rstrip()
    if not module.endswith("}"):
        return 1, "remat-autodiff's output does not end with the module's '}'", secs
    with open(main_only) as f:
        main_text = f.read()
    with open(export, "w") as f:
        f.write(module[:-1] + main_text + "\n}\n")
    return 0, "", secs


def bench_model(a, model, work, plans, env):
    argv = exporter_args(model, a)
    entry = {"model": model, "exporter_args": argv, "errors": [], "configs": [],
             "step": "remat-autodiff" if a.autodiff else "pytorch-joint-graph"}
    export = os.path.join(work, "%s.export.mlir" % model)
    step = os.path.join(work, "%s.step.mlir" % model)
    log("%s: export %s%s" % (model, " ".join(argv), " (remat-autodiff)" if a.autodiff else ""))
    if a.autodiff:
        rc, err, secs = export_autodiff_step(a, argv, work, model, export)
    else:
        rc, _, err, secs = run([PYTHON, EXPORTER] + argv + ["-o", export], timeout=a.timeout)
    if rc != 0:
        entry["errors"].append("export: " + first_error(err, rc))
        return entry
    try:
        rewrite_prints(export, step)
    except (OSError, ValueError) as e:
        entry["errors"].append("rewrite: %s" % e)
        return entry
    entry["export_seconds"] = secs
    entry["step_file"] = step

    # FLOP-cost report of the program order: the model's FLOPs and peak.
    none = report_plan(a, step, Plan("none"), None)
    if "error" in none:
        entry["errors"].append("report none: " + none["error"])
    else:
        entry["flops"] = none["base_cost"]
        entry["nodes"] = none["nodes"]
        entry["checkpoint_all_peak_bytes"] = none["checkpoint_all_peak_bytes"]

    # Profiled costs.
    prof = None
    if not a.no_profile and not a.no_cpu_timing:
        prof = os.path.join(work, "%s.prof.mlir" % model)
        log("%s: --profile-costs (repeat %d)" % (model, a.profile_repeat))
        res = remat_run_plan(a, env, step, Plan("none"), None, a.profile_repeat,
                             ["--profile-costs=" + prof])
        entry["profile"] = {k: res.get(k) for k in ("step_seconds", "windows", "wall_s",
                                                     "measured_peak_bytes", "error")}
        if res.get("error") or not os.path.exists(prof):
            entry["errors"].append("profile: %s" % res.get("error", "no file written"))
            prof = None
        else:
            try:
                entry["breakdown"] = op_breakdown(a.remat_opt, step, prof, work, model)
            except (OSError, ValueError) as e:
                entry["errors"].append("breakdown: %s" % e)

    # The configurations: every plan on FLOP costs, every plan but none on
    # profiled costs (none is the same program).
    configs = []
    for costs, path in (("flop", step), ("prof", prof)):
        if path is None:
            continue
        for plan in plans:
            if costs == "prof" and plan.solver == "none":
                continue
            configs.append({"plan": plan.text, "solver": plan.solver, "budget": plan.budget,
                            "budget_used": plan.budget, "costs": costs, "step": path,
                            "checkpoint_all": entry.get("checkpoint_all_peak_bytes"),
                            "_plan": plan, "runs": []})
    entry["configs"] = configs

    if a.no_cpu_timing:
        return entry

    log("%s: PyTorch eager model" % model)
    try:
        torch_step = TorchStep(argv, a.threads)
    except Exception as e:  # noqa: BLE001 - reported, the model goes on without PyTorch
        torch_step = None
        entry["errors"].append("pytorch: %s: %s" % (type(e).__name__, e))
    pt_wall, pt_cpu, pt_rounds = [], [], []
    for r in range(a.rounds):
        for cfg in configs:
            if torch_step is not None:
                wall, cpu = torch_step.time(a.warmup, a.repeat)
                pt_wall += wall
                pt_cpu += cpu
                pt_rounds.append(median(wall))
            plan = cfg["_plan"]
            res = run_plan_with_fallback(a, env, cfg["step"], plan, cfg, a.repeat, ["--print-ir"])
            cfg["runs"].append(res)
            log("%s round %d %s/%s: %s" % (model, r + 1, cfg["plan"], cfg["costs"],
                                          res.get("error") or "%.4g s (PyTorch %.4g s)"
                                          % (res.get("step_seconds", float("nan")),
                                             pt_rounds[-1] if pt_rounds else float("nan"))))
    entry["pytorch"] = {"step_seconds": median(pt_rounds), "samples": len(pt_wall),
                        "round_medians": pt_rounds, "cpu_seconds": median(pt_cpu),
                        "threads": a.threads,
                        "openblas_threads": torch_step.blas_threads if torch_step else None,
                        "blas": torch_step.blas if torch_step else None}
    if torch_step is not None and is_reference_blas(torch_step.blas):
        log("%s: warning: PyTorch's matrix products ran on the reference BLAS (%s), not an "
            "optimised one: its times are not PyTorch's; install libopenblas0-pthread "
            "(scripts/setup.sh does)" % (model, torch_step.blas))
    # A baseline that used more cores than it was given is not comparable.
    if pt_wall and pt_cpu and median(pt_cpu) > 1.15 * a.threads * median(pt_wall):
        log("%s: warning: PyTorch used %.2f cores per step (CPU/wall) with --threads %d"
            % (model, median(pt_cpu) / median(pt_wall), a.threads))

    # Predictions of the plans that ran (the budget actually used).
    for cfg in configs:
        plan = cfg["_plan"]
        cfg["report"] = report_plan(a, cfg["step"], plan, cfg["budget_used"])
    summarize_model(entry)
    return entry


def summarize_model(entry):
    """Medians, ratios, overheads and checks of one model's configurations."""
    configs = entry["configs"]
    pt = (entry.get("pytorch") or {}).get("step_seconds")
    none_cfg = next((c for c in configs if c["plan"] == "none" and c["costs"] == "flop"), None)
    none_s = None
    if none_cfg:
        none_s = median([r.get("step_seconds") for r in none_cfg["runs"]])
    none_results = None
    if none_cfg:
        none_results = next((r["results"] for r in none_cfg["runs"] if r.get("results")), None)
    for cfg in configs:
        runs = cfg["runs"]
        ok = [r for r in runs if not r.get("error")]
        s = median([r.get("step_seconds") for r in ok])
        cfg["step_seconds"] = s
        cfg["round_seconds"] = [r.get("step_seconds") for r in runs]
        cfg["ratio_pytorch"] = s / pt if s and pt else None
        cfg["measured_overhead"] = s / none_s if s and none_s else None
        last = ok[-1] if ok else (runs[-1] if runs else {})
        for key in ("measured_peak_bytes", "predicted_peak_bytes", "fixed_bytes",
                    "solver_chosen", "predicted_cost"):
            cfg["run_" + key] = last.get(key)
        cfg["errors"] = sorted({r["error"] for r in runs if r.get("error")})
        rep = cfg.get("report") or {}
        cfg["predicted_overhead"] = rep.get("predicted_overhead")
        # The cost of the plan that ran over the cost of each op once, from
        # remat-run's own plan (--print-ir), when it printed one.
        if last.get("predicted_cost") is not None and rep.get("base_cost"):
            cfg["run_predicted_overhead"] = last["predicted_cost"] / rep["base_cost"]
        pred = cfg.get("run_predicted_overhead") or cfg["predicted_overhead"]
        m = cfg["measured_overhead"]
        cfg["overhead_error"] = (m - pred) / pred if m and pred else None
        cfg["peak_equal"] = (last.get("measured_peak_bytes") is not None and
                             last.get("measured_peak_bytes") == last.get("predicted_peak_bytes"))
        cfg["report_run_peak_equal"] = (rep.get("predicted_peak_bytes") is not None and
                                        rep.get("predicted_peak_bytes") ==
                                        last.get("predicted_peak_bytes"))
        res = [r.get("results") for r in ok if r.get("results")]
        cfg["results_lines"] = len(res[0]) if res else 0
        cfg["results_equal_none"] = (bool(res) and none_results is not None and
                                     all(x == none_results for x in res))
        cfg.pop("_plan", None)
        for r in runs:
            r.pop("results", None)  # kept once per model below
    entry["cpu_results"] = none_results


# ===----------------------------------------------------------------------===
# GPU executables
# ===----------------------------------------------------------------------===


def gzip_executable(path):
    """PATH.gz in place of PATH (the device tool carries the bundle): the
    sizes before and after."""
    with open(path, "rb") as src, gzip.open(path + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    size = os.path.getsize(path)
    os.remove(path)
    return size, os.path.getsize(path + ".gz")


def gpu_build_model(a, entry, plans, outdir, env):
    """Executables of every plan (FLOP costs) and the CPU's result lines."""
    model = entry["model"]
    step = entry.get("step_file")
    if not step:
        return {"model": model, "error": "no step (export failed)"}
    out = {"model": model, "exporter_args": entry["exporter_args"], "dtype": "f32",
           "flops": entry.get("flops"), "runs": [], "errors": []}
    # The CPU's results: from the timing runs, else one run of none.
    lines = entry.get("cpu_results")
    if not lines:
        log("%s: CPU reference run (none)" % model)
        res = remat_run_plan(a, env, step, Plan("none"), None, 0)
        if res.get("error"):
            out["errors"].append("cpu reference: " + res["error"])
        lines = res.get("results")
        out["cpu_measured_peak_bytes"] = res.get("measured_peak_bytes")
    if lines:
        name = "%s.cpu_results.txt" % model
        with open(os.path.join(outdir, name), "w") as f:
            f.write("\n".join(lines) + "\n")
        out["cpu_results"] = name
    none_cost = None
    for plan in plans:
        if a.gpu_costs_only and plan.solver != "none":
            continue
        log("%s: GPU executable %s" % (model, plan.text))
        run_entry = gpu_build_plan(a, env, step, plan, entry.get("checkpoint_all_peak_bytes"),
                                   outdir, "%s.%s.exe" % (model, plan.slug()), plan.text,
                                   none_cost)
        if plan.solver == "none":
            none_cost = run_entry.get("predicted_cost")
        out["runs"].append(run_entry)
    # The none executable again under other runtime settings (--gpu-env).
    none_run = next((r for r in out["runs"] if r["solver"] == "none" and r.get("exe")), None)
    for name, variables in a.gpu_env:
        if none_run:
            out["runs"].append(dict(none_run, plan="none (%s)" % name, env=variables))
    if a.gpu_costs:
        out["runs"] += gpu_build_costed_plans(a, model, plans, outdir, env)
    if a.gpu_profile:
        out["profile"] = gpu_build_profile(a, model, step, outdir, env)
    return out


def gpu_build_plan(a, env, step, plan, checkpoint_all, outdir, exe, label, none_cost):
    """One plan's GPU executable (gzipped into outdir as exe.gz) and its
    manifest run: budget used (after a fallback), predictions (--print-ir:
    the plan's cost; its overhead against `none_cost`)."""
    path = os.path.join(outdir, exe)
    cfg = {"budget_used": plan.budget, "checkpoint_all": checkpoint_all}
    extra = ["--target=gpu", "--gpu-compile-only", "--gpu-format=cubin",
             "--gpu-chip=" + a.gpu_chip, "--gpu-executable=" + path, "--print-ir"]
    res = run_plan_with_fallback(a, env, step, plan, cfg, a.gpu_repeat, extra)
    run_entry = {"plan": label, "solver": plan.solver, "budget": plan.budget,
                 "budget_used": cfg["budget_used"], "fallback": cfg.get("fallback"),
                 "repeat": a.gpu_repeat, "predicted_peak_bytes": res.get("predicted_peak_bytes"),
                 "fixed_bytes": res.get("fixed_bytes"), "solver_chosen": res.get("solver_chosen"),
                 "predicted_cost": res.get("predicted_cost"), "build_seconds": res.get("wall_s")}
    base = none_cost if plan.solver != "none" else res.get("predicted_cost")
    if base and res.get("predicted_cost"):
        run_entry["predicted_overhead"] = res["predicted_cost"] / base
    if res.get("error") or not os.path.exists(path):
        run_entry["error"] = res.get("error") or "no executable written"
    else:
        run_entry["exe"] = exe + ".gz"
        run_entry["exe_bytes"], run_entry["exe_gz_bytes"] = gzip_executable(path)
    return run_entry


def gpu_build_costed_plans(a, model, plans, outdir, env):
    """Executables of every plan but none solved on the costs the device
    measured: a previous device run's per-op times (--gpu-costs, its
    `profile.op_ns`) written back into that build's numbered step by
    remat-apply-profiled-costs. Their predicted overhead is against none's
    cost under the same costs."""
    runs = []
    with open(a.gpu_costs) as f:
        device = json.load(f)
    m = next((m for m in device.get("models", []) if m.get("model") == model), None)
    key = "profile_stream" if a.gpu_cost_timing == "stream" else "profile"
    op_ns = ((m or {}).get(key) or {}).get("op_ns")
    numbered = os.path.join(os.path.dirname(os.path.abspath(a.gpu_costs)),
                            "%s.profile.numbered.mlir.gz" % model)
    if not op_ns or not os.path.exists(numbered):
        return [{"plan": "(GPU costs)", "solver": "-",
                 "error": "no device profile (%s) or numbered step for %s in %s"
                          % (key, model, os.path.dirname(a.gpu_costs))}]
    work = tempfile.mkdtemp(prefix="gpu_costs.")
    step = os.path.join(work, "%s.numbered.mlir" % model)
    with gzip.open(numbered, "rb") as src, open(step, "wb") as dst:
        shutil.copyfileobj(src, dst)
    profile = os.path.join(work, "%s.device_profile.txt" % model)
    with open(profile, "w") as f:
        for op, ns in sorted(op_ns.items(), key=lambda kv: int(kv[0])):
            f.write("remat-profile: op=%s ns=%d\n" % (op, ns))
    costed = os.path.join(outdir, "%s.gpu_costs.mlir" % model)
    rc, _, err, _ = run([a.remat_opt, step, "--remat-apply-profiled-costs=profile=" + profile,
                         "-o", costed], timeout=a.timeout)
    shutil.rmtree(work, ignore_errors=True)
    if rc != 0:
        return [{"plan": "(GPU costs)", "solver": "-",
                 "error": "remat-apply-profiled-costs: " + first_error(err, rc)}]
    none = report_plan(a, costed, Plan("none"), None)
    none_cost = none.get("base_cost")
    for plan in plans:
        if plan.solver == "none":
            continue
        log("%s: GPU executable %s on the device's costs" % (model, plan.text))
        entry = gpu_build_plan(a, env, costed, plan, none.get("checkpoint_all_peak_bytes"), outdir,
                               "%s.%s.gpucost.exe" % (model, plan.slug()),
                               plan.text + " (GPU %s costs)" % a.gpu_cost_timing, none_cost)
        entry["costs"] = "gpu-" + a.gpu_cost_timing
        runs.append(entry)
    os.remove(costed)
    return runs


def gpu_build_profile(a, model, step, outdir, env):
    """The executable that times every op of the step (solver none) on the
    device (`remat-profile: op=<id> ns=<ns>` lines) and the ops those ids
    number (M.profile_ops.json: id, op name, FLOPs, its first line)."""
    exe = "%s.profile.exe" % model
    path = os.path.join(outdir, exe)
    numbered = os.path.join(outdir, "%s.profile.numbered.mlir" % model)
    extra = ["--target=gpu", "--gpu-compile-only", "--gpu-format=cubin",
             "--gpu-chip=" + a.gpu_chip, "--gpu-executable=" + path,
             "--profile-costs=" + numbered]
    log("%s: GPU profile executable" % model)
    res = remat_run_plan(a, env, step, Plan("none"), None, a.gpu_repeat, extra)
    out = {"repeat": a.gpu_repeat, "build_seconds": res.get("wall_s")}
    if res.get("error") or not os.path.exists(path) or not os.path.exists(numbered):
        out["error"] = res.get("error") or "no executable or numbered step written"
        return out
    with open(numbered) as f:
        lines = f.read().split("\n")
    ops = []
    for op in step_ops(numbered):
        if op["profile_id"] is None:
            continue
        ops.append({"id": op["profile_id"], "name": op["name"], "flops": op["cost"] or 0.0,
                    "reduction": op["reduction"], "text": lines[op["line"] - 1].strip()[:400]})
    # Kept (gzipped) for --gpu-costs: the device's per-op times back as this
    # step's costs (remat-apply-profiled-costs).
    gzip_executable(numbered)
    out["numbered"] = os.path.basename(numbered) + ".gz"
    name = "%s.profile_ops.json" % model
    with open(os.path.join(outdir, name), "w") as f:
        json.dump(ops, f, indent=0)
    gzip_executable(path)
    out.update({"exe": exe + ".gz", "ops": name, "numbered_ops": len(ops)})
    return out


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total


def write_gpu_manifest(a, outdir, models):
    shutil.copy(EXPORTER, os.path.join(outdir, "torch_export.py"))
    # The script's code: the package torch_export/ next to it.
    package = os.path.join(outdir, "torch_export")
    shutil.rmtree(package, ignore_errors=True)
    shutil.copytree(os.path.join(os.path.dirname(EXPORTER), "torch_export"), package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    if os.path.exists(DEVICE_SCRIPT):
        shutil.copy(DEVICE_SCRIPT, os.path.join(outdir, "gpu_step_time_device.py"))
    manifest = {"version": 1, "created": datetime.datetime.now().isoformat(timespec="seconds"),
                "made_by": "bench/bench_step_time.py --gpu-build", "chip": a.gpu_chip,
                "format": "cubin", "executables": "gzip", "tolerance_f32": 1e-4,
                "git": git_describe(), "models": models}
    with open(os.path.join(outdir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return dir_bytes(outdir)


# ===----------------------------------------------------------------------===
# Output
# ===----------------------------------------------------------------------===


def fmt(v, spec="%.3f", none="-"):
    return none if v is None else spec % v


def input_text(model_entry):
    argv = model_entry["exporter_args"]
    batch = argv[argv.index("--batch") + 1]
    if "--seq" in argv:
        return "b%s seq%s" % (batch, argv[argv.index("--seq") + 1])
    i = argv.index("--size")
    return "b%s %sx%s" % (batch, argv[i + 1], argv[i + 2])


def table(result):
    """The markdown tables of a run."""
    out = []
    head = ["model", "input", "GFLOP", "pytorch_ms", "plan", "costs", "solver", "ours_ms",
            "ours/pt", "meas_ovh", "pred_ovh", "ovh_err", "peak_MB", "peak==pred", "results"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    notes = []
    for m in result["models"]:
        pt = (m.get("pytorch") or {}).get("step_seconds")
        flops = m.get("flops")
        if not m["configs"] or m.get("no_timing"):
            out.append("| %s | %s | %s | %s | %s |" % (m["model"], input_text(m),
                                                       fmt(flops and flops / 1e9, "%.2f"),
                                                       fmt(pt and pt * 1e3, "%.1f"),
                                                       "; ".join(m["errors"]) or "not timed"))
            continue
        for c in m["configs"]:
            plan = c["plan"]
            fb = c.get("fallback")
            if fb:
                plan = "%s@%s*" % (c["solver"], fmt(fb.get("percent"), "%.1f%%", fb["budget"]))
                notes.append("%s %s/%s: %s; ran at %s bytes (%s of checkpoint-all, --fallback %s)"
                             % (m["model"], c["plan"], c["costs"],
                                re.sub(r"^.*?error: ", "", fb["error"])[:200], fb["budget"],
                                fmt(fb.get("percent"), "%.1f%%"), fb.get("policy")))
            peak = c.get("run_measured_peak_bytes")
            if c["errors"] and c["step_seconds"] is None:
                notes.append("%s %s/%s: %s" % (m["model"], c["plan"], c["costs"], c["errors"][0]))
            results = ("same" if c["results_equal_none"] else
                       "-" if not c["results_lines"] else "DIFF")
            if c["plan"] == "none":
                results = "%d lines" % c["results_lines"] if c["results_lines"] else "-"
            out.append("| " + " | ".join([
                m["model"], input_text(m), fmt(flops and flops / 1e9, "%.2f"),
                fmt(pt and pt * 1e3, "%.1f"), plan, c["costs"],
                c.get("run_solver_chosen") or (c.get("report") or {}).get("solver_chosen") or "-",
                fmt(c["step_seconds"] and c["step_seconds"] * 1e3, "%.1f"),
                fmt(c["ratio_pytorch"], "%.2f"), fmt(c["measured_overhead"]),
                fmt(c.get("run_predicted_overhead") or c["predicted_overhead"]),
                fmt(c["overhead_error"] and c["overhead_error"] * 100, "%+.1f%%"),
                fmt(peak and peak / 1e6, "%.2f"),
                "yes" if c["peak_equal"] else ("-" if peak is None else "NO"), results]) + " |")
        for e in m["errors"]:
            notes.append("%s: %s" % (m["model"], e))
    # Op classes.
    classes = []
    for m in result["models"]:
        for k in (m.get("breakdown") or {}).get("classes", {}):
            if k not in classes:
                classes.append(k)
    classes.sort(key=lambda k: (not k.startswith("lib:"), k))
    if classes:
        out.append("")
        head = ["model", "profiled_ms", "profile_step_ms", "ops", "library"] + classes
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for m in result["models"]:
            b = m.get("breakdown")
            if not b:
                continue
            cells = [m["model"], fmt(b["total_ns"] / 1e6, "%.1f"),
                     fmt((m.get("profile") or {}).get("step_seconds") and
                         m["profile"]["step_seconds"] * 1e3, "%.1f"),
                     str(b["ops"]), fmt(b["library_share"] * 100, "%.0f%%")]
            for k in classes:
                c = b["classes"].get(k)
                if not c:
                    cells.append("-")
                    continue
                gf = c.get("gflops_per_s")
                cells.append("%.0f%%%s" % (c["share"] * 100, " (%.1f GF/s)" % gf if gf else ""))
            out.append("| " + " | ".join(cells) + " |")
            for e in b.get("errors", []):
                notes.append("%s breakdown: %s" % (m["model"], e))
    if notes:
        out.append("")
        out += ["note: " + n for n in notes]
    return "\n".join(out)


def plot(result, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = [m for m in result["models"] if m.get("configs")]
    if not models:
        log("plot: nothing to plot")
        return
    labels = []
    for m in models:
        for c in m["configs"]:
            key = "%s/%s" % (c["plan"], c["costs"])
            if key not in labels and c.get("ratio_pytorch"):
                labels.append(key)
    colors = plt.get_cmap("tab10")
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 5.5))
    width = 0.8 / max(1, len(labels))
    for j, key in enumerate(labels):
        xs, ys = [], []
        for i, m in enumerate(models):
            c = next((c for c in m["configs"] if "%s/%s" % (c["plan"], c["costs"]) == key), None)
            if c and c.get("ratio_pytorch"):
                xs.append(i + (j - (len(labels) - 1) / 2) * width)
                ys.append(c["ratio_pytorch"])
        ax1.bar(xs, ys, width, label=key, color=colors(j % 10))
        for x, y in zip(xs, ys):
            ax1.annotate("%.2f" % y, (x, y), ha="center", va="bottom", fontsize=6)
    ax1.axhline(1.0, color="k", lw=0.8)
    ax1.axhline(1.5, color="r", lw=0.8, ls="--", label="1.5x target (CNNs)")
    ax1.set_xticks(range(len(models)))
    ax1.set_xticklabels([m["model"] for m in models], rotation=20)
    ax1.set_ylabel("step time, ours / PyTorch eager")
    ax1.set_title("CPU step time vs PyTorch (%d thread%s)" % (
        result["config"]["threads"], "s" if result["config"]["threads"] > 1 else ""))
    ax1.legend(fontsize=7)
    lo, hi = 1.0, 1.0
    for costs, marker in (("flop", "o"), ("prof", "^")):
        xs, ys, names = [], [], []
        for m in models:
            for c in m["configs"]:
                pred = c.get("run_predicted_overhead") or c.get("predicted_overhead")
                if c["costs"] == costs and c["plan"] != "none" and pred and c.get("measured_overhead"):
                    xs.append(pred)
                    ys.append(c["measured_overhead"])
                    names.append("%s %s" % (m["model"], c["plan"]))
        if xs:
            ax2.scatter(xs, ys, marker=marker, label="%s costs" % costs)
            for x, y, n in zip(xs, ys, names):
                ax2.annotate(n, (x, y), fontsize=6)
            lo, hi = min([lo] + xs + ys), max([hi] + xs + ys)
    grid = [lo * 0.95, hi * 1.05]
    ax2.plot(grid, grid, "k-", lw=0.8)
    ax2.fill_between(grid, [g * 0.9 for g in grid], [g * 1.1 for g in grid], color="g", alpha=0.1,
                     label="within 10%")
    ax2.set_xlabel("predicted cost overhead")
    ax2.set_ylabel("measured time overhead (plan / none)")
    ax2.set_title("Predicted vs measured overhead")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    log("wrote %s" % path)


def git_describe():
    rc, out, _, _ = run(["git", "-C", ROOT, "describe", "--always", "--dirty"])
    return out.strip() if rc == 0 else None


def machine():
    info = {"host": platform.node(), "cpus": os.cpu_count(), "loadavg_start": os.getloadavg(),
            "python": sys.version.split()[0]}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


# ===----------------------------------------------------------------------===
# Driver
# ===----------------------------------------------------------------------===


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=DEFAULT_MODELS,
                   help="comma-separated (default %(default)s)")
    p.add_argument("--batch", type=int, default=4, help="classifiers' batch")
    p.add_argument("--size", type=int, default=64, help="image size (classifiers, U-Net)")
    p.add_argument("--seq", type=int, default=64, help="transformer sequence length")
    p.add_argument("--tf-batch", type=int, default=2, help="transformer batch")
    p.add_argument("--unet-batch", type=int, default=2, help="U-Net batch")
    p.add_argument("--threads", type=int, default=1,
                   help="torch.set_num_threads and OMP_NUM_THREADS (default 1)")
    p.add_argument("--rounds", type=int, help="alternating rounds (default 3; --quick 1)")
    p.add_argument("--repeat", type=int,
                   help="timed steps per measurement, both sides (default 5; --quick 2)")
    p.add_argument("--warmup", type=int, help="PyTorch warm-up steps per measurement "
                   "(default 2; --quick 1; remat-run always warms up once)")
    p.add_argument("--profile-repeat", type=int,
                   help="--repeat of the --profile-costs run (default: --repeat)")
    p.add_argument("--plans", default=DEFAULT_PLANS,
                   help="SOLVER or SOLVER@BUDGET, comma-separated (default %(default)s); "
                        "none is always run first")
    p.add_argument("--time-limit", type=float, help="--time-limit of the solvers "
                   "(auto; default 5, --quick 2)")
    p.add_argument("--fallback", choices=["mid", "needs", "none"], default="mid",
                   help="a budget the solver cannot meet: run again halfway between the "
                        "bytes its plan needs and the checkpoint-all peak (mid, default), "
                        "at the bytes it needs (needs: its least-memory plan), or not")
    p.add_argument("--autodiff", action="store_true",
                   help="time the step remat-autodiff builds from the forward-only export "
                        "instead of PyTorch's joint graph")
    p.add_argument("--no-profile", action="store_true",
                   help="skip --profile-costs (no profiled-cost plans, no op classes)")
    p.add_argument("--quick", action="store_true",
                   help="1 round, 2 timed steps, auto limited to 2 s: checks the script")
    p.add_argument("--timeout", type=int, default=3600, help="seconds per subprocess")
    p.add_argument("--json", metavar="OUT")
    p.add_argument("--plot", metavar="OUT.png")
    p.add_argument("--keep", metavar="DIR", help="keep the steps and profiles in DIR")
    p.add_argument("--from-json", metavar="IN", help="print the table (and --plot) of a saved run")
    p.add_argument("--gpu-build", metavar="DIR",
                   help="also build the GPU executables and manifest into DIR")
    p.add_argument("--gpu-repeat", type=int, default=10, help="--repeat of the GPU executables")
    p.add_argument("--gpu-chip", default="sm_90")
    p.add_argument("--gpu-profile", action="store_true",
                   help="with --gpu-build: also an executable per model that times every op "
                        "on the device, and the ops it numbers (for the per-op-class table "
                        "and the library calls against PyTorch's own)")
    p.add_argument("--gpu-plans", help="plans of the GPU executables (default: --plans)")
    p.add_argument("--gpu-env", action="append", default=[], metavar="NAME:VAR=VALUE[,VAR=VALUE]",
                   help="with --gpu-build: the none executable run again with these "
                        "environment variables, as plan 'none (NAME)' (repeatable; e.g. "
                        "legacy:REMAT_CUDNN_API=legacy)")
    p.add_argument("--gpu-costs-only", action="store_true",
                   help="with --gpu-costs: of the plans on FLOP costs, build none only")
    p.add_argument("--gpu-costs", metavar="DEVICE_JSON",
                   help="with --gpu-build: also every plan but none solved on the per-op "
                        "times of a previous device run (its device_results.json, next to "
                        "that build's M.profile.numbered.mlir.gz)")
    p.add_argument("--gpu-cost-timing", choices=("stream", "sync"), default="stream",
                   help="with --gpu-costs: the per-op times taken as costs: each op's time in "
                        "the pipelined step (stream, the default; the device run's "
                        "profile_stream) or each op alone between two synchronizations (sync)")
    p.add_argument("--no-cpu-timing", action="store_true",
                   help="with --gpu-build: export and build only (one CPU run per model "
                        "for the reference results)")
    p.add_argument("--remat-run", default=os.path.join(ROOT, "build", "bin", "remat-run"))
    p.add_argument("--remat-opt", default=os.path.join(ROOT, "build", "bin", "remat-opt"))
    a = p.parse_args(argv)
    quick = a.quick
    a.rounds = a.rounds if a.rounds is not None else (1 if quick else 3)
    a.repeat = a.repeat if a.repeat is not None else (2 if quick else 5)
    a.warmup = a.warmup if a.warmup is not None else (1 if quick else 2)
    a.time_limit = a.time_limit if a.time_limit is not None else (2.0 if quick else 5.0)
    a.profile_repeat = a.profile_repeat if a.profile_repeat is not None else a.repeat
    if min(a.rounds, a.repeat, a.batch, a.size, a.seq, a.tf_batch, a.unet_batch,
           a.threads, a.profile_repeat) < 1 or a.warmup < 0 or a.gpu_repeat < 0:
        p.error("counts and sizes must be positive")
    if a.no_cpu_timing and not a.gpu_build:
        p.error("--no-cpu-timing only makes sense with --gpu-build")
    if (a.gpu_env or a.gpu_costs) and not a.gpu_build:
        p.error("--gpu-env and --gpu-costs only make sense with --gpu-build")
    envs = []
    for spec in a.gpu_env:
        name, _, assignments = spec.partition(":")
        pairs = [kv.partition("=") for kv in assignments.split(",") if kv]
        if not name or not pairs or any(not k or not eq for k, eq, _ in pairs):
            p.error("--gpu-env %s: expected NAME:VAR=VALUE[,VAR=VALUE]" % spec)
        envs.append((name, {k: v for k, _, v in pairs}))
    a.gpu_env = envs
    if a.gpu_costs_only and not a.gpu_costs:
        p.error("--gpu-costs-only needs --gpu-costs")
    if a.gpu_costs and not os.path.exists(a.gpu_costs):
        p.error("--gpu-costs %s: no such file" % a.gpu_costs)
    if "unet" in a.models.split(",") and a.size % 8:
        p.error("the U-Net needs --size divisible by 8")
    return a


def main(argv):
    a = parse_args(argv)
    if a.from_json:
        with open(a.from_json) as f:
            result = json.load(f)
        print(table(result))
        if a.plot:
            plot(result, a.plot)
        return 0
    try:
        plans = parse_plans(a.plans)
        gpu_plans = parse_plans(a.gpu_plans) if a.gpu_plans else plans
        models = [m.strip() for m in a.models.split(",") if m.strip()]
        if not models:
            raise BenchError("--models is empty")
        wait_for_binary(a.remat_run, "remat-run")
        wait_for_binary(a.remat_opt, "remat-opt")
        if not os.path.exists(EXPORTER):
            raise BenchError("exporter not found: %s" % EXPORTER)
        if a.gpu_build:
            os.makedirs(a.gpu_build, exist_ok=True)
            if os.listdir(a.gpu_build) and not os.path.exists(
                    os.path.join(a.gpu_build, "manifest.json")):
                raise BenchError("--gpu-build %s: not empty and not a previous build" % a.gpu_build)
            for f in os.listdir(a.gpu_build):
                if f.endswith((".exe", ".exe.gz", ".cpu_results.txt", ".profile_ops.json",
                               ".numbered.mlir.gz")) \
                        or f == "device_results.json":
                    os.remove(os.path.join(a.gpu_build, f))
    except BenchError as e:
        sys.stderr.write("%s: error: %s\n" % (PROG, e))
        return 2

    work = a.keep or tempfile.mkdtemp(prefix="bench_step_time.")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    start = time.time()
    result = {"config": {"models": models, "plans": [p.text for p in plans],
                         "batch": a.batch, "size": a.size, "seq": a.seq, "tf_batch": a.tf_batch,
                         "unet_batch": a.unet_batch, "threads": a.threads, "rounds": a.rounds,
                         "repeat": a.repeat, "warmup": a.warmup, "time_limit": a.time_limit,
                         "profile_repeat": a.profile_repeat, "quick": a.quick,
                         "dtype": "f32", "remat_run": a.remat_run, "remat_opt": a.remat_opt,
                         "git": git_describe(), "date": datetime.datetime.now().isoformat(
                             timespec="seconds")},
              "machine": machine(), "models": []}
    gpu_models = []
    try:
        for model in models:
            entry = bench_model(a, model, work, plans, env)
            if a.no_cpu_timing:
                entry["no_timing"] = True
                for c in entry["configs"]:
                    c.pop("_plan", None)
            result["models"].append(entry)
            if a.gpu_build:
                gpu_models.append(gpu_build_model(a, entry, gpu_plans, a.gpu_build, env))
            if a.json:  # after every model: a long run keeps what it measured
                write_json(result, a.json, work)
    except KeyboardInterrupt:
        log("interrupted: writing what was measured")
    result["machine"]["loadavg_end"] = os.getloadavg()
    result["seconds"] = time.time() - start
    if a.gpu_build:
        size = write_gpu_manifest(a, a.gpu_build, gpu_models)
        result["gpu_build"] = {"dir": os.path.abspath(a.gpu_build), "bytes": size,
                               "models": gpu_models}
        log("GPU build: %s, %.1f MiB; run there: python3 %s/gpu_step_time_device.py %s"
            % (a.gpu_build, size / 2 ** 20, a.gpu_build, a.gpu_build))
    if a.json:
        write_json(result, a.json, work)
        log("wrote %s" % a.json)
    print(table(result))
    load = result["machine"]["loadavg_start"][0]
    if load > (os.cpu_count() or 1):
        print("\nnote: load average %.1f on %d CPUs when the run started: times are not "
              "reliable" % (load, os.cpu_count() or 1))
    if a.plot:
        plot(result, a.plot)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def portable_paths(value, prefixes):
    """`value` with every string's leading path prefix replaced (prefixes:
    {absolute directory: its stand-in}): the saved results name files by
    their place in the checkout or the run's working directory, never by a
    path of the machine that ran the benchmark."""
    if isinstance(value, dict):
        return {k: portable_paths(v, prefixes) for k, v in value.items()}
    if isinstance(value, list):
        return [portable_paths(v, prefixes) for v in value]
    if isinstance(value, str):
        for prefix, stand_in in prefixes.items():
            value = value.replace(prefix.rstrip("/") + "/", stand_in)
    return value


def write_json(result, path, work):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(portable_paths(result, {work: "WORK/", ROOT: ""}), f, indent=1, default=str)
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
