"""The command line: argument parsing and checks, the driver (export,
--reference, --main-only, --graph, --stats), atomic output and main()."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import torch
from functorch.compile import default_partition, min_cut_rematerialization_partition

from . import __doc__ as USAGE  # the package's docstring: the usage
from .errors import ExportError, one_line
from .inputs import MaskedRandomness, load_state, step_arguments, to_torch
from .ir import Module, prod
from .models import build_model
from .step_main import training_step_results, write_main
from .trace import trace_joint
from .translate import translate_step


PROG = "torch_export.py"
# The repository: three levels above python/remat/torch_export/.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def reference(spec, args, forward_only):
    """PyTorch eager's numbers for the same inputs, in @main's format."""
    load_state(spec, args)
    spec.module.train()
    inputs = {a.name: to_torch(a) for a in args if a.role in ("data", "target")}
    masks = [to_torch(a) for a in args if a.role == "mask"]
    spec.module.zero_grad(set_to_none=True)
    with MaskedRandomness(masks):
        out = spec.module(inputs["data"])
    if isinstance(out, tuple):
        out = out[0]
    loss = spec.loss(out, inputs["target"])
    lines = [repr(float(loss))]
    if not forward_only:
        loss.backward()
        for a in args:
            if a.role != "param":
                continue
            g = a.tensor.grad
            g = torch.zeros(a.shape, dtype=torch.float64) if g is None else g.double()
            lines += [repr(float(g.sum())), repr(float(g.abs().sum()))]
    return "\n".join(lines) + "\n"


def find_remat_opt():
    path = os.environ.get("REMAT_OPT")
    if path:
        return path
    local = os.path.join(REPO_ROOT, "build", "bin", "remat-opt")
    if os.access(local, os.X_OK):
        return local
    found = shutil.which("remat-opt")
    if not found:
        raise ExportError("--graph needs remat-opt: set REMAT_OPT or build build/bin/remat-opt")
    return found


def export_graph(step_path, graph_path):
    """The step's training graph as remat-opt extracts it (exact sizes and
    costs of the .mlir)."""
    tool = find_remat_opt()
    proc = subprocess.run([tool, step_path, "--remat-export-graph", "-o", os.devnull],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise ExportError("%s --remat-export-graph failed on %s:\n%s"
                          % (tool, step_path, proc.stderr.strip()))
    write_atomically(graph_path, proc.stdout)


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (no usage text before them)."""

    def error(self, message):
        raise ExportError(message)


