"""Export a PyTorch training step to a linalg-on-tensors MLIR training step.

Usage (run with Debian's /usr/bin/python3, which has torch 1.13 and functorch):

  torch_export.py MODEL [--batch N] [--size H W | --seq N] -o STEP.mlir
                  [--graph GRAPH.json] [--forward-only] [--reference]
                  [--classes N] [--layers N] [--vocab N] [--activation gelu|relu]
                  [--dtype f32|f64] [--decompose]
                  [--partition default|min-cut [--stats STATS.json]]
                  [--no-main | --main-only]

MODEL is a torchvision classifier (`resnet18`, `mobilenet_v2`, ...),
`transformer` (an encoder language model defined here) or `unet` (a small
segmentation U-Net defined here). The model is built in train mode, its loss
(cross entropy) traced with functorch's AOT autograd into one joint forward +
backward graph of ATen ops, and every ATen op of that graph translated to
`linalg.generic` / `linalg.fill` / `tensor` ops on statically shaped tensors
(DESIGN.md section 4):

  func.func @train_step(data, target, params {remat.param}..., buffers...,
                        dropout masks...)
      -> (tensor<f32> {remat.loss}, d(param) for every param)

The joint graph's loss tangent becomes `arith.constant {remat.seed} 1.0`;
every op carries `remat.phase` (forward = what the loss depends on) and
`remat.cost` (FLOPs: iteration points times arithmetic ops of the body, one
per point for pure data movement, zero for views). Dropout (and torchvision's
stochastic depth) is traced as a multiplication by a 0/1 mask argument, so
that the step is deterministic.

The module also holds `func.func @main()`, which builds every argument as a
formula of its element index (integer arithmetic, one conversion to f32, one
multiplication by an f32 scale; see `Init`), calls the step and prints the
loss, then for every gradient its sum and its sum of absolute values (f64).
`--reference` prints the same numbers from PyTorch eager on the same inputs;
python/remat/compare_numbers.py compares the two.

Numerics follow PyTorch's CPU kernels where they matter: contractions
(matmul, convolution) accumulate with fused multiply-adds in the tensor's
type; batch-norm statistics and softmax row sums accumulate in f64 (ATen's
accumulation type). `--dtype f64` exports and runs the reference in double
precision: float32 results of deep networks at initialization can differ
from float64 by far more than 1e-4 (PyTorch's own float32 results do), so
f64 is the exact check of the translation.

`--forward-only` writes the forward step (loss only, no backward, no seed).
`--no-main` leaves @main out. `--main-only` writes only the @main of the
training step (and the declarations it calls), with its affine maps inline
and no surrounding module: `remat-opt --remat-autodiff` turns a
`--forward-only --no-main` step into a training step, and this text, pasted
before the last `}` of its output, runs it like the exported training step.
`--graph` also writes the step's training graph as JSON, as remat-opt's
`--remat-export-graph` extracts it (REMAT_OPT, else build/bin/remat-opt,
else remat-opt on the PATH).

`--partition default|min-cut` writes the step as PyTorch itself would run it:
functorch's default_partition or min_cut_rematerialization_partition (traced
with its default decompositions) splits the joint graph into a forward graph
and a backward graph that recomputes what was not saved; the step runs the
first, then the second (`--stats` writes what was saved and recomputed).
`remat-opt --remat-report="solver=none"` then gives the peak of PyTorch's
choice in our simulator (bench/bench_models.py). `--decompose` alone traces
the joint graph with the same decompositions, the baseline of min-cut's
recompute overhead.

An ATen op without a translation rule is an error (exit code 1) that names it.
Every argument is checked before anything is traced (sizes, the model's
accepted image size, that every output can be written), and every failure
is one line naming the model and the cause (REMAT_EXPORT_TRACEBACK=1 adds
the traceback of an unexpected one). Outputs are written atomically (a
temporary file renamed over the target). The trace sees the data, target and
masks as fake tensors (shapes, no values), so that a large --batch exports
without materialising its inputs; only --reference builds them.

The package (python/remat/torch_export/; python/remat/torch_export.py is the
command line's entry point, which runs cli.main):

  errors.py             ExportError, Unsupported
  ir.py                 the MLIR text builder: Aff, Value, Body, Emitter, Module
  translate.py          the rule registry, the Translator, translate_step
  rules_*.py            the ATen translation rules, by op family
  models.py             the Transformer and U-Net, build_model
  inputs.py             Init, dropout masks, the step's arguments
  trace.py              the AOT-autograd trace and partitions
  step_main.py          @main
  cli.py                argument parsing, the driver, main()
"""

# The modules, imported in the order of their dependencies; the rules_*
# modules register their rules in translate.RULES when imported.
from . import errors, ir, translate
from . import (rules_shape, rules_creation, rules_elementwise, rules_reduction, rules_matmul,
               rules_conv_pool, rules_norm, rules_softmax_loss)
from . import models, inputs, trace, step_main, cli

# What scripts that import the exporter use (bench/bench_step_time.py,
# bench/gpu_step_time_device.py: the model builders and the inputs).
from .errors import ExportError, Unsupported, one_line
from .ir import Emitter, Module, Value, mlir_dtype
from .translate import RULES, Translator, rule, translate_step
from .models import ModelSpec, TransformerLM, UNet, build_model
from .inputs import (Arg, Init, MaskedRandomness, fake_input, load_state, parameter_inits,
                     step_arguments, to_torch, torch_dtype)
from .trace import sequence_partitions, trace_joint
from .step_main import training_step_results, write_main
from .cli import PROG, main, parse_args, reference, run

__all__ = ["ExportError", "Unsupported", "one_line", "Emitter", "Module", "Value", "mlir_dtype",
           "RULES", "Translator", "rule", "translate_step", "ModelSpec", "TransformerLM",
           "UNet", "build_model", "Arg", "Init", "MaskedRandomness", "fake_input",
           "load_state", "parameter_inits", "step_arguments", "to_torch", "torch_dtype",
           "sequence_partitions", "trace_joint", "training_step_results", "write_main",
           "PROG", "main", "parse_args", "reference", "run"]
