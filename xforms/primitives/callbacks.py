"""Callbacks into Python from traced code: the primitives under `xforms.debug.print` /
`debug.callback`, `xforms.pure_callback` and `xforms.experimental.io_callback`.

All three take flat array operands and the params `callback` (a `Callback`: the user's
function and how to rebuild its arguments; called with NumPy arrays, returns a flat list
of arrays) and `result_avals` (the declared results).  They share every rule but two:
what a derivative does and how vmap calls the function (as JAX's do).

debug_callback(*args; callback, result_avals=(), ordered) -> ()
    For its effect only.  An `effect` (facts): the simplifier keeps it, and keeps it apart
    from an identical one, also inside loop bodies, so a print in a `scan` body runs once
    per iteration, in program order.  Derivatives: the callback sees the primal values,
    no tangent flows.  vmap: called once per batch element, in order (as JAX does).
pure_callback(*args; callback, result_avals, vmap_method) -> results
    No effect: unused results let the simplifier drop it, as JAX does.  jvp / grad:
    ValueError (as JAX: wrap it in custom_jvp).  vmap by `vmap_method`: "sequential" (a
    Python loop over the batch), "expand_dims" (unbatched operands get a leading axis of
    size 1), "broadcast_all" (every operand broadcast to the batch), "legacy_vectorized"
    (unbatched operands as they are); None raises NotImplementedError, as JAX.
io_callback(*args; callback, result_avals, ordered) -> results
    An effect.  jvp / grad: ValueError.  vmap: sequential; ordered=True raises (JAX).

LOWER: CPU: a call back into Python from the kernel (xforms/kernels/ops/callbacks.py, Numba's
objmode); such a kernel is kept out of the disk cache (the function is not in its
source).  CUDA: exempt (a LoweringError saying to use backend="cpu").
"""
from dataclasses import dataclass, replace

import numpy as np

from ..core.avals import ShapedArray
from ..core.eager.quiet import as_user
from ..core.trace import abstract_eval_rules, get_aval, impl_rules
from ..core.facts import OP, declare
from ..core.ir import Effect
from ..core.registry import exempt, primitive
from ..core.source_info import describe_function
from ..transforms.jvp import jvp_rules
from ..transforms.vmap import moveaxis, vmap_rules
from ..tree_util import tree_flatten, tree_unflatten

class DebugEffect(Effect):
    """The effect of debug.print / debug.callback (jax.debug.DebugEffect)."""
    __str__ = __repr__ = lambda self: "Debug"


class OrderedDebugEffect(Effect):
    """The effect of debug.print / debug.callback with ordered=True."""
    __str__ = __repr__ = lambda self: "OrderedDebug"


class IOEffect(Effect):
    """The effect of io_callback."""
    __str__ = __repr__ = lambda self: "IO"


class OrderedIOEffect(Effect):
    """The effect of io_callback with ordered=True."""
    __str__ = __repr__ = lambda self: "OrderedIO"


# one instance of each, as JAX's (jax._src.debugging.debug_effect, ...)
debug_effect, ordered_debug_effect = DebugEffect(), OrderedDebugEffect()
io_effect, ordered_io_effect = IOEffect(), OrderedIOEffect()

debug_callback_p = primitive("debug_callback", multiple_results=True)
pure_callback_p = primitive("pure_callback", multiple_results=True)
io_callback_p = primitive("io_callback", multiple_results=True)
CALLBACK_PRIMITIVES = (debug_callback_p, pure_callback_p, io_callback_p)

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized")