def parse_args(argv):
    p = _Parser(prog=PROG, description=USAGE.splitlines()[0])
    p.add_argument("model", metavar="MODEL",
                   help="torchvision classifier name, 'transformer' or 'unet'")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--size", type=int, nargs=2, metavar=("H", "W"),
                   help="image size (default 224 224)")
    p.add_argument("--seq", type=int, help="transformer sequence length (default 128)")
    p.add_argument("--classes", type=int,
                   help="classes of a classifier (default 1000) or of the U-Net (default 4)")
    p.add_argument("--layers", type=int, default=6, help="transformer layers")
    p.add_argument("--vocab", type=int, default=512, help="transformer vocabulary")
    p.add_argument("--activation", choices=["gelu", "relu"], default="gelu",
                   help="transformer MLP activation")
    p.add_argument("--dtype", choices=["f32", "f64"], default="f32",
                   help="precision of the step and of --reference (f64 separates "
                        "translation errors from float32 rounding in chaotic models)")
    p.add_argument("-o", dest="output", metavar="STEP.mlir")
    p.add_argument("--graph", metavar="GRAPH.json")
    p.add_argument("--forward-only", action="store_true")
    p.add_argument("--no-main", action="store_true",
                   help="write the step without @main (e.g. a forward-only step for "
                        "remat-opt --remat-autodiff, whose output gets --main-only's @main)")
    p.add_argument("--main-only", action="store_true",
                   help="write only the training step's @main and its declarations, "
                        "affine maps inline and no module: text to paste into the body "
                        "of a module that holds @train_step (remat-opt --remat-autodiff's "
                        "output, before its last '}')")
    p.add_argument("--reference", action="store_true",
                   help="print PyTorch eager's numbers instead of writing the step")
    p.add_argument("--decompose", action="store_true",
                   help="trace with functorch's default decompositions (the graph its "
                        "min-cut partitioner works on)")
    p.add_argument("--partition", choices=["default", "min-cut"],
                   help="write the step as PyTorch runs it: the forward graph, then the "
                        "backward graph with what it recomputes, as functorch's "
                        "default_partition or min_cut_rematerialization_partition (with "
                        "its default decompositions) split the joint graph")
    p.add_argument("--stats", metavar="STATS.json",
                   help="with --partition: the partitioner's choice as JSON (values and "
                        "bytes saved, ops recomputed)")
    p.add_argument("--model-module", metavar="FILE.py", help=argparse.SUPPRESS)
    a = p.parse_args(argv)

    def fail(message):
        raise ExportError("model '%s': %s" % (a.model, message))
    if a.partition and a.forward_only:
        fail("--partition splits a training step: not with --forward-only")
    if a.stats and not a.partition:
        fail("--stats needs --partition")
    if a.main_only:
        clash = [flag for flag, on in (("--forward-only", a.forward_only),
                                       ("--no-main", a.no_main),
                                       ("--reference", a.reference),
                                       ("--partition", a.partition),
                                       ("--decompose", a.decompose),
                                       ("--graph", a.graph)) if on]
        if clash:
            fail("--main-only writes the training step's @main alone: not with %s"
                    % clash[0])
    if not a.reference and not a.output:
        fail("-o STEP.mlir is required (unless --reference)")
    if a.graph and not a.output:
        fail("--graph needs -o")
    validate_args(a)
    return a


def validate_args(a):
    """Every argument checked before anything is built or traced: each
    failure one line that names the model and the cause."""
    def bad(message):
        raise ExportError("model '%s': %s" % (a.model, message))
    for flag, value, least in (("--batch", a.batch, 1), ("--layers", a.layers, 1),
                               ("--vocab", a.vocab, 2), ("--classes", a.classes, 1),
                               ("--seq", a.seq, 1)):
        if value is not None and value < least:
            bad("%s must be at least %d, not %d" % (flag, least, value))
    if a.size is not None and min(a.size) < 1:
        bad("--size must be positive, not %d %d" % tuple(a.size))
    if a.model == "transformer" and a.size:
        raise ExportError("model 'transformer' takes --seq, not --size")
    if a.model != "transformer" and a.seq is not None:
        raise ExportError("model '%s' takes --size, not --seq" % a.model)
    if a.model_module and not os.path.isfile(a.model_module):
        bad("no model module '%s'" % a.model_module)
    for flag, path in (("-o", a.output), ("--graph", a.graph), ("--stats", a.stats)):
        if path is None or (flag == "-o" and a.reference):
            continue
        why = unwritable(path)
        if why:
            bad("cannot write %s %s: %s" % (flag, path, why))


def unwritable(path):
    """Why `path` cannot be written as a file (checked before the export, which
    may take minutes), or None."""
    if os.path.isdir(path):
        return "it is a directory"
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return "no directory %s" % directory
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return "the file is not writable"
    # The output is written through a temporary file of that directory
    # (write_atomically): make one now. Permission bits alone do not tell
    # (root passes them on a read-only file system or in /proc).
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".remat-export-probe.")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return "cannot create a file in %s (%s)" % (directory, e.strerror or e)
    return None


