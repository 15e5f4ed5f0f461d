"""The trace: functorch's AOT autograd joint graph of the loss (optionally
decomposed, or partitioned and sequenced the way PyTorch runs it), with the
Meta kernels PyTorch 1.13 lacks for tracing on fake tensors."""

import operator

import numpy as np
import torch
import torch.fx
from functorch.compile import aot_function, default_decompositions
from torch.nn.utils.stateless import functional_call
from torch._subclasses.fake_tensor import FakeTensorMode
import functorch._src.aot_autograd as _aot_autograd
import functorch._src.config as _aot_config

from .errors import ExportError
from .inputs import MaskedRandomness, fake_input, to_torch
from .translate import aten_name


# Shape functions (Meta kernels) for the ATen ops that PyTorch 1.13 traces
# without one: fake tensor mode would otherwise run them for real on zeros of
# the inputs' shapes (10 GB for one convolution's backward at batch 100000).
# Registered only where PyTorch has none, for the traces of this process.
_META_LIBRARY = torch.library.Library("aten", "IMPL", "Meta")


def _meta_convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
                               dilation, transposed, output_padding, groups, output_mask):
    return (input.new_empty(input.shape) if output_mask[0] else None,
            weight.new_empty(weight.shape) if output_mask[1] else None,
            grad_output.new_empty(bias_sizes) if output_mask[2] and bias_sizes is not None
            else None)


def _meta_nll_loss2d_forward(input, target, weight, reduction, ignore_index):
    shape = target.shape if reduction == 0 else ()
    return input.new_empty(shape), input.new_empty(())


for _op, _fn in (("convolution_backward", _meta_convolution_backward),
                 ("nll_loss2d_forward", _meta_nll_loss2d_forward)):
    if not torch._C._dispatch_has_kernel_for_dispatch_key("aten::" + _op, "Meta"):
        _META_LIBRARY.impl(_op, _fn)


class _JointCaptured(Exception):
    pass


def trace_joint(spec, args, decompose=False, partition=None):
    """The AOT-autograd joint graph module of loss(model(data), target):
    placeholders primals_1.. (the step's arguments in order) and tangents_1
    (the loss gradient), get_attr nodes for tensors the trace created;
    outputs [loss, grad of each primal (None if none)].

    `decompose` traces with functorch's default decompositions (the graph its
    min-cut partitioner works on). With `partition` (functorch's
    default_partition or min_cut_rematerialization_partition), the joint
    graph is split the way PyTorch runs it, and the module returned runs the
    forward graph, then the backward graph with what it recomputes, with the
    same placeholders and outputs (sequence_partitions); its `partition_stats`
    attribute says what the partitioner chose."""
    names = [a.name for a in args]
    roles = [a.role for a in args]
    module = spec.module

    def step(*flat):
        state = {n: t for n, t, r in zip(names, flat, roles) if r in ("param", "buffer")}
        masks = [t for t, r in zip(flat, roles) if r == "mask"]
        with MaskedRandomness(masks):
            out = functional_call(module, state, (flat[0],))
        if isinstance(out, tuple):
            out = out[0]
        return spec.loss(out, flat[1])

    captured = {}

    def capture(joint, joint_inputs, **kwargs):
        if partition is None:
            captured["graph"] = joint
        else:
            forward, backward = partition(joint, joint_inputs, **kwargs)
            captured["graph"] = sequence_partitions(forward, backward)
        raise _JointCaptured

    # The trace needs the shapes of the data, the target and the masks, not
    # their values: they are fake tensors of one FakeTensorMode, which
    # functorch is made to trace in (it would otherwise make fake copies of
    # real inputs, which at --batch 100000 means 56 GiB of data first).
    # Parameters and buffers are real: the model holds them anyway.
    mode = FakeTensorMode()
    inputs = []
    for a in args:
        if a.role in ("data", "target", "mask"):
            inputs.append(fake_input(mode, a))
            continue
        t = to_torch(a)
        if a.role == "param":
            t.requires_grad_(True)
        inputs.append(t)
    compiled = aot_function(step, fw_compiler=lambda g, i: g, partition_fn=capture,
                            decompositions=default_decompositions if decompose else {})
    saved = _aot_config.use_fake_tensor, _aot_autograd.FakeTensorMode
    _aot_config.use_fake_tensor = True
    _aot_autograd.FakeTensorMode = lambda: mode
    try:
        compiled(*inputs)
    except _JointCaptured:
        pass
    finally:
        _aot_config.use_fake_tensor, _aot_autograd.FakeTensorMode = saved
    if "graph" not in captured:
        raise ExportError("model '%s': functorch did not produce a joint graph" % spec.name)
    return captured["graph"]


