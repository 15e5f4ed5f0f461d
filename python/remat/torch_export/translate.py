"""Translation of the joint graph: the rule registry (RULES, @rule), the
Translator that runs the rules over the graph's nodes, the helpers the rules
share (broadcasting, type promotion, pointwise ops, sums) and translate_step,
which writes @train_step. The rules themselves are in the rules_*.py
modules, which register them when the package is imported."""

import operator

import torch
import torch.fx

from .errors import ExportError, Unsupported
from .ir import FLOAT_TYPES, Aff, Emitter, Out, Value, dims, tensor_type


RULES = {}


def rule(*names):
    """Registers a translation rule for the named ATen overloads. A rule is
    called as fn(tr, node, *args, **kwargs) with tensors as Values."""
    def register(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return register


def aten_name(target):
    return str(target)


class Translator:
    """Translates the live nodes of a joint graph, in order, with RULES."""

    def __init__(self, model_name, em, forward, live):
        self.model_name = model_name
        self.em = em
        self.forward = forward
        self.live = live
        self.env = {}
        self.node = None

    def used_outputs(self, node):
        """Indices of the live getitem users of a multi-output node."""
        return {u.args[1] for u in node.users if u in self.live}

    def value(self, arg):
        if isinstance(arg, torch.fx.Node):
            return self.env[arg]
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.value(a) for a in arg)
        return arg

    def run(self, nodes):
        for node in nodes:
            self.node = node
            self.em.phase = "forward" if node in self.forward else "backward"
            if node.target is operator.getitem:
                self.env[node] = self.value(node.args[0])[node.args[1]]
                continue
            fn = RULES[aten_name(node.target)]
            args = [self.value(a) for a in node.args]
            kwargs = {k: self.value(v) for k, v in node.kwargs.items()}
            try:
                self.env[node] = fn(self, node, *args, **kwargs)
            except Unsupported as e:
                raise ExportError("model '%s': cannot translate %s (node '%s': %s)"
                                  % (self.model_name, aten_name(node.target),
                                     node.name, e))


def norm_dim(d, rank):
    return d + rank if d < 0 else d


def pair(v, k):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * k if len(v) == 1 else v


def broadcast_shapes(shapes):
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s):
            j = rank - len(s) + i
            if d != 1:
                if out[j] not in (1, d):
                    raise Unsupported("shapes %s do not broadcast" % shapes)
                out[j] = d
    return out


def result_dtype(operands):
    """ATen type promotion for our dtypes: floats win over ints, Python
    floats make an integer computation f32, bool alone stays bool."""
    tensors = [o.dtype for o in operands if isinstance(o, Value)]
    if "f64" in tensors:
        return "f64"
    if "f32" in tensors:
        return "f32"
    if any(isinstance(o, float) for o in operands):
        return "f32"
    for t in ("i64", "i32", "i8"):
        if t in tensors:
            return t
    return "i64" if any(isinstance(o, int) and not isinstance(o, bool)
                        for o in operands) else "f32"


def pointwise(tr, operands, fn, out_dtype=None, compute_dtype=None, hint=None,
              operand_types=None):
    """Elementwise op with broadcasting: fn(body, *scalars) on the operands
    converted to the computation type, or to operand_types[k] where given
    (Python numbers become constants)."""
    compute = compute_dtype or result_dtype(operands)
    out_dtype = out_dtype or compute
    types = operand_types or [compute] * len(operands)
    tensors = [o for o in operands if isinstance(o, Value)]
    shape = broadcast_shapes([t.shape for t in tensors])
    rank = len(shape)
    ins = []
    for t in tensors:
        lead = rank - len(t.shape)
        exprs = [Aff(const=0) if size == 1 and shape[lead + i] != 1 else Aff.dim(lead + i)
                 for i, size in enumerate(t.shape)]
        ins.append((t, exprs))

    def body(b, args, outs):
        it = iter(args)
        scalars = [b.convert(next(it), t) if isinstance(o, Value) else b.cst(o, t)
                   for o, t in zip(operands, types)]
        return [b.convert(fn(b, *scalars), out_dtype)]
    return tr.em.generic(hint or tr.node.name, shape, ["parallel"] * rank, ins,
                         [Out(out_dtype, dims(rank))], body)[0]


def reduce_layout(shape, red):
    """Loops over `shape` with the dims in `red` reduced: iterators and the
    output's loop exprs (the kept dims)."""
    its = ["reduction" if i in red else "parallel" for i in range(len(shape))]
    out = [Aff.dim(i) for i in range(len(shape)) if i not in red]
    return its, out


