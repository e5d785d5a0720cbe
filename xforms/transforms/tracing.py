"""Tracing user functions to simplified ClosedJaxprs: the one tracing entry.

Two ways, as in JAX:
* `trace_flat(..., key=(anchor, rest))`: `jit` traces once per signature and keeps the trace
  while `anchor` (the jitted function) lives (`trace_cached`; one bounded cache, held weakly,
  xforms/core/memo.py), unless the trace read a known input value (Python `if` on it) or closes
  over values of an enclosing trace;
* `trace_program`: every other transform traces the user's function on every call (side
  effects run each time) and gets the program interned by its structure (xforms/transforms/intern.py),
  so that what it derives is cached without ever skipping the user's code.
xforms/custom.py's rules and the control-flow bodies (`primitives/control_flow.trace`) are
traced without caching.
"""
from contextlib import nullcontext

import numpy as np

from .. import config
from ..core import axis_env, monitoring, staging, trace as core
from .intern import intern
from ..core.memo import guides as _guides, traces as _cache
from ..core.trace import Tracer
from .stage import stage
from ..core.avals import float0
from ..tree_util import (register_pytree_node, tree_flatten, tree_map, tree_unflatten,
                         tuple_of_leaves)


def flatten_args(args, fun=None):
    """Flatten and validate concrete leaves (TypeError on unsupported input, naming `fun`)."""
    leaves, tree = tree_flatten(args)
    try:
        return [x if isinstance(x, Tracer) else core.canonical_arg(x) for x in leaves], tree
    except TypeError as e:
        if fun is None:
            raise
        from ..core.source_info import describe_function
        raise TypeError(f"{e} (in the arguments of {describe_function(fun)})") from None


def abstract_signature(leaves):
    return tuple(core.get_aval(x) for x in leaves)


def trace_cached(key, fun, avals, vals=None, fun_for_errors=None, extra=lambda: None,
                 fun_name=None):
    """-> (ClosedJaxpr, extra()) for flat `fun(*xs) -> leaves` at `avals`; `vals` are known
    input values (None each where unknown), `extra()` what `fun` recorded, cached with it.

    `key` is None (trace without caching) or `(anchor, rest)`: the entry lives while the
    object `anchor` does (held weakly: a dropped jitted function and the arrays it closes
    over are released) and `rest` is hashable (else not cached).  Only `jit` caches traces
    of user functions, as JAX does; the bound axis names are part of the key (collectives
    record their axis sizes in the trace).  With `fun_name` (jit's), a trace that runs is
    recorded as JAX's "/jax/core/compile/jaxpr_trace_duration" event (core/monitoring.py)."""
    if key is not None and any(type(d) is not int for a in avals
                               for d in getattr(a, "shape", ())):
        key = None      # symbolic sizes of a CPU compile (xforms/kernels/prepare/shape_symbols.py): no cache
    if key is not None:
        anchor, rest = key
        rest = (rest, axis_env.key())
        hit = _cache.get(anchor, rest)
        if hit is not None:
            return hit
    if vals is not None and all(v is None for v in vals):
        vals = None
    with monitoring.timed(monitoring.JAXPR_TRACE_EVENT, fun_name) if fun_name \
            else nullcontext():
        closed, reusable = stage(fun, avals, vals, fun_for_errors=fun_for_errors)
    result = (closed, extra())
    if key is not None and reusable:
        _own_constants(closed)
        _cache.put(anchor, rest, result)
    return result


def _own_constants(closed):
    """Replace the NumPy arrays that a cached trace closes over by read-only copies, as JAX
    copies them to the device at trace time: changing such an array after the trace does not
    change what the jitted function computes.  (Arrays are immutable: kept as they are.)

        >>> c = np.zeros(2); f = xf.jit(lambda x: x + c); f(1.); c[0] = 5; f(1.)   # [1, 1]"""
    consts = closed.consts
    for k, c in enumerate(consts):
        if type(c) is np.ndarray:
            consts[k] = core.read_only(np.array(c))


