#!/usr/bin/python3
"""Every torchvision classifier family through the whole tool, CPU and GPU.

Usage: bench_torchvision_sweep.py [--models M1,M2,...] [--batch 2] [--size 64]
                                  [--bin-dir DIR] [--no-gpu] [--keep DIR]
                                  [--json OUT.json]

Issue 21 item 1 asks that every exported model lower to the GPU and that
nothing the CPU path accepts be rejected there. For each model (by default
one per torchvision 0.14 family) this

1. exports the training step with python/remat/torch_export.py in float64
   (`--dtype f64`) and in float32, and PyTorch eager's float64 numbers
   (`--reference`);
2. runs the float64 step on the CPU (`remat-run --solver=none`) and compares
   its numbers with PyTorch's (python/remat/compare_numbers.py, 2e-5: the six
   digits the step prints) and its measured peak with the predicted one;
3. lowers the float32 step to sm_90 cubin (`remat-run --target=gpu
   --gpu-compile-only --gpu-format=cubin --solver=chen-sqrtn`: every kernel
   assembled by CUDA's ptxas) and runs the executable on the mock CUDA driver,
   cuBLAS and cuDNN of test/GPU/Inputs (kernels do not run; every driver and
   library call is made and checked): the device peak the runtime measures
   against the predicted one.

A benchmark, not a test: it takes about an hour on two cores and needs
Debian's python3-torch / python3-torchvision; the GPU part needs ptxas (the
CUDA toolkit) and a C compiler, and is skipped without them (--no-gpu skips
it always). Prints one row per model and, with --json, the same as JSON.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EXPORTER = os.path.join(ROOT, "python", "remat", "torch_export.py")
COMPARE = os.path.join(ROOT, "python", "remat", "compare_numbers.py")
MOCKS = os.path.join(ROOT, "test", "GPU", "Inputs")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# One model per torchvision 0.14 classifier family, and the smallest square
# input each accepts without shrinking a feature map to nothing.
FAMILIES = [
    ("alexnet", 64), ("vgg11", 64), ("resnet18", 64), ("resnext50_32x4d", 64),
    ("wide_resnet50_2", 64), ("squeezenet1_0", 64), ("densenet121", 64),
    ("googlenet", 64), ("inception_v3", 80), ("mobilenet_v2", 64),
    ("mobilenet_v3_small", 64), ("mnasnet0_5", 64), ("shufflenet_v2_x0_5", 64),
    ("efficientnet_b0", 64), ("efficientnet_v2_s", 64), ("regnet_x_400mf", 64),
    ("regnet_y_400mf", 64), ("convnext_tiny", 64), ("swin_t", 64),
    ("vit_b_16", 224), ("maxvit_t", 224),
]

PEAK_RE = re.compile(r"remat-run: measured_peak_bytes=(\d+) predicted_peak_bytes=(\d+)")


def run(cmd, out_path=None, env=None, timeout=3600):
    """Runs cmd; returns (exit code, combined output, seconds)."""
    start = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=env, timeout=timeout)
        text = p.stdout.decode(errors="replace")
        code = p.returncode
    except subprocess.TimeoutExpired:
        text, code = "timed out after %d s" % timeout, 124
    if out_path:
        with open(out_path, "w") as f:
            f.write(text)
    return code, text, time.time() - start


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else ""


def build_mocks(workdir):
    """The mock libcuda, libcublas and libcudnn (test/GPU/Inputs), or None."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        return None
    mock = os.path.join(workdir, "mock")
    os.makedirs(mock, exist_ok=True)
    for flags, soname, src in [
            ([], "libcuda.so.1", "mock_libcuda.c"),
            (["-DMOCK_CUBLAS"], "libcublas.so.13", "mock_cudalibs.c"),
            (["-DMOCK_CUDNN"], "libcudnn.so.9", "mock_cudalibs.c")]:
        code, text, _ = run([cc, "-shared", "-fPIC", "-O1", *flags, "-Wl,-soname," + soname,
                             "-o", os.path.join(mock, soname), os.path.join(MOCKS, src)])
        if code != 0:
            print("bench_torchvision_sweep: cannot build the mocks: " + last_line(text))
            return None
    return mock


