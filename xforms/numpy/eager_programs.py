"""Eager calls of xnp's functions as cached programs (issues #31, #35): the second call of
`xnp.sum(x)` on a float64[8] traces `sum` once to a jaxpr and runs it, from then on, as the
eager evaluator's cached plan (core.eval_eager: the same NumPy implementations, results as
read-only Arrays of the jaxpr's dtypes) -- not the function's Python, its operand checks,
promotion and ~5 `bind`s per call.  JAX jits its jnp functions the same way.

A call's *signature* keys the cache: each array operand's (dtype, shape, weak type), a list
or tuple of them (concatenate, stack) element by element, and every other argument by its
value (axis, keepdims, dtype, a Python scalar operand: a literal of the program; floats by
their sign too, as -0.0 == 0.0).  Anything else -- a NumPy scalar, a device array, a
non-canonical dtype, an unhashable static -- runs the function as written, as does every
call under a trace (jit, grad, vmap: the function joins that trace), under debug_nans /
debug_infs / no_execution (each primitive checked), with a traced option set (strict
promotion, rank promotion, matmul precision), allow_f16_reductions=False, tracer-leak or
key-reuse checks on, or disable_jit, a profiler or default_device.

A signature is traced on its second call (a loop whose Python scalar changes each call,
`xnp.full(n, t)`, never traces); one that cannot be traced (a value-dependent function:
`xnp.where(c)`, `xnp.nonzero`) or that raises is remembered as such, and the function runs
as written there, raising its own error.  At most LIMIT signatures per function are kept.

    >>> sum = as_program(sum); sum(x); sum(x)      # the second call: traced, then a plan
"""
import math
import os

import numpy as np

from .. import config
from ..core import jit_switch, staging, trace as core
from ..core.trace import Array, OK_DTYPES
from ..tree_util import tree_flatten, tree_unflatten

#: signatures kept per function (a loop over ever new shapes stops adding there)
LIMIT = 256
#: the call of a signature that traces it: 2 (the default), 1 (the first: tests run whole
#: files through the programs so), 0: never (every call as written); XFORMS_EAGER_PROGRAMS
TRACE_AT = int(os.environ.get("XFORMS_EAGER_PROGRAMS", "2"))
_REFUSED = "refused"          # a signature whose trace failed: the function as written
_STATIC = (bool, int, str, type(None), type)
# calls a program answered (tests read it: which path answered, never a timing)
counts = {"program": 0}


def as_program(fn):
    """`fn` (a public xnp function, results as Arrays) answering eager calls from cached
    programs, one per signature (see above); `fn` itself wherever none applies.

        >>> f = as_program(xnp.sum); f(x); f(x)          # the second call traced once
    """
    programs, seen = {}, set()
    state = core._state

    def call(*args, **kwargs):
        if (state.current is not _EVAL or config.trace_options or config.float_checks
                or jit_switch.active or config.f16_refusals or config.leak_checks
                or config.key_reuse_checks):
            return fn(*args, **kwargs)
        leaves = []
        try:
            key = (_keys(args, leaves), _kw_keys(kwargs, leaves) if kwargs else None)
            hit = programs.get(key)
        except _Unkeyed:
            return fn(*args, **kwargs)
        if hit is None:
            if TRACE_AT != 1 and (TRACE_AT == 0 or key not in seen) or len(programs) >= LIMIT:
                if len(seen) > 4 * LIMIT:
                    seen.clear()
                seen.add(key)
                return fn(*args, **kwargs)
            hit = programs[key] = _trace(fn, args, kwargs, leaves)
        if hit is _REFUSED:
            return fn(*args, **kwargs)
        run, out_tree, single = hit
        try:
            outs = run(leaves)
        except Exception:          # (the function as written says what went wrong)
            return fn(*args, **kwargs)
        counts["program"] += 1
        return outs[0] if single else tree_unflatten(out_tree, outs)
    call.__dict__.update(getattr(fn, "__dict__", {}))
    for k in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(call, k, getattr(fn, k, None))
    call.__wrapped__ = fn
    return call


_EVAL = core.eval_trace


class _Unkeyed(Exception):
    """An argument that cannot key a program (the function runs as written)."""


def _key(v, leaves):
    """An argument's part of the key; an array operand is appended to `leaves`."""
    t = type(v)
    if t is Array:
        leaves.append(v)
        return (v.dtype, v.shape, v.weak_type)
    if t is np.ndarray:
        if v.dtype not in OK_DTYPES:
            raise _Unkeyed
        leaves.append(v)
        return (v.dtype, v.shape, None)
    if t is float:
        return (t, v, math.copysign(1.0, v))          # (-0.0 == 0.0, but not its program)
    if t in _STATIC:
        return (t, v)
    if t is tuple or t is list:
        return (t, *[_key(e, leaves) for e in v])
    if t is complex:
        return (t, v, math.copysign(1.0, v.real), math.copysign(1.0, v.imag))
    if isinstance(v, np.dtype):         # (np.dtype("f4")'s type is a subclass, Float32DType)
        return (np.dtype, v)
    raise _Unkeyed


def _keys(args, leaves):
    return tuple([_key(a, leaves) for a in args])


def _kw_keys(kwargs, leaves):
    return tuple([(k, _key(v, leaves)) for k, v in kwargs.items()])


def _trace(fn, args, kwargs, leaves):
    """(its eager runner, out_tree, whether it is one array) of `fn` on these arguments, the
    array operands abstract; _REFUSED where tracing fails or keeps no operand."""
    if not leaves:            # (nothing abstract: a constant program, nothing to gain)
        return _REFUSED

    def rebuilt(v, xs):     # (by position, in `_key`'s order: dot(x, x) has two operands)
        t = type(v)
        if t is Array or t is np.ndarray:
            return next(xs)
        if t is tuple or t is list:
            return t([rebuilt(e, xs) for e in v])
        return v

    def program(*xs):
        xs = iter(xs)
        given = [rebuilt(a, xs) for a in args]
        return fn(*given, **{k: rebuilt(v, xs) for k, v in kwargs.items()})
    store = {}

    def flat_fun(*xs):        # (the leaves in, the output's leaves out)
        outs, store["tree"] = tree_flatten(program(*xs))
        return outs
    avals = [core.get_aval(core.canonical_value(a)) for a in leaves]
    try:      # (not simplified: its rewrites may change a zero's sign, x + 0.0 -> x)
        closed, _ = staging.trace_to_jaxpr(flat_fun, avals, None, fun_for_errors=fn)
    except Exception:
        return _REFUSED
    return core.eager_runner(closed), store["tree"], store["tree"] == _ONE


_ONE = tree_flatten(0)[1]
