#!/usr/bin/env python3
"""Run the GPU executables of `bench_step_time.py --gpu-build DIR` on a GPU machine.

Usage (on the GPU machine; no MLIR needed: python3 with torch + CUDA, and the
cuBLAS / cuDNN pip packages):

  python3 DIR/gpu_step_time_device.py DIR [--out FILE] [--models M1,M2]
      [--timeout 60] [--deadline 270] [--pt-repeat 20] [--pt-warmup 3]
      [--no-pytorch] [--tf32] [--lib-repeat 10] [--no-library-alone]
  python3 DIR/gpu_step_time_device.py --from-json FILE   (the tables again)

DIR holds manifest.json, the gzipped executables (one per model and plan),
each model's CPU `result:` lines (M.cpu_results.txt), torch_export.py with its
package torch_export/, and this script. For every executable: unpack it, run it with the directories of
libcudnn.so.9 and libcublas.so.13 (found through the `nvidia.cudnn` and
`nvidia.cublas` packages, else anywhere under the `nvidia` namespace package)
on LD_LIBRARY_PATH, and read its output: the `result:` lines (compared with
the CPU's: f32 sums within 1e-4 relative to max(1, |cpu sum|); bit-identical
hashes counted), the runtime's window times (step_seconds: the median of the
windows after the first), measured and predicted device peak. Then PyTorch
eager on the GPU: the same model, inputs and loss (built by the copied
torch_export.py), forward + backward, median of --pt-repeat steps after
--pt-warmup, TF32 off unless --tf32 (our contractions run in FMA f32).
A manifest run may name environment variables for its executable ("env",
e.g. REMAT_CUDNN_ALGO=heuristic: the same executable, another choice).

Where the manifest has a model's per-op profile (`--gpu-profile`: M.profile
executable and M.profile_ops.json), it runs twice. With REMAT_LIB_TRACE=1 and
REMAT_CUDA_OP_TIMING=sync ("profile"): each op alone between two device
synchronizations (`remat-profile:` lines, the median of the windows after the
first) and the library call it made; the tables give the time, FLOPs and
TFLOP/s per op class. With REMAT_CUDA_OP_TIMING=stream ("profile_stream"):
each op's time in the pipelined step (events on the stream, no host wait),
what `bench_step_time.py --gpu-costs` takes as the ops' costs. Then every distinct library call of the profiles is
made alone through PyTorch (cuDNN in benchmark mode, i.e. the fastest
algorithm PyTorch's search finds; cuBLAS), timed the way the profile times
ours (each call between two synchronisations) and between CUDA events.

Writes FILE (default DIR/device_results.json) and prints a table. Stops
starting new work after --deadline seconds. A benchmark: exits 0 unless its
own arguments or DIR are wrong.
"""

import argparse
import glob
import gzip
import importlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types

PROG = "gpu_step_time_device.py"
START = time.monotonic()


def log(msg):
    sys.stderr.write("[%6.1fs] %s\n" % (time.monotonic() - START, msg))
    sys.stderr.flush()


# ===----------------------------------------------------------------------===
# Libraries
# ===----------------------------------------------------------------------===

WANTED = ("libcudnn.so.9", "libcublas.so.13", "libcublasLt.so.13")


def library_dirs(notes):
    """Directories holding the cuDNN and cuBLAS shared libraries of the pip
    packages (nvidia.cudnn, nvidia.cublas; any layout under `nvidia`)."""
    roots = []
    for name in ("nvidia.cudnn", "nvidia.cublas", "nvidia"):
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            notes.append("import %s: %s" % (name, e))
            continue
        roots += list(getattr(mod, "__path__", []) or [])
        if getattr(mod, "__file__", None):
            roots.append(os.path.dirname(mod.__file__))
    dirs, found = [], {}
    for root in roots:
        for lib in WANTED:
            for path in glob.glob(os.path.join(root, "**", lib), recursive=True):
                d = os.path.dirname(path)
                found.setdefault(lib, path)
                if d not in dirs:
                    dirs.append(d)
    for lib in WANTED:
        if lib not in found:
            notes.append("%s not found under the nvidia packages (%s)" % (lib, ", ".join(roots)
                                                                          or "none importable"))
    return dirs, found