def write_atomically(path, text):
    """Writes `text` to `path` through a temporary file in the same directory
    renamed over it: a failed or interrupted export never leaves a partial
    file, and an existing one stays as it was until the new one is whole."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        if os.path.exists(path):
            os.chmod(tmp, os.stat(path).st_mode & 0o777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def available_memory():
    """Bytes of memory available now (MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_reference_memory(spec, args):
    """--reference runs PyTorch eager on the real inputs: refuse, in one line,
    inputs that alone exceed the memory available (the activations need more
    still), instead of a MemoryError after minutes."""
    sizes = {"f32": 4, "f64": 8, "i64": 8, "i32": 4}
    need = sum(prod(a.shape) * sizes[a.dtype] for a in args if a.role in
               ("data", "target", "mask"))
    have = available_memory()
    if have is not None and need > have:
        raise ExportError("model '%s': --reference runs PyTorch on inputs of %.1f GiB "
                          "(batch %d), more than the %.1f GiB of memory available"
                          % (spec.name, need / 2 ** 30, spec.data_shape[0], have / 2 ** 30))


def run(argv):
    a = parse_args(argv)
    start = time.time()
    spec = build_model(a)
    args = step_arguments(spec)
    if a.reference:
        check_reference_memory(spec, args)
        sys.stdout.write(reference(spec, args, a.forward_only))
        return 0
    if a.main_only:
        module = Module(inline_maps=True)
        write_main(module, args, training_step_results(spec, args))
        write_atomically(a.output, "\n".join(module.functions[-1]) + "\n")
        sys.stderr.write("%s: wrote %s (%d bytes) in %.1f s\n"
                         % (PROG, a.output, os.path.getsize(a.output), time.time() - start))
        return 0
    partitioners = {"default": default_partition,
                    "min-cut": min_cut_rematerialization_partition}
    joint = trace_joint(spec, args, decompose=a.decompose or a.partition == "min-cut",
                        partition=partitioners.get(a.partition))
    module = Module()
    results = translate_step(spec, args, joint, module, a.forward_only)
    if a.stats:
        write_atomically(a.stats, json.dumps(dict(joint.partition_stats,
                                                  partition=a.partition), indent=1))
    if not a.no_main:
        write_main(module, args, results)
    kind = ("forward-only step" if a.forward_only else
            "training step, as PyTorch's %s partition runs it," % a.partition
            if a.partition else "training step")
    header = ["// %s of '%s' (%s), exported from PyTorch by python/remat/torch_export.py."
              % (kind[0].upper() + kind[1:], spec.name, "x".join(map(str, spec.data_shape))),
              "//   /usr/bin/python3 python/remat/torch_export.py " + " ".join(argv),
              "// Arguments: data, target, parameters {remat.param}, buffers, dropout masks.",
              "// No @main (--no-main)." if a.no_main else
              "// @main builds them deterministically and prints the loss%s."
              % ("" if a.forward_only else ", then each gradient's sum and sum of |x|")]
    write_atomically(a.output, module.render(header))
    if a.graph:
        export_graph(a.output, a.graph)
    sys.stderr.write("%s: wrote %s (%d bytes) in %.1f s\n"
                     % (PROG, a.output, os.path.getsize(a.output), time.time() - start))
    return 0


def main(argv):
    try:
        return run(argv)
    except ExportError as e:
        sys.stderr.write("%s: error: %s\n" % (PROG, e))
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % PROG)
        return 130
    except Exception as e:  # Anything else is one line too, not a traceback.
        model = next((x for x in argv if not x.startswith("-")), "?")
        what = "out of memory" if isinstance(e, MemoryError) else type(e).__name__
        sys.stderr.write("%s: error: model '%s': %s: %s%s\n"
                         % (PROG, model, what, one_line(e),
                            "" if os.environ.get("REMAT_EXPORT_TRACEBACK") else
                            " (REMAT_EXPORT_TRACEBACK=1 prints the traceback)"))
        if os.environ.get("REMAT_EXPORT_TRACEBACK"):
            traceback.print_exc()
        return 1