def reduce_sum(tr, x, red, hint, fn=None, extra=(), dtype=None):
    """out[kept] = sum over `red` of fn(body, x, *extra) (default x); extra
    are (Value, exprs) inputs indexed by the loops over x's shape."""
    its, out = reduce_layout(x.shape, red)
    dtype = dtype or x.dtype
    rank = len(x.shape)

    def body(b, args, outs):
        val = fn(b, *args) if fn else args[0]
        return [b.add(outs[0], val)]
    return tr.em.generic(hint, x.shape, its, [(x, dims(rank))] + list(extra),
                         [Out(dtype, out, 0)], body)[0]


def keep_dims(tr, v, shape, red, hint):
    """A reduced value reshaped with unit dims at `red` (keepdim=True)."""
    return tr.em.reshape(v, [1 if i in red else d for i, d in enumerate(shape)], hint)


def expr_over(v, loop_dims):
    """A (Value, exprs) input whose logical dim i is loop dim loop_dims[i]
    (None: index 0 of a unit dim)."""
    return (v, [Aff(const=0) if d is None else Aff.dim(d) for d in loop_dims])


def float_only(*operands):
    if any(isinstance(o, Value) and o.dtype not in FLOAT_TYPES for o in operands):
        raise Unsupported("integer operands")


def _ancestors(roots):
    seen, stack = set(), [r for r in roots if r is not None]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(n.all_input_nodes)
    return seen


def translate_step(spec, args, joint, module, forward_only):
    """Writes @train_step into `module` (a Module); returns its results
    (Values): the loss, then the gradients unless forward_only."""
    graph = joint.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    output = next(n for n in graph.nodes if n.op == "output")
    outs = list(output.args[0])
    loss_node = outs[0]
    grad_nodes = outs[1:1 + len(args)]
    forward = _ancestors([loss_node])
    roots = [loss_node] + ([] if forward_only else
                           [g for g, a in zip(grad_nodes, args) if a.role == "param"])
    live = _ancestors(roots)
    calls = [n for n in graph.nodes if n in live and n.op == "call_function"]
    missing = {}
    for n in calls:
        if n.target is not operator.getitem and aten_name(n.target) not in RULES:
            missing.setdefault(aten_name(n.target), []).append(n.name)
    if missing:
        (op, users), rest = next(iter(missing.items())), list(missing)[1:]
        more = " and %d more" % (len(users) - 1) if len(users) > 1 else ""
        others = ", and %d other untranslatable ops: %s" % (len(rest), ", ".join(rest)) \
            if rest else ""
        raise ExportError("model '%s': cannot translate %s (no translation rule; node '%s'%s%s)"
                          % (spec.name, op, users[0], more, others))

    em = Emitter(module)
    tr = Translator(spec.name, em, forward, live)
    arg_text = []
    for a, ph in zip(args, placeholders):
        ssa = em.fresh(a.name)
        em.arguments.add(ssa)
        tr.env[ph] = Value(ssa, a.shape, a.dtype)
        attr = " {remat.param}" if a.role == "param" else ""
        arg_text.append("%s: %s%s" % (ssa, tensor_type(a.shape, a.dtype), attr))
    tangents = placeholders[len(args):]
    if not forward_only:
        em.emit("%%seed = arith.constant {remat.seed} dense<1.0> : tensor<%s>" % spec.dtype)
        em.taken.add("seed")
        tr.env[tangents[0]] = Value("%seed", [], spec.dtype)
    for node in graph.nodes:
        if node.op == "get_attr" and node in live:
            tr.env[node] = em.tensor_constant(getattr(joint, node.target), node.name)
    tr.run(calls)

    loss = tr.env[loss_node]
    if not isinstance(loss, Value) or loss.shape != () or loss.dtype != spec.dtype:
        raise ExportError("model '%s': the loss must be a scalar %s tensor"
                          % (spec.name, spec.dtype))
    em.phase = "forward"
    results = [em.result(loss)]
    if not forward_only:
        em.phase = "backward"
        for g, a in zip(grad_nodes, args):
            if a.role != "param":
                continue
            if g is None:
                results.append(em.filled(0.0, a.shape, a.dtype, "zero_grad_" + a.name))
            else:
                results.append(em.result(tr.env[g]))
    em.emit("return %s : %s" % (", ".join(r.ssa for r in results),
                                ", ".join(r.type for r in results)))
    result_text = ["%s {remat.loss}" % results[0].type] + [r.type for r in results[1:]]
    lines = ["func.func @train_step(%s)" % ", ".join(arg_text),
             "    -> (%s) {" % ", ".join(result_text)]
    module.functions.append(lines + em.lines() + ["}"])
    return results