# ===----------------------------------------------------------------------===
# Executables
# ===----------------------------------------------------------------------===


def parse_output(text):
    out = {"results": [], "windows_ns": []}
    for line in text.splitlines():
        m = re.match(r"remat-profile: op=(\d+) ns=(\d+)", line)
        if m:
            out.setdefault("op_ns", {})[int(m.group(1))] = int(m.group(2))
            continue
        if line.startswith("result:"):
            out["results"].append(line.strip())
        elif line.startswith("remat-runtime:"):
            m = re.search(r"window_times_ns=([0-9,]+)", line)
            if m:
                out["windows_ns"] = [int(x) for x in m.group(1).split(",") if x]
            m = re.search(r"step_peak_bytes=(\d+)", line)
            if m:
                out["runtime_step_peak_bytes"] = int(m.group(1))
        elif line.startswith("remat-run:"):
            for key, value in re.findall(r"(\w+)=(\S+)", line):
                try:
                    out[key] = float(value) if key == "step_seconds" else int(value)
                except ValueError:
                    out[key] = value
    w = out["windows_ns"]
    if w:
        timed = w[1:] if len(w) > 1 else w
        out["step_seconds"] = statistics.median(timed) * 1e-9
    return out


def parse_result_line(line):
    m = re.match(r"result: shape=\[([^\]]*)\] fnv1a=(\S+) sum=(\S+)", line)
    if not m:
        return None
    try:
        s = float(m.group(3))
    except ValueError:
        s = float("nan")
    return m.group(1), m.group(2), s


def compare_results(gpu, cpu, tol):
    """Worst relative difference of the sums (relative to max(1, |cpu|)),
    lines whose hashes are equal, and whether every sum is within tol."""
    if not cpu:
        return {"compared": 0, "ok": None, "why": "no CPU results"}
    if len(gpu) != len(cpu):
        return {"compared": 0, "ok": False,
                "why": "%d result lines, CPU has %d" % (len(gpu), len(cpu))}
    worst, worst_at, same_bits, bad = 0.0, None, 0, 0
    for k, (g, c) in enumerate(zip(gpu, cpu)):
        pg, pc = parse_result_line(g), parse_result_line(c)
        if pg is None or pc is None or pg[0] != pc[0]:
            return {"compared": k, "ok": False, "why": "line %d differs in form or shape" % k}
        same_bits += pg[1] == pc[1]
        diff = abs(pg[2] - pc[2]) / max(1.0, abs(pc[2]))
        if diff != diff:  # nan
            diff = float("inf")
        if diff > worst:
            worst, worst_at = diff, k
        bad += diff > tol
    return {"compared": len(cpu), "ok": bad == 0, "worst_rel_diff": worst, "worst_line": worst_at,
            "lines_over_tol": bad, "bit_identical_lines": same_bits}


def library_calls(stderr):
    """REMAT_LIB_TRACE's lines: {op id: what the library ran}."""
    calls = {}
    for line in stderr.splitlines():
        m = re.match(r"remat-library: op=(-?\d+) (.*)$", line.strip())
        if m:
            calls.setdefault(int(m.group(1)), m.group(2))
    return calls


def run_executable(path_gz, workdir, env, timeout):
    exe = os.path.join(workdir, os.path.basename(path_gz)[:-3] if path_gz.endswith(".gz")
                       else os.path.basename(path_gz))
    if path_gz.endswith(".gz"):
        with gzip.open(path_gz, "rb") as src, open(exe, "wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copy(path_gz, exe)
    os.chmod(exe, 0o755)
    start = time.monotonic()
    try:
        proc = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=timeout)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as e:
        rc, stdout = None, e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        stderr = "timed out after %d s" % timeout
    wall = time.monotonic() - start
    os.remove(exe)
    out = parse_output(stdout)
    calls = library_calls(stderr or "")
    if calls:
        out["library_calls"] = calls
    out["wall_s"] = wall
    out["rc"] = rc
    if rc != 0:
        lines = [l for l in stderr.splitlines() if l.strip()]
        errs = [l for l in lines if "error" in l.lower() or "cannot" in l.lower()]
        out["error"] = ((errs or lines or ["exit code %s" % rc])[0])[:400]
        out["stderr_tail"] = stderr[-1500:]
    return out


