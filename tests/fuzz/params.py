"""The transforms' own parameters, drawn at random and checked against a canonical form.

A `Plan` says how one fuzz program is differentiated and wrapped: which derivative (grad,
value_and_grad, jacrev, jacfwd), `argnums` (an int, a negative int, or a tuple in any order),
`has_aux`, hessian's nested blocks, an extra argument that is not an array (a Python float used in an `if`, or a
function) given to jit/checkpoint as `static_argnums` (positive or negative), transforms
nested inside and outside the derivative in a random order (jit, checkpoint, vmap with
`in_axes`/`out_axes` including negative and None), and the form each input is given in
(an array, a Python float, a NumPy scalar, a list).  The result must equal the canonical
computation: `value_and_grad(f, argnums=(0, 1, ...))` on arrays, picked in argnums order,
looped over the batch for vmap (and that canonical form is checked against finite
differences by `check_grad`).

    >>> check_plan(case, Plan("grad", (1, 0), has_aux=True, outer=("vmap",), ...))
"""
from dataclasses import dataclass

import numpy as np
from hypothesis import reject, strategies as st

import xforms as xf
import xforms.numpy as xnp

from .checks import assert_close, flatten, reference, tmap, unflatten, weights
from .program_ast import Leaf


@dataclass
class Plan:
    deriv: str               # "grad" | "value_and_grad" | "jacrev" | "jacfwd" | "hessian"
    argnums: object          # as passed: int (maybe negative) or tuple in any order
    has_aux: bool
    inner: tuple             # stages between the function and the derivative, inner first
    outer: tuple             # stages around the derivative, inner first
    forms: tuple             # per program argument: "array" | "python" | "numpy" | "list"
    extra: object            # None or (position, "scale" | "fn"): an argument not an array
    static: object           # jit/checkpoint static_argnums naming the extra argument
    in_axes: object          # vmap: one entry per argument (int, negative int or None)
    out_axes: object
    size: int = 2
    unmapped_out: bool = False   # vmap also returns a value of the unmapped inputs, out_axes None


# ---- drawing plans -----------------------------------------------------------------------------
def _form(draw, leaf_arg):
    if not isinstance(leaf_arg, Leaf):
        return "array"
    if leaf_arg.shape == ():
        return draw(st.sampled_from(["array", "python", "numpy"]))
    if len(leaf_arg.shape) == 1:
        return draw(st.sampled_from(["array", "array", "list"]))
    return "array"


def _stages(draw, pool):
    return tuple(draw(st.permutations(pool))[:draw(st.integers(0, len(pool)))])


@st.composite
def plans(draw, case, jit=False):
    n = len(case.prog.args)
    forms = tuple(_form(draw, a) for a in case.prog.args)
    inner = _stages(draw, ["jit", "checkpoint"] if jit else ["checkpoint"])
    outer = _stages(draw, ["jit", "vmap", "checkpoint"] if jit else ["vmap", "checkpoint"])
    extra = None
    if draw(st.booleans()):
        kind = "scale" if "vmap" in outer else draw(st.sampled_from(["scale", "fn"]))
        extra = (draw(st.integers(0, n)), kind)
    total = n + (extra is not None)
    positions = [i for i in range(total) if extra is None or i != extra[0]]
    static = None
    if extra is not None:
        static = draw(st.sampled_from([extra[0], extra[0] - total]))
    chosen = draw(st.permutations(positions))[:draw(st.integers(1, len(positions)))]
    neg = [draw(st.booleans()) for _ in chosen]
    nums = [i - total if m else i for i, m in zip(chosen, neg)]
    argnums = nums[0] if len(nums) == 1 and draw(st.booleans()) else tuple(nums)
    in_axes = out_axes = None
    if "vmap" in outer:
        in_axes, out_axes = _vmap_axes(draw, case, forms, extra, total)
        if in_axes is None:
            outer = tuple(s for s in outer if s != "vmap")
    return Plan(draw(st.sampled_from(["grad", "value_and_grad", "jacrev", "jacfwd",
                                      "hessian"])),
                argnums, draw(st.booleans()), inner, outer, forms, extra, static,
                in_axes, out_axes, draw(st.integers(1, 3)),
                "vmap" in outer and draw(st.booleans()))


