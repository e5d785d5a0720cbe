"""How an elementwise primitive is declared: its abstract eval (equal shapes or rank-0
operands, equal dtypes), impl, batching and lowering facts in one call (`define`), its
binders (`bind1`, `bind2`: a Python scalar takes the other operand's dtype), and the dtype
predicates and helpers the families' rules share.

>>> neg_p = define("neg", np.negative, accept=not_bool, operator="-", cheap=True)
>>> neg = bind1(neg_p)
"""
import sys

import numpy as np

from ...core import trace as core
from ...core.eager import kernels as eager_kernels
from ...core.avals import ShapedArray, is_inexact
from ...core.trace import abstract_eval_rules, impl_rules
from ...core.facts import ELEMENTWISE, declare
from ...transforms.vmap import defvectorized, defbroadcasting
from ...core.engine_prims import broadcast_to_aval, full, like
from ...core.registry import primitive


def elementwise_aval(name, avals, out_dtype=None, accept=None):
    a0 = avals[0]
    if len(avals) <= 2:              # the common cases, checked without building sets
        a1 = avals[-1]
        if a0.dtype == a1.dtype and (a0.shape == a1.shape or not a1.shape or not a0.shape) \
                and (accept is None or accept(a0.dtype)):
            return [ShapedArray.of(a0.shape or a1.shape, out_dtype or a0.dtype,
                                   a0.weak_type and a1.weak_type)]
    shapes = {a.shape for a in avals if a.shape != ()}
    if len(shapes) > 1:
        raise TypeError(f"{name}: operands must have equal shapes (or be scalars), got "
                        f"{', '.join(a.str_short() for a in avals)}")
    dtypes = {a.dtype for a in avals}
    if len(dtypes) > 1:
        raise TypeError(f"{name}: operands must have equal dtypes, got "
                        f"{', '.join(a.str_short() for a in avals)}")
    dt = avals[0].dtype
    if accept is not None and not accept(dt):
        raise TypeError(f"{name}: unsupported dtype {dt}")
    shape = shapes.pop() if shapes else ()
    return [ShapedArray(shape, out_dtype or dt, all(a.weak_type for a in avals))]


def define(name, impl, nargs=1, out_dtype=None, accept=None, eager_kernel=None, **facts):
    """An elementwise primitive (or the engines' one, xforms/core/engine_prims.py, given as
    `name`) with its abstract eval, impl, batching and lowering facts (`facts`: see
    xforms/core/facts.py; the simplifier class defaults to the arity).  `eager_kernel`:
    the dtype kinds whose operands an un-jitted call sends to a compiled kernel once
    built (xforms/core/eager/kernels.py); by default "c" for a primitive accepting complex
    operands that is not a ufunc (XLA's formulas, several NumPy passes), "f" where a
    primitive's NumPy form is slower than `jit`'s loop (erf_inv's polynomial)."""
    p = name if isinstance(name, core.Primitive) else primitive(name)
    name = p.name
    facts.setdefault("simplify", "unary" if nargs == 1 else "binary")
    if isinstance(impl, np.ufunc):     # a fresh result, computable into a dying input
        facts.setdefault("ufunc", impl)
    elif eager_kernel is None and (accept is None or accept(np.dtype(np.complex64))):
        eager_kernel = "c"                # (a ufunc is one pass already)
    if eager_kernel and not isinstance(impl, np.ufunc):
        impl = _compiled_when(p, impl, eager_kernel)
        if facts.get("into") is not None:
            facts["into"] = _compiled_into_when(p, facts["into"], eager_kernel)
    facts.setdefault("numpy_fn", impl)  # called directly by the eager loop evaluator
    declare(p, ELEMENTWISE, **facts)
    if out_dtype is not None and not callable(out_dtype):
        out_dtype = np.dtype(out_dtype)       # (the abstract eval's fast path needs a dtype)
    abstract_eval_rules[p] = lambda *avals, **params: elementwise_aval(
        name, avals, out_dtype if out_dtype is None or not callable(out_dtype)
        else out_dtype(avals[0].dtype), accept)
    impl_rules[p] = _one_result(impl, p)
    (defvectorized if nargs == 1 else defbroadcasting)(p)
    return p