def sweep_one(a, model, size, workdir, mock):
    d = os.path.join(workdir, model)
    os.makedirs(d, exist_ok=True)
    r = {"model": model, "batch": a.batch, "size": size}
    export = [PYTHON, EXPORTER, model, "--batch", str(a.batch), "--size", str(size), str(size),
              "--classes", "10"]
    f64 = os.path.join(d, "f64.mlir")
    code, text, secs = run(export + ["--dtype", "f64", "-o", f64])
    r["export_s"] = round(secs, 1)
    if code != 0:
        r["export"] = "FAIL: " + last_line(text)
        return r
    r["export"] = "ok"
    ref = os.path.join(d, "ref64.txt")
    run(export + ["--dtype", "f64", "--reference"], out_path=ref)
    f32 = os.path.join(d, "f32.mlir")
    run(export + ["-o", f32])

    # CPU, float64, against PyTorch's float64.
    out = os.path.join(d, "cpu64.txt")
    code, text, secs = run([os.path.join(a.bin_dir, "remat-run"), f64, "--solver=none"],
                           out_path=out)
    r["cpu_s"] = round(secs, 1)
    if code != 0:
        r["cpu"] = "FAIL: " + last_line(text)
    else:
        _, verdict, _ = run([PYTHON, COMPARE, ref, out, "--tol", "2e-5"])
        r["cpu"] = verdict.strip().splitlines()[-1][:120] if verdict.strip() else "?"
        m = PEAK_RE.search(text)
        r["cpu_peak"] = [int(m.group(1)), int(m.group(2))] if m else None

    # GPU: sm_90 cubin, run on the mocks.
    if mock is None:
        return r
    step = os.path.join(d, "f32.step.mlir")
    with open(f32) as src, open(step, "w") as dst:
        for line in src:
            if "@printNewline" in line:
                continue
            dst.write(line.replace("@printF64(", "@remat_rt_print_scalar_f64("))
    exe = os.path.join(d, "gpu.exe")
    code, text, secs = run([os.path.join(a.bin_dir, "remat-run"), step, "--solver=chen-sqrtn",
                            "--target=gpu", "--gpu-compile-only", "--gpu-format=cubin",
                            "--gpu-executable=" + exe], out_path=os.path.join(d, "gpu_build.txt"))
    r["gpu_build_s"] = round(secs, 1)
    if code != 0:
        r["gpu"] = "BUILD FAIL: " + last_line(text)
        return r
    env = dict(os.environ, LD_LIBRARY_PATH=mock)
    code, text, _ = run([exe], out_path=os.path.join(d, "mock.txt"), env=env)
    m = PEAK_RE.search(text)
    r["gpu_peak"] = [int(m.group(1)), int(m.group(2))] if m else None
    calls = re.search(r"mock-cudnn: handles=\d+ forward=(\d+) backward_data=(\d+) "
                      r"backward_filter=(\d+)", text)
    gemms = re.search(r"mock-cublas: handles=\d+ gemms=(\d+)", text)
    launches = re.search(r"mock-cuda: modules=\d+/\d+ launches=(\d+)", text)
    r["gpu_calls"] = {
        "cudnn": [int(x) for x in calls.groups()] if calls else None,
        "cublas_gemms": int(gemms.group(1)) if gemms else None,
        "kernel_launches": int(launches.group(1)) if launches else None,
    }
    r["gpu"] = "ok" if code == 0 and m and m.group(1) == m.group(2) else \
        "RUN FAIL: " + last_line(text)
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help="comma-separated torchvision names "
                   "(NAME or NAME:SIZE); default: one per family")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--size", type=int, help="input height and width for every model "
                   "(default: each family's own, 64 for most)")
    p.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    p.add_argument("--no-gpu", action="store_true")
    p.add_argument("--keep", help="keep the exported steps and outputs here")
    p.add_argument("--json", help="write the rows here")
    a = p.parse_args()

    if a.models:
        models = []
        for item in a.models.split(","):
            name, _, size = item.partition(":")
            models.append((name, int(size) if size else dict(FAMILIES).get(name, 64)))
    else:
        models = FAMILIES
    if a.size:
        models = [(m, a.size) for m, _ in models]
    workdir = a.keep or tempfile.mkdtemp(prefix="remat-sweep-")
    os.makedirs(workdir, exist_ok=True)
    mock = None
    if not a.no_gpu:
        if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
            mock = build_mocks(workdir)
        else:
            print("bench_torchvision_sweep: no ptxas: the GPU part is skipped")

    rows = []
    header = "%-20s %5s %-10s %-44s %-24s %-24s %s" % (
        "model", "size", "export", "cpu f64 vs PyTorch f64", "cpu peak meas==pred",
        "gpu peak meas==pred", "gpu (cuDNN fwd/bwd-data/bwd-filter, cuBLAS, kernels)")
    print(header)
    for model, size in models:
        r = sweep_one(a, model, size, workdir, mock)
        rows.append(r)
        peak = lambda k: ("%d %s" % (r[k][0], "==" if r[k][0] == r[k][1] else "!= %d" % r[k][1])
                          if r.get(k) else "-")
        calls = r.get("gpu_calls") or {}
        print("%-20s %5d %-10s %-44s %-24s %-24s %s %s" % (
            model, size, r["export"][:10], r.get("cpu", "-")[:44], peak("cpu_peak"),
            peak("gpu_peak"), r.get("gpu", "-")[:30],
            "(%s, %s, %s)" % (calls.get("cudnn"), calls.get("cublas_gemms"),
                              calls.get("kernel_launches")) if calls else ""), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"batch": a.batch, "rows": rows}, f, indent=1)
    if not a.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