def _vmap_axes(draw, case, forms, extra, total):
    """One entry per argument; non-array forms and the extra argument are unmapped."""
    axes, k = [], 0
    for i in range(total):
        if extra is not None and i == extra[0]:
            axes.append(None)
            continue
        a, form = case.prog.args[k], forms[k]
        k += 1
        if form != "array" or not isinstance(a, Leaf):
            axes.append(None)
            continue
        r = len(a.shape)
        axes.append(draw(st.one_of(st.none(), st.integers(-r - 1, r))))
    mappable = [i for i in range(total) if _is_array_leaf(case, forms, extra, i)]
    if not mappable:
        return None, None
    if all(ax is None for ax in axes):
        axes[draw(st.sampled_from(mappable))] = 0
    return tuple(axes), draw(st.sampled_from([0, -1]))   # valid for outputs of any rank


def _is_array_leaf(case, forms, extra, i):
    k = i - (extra is not None and i > extra[0])
    return (extra is None or i != extra[0]) and forms[k] == "array" and \
        isinstance(case.prog.args[k], Leaf)


# ---- running a plan ----------------------------------------------------------------------------
def _extra_value(kind):
    return 1.5 if kind == "scale" else _double


def _double(v):
    return 2.0 * v


def _apply_extra(val, extra):
    if callable(extra):
        return extra(val)
    return val * extra if extra > 1 else val      # a Python `if`: needs the value (static)


def _split(full, extra):
    if extra is None:
        return list(full), None
    p = extra[0]
    return list(full[:p]) + list(full[p + 1:]), full[p]


def _join(args, extra, value):
    if extra is None:
        return tuple(args)
    p = extra[0]
    return tuple(args[:p]) + (value,) + tuple(args[p:])


def _given(x, form):
    if form == "python":
        return float(x)
    if form == "numpy":
        return np.float64(x)
    if form == "list":
        return [float(v) for v in x]
    return tmap(xnp.asarray, x)


def build(case, plan, w):
    """-> the function under test, made as the plan says."""
    f = case.fn()

    def base(*full):
        args, e = _split(full, plan.extra)
        args = [xnp.asarray(a) if form == "list" else a for a, form in zip(args, plan.forms)]
        out = f(*args)
        val = sum(xnp.sum(wk * o) for wk, o in zip(flatten(w)[0], flatten(out)[0]))
        val = val if e is None else _apply_extra(val, e)
        return (val, out) if plan.has_aux else val

    static = {} if plan.extra is None else {"static_argnums": plan.static}
    g = base
    for stage in plan.inner:
        g = xf.jit(g, **static) if stage == "jit" else xf.checkpoint(g, **static)
    d = {"grad": xf.grad, "value_and_grad": xf.value_and_grad, "jacrev": xf.jacrev,
         "jacfwd": xf.jacfwd, "hessian": xf.hessian}[plan.deriv](g, argnums=plan.argnums, has_aux=plan.has_aux)
    for stage in plan.outer:
        if stage == "vmap" and plan.unmapped_out:
            d = xf.vmap(_with_unmapped(d, plan, xnp), in_axes=plan.in_axes,
                        out_axes=(plan.out_axes, None))
        elif stage == "vmap":
            d = xf.vmap(d, in_axes=plan.in_axes, out_axes=plan.out_axes)
        else:
            d = xf.jit(d, **static) if stage == "jit" else xf.checkpoint(d, **static)
    return d


def _unmapped_value(full, plan, ns):
    """1 + the sum of every unmapped array input (a value vmap returns with out_axes None)."""
    total = 1.0
    for x, ax in zip(full, plan.in_axes):
        if ax is None and not callable(x):
            total = total + sum(ns.sum(ns.asarray(v)) for v in flatten(x)[0])
    return total


def _with_unmapped(d, plan, ns):
    return lambda *full: (d(*full), _unmapped_value(full, plan, ns))


