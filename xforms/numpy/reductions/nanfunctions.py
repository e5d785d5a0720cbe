"""Reductions that ignore NaN, as JAX's: nansum nanprod nanmax nanmin nanmean nanvar
nanstd nanargmax nanargmin (nanmedian/nanquantile/nanpercentile live in statistics.py,
nancumsum/nancumprod in cumulative.py).

NaNs are replaced by the reduction's identity; an all-NaN slice gives NaN for max, min,
mean, var, and -1 for nanargmax/nanargmin.

    >>> xnp.nansum(xnp.array([1.0, xnp.nan, 2.0]))     # 3.0
"""
import numpy as np

from . import aggregates as red
from ..elementwise import ufuncs as uf
from ...primitives.operands import aval, asarray_operand, convert, inexact_dtype


def _unsupported(name, **kw):
    for k, v in kw.items():
        if v is not None:
            raise NotImplementedError(f"{name}: the '{k}' argument is not supported")


def _fill(a, value):
    a = asarray_operand(a)
    if aval(a).dtype.kind in "biu":
        return a
    return uf.where(uf.isnan(a), convert(value, aval(a).dtype), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _unsupported("nansum", initial=initial)
    return red.sum(_fill(a, 0), axis=axis, dtype=dtype, keepdims=keepdims, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _unsupported("nanprod", initial=initial)
    return red.prod(_fill(a, 1), axis=axis, dtype=dtype, keepdims=keepdims, where=where)


def _nan_extremum(fn, fill, name):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _unsupported(name, where=where)
        a = asarray_operand(a)
        if aval(a).dtype.kind in "biu":
            return fn(a, axis=axis, keepdims=keepdims, initial=initial)
        out = fn(_fill(a, fill), axis=axis, keepdims=keepdims, initial=initial)
        all_nan = red.all(uf.isnan(a), axis=axis, keepdims=keepdims)
        return uf.where(all_nan, convert(np.nan, aval(out).dtype), out)
    f.__name__ = f.__qualname__ = name
    return f


nanmax = _nan_extremum(red.max, -np.inf, "nanmax")
nanmin = _nan_extremum(red.min, np.inf, "nanmin")


def _count(a, axis, keepdims, dtype):
    return red.sum(uf.logical_not(uf.isnan(a)), axis=axis, keepdims=keepdims, dtype=dtype)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean of the non-NaN elements (NaN where there are none)."""
    _unsupported("nanmean", where=where)
    a = asarray_operand(a)
    if aval(a).dtype.kind in "biu":
        return red.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    dt = dtype or inexact_dtype(aval(a).dtype)
    s = red.sum(_fill(a, 0), axis=axis, dtype=dt, keepdims=keepdims)
    real = np.finfo(dt).dtype                 # the count in s's real dtype, as JAX's
    return uf.divide(s, _count(a, axis, keepdims, real))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    _unsupported("nanvar", where=where)
    a = asarray_operand(a)
    if aval(a).dtype.kind in "biu":
        return red.var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    m = nanmean(a, axis=axis, dtype=dtype, keepdims=True)
    # zero the deviations at the NaNs before squaring: a NaN primal inside d * d would turn
    # the zero cotangent that reaches it into NaN in reverse mode
    d = uf.where(uf.isnan(a), convert(0, aval(m).dtype), uf.subtract(_fill(a, 0), m))
    sq = uf.real(uf.multiply(d, uf.conj(d))) if aval(d).dtype.kind == "c" else uf.multiply(d, d)
    s = red.sum(sq, axis=axis, keepdims=keepdims)
    n = _count(a, axis, keepdims, aval(s).dtype)
    dof = uf.subtract(n, ddof)
    return uf.where(uf.less_equal(dof, 0), convert(np.nan, aval(s).dtype), uf.divide(s, dof))


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    return uf.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where))


def _nan_arg(fn, fill, name):
    def f(a, axis=None, out=None, keepdims=False):
        a = asarray_operand(a)
        if aval(a).dtype.kind in "biu":
            return fn(a, axis=axis, keepdims=keepdims)
        res = fn(_fill(a, fill), axis=axis, keepdims=keepdims)
        all_nan = red.all(uf.isnan(a), axis=axis, keepdims=keepdims)
        return uf.where(all_nan, np.int64(-1), res)
    f.__name__ = f.__qualname__ = name
    return f


nanargmax = _nan_arg(red.argmax, -np.inf, "nanargmax")
nanargmin = _nan_arg(red.argmin, np.inf, "nanargmin")
