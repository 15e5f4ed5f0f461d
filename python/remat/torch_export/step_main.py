"""@main of the exported module: builds every argument with its Init,
calls @train_step and prints the loss and each gradient's sums."""

from .ir import Emitter, Out, Value, dims


def training_step_results(spec, args):
    """The results of the training step as @main sees them: the loss, then
    the gradient of every parameter (its argument's type). Only their types
    matter (write_main names the call's results itself)."""
    return [Value("%loss", [], spec.dtype)] + [
        Value("%d_" + a.name, a.shape, a.dtype) for a in args if a.role == "param"]


def write_main(module, args, results):
    """@main: builds every argument from its Init, calls @train_step once and
    prints the loss, then for each gradient its sum and sum of |x| (f64)."""
    em = Emitter(module, annotate=False)
    arg_values = []
    for a in args:
        rank = len(a.shape)

        def body(b, i, o, a=a):
            return [b.convert(a.init.body(b, a.shape), a.dtype)]
        v = em.generic("arg_" + a.name, a.shape, ["parallel"] * rank, [],
                       [Out(a.dtype, dims(rank))], body)[0]
        arg_values.append(v)
    res = em.fresh("results")
    n = len(results)
    result_types = [r.type for r in results]
    em.emit("%s%s = func.call @train_step(%s) : (%s) -> (%s)"
            % (res, ":%d" % n if n > 1 else "", ", ".join(v.ssa for v in arg_values),
               ", ".join(v.type for v in arg_values), ", ".join(result_types)))
    ref = (lambda k: "%s#%d" % (res, k)) if n > 1 else (lambda k: res)

    def show(scalar_tensor):
        x = em.fresh("x")
        em.emit("%s = tensor.extract %s[] : %s" % (x, scalar_tensor.ssa, scalar_tensor.type))
        if scalar_tensor.dtype != "f64":
            y = em.fresh("x")
            em.emit("%s = arith.extf %s : f32 to f64" % (y, x))
            x = y
        em.emit("func.call @printF64(%s) : (f64) -> ()" % x)
        em.emit("func.call @printNewline() : () -> ()")
    def sums(b, i, o):
        x = b.convert(i[0], "f64")
        return [b.addf(o[0], x), b.addf(o[1], b.math("absf", x))]
    show(Value(ref(0), [], results[0].dtype))
    for k in range(1, n):
        g = Value(ref(k), results[k].shape, results[k].dtype)
        rank = len(g.shape)
        total, total_abs = em.generic("sums", g.shape, ["reduction"] * rank,
                                      [(g, dims(rank))],
                                      [Out("f64", [], 0), Out("f64", [], 0)], sums)
        show(total)
        show(total_abs)
    em.emit("return")
    module.functions.append(["func.func private @printF64(f64)",
                             "func.func private @printNewline()", "",
                             "func.func @main() {"] + em.lines() + ["}"])