def _tensor_bytes(node):
    meta = node.meta.get("tensor_meta")
    if meta is None:
        return 0
    return int(np.prod(meta.shape, dtype=np.int64)) * torch.empty(
        (), dtype=meta.dtype).element_size()


def sequence_partitions(forward, backward):
    """One graph module that runs a partitioned step the way PyTorch does:
    `forward` (placeholders: the primals; outputs: the loss, then the values
    it saves), then `backward` (placeholders: the saved values, then the
    tangent; outputs: a gradient per primal), wired through the saved values.
    Its `partition_stats` count what the partitioner chose: the values saved
    (activations and primals apart: a saved primal costs no memory) and the
    forward ops the backward computes again."""
    graph = torch.fx.Graph()
    root = torch.nn.Module()
    env = {}
    fw_inputs = [n for n in forward.graph.nodes if n.op == "placeholder"]
    bw_inputs = [n for n in backward.graph.nodes if n.op == "placeholder"]
    saved = [n for n in bw_inputs if not n.name.startswith("tangents")]
    tangents = [n for n in bw_inputs if n.name.startswith("tangents")]
    for n in fw_inputs:
        env[n] = graph.placeholder(n.name)
    tangent = graph.placeholder("tangents_1")
    for n in tangents:
        env[n] = tangent

    def copy(source, prefix):
        for n in source.graph.nodes:
            if n.op in ("placeholder", "output"):
                continue
            if n.op == "get_attr":
                name = prefix + n.target
                setattr(root, name, getattr(source, n.target))
                env[n] = graph.get_attr(name)
                continue
            env[n] = graph.node_copy(n, lambda m: env[m])
        out = next(n for n in source.graph.nodes if n.op == "output")
        return [env[a] if a is not None else None for a in out.args[0]]

    fw_outputs = copy(forward, "fw_")
    if len(fw_outputs) != 1 + len(saved):
        raise ExportError("the partitioned forward returns %d values, its backward "
                          "reads %d saved ones" % (len(fw_outputs), len(saved)))
    env.update(zip(saved, fw_outputs[1:]))
    grads = copy(backward, "bw_")
    graph.output([fw_outputs[0]] + grads)
    module = torch.fx.GraphModule(root, graph)

    # Recomputations: the backward's ops that the forward computes too (both
    # graphs are cut from the same joint graph, whose node names they keep),
    # except views and other ops whose result aliases an input.
    forward_names = {n.name for n in forward.graph.nodes if n.op == "call_function"}
    recomputed = {}
    for n in backward.graph.nodes:
        if (n.op == "call_function" and n.name in forward_names and
                n.target is not operator.getitem and
                not any(r.alias_info is not None for r in n.target._schema.returns)):
            name = aten_name(n.target)
            recomputed[name] = recomputed.get(name, 0) + 1
    activations = [n for n in saved if not n.name.startswith("primals")]
    module.partition_stats = {
        "saved_values": len(activations),
        "saved_bytes": sum(_tensor_bytes(n) for n in activations),
        "saved_primals": len(saved) - len(activations),
        "recomputed_ops": sum(recomputed.values()),
        "recomputed_op_names": dict(sorted(recomputed.items())),
        "forward_ops": sum(n.op == "call_function" for n in forward.graph.nodes),
        "backward_ops": sum(n.op == "call_function" for n in backward.graph.nodes),
    }
    return module
