"""Reductions of `xforms.numpy`: sum mean prod max min argmax argmin var std all any norm."""
import builtins

import numpy as np

from ..primitives import elementwise as ew
from ..primitives import reductions as red
from ..primitives import structural as st
from ._util import aval, asarray_operand, canon_axes, canon_axis, convert, dtype_arg, inexact_dtype


def _keep(x, out, axes, keepdims):
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else s for i, s in enumerate(aval(x).shape))
    return st.reshape(out, shape)


def _accumulated(dtype):
    """JAX's result dtype of sum/prod (x64 mode): bool and signed integers narrower than 64
    bits give int64, narrower unsigned ones uint64."""
    if dtype.kind == "b" or (dtype.kind == "i" and dtype.itemsize < 8):
        return np.dtype(np.int64)
    return np.dtype(np.uint64) if dtype.kind == "u" and dtype.itemsize < 8 else dtype


def _upcast_f16(a):
    """(a, was_f16): float16 is accumulated in float32 as in JAX; `_back` rounds the result."""
    f16 = aval(a).dtype == np.float16
    return (convert(a, np.float32) if f16 else a), f16


def _back(out, f16):
    return convert(out, np.float16) if f16 else out


def _reducer(prim_fn, name):
    def f(a, axis=None, dtype=None, keepdims=False):
        a = asarray_operand(a)
        out_dt = dtype_arg(dtype) if dtype is not None else _accumulated(aval(a).dtype)
        a, f16 = _upcast_f16(convert(a, out_dt))
        axes = canon_axes(axis, aval(a).ndim)
        return _back(_keep(a, prim_fn(a, axes) if axes else a, axes, keepdims), f16)
    f.__name__ = name
    f.__doc__ = (f"{name} over `axis` (None: all axes).\n\n"
                 f"    >>> xnp.{name}(xnp.ones((2, 3)), axis=1)")
    return f


sum = _reducer(red.reduce_sum, "sum")
prod = _reducer(red.reduce_prod, "prod")


def _extremum(prim_fn, name):
    def f(a, axis=None, keepdims=False, initial=None):
        a = asarray_operand(a)
        axes = canon_axes(axis, aval(a).ndim)
        if builtins.any(aval(a).shape[i] == 0 for i in axes) and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        out = _keep(a, prim_fn(a, axes) if axes else a, axes, keepdims)
        if initial is not None:
            from .ufuncs import maximum, minimum
            out = (maximum if name == "max" else minimum)(out, initial)
        return out
    f.__name__ = name
    return f


max = _extremum(red.reduce_max, "max")
min = _extremum(red.reduce_min, "min")
amax, amin = max, min


def all(a, axis=None, keepdims=False):
    a = convert(asarray_operand(a), np.bool_)
    axes = canon_axes(axis, aval(a).ndim)
    return _keep(a, red.reduce_and(a, axes) if axes else a, axes, keepdims)


def any(a, axis=None, keepdims=False):
    a = convert(asarray_operand(a), np.bool_)
    axes = canon_axes(axis, aval(a).ndim)
    return _keep(a, red.reduce_or(a, axes) if axes else a, axes, keepdims)


def _count(a, axes):
    n = 1
    for i in axes:
        n *= aval(a).shape[i]
    return n


def mean(a, axis=None, dtype=None, keepdims=False):
    """Arithmetic mean; integer inputs give floats as in JAX (int64 -> float64, narrower
    ones and bool -> float32; float16 is computed in float32).  >>> xnp.mean(xnp.arange(4))"""
    a = asarray_operand(a)
    if dtype is not None:
        a = convert(a, dtype_arg(dtype))
    elif aval(a).dtype.kind in "biu":
        a = convert(a, inexact_dtype(aval(a).dtype))
    a, f16 = _upcast_f16(a)
    axes = canon_axes(axis, aval(a).ndim)
    s = sum(a, axis=axis, keepdims=keepdims)
    return _back(ew.div(s, ew._like(_count(a, axes), s)), f16)


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    a = asarray_operand(a)
    if dtype is not None:
        a = convert(a, dtype_arg(dtype))
    elif aval(a).dtype.kind in "biu":
        a = convert(a, inexact_dtype(aval(a).dtype))
    a, f16 = _upcast_f16(a)
    axes = canon_axes(axis, aval(a).ndim)
    m = mean(a, axis=axis, keepdims=True)
    d = ew.sub(a, _bcast(m, aval(a).shape))
    if aval(d).dtype.kind == "c":
        sq = ew.real(ew.mul(d, ew.conj(d)))
    else:
        sq = ew.mul(d, d)
    s = sum(sq, axis=axis, keepdims=keepdims)
    return _back(ew.div(s, ew._like(_count(a, axes) - ddof, s)), f16)


def std(a, axis=None, dtype=None, ddof=0, keepdims=False):
    return ew.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


def _bcast(x, shape):
    from ._util import broadcast_to
    return broadcast_to(x, shape)


def _arg(prim_fn, name):
    def f(a, axis=None, keepdims=False):
        a = asarray_operand(a)
        if axis is None:
            from .manipulation import ravel
            nd = aval(a).ndim
            out = prim_fn(ravel(a), 0)
            return st.reshape(out, (1,) * nd) if keepdims and nd else out
        ax = canon_axis(axis, aval(a).ndim)
        out = prim_fn(a, ax)
        return _keep(a, out, (ax,), keepdims)
    f.__name__ = name
    return f


argmax = _arg(red.argmax, "argmax")
argmin = _arg(red.argmin, "argmin")

