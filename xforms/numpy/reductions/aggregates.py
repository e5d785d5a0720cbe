"""Reductions of `xforms.numpy`: sum mean prod max min argmax argmin var std all any norm."""
import builtins

import numpy as np

from ...core.trace import Tracer
from ...primitives import elementwise as ew
from ...primitives import reductions as red
from ...primitives import structural as st
from ...primitives.operands import (aval, asarray_operand, canon_axes, canon_axis, convert,
                                    dtype_arg, inexact_dtype, with_weak)


def _keep(x, out, axes, keepdims):
    out = with_weak(out, False)      # (a reduction is strongly typed, as jnp.sum of a weak x)
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else s for i, s in enumerate(aval(x).shape))
    return st.reshape(out, shape)


def _masked(a, where, fill, name):
    """`a` with the elements outside `where` (broadcast to a's shape) replaced by `fill`,
    the reduction's identity (jax.numpy's `where=`: a bool mask, as JAX requires).

    >>> _masked(xnp.arange(3), xnp.array([True, False, True]), 0, "sum")   # [0, 0, 2]
    """
    if where is None:
        return a
    from ..elementwise.ufuncs import where as select
    where = asarray_operand(where)
    if aval(where).dtype != np.bool_:
        raise ValueError(f"xnp.{name}: where= must be None or a boolean array, got "
                         f"{aval(where).dtype} (as in JAX); pass a mask such as `m != 0`")
    w = _bcast(where, aval(a).shape)
    return select(w, a, ew.like(fill, a))


def _lowest(dt, highest=False):
    if dt.kind == "b":
        return highest                  # (False is the least bool)
    if dt.kind in "iu":
        return np.iinfo(dt).max if highest else np.iinfo(dt).min
    return np.inf if highest else -np.inf


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


def _reducer(prim_fn, name, identity):
    def f(a, axis=None, dtype=None, keepdims=False, where=None):
        if type(a) is Tracer and dtype is None and where is None:
            dt = a._var.aval.dtype
            if dt.kind in "fc" and dt != np.float16:    # (no conversion: the common case)
                axes = canon_axes(axis, len(a._var.aval.shape))
                return _keep(a, prim_fn(a, axes) if axes else a, axes, keepdims)
        a = asarray_operand(a)
        out_dt = dtype_arg(dtype) if dtype is not None else _accumulated(aval(a).dtype)
        a, f16 = _upcast_f16(convert(a, out_dt))
        a = _masked(a, where, identity, name)
        axes = canon_axes(axis, aval(a).ndim)
        return _back(_keep(a, prim_fn(a, axes) if axes else a, axes, keepdims), f16)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"{name} over `axis` (None: all axes).\n\n"
                 f"    >>> xnp.{name}(xnp.ones((2, 3)), axis=1)")
    return f


sum = _reducer(red.reduce_sum, "sum", 0)
prod = _reducer(red.reduce_prod, "prod", 1)


def _extremum(prim_fn, name):
    def f(a, axis=None, keepdims=False, initial=None, where=None):
        a = asarray_operand(a)
        if where is not None:
            if initial is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so "
                                 "to use a where mask one has to specify 'initial'")
            a = _masked(a, where, _lowest(aval(a).dtype, highest=name == "min"), name)
        axes = canon_axes(axis, aval(a).ndim)
        if builtins.any(aval(a).shape[i] == 0 for i in axes) and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        out = _keep(a, prim_fn(a, axes) if axes else a, axes, keepdims)
        if initial is not None:
            from ..elementwise.ufuncs import maximum, minimum
            # converted to the operand's dtype, as JAX does (max of bools with initial=0 is
            # a bool; an int8's initial=1000 wraps to -24), never promoting the result
            initial = convert(asarray_operand(initial), aval(a).dtype)
            out = (maximum if name == "max" else minimum)(out, initial)
        return out
    f.__name__ = f.__qualname__ = name
    return f


max = _extremum(red.reduce_max, "max")
min = _extremum(red.reduce_min, "min")
amax, amin = max, min


def all(a, axis=None, keepdims=False, where=None):
    a = _masked(convert(asarray_operand(a), np.bool_), where, True, "all")
    axes = canon_axes(axis, aval(a).ndim)
    return _keep(a, red.reduce_and(a, axes) if axes else a, axes, keepdims)


def any(a, axis=None, keepdims=False, where=None):
    a = _masked(convert(asarray_operand(a), np.bool_), where, False, "any")
    axes = canon_axes(axis, aval(a).ndim)
    return _keep(a, red.reduce_or(a, axes) if axes else a, axes, keepdims)


def _count(a, axes):
    n = 1
    for i in axes:
        n *= aval(a).shape[i]
    return n


def _inexact(a, dtype):
    a = asarray_operand(a)
    if dtype is not None:
        return convert(a, dtype_arg(dtype))
    if aval(a).dtype.kind in "biu":
        return convert(a, inexact_dtype(aval(a).dtype))
    return a


def _norm(a, axis, keepdims, where, like, minus=0):
    """The element count of the reduction (over `where` when given), less `minus`, in the
    dtype of `like` (a real dtype for complex `a`'s variance)."""
    dt = aval(like).dtype
    if where is None:
        return ew.like(_count(a, canon_axes(axis, aval(a).ndim)) - minus, like)
    w = convert(_bcast(convert(asarray_operand(where), np.bool_), aval(a).shape), dt)
    n = sum(w, axis=axis, keepdims=keepdims)
    return ew.sub(n, ew.like(minus, n)) if minus else n


def mean(a, axis=None, dtype=None, keepdims=False, where=None):
    """Arithmetic mean (over `where`); integer inputs give floats as in JAX (int64 ->
    float64, narrower ones and bool -> float32; float16 is computed in float32).
    >>> xnp.mean(xnp.arange(4))"""
    a, f16 = _upcast_f16(_inexact(a, dtype))
    s = sum(a, axis=axis, keepdims=keepdims, where=where)
    return _back(ew.div(s, _norm(a, axis, keepdims, where, s)), f16)


def var(a, axis=None, dtype=None, ddof=0, keepdims=False, where=None):
    a, f16 = _upcast_f16(_inexact(a, dtype))
    m = mean(a, axis=axis, keepdims=True, where=where)
    d = ew.sub(a, _bcast(m, aval(a).shape))
    if aval(d).dtype.kind == "c":
        sq = ew.real(ew.mul(d, ew.conj(d)))
    else:
        sq = ew.mul(d, d)
    s = sum(sq, axis=axis, keepdims=keepdims, where=where)
    return _back(ew.div(s, _norm(a, axis, keepdims, where, s, ddof)), f16)


def std(a, axis=None, dtype=None, ddof=0, keepdims=False, where=None):
    return ew.sqrt(var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where))


def _bcast(x, shape):
    from ...primitives.operands import broadcast_to
    return broadcast_to(x, shape)


def _arg(prim_fn, name):
    def f(a, axis=None, keepdims=False):
        a = asarray_operand(a)
        if axis is None:
            from ..manipulation.shapes import ravel
            nd = aval(a).ndim
            out = prim_fn(ravel(a), 0)
            return st.reshape(out, (1,) * nd) if keepdims and nd else out
        ax = canon_axis(axis, aval(a).ndim)
        out = prim_fn(a, ax)
        return _keep(a, out, (ax,), keepdims)
    f.__name__ = f.__qualname__ = name
    return f


argmax = _arg(red.argmax, "argmax")
argmin = _arg(red.argmin, "argmin")