def _compiled_when(p, impl, kinds):
    """`impl`, whose operands of dtype kinds `kinds` ("c": complex) a compiled kernel takes
    once there is one (xforms/core/eager/kernels.py: one pass where XLA's formula is
    several NumPy passes)."""
    def run(*xs, **params):
        x = xs[0]
        if not params and isinstance(x, np.ndarray) and x.dtype.kind in kinds:
            return eager_kernels.run(p, xs, lambda: impl(*xs))
        return impl(*xs, **params)
    run.__name__ = getattr(impl, "__name__", p.name)
    run.__doc__ = impl.__doc__
    run.numpy_form = impl           # (the NumPy passes alone: tests compare the two)
    run.kernel_kinds = kinds        # (operands of other kinds may call numpy_form directly)
    return run


def _compiled_into_when(p, into, kinds):
    """The `into` fact (`into(out, *xs) -> [out]`) as `_compiled_when` makes the impl."""
    def run(out, *xs):
        x = xs[0]
        if isinstance(x, np.ndarray) and x.dtype.kind in kinds:
            return [eager_kernels.run(p, xs, lambda: into(out, *xs)[0], out)]
        return into(out, *xs)
    return run


def _one_result(impl, p=None):
    """The impl rule of a primitive computed by `impl` (one result), which it keeps as
    `single_result`: core's generated plans call that directly.  An impl that complex
    operands send to their kernel (`_compiled_when`) makes a rule that checks for them
    in its own frame, and keeps the plain rule as `real`, which plans of real operands
    call (core/trace.py `_plan`): a frame more cost 0.25 us a call, 2-5% of the un-jitted
    RNN gradient.  (A primitive whose real operands have a kernel too has no `real`.)"""
    raw = getattr(impl, "numpy_form", None)
    if raw is None:
        rule = lambda *xs, **params: [impl(*xs, **params)]   # noqa: E731
        rule.single_result = impl
        return rule
    kinds = impl.kernel_kinds

    def rule(*xs, **params):
        x = xs[0]
        if not params and isinstance(x, np.ndarray) and x.dtype.kind in kinds:
            return [eager_kernels.run(p, xs, lambda: raw(*xs))]
        return [raw(*xs, **params)]
    rule.single_result = impl
    if kinds == "c":
        rule.real = _one_result(raw)
    return rule


def bind1(p):
    """The function users call for unary `p`: `neg = bind1(neg_p)`."""
    def f(x):
        return p.bind(x)
    return _named(f, p)


def bind2(p):
    """The function users call for binary `p`, a Python scalar taking the other operand's
    dtype: `add = bind2(add_p)`."""
    def f(x, y):
        x, y = like(x, y), like(y, x)
        return p.bind(x, y)
    return _named(f, p)


def _named(f, p):
    # named for the primitive, and homed in the module that binds it (the caller's caller:
    # `add = bind2(add_p)` in arithmetic.py), where the API reference looks it up
    f.__name__ = f.__qualname__ = p.name
    f.__module__ = sys._getframe(2).f_globals.get("__name__", f.__module__)
    return f


real_dtype_of = lambda dt: np.dtype(np.float32) if dt == np.complex64 else (
    np.dtype(np.float64) if dt == np.complex128 else dt)
inexact = is_inexact
real_float = lambda dt: dt.kind == "f"
not_complex = lambda dt: dt.kind != "c"   # NumPy has no complex remainder or cbrt
not_bool = lambda dt: dt.kind != "b"      # NumPy and JAX refuse -x, x - y, sign(x) of bools
BOOL = np.dtype(np.bool_)


def bcast_to(t, ans):
    return broadcast_to_aval(t, core.get_aval(ans))


def complex_of(x, y):
    """x + i y with the parts placed, not computed: x + 1j * y made 1j * -inf's real part
    NaN (complex(-inf, -inf) came out nan-infj; JAX's and the compiled tier's -inf-infj)."""
    out = np.empty(np.broadcast(x, y).shape, np.result_type(x, y, np.complex64))
    out.real, out.imag = x, y
    return out


def full_like_scalar(c, like):
    """A rank-0 literal when `like` is rank-0, else a broadcast constant with like's shape."""
    aval = core.get_aval(like)
    return full(aval.shape, c, aval.dtype)
