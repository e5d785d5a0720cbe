"""Ranges and index masks of `xforms.numpy`: linspace logspace geomspace (endpoints may be
traced) mask_indices.

    >>> xnp.logspace(0.0, 2.0, 3)        # [1, 10, 100]
"""
import operator

import numpy as np

from ...core.avals import broadcast_shapes
from ...core.trace import Tracer
from ..manipulation import shapes as man
from ..elementwise import ufuncs as uf
from ...primitives.operands import (aval, broadcast_to, canon_axis, convert, dtype_arg,
                                    inexact_dtype, promote_keep_shapes, wrap_result)


def _bounds(start, stop, dtype):
    """JAX's dtypes of a range: the result's (the operands' promoted to inexact, unless
    `dtype` is given) and the one it is computed in (that one made inexact), and the
    bounds converted to the latter."""
    start, stop = promote_keep_shapes((start, stop), inexact=True)
    out_dtype = aval(start).dtype if dtype is None else dtype_arg(dtype)
    comp = inexact_dtype(out_dtype)
    return convert(start, comp), convert(stop, comp), out_dtype, comp


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """`num` evenly spaced values from start to stop (endpoints may be traced, and arrays:
    the samples then run along the new axis `axis`); with `retstep`, (samples, step).
    Computed as JAX does, start * (1 - t) + stop * t, so infinite endpoints give JAX's
    values and integer and bool bounds its float32.
    >>> xnp.linspace(0.0, 1.0, 5, retstep=True)   # ([0, .25, .5, .75, 1], 0.25)"""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: the number of samples, {num}, must be non-negative")
    start, stop, out_dtype, comp = _bounds(start, stop, dtype)
    # one formula; concrete bounds take NumPy's functions (30x faster than eager primitives)
    traced = isinstance(start, Tracer) or isinstance(stop, Tracer)
    bcast, expand, cat, floor = _TRACED if traced else _CONCRETE
    shape = broadcast_shapes(aval(start).shape, aval(stop).shape)
    axis = canon_axis(axis, len(shape) + 1)
    lo, hi = (expand(bcast(v, shape), axis) for v in (start, stop))
    div = num - 1 if endpoint else num
    if num > 1:
        # XLA rewrites JAX's x / div (div a broadcast scalar) as x * (1 / div), the reciprocal
        # rounded to the dtype: jax's t[13] of 50 float16 samples is 0.2651, not 13 / 49's
        # 0.2654, which 10 ** linspace(-1.5, 2) made 0.3% apart (jax 0.10.2, every float dtype)
        real = np.finfo(comp).dtype
        step = real.type(1) / real.type(div)
        delta = (stop - start) * (step if comp.kind == "f" else comp.type(1) / comp.type(div))
        t = (np.arange(div, dtype=real) * step).astype(comp)
        t = t.reshape([div if d == axis else 1 for d in range(len(shape) + 1)])
        out = lo * (1 - t) + hi * t
        out = cat([out, hi], axis) if endpoint else out
    elif num == 1:
        delta = np.full((), np.nan, comp) if endpoint else stop - start
        out = lo
    else:
        delta = np.full((), np.nan, comp)
        out = np.empty(shape[:axis] + (0,) + shape[axis:], comp)
    if np.dtype(out_dtype).kind in "iu":        # JAX floors before converting to integers
        out = floor(out)
    out = wrap_result(convert(out, out_dtype))
    return (out, wrap_result(delta)) if retstep else out


_CONCRETE = (np.broadcast_to, np.expand_dims, np.concatenate, np.floor)
_TRACED = (broadcast_to, man.expand_dims, man.concatenate, uf.floor)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num).  >>> xnp.logspace(0.0, 2.0, 3)   # [1, 10, 100]"""
    start, stop, out_dtype, _ = _bounds(start, stop, dtype)
    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return convert(uf.power(base, lin), out_dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Geometric progression from start to stop (same sign: else NaN, as JAX).
    >>> xnp.geomspace(1.0, 16.0, 5)    # [1, 2, 4, 8, 16]"""
    start, stop, out_dtype, comp = _bounds(start, stop, dtype)
    sign = uf.sign(start)
    logs = (uf.log10(uf.divide(v, sign)) for v in (start, stop))
    out = uf.multiply(sign, logspace(*logs, num, endpoint=endpoint, dtype=comp))
    out = man.moveaxis(out, 0, canon_axis(axis, aval(out).ndim))
    return convert(out, out_dtype)


def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices where mask_func(ones((n, n)), k) is nonzero (a static mask)."""
    m = np.asarray(mask_func(np.ones((n, n), dtype=np.int64), k))
    rows, cols = np.nonzero(m)
    if size is not None:
        rows = np.concatenate([rows, np.zeros(max(0, size - len(rows)), np.int64)])[:size]
        cols = np.concatenate([cols, np.zeros(max(0, size - len(cols)), np.int64)])[:size]
    return wrap_result(rows), wrap_result(cols)