# ===----------------------------------------------------------------------===
# PyTorch eager on the GPU
# ===----------------------------------------------------------------------===


def import_exporter(directory, notes):
    """The exporter's package torch_export/ from DIR (the code of its script
    torch_export.py). Only its model builders and inputs are used: where this
    torch lacks what its tracing needs (functorch.compile,
    torch.nn.utils.stateless), stand-ins are installed first."""
    directory = os.path.abspath(directory)

    def load():
        # A failed try leaves some of the package's modules imported: import
        # all of them afresh.
        for name in [m for m in sys.modules
                     if m == "torch_export" or m.startswith("torch_export.")]:
            del sys.modules[name]
        if directory not in sys.path:
            sys.path.insert(0, directory)
        return importlib.import_module("torch_export")
    try:
        return load()
    except Exception as e:  # noqa: BLE001 - any import-time incompatibility
        notes.append("torch_export import: %s: %s; retrying with stand-ins"
                     % (type(e).__name__, e))
    import torch
    import torchvision  # noqa: F401
    stub = types.ModuleType("functorch.compile")
    for name in ("aot_function", "default_decompositions", "default_partition",
                 "min_cut_rematerialization_partition"):
        setattr(stub, name, None)
    sys.modules["functorch.compile"] = stub
    if "functorch" not in sys.modules:
        try:
            importlib.import_module("functorch")
        except Exception:  # noqa: BLE001
            sys.modules["functorch"] = types.ModuleType("functorch")
    # The tracer's internals (functorch._src.aot_autograd / .config, torch
    # 1.13's layout) moved in later torch releases; eager timing never uses
    # them.
    for name in ("functorch._src", "functorch._src.aot_autograd", "functorch._src.config"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001
            sys.modules[name] = types.ModuleType(name)
    try:
        importlib.import_module("torch.nn.utils.stateless")
    except Exception:  # noqa: BLE001
        st = types.ModuleType("torch.nn.utils.stateless")
        st.functional_call = getattr(getattr(torch, "func", None), "functional_call", None)
        sys.modules["torch.nn.utils.stateless"] = st
    if "torchvision.ops.stochastic_depth" not in sys.modules:
        try:
            importlib.import_module("torchvision.ops.stochastic_depth")
        except Exception:  # noqa: BLE001
            sd = types.ModuleType("torchvision.ops.stochastic_depth")
            import torchvision.ops as ops
            sd.stochastic_depth = getattr(ops, "stochastic_depth", None)
            sys.modules["torchvision.ops.stochastic_depth"] = sd
    return load()


def time_pytorch(te, argv, warmup, repeat, torch):
    ns = te.parse_args(list(argv) + ["-o", os.devnull])
    spec = te.build_model(ns)
    args = te.step_arguments(spec)  # runs the model once on the CPU (dropout masks)
    te.load_state(spec, args)
    dev = torch.device("cuda")
    module = spec.module.to(dev)
    module.train()
    data = te.to_torch(args[0]).to(dev)
    target = te.to_torch(args[1]).to(dev)
    masks = [te.to_torch(x).to(dev) for x in args if x.role == "mask"]

    def step():
        module.zero_grad(set_to_none=True)
        with te.MaskedRandomness(masks):
            out = module(data)
        if isinstance(out, tuple):
            out = out[0]
        loss = spec.loss(out, target)
        loss.backward()
        return loss
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    loss = None
    for _ in range(repeat):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    grads = [float(p.grad.double().sum()) if p.grad is not None else 0.0
             for p in module.parameters()]
    out = {"step_seconds": statistics.median(times), "samples": len(times),
           "min_seconds": min(times), "loss": float(loss),
           "max_memory_allocated_bytes": torch.cuda.max_memory_allocated(),
           "grad_sum_first": grads[0] if grads else None}
    del module, data, target, masks
    torch.cuda.empty_cache()
    return out


# ===----------------------------------------------------------------------===
# The library calls alone, as PyTorch makes them
# ===----------------------------------------------------------------------===


def parse_library_call(text):
    """A REMAT_LIB_TRACE call (ContractionDesc::describe()): {kind, dtype,
    accumulate, gemm: batch M N K | conv: N G IC OC spatial[(I K O s d pb pe)]}."""
    words = text.split()
    call = {"kind": words[0], "dtype": words[1], "accumulate": " accumulate" in text}
    for key, value in re.findall(r"\b(batch|M|N|K|G|IC|OC)=(\d+)", text.split("[")[0]):
        call[key] = int(value)
    call["spatial"] = [tuple(int(v) for v in g) for g in re.findall(
        r"\[I=(\d+) K=(\d+) O=(\d+) s=(\d+) d=(\d+) p=(\d+),(\d+)\]", text)]
    return call


def call_flops(call):
    if call["kind"] == "gemm":
        return 2.0 * call["batch"] * call["M"] * call["N"] * call["K"]
    # The (output position, tap) pairs that read the input, not its padding:
    # the backward data matched from a flipped kernel is described as a
    # convolution with padding (K-1)*d, most of whose taps read zeros.
    macs = float(call["N"] * call["G"] * call["IC"] * call["OC"])
    for (i, k, o, s, d, pb, _) in call["spatial"]:
        macs *= sum(1 for kk in range(k) for oo in range(o) if 0 <= oo * s + kk * d - pb < i)
    return 2.0 * macs


def library_call_closure(torch, call, device):
    """The PyTorch call computing what `call` computes (cuBLAS / cuDNN
    through PyTorch on a GPU), on fresh random operands."""
    dt = torch.float64 if call["dtype"] == "f64" else torch.float32
    rnd = lambda *shape: torch.randn(*shape, dtype=dt, device=device)  # noqa: E731
    if call["kind"] == "gemm":
        a, b = rnd(call["batch"], call["M"], call["K"]), rnd(call["batch"], call["K"], call["N"])
        c = rnd(call["batch"], call["M"], call["N"])
        if call["accumulate"]:
            return lambda: c.baddbmm_(a, b)
        return lambda: torch.bmm(a, b, out=c)
    sp = call["spatial"]
    if any(pb != pe for (_, _, _, _, _, pb, pe) in sp):
        raise ValueError("asymmetric padding")
    g = call["G"]
    x = rnd(call["N"], g * call["IC"], *[i for (i, _, _, _, _, _, _) in sp])
    w = rnd(g * call["OC"], call["IC"], *[k for (_, k, _, _, _, _, _) in sp])
    y = rnd(call["N"], g * call["OC"], *[o for (_, _, o, _, _, _, _) in sp])
    stride = [s for (_, _, _, s, _, _, _) in sp]
    dil = [d for (_, _, _, _, d, _, _) in sp]
    pad = [p for (_, _, _, _, _, p, _) in sp]
    conv = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d,
            3: torch.nn.functional.conv3d}[len(sp)]
    if call["kind"] == "conv_fwd":
        return lambda: conv(x, w, None, stride, pad, dil, g)
    mask = {"conv_bwd_data": [True, False, False],
            "conv_bwd_weights": [False, True, False]}[call["kind"]]
    backward = torch.ops.aten.convolution_backward
    return lambda: backward(y, x, w, None, stride, pad, dil, False, [0] * len(sp), g, mask)