def expected_one(case, plan, w, args):
    """The canonical computation for one example (arrays, all argnums, no wrappers)."""
    n = len(args)
    scale = 1.0 if plan.extra is None else (1.5 if plan.extra[1] == "scale" else 2.0)

    def fs(*a):
        out = case.fn()(*a)
        return scale * sum(xnp.sum(wk * o) for wk, o in zip(flatten(w)[0], flatten(out)[0]))
    arrays = [tmap(xnp.asarray, a) for a in args]
    val, grads = xf.value_and_grad(fs, argnums=tuple(range(n)))(*arrays)
    total = n + (plan.extra is not None)
    pos = [i % total for i in ((plan.argnums,) if isinstance(plan.argnums, int)
                               else plan.argnums)]
    prog_index = [i - (plan.extra is not None and i > plan.extra[0]) for i in pos]
    # a list input's gradient is a list (one entry per element), as in JAX
    picked = tuple(list(np.asarray(grads[k])) if plan.forms[k] == "list" else grads[k]
                   for k in prog_index)
    g = picked[0] if isinstance(plan.argnums, int) else picked
    if plan.deriv == "hessian":
        # JAX's layout: per selected argument k, k's tree whose leaves hold a tuple (over the
        # selected m) of m's tree; with an int argnums no tuple levels at all
        h = xf.hessian(fs, argnums=tuple(range(n)))(*arrays)
        single = isinstance(plan.argnums, int)

        def over_m(get):     # get(m): d/dx_m of one entry of x_k, as arg m's tree
            blocks = tuple(_list_last(get(m), plan.forms[m]) for m in prog_index)
            return blocks[0] if single else blocks

        def pick(hk, struct, k):
            if struct == "*" and plan.forms[k] == "list":    # the list level comes first
                return [over_m(lambda m: tmap(lambda a: np.asarray(a)[i], hk[m]))
                        for i in range(np.shape(args[k])[0])]
            if struct == "*":
                return over_m(lambda m: hk[m])
            kind, kids = struct
            if kind == "dict":
                return {key: pick(hk[key], kid, k) for key, kid in kids}
            return type(hk)(pick(hk[i], kid, k) for i, kid in enumerate(kids))
        rows = tuple(pick(h[k], flatten(args[k])[1], k) for k in prog_index)
        g = rows[0] if single else rows
    aux = case.fn()(*arrays)
    if plan.deriv == "value_and_grad":
        return ((val, aux), g) if plan.has_aux else (val, g)
    return (g, aux) if plan.has_aux else g


def _list_last(a, form):
    """A list input's level of a derivative block: one entry per element (the last axis)."""
    if form != "list":
        return a
    a = np.asarray(a)
    return [a[..., j] for j in range(a.shape[-1])]


def check_plan(case, plan, rng=None):
    """The plan's transforms = the canonical computation (looped over the batch for vmap)."""
    expected_out, _ = reference(case)
    w = weights(expected_out)
    rng = rng or np.random.default_rng(12)
    fun = build(case, plan, w)
    e_val = None if plan.extra is None else _extra_value(plan.extra[1])
    if "vmap" not in plan.outer:
        got = fun(*_join([_given(a, f) for a, f in zip(case.args, plan.forms)], plan.extra,
                         e_val))
        want = expected_one(case, plan, w, case.args)
    else:
        from .checks import batch_args
        prog_axes = [ax for i, ax in enumerate(plan.in_axes)
                     if plan.extra is None or i != plan.extra[0]]
        batched, examples = batch_args(case, prog_axes, plan.size, rng)
        got = fun(*_join([_given(a, f) for a, f in zip(batched, plan.forms)], plan.extra,
                         e_val))
        per = [expected_one(case, plan, w, ex) for ex in examples]
        want = tmap(lambda *ys: np.stack(ys, axis=plan.out_axes), *per)
        if plan.unmapped_out:
            full0 = _join(list(examples[0]), plan.extra, e_val)
            want = (want, np.asarray(_unmapped_value(full0, plan, np), np.float64))
    if plan.deriv in _FORWARD and not all(np.all(np.isfinite(np.asarray(x)))
                                          for x in flatten(want)[0]):
        # the reference is reverse mode: where an infinite intermediate meets a zero
        # cotangent (a select's untaken branch, nan_to_num) it gives 0 * inf = NaN and
        # forward mode 0, in JAX as in xforms -- the modes cannot be compared there
        reject()
    assert_close(tmap(np.asarray, got), tmap(np.asarray, want), f"{plan}")


_FORWARD = ("jacfwd",)     # forward-mode plans (hessian: both sides are forward-over-reverse)


__all__ = ["Plan", "plans", "check_plan"]