class Float0Zeros:
    """A float0 value (the gradient of an integer input) in a traced function's arguments or
    outputs: it holds no data, so it stays out of the program and its shape rides in the
    tree, whose unflattening rebuilds the zeros."""

    def __init__(self, shape):
        self.shape = shape


register_pytree_node(Float0Zeros, lambda z: ((), z.shape), lambda shape, _: np.zeros(shape, float0))


def float0_as_static(tree):
    """`tree` with its float0 leaves made Float0Zeros nodes (jit's arguments and outputs, the
    outputs that grad/jvp/vjp trace): the program sees float0 zeros, a constant."""
    return tree_map(lambda x: Float0Zeros(x.shape) if getattr(x, "dtype", None) == float0 else x,
                    tree)


def _flat_fun(f, in_tree, post, store):
    flat = in_tree is tuple_of_leaves(in_tree.num_leaves)   # (f takes the leaves as they are)

    def flat_fun(*xs):
        out = f(*xs) if flat else f(*tree_unflatten(in_tree, xs))
        extra = None
        if post is not None:
            out, extra = post(out)
        leaves, out_tree = tree_flatten(out)
        store["out_tree"], store["extra"] = out_tree, extra
        return leaves
    return flat_fun


def trace_flat(f, args_flat, in_tree, key=None, with_values=True, post=None, in_avals=None,
               fun_name=None):
    """-> (ClosedJaxpr, out_tree, extra) for f(*unflatten(in_tree, args_flat)), traced once
    per `key` (see `trace_cached`; None: traced on every call).

    `post(outs)` may restructure the output pytree before flattening; it returns
    (tree_to_flatten, extra) and `extra` is cached alongside.  `in_avals` overrides the
    abstract values of the leaves (vmap traces per-example slices; their `args_flat`
    entries are None, i.e. values unknown).
    """
    avals = abstract_signature(args_flat) if in_avals is None else tuple(in_avals)
    vals = [staging.deferred_value(x) for x in args_flat] if with_values else None
    store = {}
    if key is not None:
        key = (key[0], (key[1], in_tree, avals, config.trace_context()))
    closed, (out_tree, extra) = trace_cached(
        key, _flat_fun(f, in_tree, post, store), avals, vals, f,
        lambda: (store["out_tree"], store["extra"]), fun_name)
    return closed, out_tree, extra


def trace_program(f, args_flat, in_tree, post=None, in_avals=None):
    """Trace f(*unflatten(in_tree, args_flat)) now (the user's Python runs on every call, as
    in JAX), with the known values of the leaves -> (interned ClosedJaxpr whose leading
    inputs stand for `consts`, consts, out_tree, extra): see xforms/transforms/intern.py.  What a
    transform derives from the interned program is cached by its structure, never by `f`.

    >>> closed, consts, out_tree, _ = trace_program(f, flat, in_tree)
    >>> core.eval_jaxpr(closed, *consts, *flat)
    """
    avals = abstract_signature(args_flat) if in_avals is None else tuple(in_avals)
    vals = [staging.deferred_value(x) for x in args_flat]
    if all(v is None for v in vals):
        vals = None
    store = {}
    # the last program traced from this function guides the trace (staging.Builder): a
    # function that records the same program again gets it without building or interning
    anchor = getattr(f, "__wrapped__", f)
    guide, interned = _guides.get(anchor, "program", (None, None))
    raw, _ = staging.trace_to_jaxpr(_flat_fun(f, in_tree, post, store), list(avals), vals,
                                 fun_for_errors=f, guide=guide)
    if guide is not None and raw.jaxpr is guide:
        closed, consts = interned, list(raw.consts)
    else:
        closed, consts = intern(raw)
        _guides.put(anchor, "program", (raw.jaxpr, closed))
    return closed, consts, store["out_tree"], store["extra"]
