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


def _reducer(prim_fn, name, int_to=None):
    def f(a, axis=None, dtype=None, keepdims=False):
        a = asarray_operand(a)
        dt = aval(a).dtype
        if dtype is not None:
            a = convert(a, dtype_arg(dtype))
        elif dt.kind == "b" and int_to is not None:
            a = convert(a, int_to)
        elif dt == np.int32 and int_to is not None:
            a = convert(a, np.int64)
        axes = canon_axes(axis, aval(a).ndim)
        return _keep(a, prim_fn(a, axes) if axes else a, axes, keepdims)
    f.__name__ = name
    f.__doc__ = (f"{name} over `axis` (None: all axes).\n\n"
                 f"    >>> xnp.{name}(xnp.ones((2, 3)), axis=1)")
    return f


sum = _reducer(red.reduce_sum, "sum", int_to=np.int64)
prod = _reducer(red.reduce_prod, "prod", int_to=np.int64)


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
    """Arithmetic mean; integer inputs give floats as in JAX (int64 -> float64, int32/bool ->
    float32).  >>> xnp.mean(xnp.arange(4))"""
    a = asarray_operand(a)
    if dtype is not None:
        a = convert(a, dtype_arg(dtype))
    elif aval(a).dtype.kind in "biu":
        a = convert(a, inexact_dtype(aval(a).dtype))
    axes = canon_axes(axis, aval(a).ndim)
    s = sum(a, axis=axis, keepdims=keepdims)
    return ew.div(s, ew._like(_count(a, axes), s))


def var(a, axis=None, dtype=None, ddof=0, keepdims=False):
    a = asarray_operand(a)
    if dtype is not None:
        a = convert(a, dtype_arg(dtype))
    elif aval(a).dtype.kind in "biu":
        a = convert(a, inexact_dtype(aval(a).dtype))
    axes = canon_axes(axis, aval(a).ndim)
    m = mean(a, axis=axis, keepdims=True)
    d = ew.sub(a, _bcast(m, aval(a).shape))
    if aval(d).dtype.kind == "c":
        sq = ew.real(ew.mul(d, ew.conj(d)))
    else:
        sq = ew.mul(d, d)
    s = sum(sq, axis=axis, keepdims=keepdims)
    return ew.div(s, ew._like(_count(a, axes) - ddof, s))


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