# ---- the functions the primitives call ------------------------------------------------------
class ById:
    """A static leaf without a hash (compared by identity, so params stay hashable)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return id(self.value)

    def __eq__(self, other):
        return isinstance(other, ById) and other.value is self.value


@dataclass(frozen=True)
class Callback:
    """The user's `fn`, called as fn(*args, **kwargs) rebuilt by `in_tree` from the flat
    operands and the `static` leaves ((position, value): leaves that are no arrays, such
    as strings, as JAX passes them); -> the flat leaves of its result (none when `results`
    is False: a debug callback's return value is ignored).  Compared by value, so two
    traces of one program record equal params (a print's format is equal across calls)."""
    fn: object
    in_tree: object
    static: tuple = ()
    results: bool = True

    def __call__(self, *flat):
        leaves, dyn = [], iter(flat)
        static = {k: v.value if isinstance(v, ById) else v for k, v in self.static}
        for k in range(len(flat) + len(static)):
            leaves.append(static[k] if k in static else next(dyn))
        args, kwargs = tree_unflatten(self.in_tree, leaves)
        out = self.fn(*args, **kwargs)
        return tree_flatten(out)[0] if self.results else []

    @property
    def name(self):
        return describe_function(self.fn)

    @property
    def __name__(self):                       # (the IR printer shows it)
        return getattr(self.fn, "__name__", repr(self.fn))


@dataclass(frozen=True)
class Batched:
    """`inner` under vmap: operands flagged in `batched` carry the batch (of `size`) on
    axis `lead` (after the `lead` batch axes of enclosing vmaps that keep theirs: a nested
    vmap's axis comes after its outer ones); `method` says how the function sees the batch
    (the module docstring); `results` are one example's result avals (an empty batch)."""
    inner: object
    batched: tuple
    size: int
    method: str
    results: tuple = ()
    lead: int = 0

    def keeps_axis(self):
        return self.method not in ("sequential", "sequential_unrolled")

    def shifted(self):
        """This layer under one more enclosing vmap that keeps its axis."""
        inner = self.inner.shifted() if type(self.inner) is Batched else self.inner
        return replace(self, inner=inner, lead=self.lead + 1)

    def __call__(self, *xs):
        k = self.lead
        if not self.keeps_axis():
            if self.size == 0:
                return [np.zeros(np.shape(x)[:k] + (0,) + tuple(a.shape), a.dtype)
                        for x, a in zip(xs[:1] * len(self.results), self.results)]
            outs = [self.inner(*[np.take(x, i, axis=k) if b else x
                                 for x, b in zip(xs, self.batched)])
                    for i in range(self.size)]
            return [np.stack(rs, axis=k) for rs in zip(*outs)] if outs and outs[0] else []
        if self.method == "expand_dims":
            xs = [x if b else np.expand_dims(x, k) for x, b in zip(xs, self.batched)]
        elif self.method == "broadcast_all":
            xs = [x if b else np.broadcast_to(np.expand_dims(x, k), np.shape(x)[:k] +
                                              (self.size,) + np.shape(x)[k:])
                  for x, b in zip(xs, self.batched)]
        return self.inner(*xs)

    name = property(lambda self: self.inner.name)
    __name__ = property(lambda self: self.inner.__name__)


def _check(prim, callback, outs, result_avals):
    """The callback's results as arrays of the declared shapes and dtypes, or an error
    naming the function (Python scalars take the declared dtype; arrays must have it)."""
    outs = list(outs)
    if len(outs) != len(result_avals):
        raise ValueError(f"{prim.name}: the callback {callback.name} returned {len(outs)} "
                         f"array(s), but result_shape_dtypes declares {len(result_avals)}")
    checked = []
    for k, (x, aval) in enumerate(zip(outs, result_avals)):
        scalar = isinstance(x, (bool, int, float, complex))
        x = np.asarray(x, dtype=aval.dtype if scalar else None)
        if x.shape != tuple(aval.shape) or x.dtype != aval.dtype:
            got = ShapedArray(x.shape, x.dtype).str_short()
            raise ValueError(f"{prim.name}: the callback {callback.name} returned {got} for "
                             f"result {k}, but result_shape_dtypes declares "
                             f"{aval.str_short()}; return arrays of the declared shapes and "
                             "dtypes")
        checked.append(x)
    return checked


def _impl(prim):
    def impl(*args, callback, result_avals, **_):
        args = [np.asarray(a) for a in args]     # (the user's function: their NumPy state)
        return _check(prim, callback, as_user(callback, *args), result_avals)
    return impl


def _aval(*avals, result_avals, **_):
    return list(result_avals)


# ---- derivatives ---------------------------------------------------------------------------
def _debug_jvp(primals, tangents, **params):
    """The callback sees the primal values; it has no results, so no tangents."""
    return debug_callback_p.bind(*primals, **params), []


def _no_jvp(what):
    def rule(primals, tangents, *, callback, **_):
        raise ValueError(f"{what} callbacks do not support JVP (the callback "
                         f"{callback.name}). Please use `xforms.custom_jvp` to use callbacks "
                         "while taking gradients.")
    return rule


# ---- vmap -----------------------------------------------------------------------------------
def _vmap_method(prim, params):
    if prim is pure_callback_p:
        method = params["vmap_method"]
        if method not in VMAP_METHODS:
            raise NotImplementedError(
                "vmap is only supported for the pure_callback primitive when vmap_method is "
                f"one of {', '.join(map(repr, VMAP_METHODS))}. Got vmap_method={method!r} "
                f"(the callback {params['callback'].name}).")
        return method
    if params.get("ordered") and prim is io_callback_p:
        raise ValueError(f"Cannot `vmap` ordered IO callback (the callback "
                         f"{params['callback'].name}).")
    return "sequential"


def _vmap(prim):
    def rule(args, dims, **params):
        method = _vmap_method(prim, params)
        size = next(get_aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
        args = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args, dims)]
        inner = params["callback"]
        if type(inner) is Batched and method not in ("sequential", "sequential_unrolled"):
            inner = inner.shifted()      # this vmap's axis stays in front of the inner one's
        callback = Batched(inner, tuple(d is not None for d in dims), size, method,
                           tuple(params["result_avals"]))
        avals = tuple(ShapedArray((size,) + tuple(a.shape), a.dtype)
                      for a in params["result_avals"])
        outs = prim.bind(*args, **dict(params, callback=callback, result_avals=avals))
        return outs, [0] * len(outs)
    return rule


for _p in CALLBACK_PRIMITIVES:
    abstract_eval_rules[_p] = _aval
    impl_rules[_p] = _impl(_p)
    vmap_rules[_p] = _vmap(_p)
    exempt(_p, "cuda", "a callback into Python cannot run inside a CUDA kernel")
jvp_rules[debug_callback_p] = _debug_jvp
jvp_rules[pure_callback_p] = _no_jvp("Pure")
jvp_rules[io_callback_p] = _no_jvp("IO")
declare(debug_callback_p, OP, effect=lambda params: frozenset(
    {ordered_debug_effect if params["ordered"] else debug_effect}))
declare(io_callback_p, OP, effect=lambda params: frozenset(
    {ordered_io_effect if params["ordered"] else io_effect}))
declare(pure_callback_p, OP)
