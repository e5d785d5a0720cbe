"""Ranges and index masks of `xforms.numpy`: linspace logspace geomspace (endpoints may be
traced) mask_indices.

    >>> xnp.logspace(0.0, 2.0, 3)        # [1, 10, 100]
"""
import numpy as np

from ..core.trace import Tracer
from . import manipulation as man
from . import ufuncs as uf
from ._util import asarray, aval, asarray_operand, convert, dtype_arg, wrap_result


def _move(out, axis):
    return out if axis == 0 or aval(out).ndim < 2 else man.moveaxis(out, 0, axis)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """`num` evenly spaced values from start to stop (endpoints may be traced, and arrays:
    the samples then run along the new axis `axis`); with `retstep`, (samples, step).
    >>> xnp.linspace(0.0, 1.0, 5, retstep=True)   # ([0, .25, .5, .75, 1], 0.25)"""
    if not (isinstance(start, Tracer) or isinstance(stop, Tracer)):
        out = np.linspace(start, stop, num, endpoint=endpoint, retstep=retstep,
                          dtype=dtype_arg(dtype), axis=axis)
        return (asarray(out[0]), asarray(out[1])) if retstep else asarray(out)
    start, stop = asarray_operand(start), asarray_operand(stop)
    n = num - 1 if endpoint else num
    delta = uf.subtract(stop, start)
    nd = aval(delta).ndim
    t = asarray(np.arange(num, dtype=np.float64).reshape((num,) + (1,) * nd) / max(n, 1))
    out = uf.add(start, uf.multiply(delta, t))
    out = convert(out, dtype_arg(dtype)) if dtype is not None else out
    out = man.moveaxis(out, 0, axis) if nd else out
    return (out, uf.divide(delta, float(n) if n else np.nan)) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """base ** linspace(start, stop, num)."""
    if not any(isinstance(v, Tracer) for v in (start, stop, base)):
        return wrap_result(np.logspace(start, stop, num, endpoint, base,
                                       dtype=dtype_arg(dtype), axis=axis))
    out = uf.power(base, linspace(start, stop, num, endpoint=endpoint))
    return _move(out if dtype is None else convert(out, dtype_arg(dtype)), axis)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Geometric progression from start to stop (same sign)."""
    if not any(isinstance(v, Tracer) for v in (start, stop)):
        return wrap_result(np.geomspace(start, stop, num, endpoint, dtype=dtype_arg(dtype),
                                        axis=axis))
    start, stop = asarray_operand(start), asarray_operand(stop)
    sign = uf.sign(start)
    out = uf.multiply(sign, uf.exp(linspace(uf.log(uf.abs(start)), uf.log(uf.abs(stop)), num,
                                            endpoint=endpoint)))
    return _move(out if dtype is None else convert(out, dtype_arg(dtype)), axis)


def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices where mask_func(ones((n, n)), k) is nonzero (a static mask)."""
    m = np.asarray(mask_func(np.ones((n, n), dtype=np.int64), k))
    rows, cols = np.nonzero(m)
    if size is not None:
        rows = np.concatenate([rows, np.zeros(max(0, size - len(rows)), np.int64)])[:size]
        cols = np.concatenate([cols, np.zeros(max(0, size - len(cols)), np.int64)])[:size]
    return wrap_result(rows), wrap_result(cols)