def time_library_call(torch, text, repeat, device="cuda"):
    """PyTorch's time for the call: the median of `repeat` calls each
    between two synchronisations (host wall clock, as remat's per-op
    profile measures), and the mean of `repeat` back-to-back calls between
    CUDA events (the device time alone)."""
    call = parse_library_call(text)
    fn = library_call_closure(torch, call, device)
    cuda = device == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    out = {"flops": call_flops(call), "synced_seconds": statistics.median(times)}
    if cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repeat):
            fn()
        end.record()
        end.synchronize()
        out["event_seconds"] = start.elapsed_time(end) * 1e-3 / repeat
    return out


# ===----------------------------------------------------------------------===
# Driver
# ===----------------------------------------------------------------------===


def fmt(v, spec="%.3f"):
    return "-" if v is None else spec % v


def print_table(res):
    head = ["model", "plan", "solver", "gpu_ms", "pt_gpu_ms", "ours/pt", "pred_ovh", "meas_ovh",
            "TFLOP/s", "peak_MB", "peak==pred", "results_vs_cpu", "worst_rel", "bits_equal"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    notes = []
    for m in res["models"]:
        pt = (m.get("pytorch") or {}).get("step_seconds")
        # Measured overhead: against the none executable without extra
        # settings (the program every plan's predicted overhead is against).
        none_s = next((r.get("step_seconds") for r in m["runs"]
                       if r.get("solver") == "none" and not r.get("env")), None)
        for r in m["runs"]:
            s = r.get("step_seconds")
            cmp_ = r.get("compare") or {}
            peak = r.get("measured_peak_bytes")
            ok = cmp_.get("ok")
            print("| " + " | ".join([
                m["model"], r["plan"] + ("*" if r.get("fallback") else ""),
                r.get("solver_chosen") or "-", fmt(s and s * 1e3, "%.2f"),
                fmt(pt and pt * 1e3, "%.2f"), fmt(s / pt if s and pt else None, "%.2f"),
                fmt(r.get("predicted_overhead"), "%.3f"),
                fmt(s / none_s if s and none_s and r.get("solver") != "none" else None, "%.3f"),
                fmt(r.get("tflops"), "%.2f"), fmt(peak and peak / 1e6, "%.2f"),
                "-" if peak is None else ("yes" if peak == r.get("predicted_peak_bytes") else "NO"),
                "-" if ok is None else ("ok" if ok else "FAIL"),
                fmt(cmp_.get("worst_rel_diff"), "%.1e"),
                "%s/%s" % (cmp_.get("bit_identical_lines", "-"), cmp_.get("compared", "-"))]) + " |")
            if r.get("error"):
                notes.append("%s %s: %s" % (m["model"], r["plan"], r["error"]))
            if cmp_.get("why"):
                notes.append("%s %s: results: %s" % (m["model"], r["plan"], cmp_["why"]))
        if (m.get("pytorch") or {}).get("error"):
            notes.append("%s pytorch: %s" % (m["model"], m["pytorch"]["error"]))
        if m.get("gpu_plans_identical") is False:
            notes.append("%s: GPU results differ between plans" % m["model"])
    for n in res.get("notes", []):
        notes.append(n)
    for n in notes:
        print("note: " + n)


COPY_OPS = ("tensor.insert_slice", "tensor.extract_slice", "tensor.pad", "linalg.copy",
            "linalg.transpose", "linalg.broadcast", "tensor.concat")
VIEW_OPS = ("tensor.empty", "arith.constant", "tensor.expand_shape", "tensor.collapse_shape",
            "tensor.cast", "func.return")


def compiled_op_class(name, reduction):
    """The class of an op that is not a library call, by what its kernels do
    (bench_step_time.py's CPU breakdown uses the same classes)."""
    if name == "linalg.generic":
        return "reduction" if reduction else "elementwise"
    if name == "linalg.fill":
        return "fill"
    if name in COPY_OPS:
        return "copy"
    if name in ("linalg.matmul", "linalg.batch_matmul") or name.startswith("linalg.conv"):
        return "contraction(loops)"
    if name in VIEW_OPS:
        return "view"
    return "other"


def op_class(op):
    """The class of a profiled op: the library call it made, else what kind
    of compiled kernels it became."""
    if op.get("library"):
        return "lib:" + op["library"].split()[0]
    return compiled_op_class(op.get("name") or "?", op.get("reduction"))


def profile_tables(res):
    """Markdown: per model, the device time of each op class (the per-op
    profile, solver none) and the library calls against the same calls made
    alone through PyTorch."""
    out = []
    for m in res["models"]:
        ops = m.get("profile_ops") or []
        if not ops:
            continue
        total = sum(o["ns"] for o in ops) or 1
        stream_total = sum(o.get("stream_ns") or 0 for o in ops)
        classes = {}
        for o in ops:
            c = classes.setdefault(op_class(o), {"ops": 0, "ns": 0, "stream_ns": 0, "flops": 0.0})
            c["ops"] += 1
            c["ns"] += o["ns"]
            c["stream_ns"] += o.get("stream_ns") or 0
            flops = o.get("flops") or 0.0
            if o.get("library"):
                flops = call_flops(parse_library_call(o["library"]))
            c["flops"] += flops
        stream_step = (m.get("profile_stream") or {}).get("step_seconds")
        out.append("\n%s: per-op profile on the device (solver none), %.2f ms summed over %d ops "
                   "each alone; in the pipelined step (stream timing) %.2f ms summed, the "
                   "profiled step %s ms" % (m["model"], total * 1e-6, len(ops), stream_total * 1e-6,
                                            fmt(stream_step * 1e3 if stream_step else None, "%.2f")))
        out.append("| class | ops | ms alone | share | GFLOP | TFLOP/s | ms in the step (stream) |")
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for name, c in sorted(classes.items(), key=lambda kv: -kv[1]["ns"]):
            out.append("| %s | %d | %.3f | %.1f%% | %.3f | %s | %.3f |" % (
                name, c["ops"], c["ns"] * 1e-6, 100.0 * c["ns"] / total, c["flops"] * 1e-9,
                fmt(c["flops"] / c["ns"] * 1e-3 if c["ns"] else None, "%.2f"),
                c["stream_ns"] * 1e-6))
        alone = m.get("library_alone") or {}
        if not alone:
            continue
        kinds = {}
        for o in ops:
            t = alone.get(o.get("library") or "")
            if not t or "synced_seconds" not in t:
                continue
            k = kinds.setdefault(o["library"].split()[0], {"ops": 0, "ours": 0.0, "synced": 0.0,
                                                          "event": 0.0, "slow": 0})
            k["ops"] += 1
            k["ours"] += o["ns"] * 1e-9
            k["synced"] += t["synced_seconds"]
            k["event"] += t.get("event_seconds") or 0.0
            k["slow"] += o["ns"] * 1e-9 > 2 * t["synced_seconds"]
        out.append("")
        out.append("| library call | ops | ours ms | PyTorch ms (synced) | ours/PyTorch | "
                   "PyTorch device ms (events) | ops over 2x |")
        out.append("|---|---:|---:|---:|---:|---:|---:|")
        for name, k in sorted(kinds.items()):
            out.append("| %s | %d | %.3f | %.3f | %.2f | %.3f | %d |" % (
                name, k["ops"], k["ours"] * 1e3, k["synced"] * 1e3,
                k["ours"] / k["synced"] if k["synced"] else float("nan"), k["event"] * 1e3,
                k["slow"]))
        errors = sorted({t["error"] for t in alone.values() if t.get("error")})
        for e in errors[:5]:
            out.append("note: library call alone: %s" % e)
    return "\n".join(out)


def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("dir", metavar="DIR", nargs="?")
    p.add_argument("--out", metavar="FILE", help="default DIR/device_results.json")
    p.add_argument("--models", help="comma-separated subset of the manifest's models")
    p.add_argument("--timeout", type=int, default=60, help="seconds per executable")
    p.add_argument("--deadline", type=float, default=270,
                   help="start nothing new after this many seconds")
    p.add_argument("--pt-repeat", type=int, default=20)
    p.add_argument("--pt-warmup", type=int, default=3)
    p.add_argument("--no-pytorch", action="store_true")
    p.add_argument("--tf32", action="store_true", help="let PyTorch use TF32 (default off)")
    p.add_argument("--lib-repeat", type=int, default=10,
                   help="calls per library call timed alone through PyTorch")
    p.add_argument("--no-library-alone", action="store_true",
                   help="do not time the profiles' library calls through PyTorch")
    p.add_argument("--from-json", metavar="FILE", help="print the tables of a saved run")
    a = p.parse_args(argv)
    if a.from_json:
        with open(a.from_json) as f:
            res = json.load(f)
        print_table(res)
        print(profile_tables(res))
        return 0
    if not a.dir:
        p.error("DIR is required (or --from-json)")
    manifest_path = os.path.join(a.dir, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("%s: error: cannot read %s: %s\n" % (PROG, manifest_path, e))
        return 2
    wanted = set(a.models.split(",")) if a.models else None
    tol = manifest.get("tolerance_f32", 1e-4)
    notes = []
    dirs, found = library_dirs(notes)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join(dirs + [d for d in env.get("LD_LIBRARY_PATH", "").split(":")
                                              if d])
    res = {"manifest": {k: manifest.get(k) for k in ("created", "git", "chip", "format")},
           "library_dirs": dirs, "libraries": found, "models": [], "notes": notes}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        res["gpu"] = smi.stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        res["gpu"] = "nvidia-smi: %s" % e
    log("GPU: %s; library dirs: %s" % (res["gpu"], dirs))
    out_path = a.out or os.path.join(a.dir, "device_results.json")

    def save():
        res["seconds"] = time.monotonic() - START
        with open(out_path, "w") as f:
            json.dump(res, f, indent=1)

    work = tempfile.mkdtemp(prefix="gpu_step_time.")
    try:
        # 1. Our executables, every model first (no PyTorch CUDA context yet).
        for mm in manifest["models"]:
            if wanted and mm["model"] not in wanted:
                continue
            m = {"model": mm["model"], "exporter_args": mm.get("exporter_args"), "runs": []}
            res["models"].append(m)
            cpu = []
            if mm.get("cpu_results"):
                with open(os.path.join(a.dir, mm["cpu_results"])) as f:
                    cpu = [l.strip() for l in f if l.startswith("result:")]
            for run in mm.get("runs", []):
                r = {k: run.get(k) for k in ("plan", "solver", "budget_used", "fallback",
                                             "solver_chosen", "predicted_cost",
                                             "predicted_overhead", "env")}
                r["predicted_peak_bytes_build"] = run.get("predicted_peak_bytes")
                m["runs"].append(r)
                if not run.get("exe"):
                    r["error"] = "not built: %s" % run.get("error")
                    continue
                left = a.deadline - (time.monotonic() - START)
                if left < 5:
                    r["error"] = "skipped: deadline"
                    continue
                log("%s %s" % (mm["model"], run["plan"]))
                # A run may set environment variables of the runtime (e.g.
                # REMAT_CUDNN_ALGO=heuristic) for the same executable.
                out = run_executable(os.path.join(a.dir, run["exe"]), work,
                                     dict(env, **(run.get("env") or {})),
                                     int(min(a.timeout, left)))
                results = out.pop("results")
                r.update(out)
                r["compare"] = compare_results(results, cpu, tol)
                r["results"] = results
                if r.get("step_seconds") and run.get("predicted_cost"):
                    r["tflops"] = run["predicted_cost"] / r["step_seconds"] / 1e12
                if r.get("step_seconds") and mm.get("flops"):
                    r["model_tflops"] = mm["flops"] / r["step_seconds"] / 1e12
                log("  %s" % (r.get("error") or "%.3f ms, peak %s/%s, results %s" % (
                    (r.get("step_seconds") or 0) * 1e3, r.get("measured_peak_bytes"),
                    r.get("predicted_peak_bytes"), r["compare"].get("ok"))))
                save()
            prof = mm.get("profile") or {}
            if prof.get("exe") and a.deadline - (time.monotonic() - START) > 5:
                log("%s: per-op profile (each op alone)" % mm["model"])
                penv = dict(env, REMAT_LIB_TRACE="1", REMAT_CUDA_OP_TIMING="sync")
                out = run_executable(os.path.join(a.dir, prof["exe"]), work, penv,
                                     int(min(a.timeout, a.deadline - (time.monotonic() - START))))
                out.pop("results", None)
                m["profile"] = out
                if a.deadline - (time.monotonic() - START) > 5:
                    log("%s: per-op profile (in the pipelined step)" % mm["model"])
                    stream = run_executable(
                        os.path.join(a.dir, prof["exe"]), work,
                        dict(env, REMAT_CUDA_OP_TIMING="stream"),
                        int(min(a.timeout, a.deadline - (time.monotonic() - START))))
                    stream.pop("results", None)
                    stream.pop("library_calls", None)
                    m["profile_stream"] = stream
                    log("  %s" % (stream.get("error") or "%.2f ms in all (step %.2f ms)" % (
                        sum((stream.get("op_ns") or {}).values()) * 1e-6,
                        (stream.get("step_seconds") or 0) * 1e3)))
                ops = {}
                try:
                    with open(os.path.join(a.dir, prof["ops"])) as f:
                        ops = {o["id"]: o for o in json.load(f)}
                except (OSError, ValueError, KeyError) as e:
                    notes.append("%s: profile ops unreadable: %s" % (mm["model"], e))
                stream_ns = (m.get("profile_stream") or {}).get("op_ns") or {}
                m["profile_ops"] = [dict(ops.get(i, {"id": i}), ns=ns, stream_ns=stream_ns.get(i),
                                         library=(out.get("library_calls") or {}).get(i))
                                    for i, ns in sorted((out.get("op_ns") or {}).items())]
                log("  %s" % (out.get("error") or "%d ops timed, %d library calls, %.2f ms in all" % (
                    len(out.get("op_ns") or {}), len(out.get("library_calls") or {}),
                    sum((out.get("op_ns") or {}).values()) * 1e-6)))
                save()
            got = [r["results"] for r in m["runs"] if r.get("results")]
            m["gpu_plans_identical"] = all(g == got[0] for g in got) if got else None
            # Kept (the printed lines, a few hundred per run): judged later
            # against PyTorch's float64 reference (python/remat/compare_numbers.py).
        # 2. PyTorch eager on the GPU.
        if not a.no_pytorch:
            try:
                import torch
                if not torch.cuda.is_available():
                    raise RuntimeError("torch.cuda.is_available() is False")
                torch.backends.cuda.matmul.allow_tf32 = a.tf32
                torch.backends.cudnn.allow_tf32 = a.tf32
                te = import_exporter(a.dir, notes)
                res["torch"] = {"version": torch.__version__, "cudnn": torch.backends.cudnn.version(),
                                "tf32": a.tf32, "device": torch.cuda.get_device_name(0)}
            except Exception as e:  # noqa: BLE001
                te = None
                notes.append("PyTorch not timed: %s: %s" % (type(e).__name__, e))
            for m in res["models"] if te else []:
                if a.deadline - (time.monotonic() - START) < 10:
                    m["pytorch"] = {"error": "skipped: deadline"}
                    continue
                log("%s: PyTorch eager" % m["model"])
                try:
                    m["pytorch"] = time_pytorch(te, m["exporter_args"], a.pt_warmup,
                                                a.pt_repeat, torch)
                except Exception as e:  # noqa: BLE001
                    m["pytorch"] = {"error": "%s: %s" % (type(e).__name__, str(e)[:300])}
                pt = m["pytorch"].get("step_seconds")
                for r in m["runs"]:
                    if pt and r.get("step_seconds"):
                        r["ratio_pytorch"] = r["step_seconds"] / pt
                save()
            # 3. Every distinct library call of the profiles, alone, as PyTorch
            # makes it (cuDNN with its own algorithm search: benchmark mode).
            if te and not a.no_library_alone:
                torch.backends.cudnn.benchmark = True
                for m in res["models"]:
                    calls = sorted({o["library"] for o in m.get("profile_ops", [])
                                    if o.get("library")})
                    alone = m["library_alone"] = {}
                    log("%s: %d library calls alone" % (m["model"], len(calls)))
                    for text in calls:
                        if a.deadline - (time.monotonic() - START) < 5:
                            alone[text] = {"error": "skipped: deadline"}
                            continue
                        key = " ".join(w for w in text.split()
                                       if not w.startswith(("algo", "workspace", "library", "api", "engine")))
                        try:
                            alone[text] = time_library_call(torch, key, a.lib_repeat)
                        except Exception as e:  # noqa: BLE001
                            alone[text] = {"error": "%s: %s" % (type(e).__name__, str(e)[:200])}
                    save()
    finally:
        shutil.rmtree(work, ignore_errors=True)
        save()
    print_table(res)
    print(profile_tables(res))
    log("wrote %s" % out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
