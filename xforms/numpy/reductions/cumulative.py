"""Cumulative functions of `xforms.numpy`: cumsum cumprod cumulative_sum cumulative_prod
nancumsum nancumprod diff ediff1d trapezoid.

cumsum/cumprod are the `cumsum`/`cumprod` primitives (xforms/primitives/cumulative.py);
bool operands accumulate as int64 and other integers keep their dtype, as in JAX.

    >>> xnp.cumsum(xnp.arange(4))      # [0, 1, 3, 6]
"""
import numpy as np

from ...errors import AxisError
from ...primitives import cumulative as cp
from ..manipulation import shapes as man
from ..elementwise import ufuncs as uf
from ...primitives.operands import (aval, asarray_operand, canon_axis, convert, dtype_arg,
                                    promote_keep_shapes, with_weak)


def _prepare(a, axis, dtype):
    a = asarray_operand(a)
    if axis is None:
        a, axis = man.ravel(a), 0
    elif aval(a).ndim == 0:       # (JAX's ValueError; NumPy's cumsum takes axis 0 and -1)
        raise AxisError(f"axis {axis} is out of bounds for array of dimension 0")
    if dtype is not None:
        a = convert(a, dtype_arg(dtype))
    elif aval(a).dtype.kind == "b":
        a = convert(a, np.int64)
    if aval(a).ndim == 0:
        a = man.reshape(a, (1,))
    # (strongly typed, as jnp.cumsum of a weak x)
    return with_weak(a, False), canon_axis(axis, aval(a).ndim)


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sum along axis (flattened when None)."""
    a, ax = _prepare(a, axis, dtype)
    return cp.cumsum(a, ax)


def cumprod(a, axis=None, dtype=None, out=None):
    a, ax = _prepare(a, axis, dtype)
    return cp.cumprod(a, ax)


def _cumulative(prim_fn, identity, name, widen=False):
    """The array API's cumulative_sum/prod; `widen`: integers accumulate as int64 or
    uint64 as sum does (JAX's cumulative_sum of int32 is int64; its cumsum keeps int32)."""
    def f(x, /, *, axis=None, dtype=None, include_initial=False):
        x = asarray_operand(x)
        if aval(x).ndim == 0:      # (the array API's rule, which JAX follows; cumsum takes one)
            raise ValueError(f"{name}: The input must be non-scalar to take a cumulative "
                             f"{'product' if identity == 1 else 'sum'}, however a scalar value or scalar "
                             "array was given (as in JAX; reshape it to (1,) first)")
        if axis is None:
            if aval(x).ndim > 1:
                raise ValueError(f"{name}: axis must be given for arrays of more than one "
                                 f"dimension")
            axis = 0
        if widen and dtype is None and aval(x).dtype.kind in "iu":
            dtype = np.uint64 if aval(x).dtype.kind == "u" else np.int64
        a, ax = _prepare(x, axis, dtype)
        out = prim_fn(a, ax)
        if include_initial:
            shape = list(aval(out).shape)
            shape[ax] = 1
            from ..creation.constructors import full
            out = man.concatenate([full(shape, identity, aval(out).dtype), out], ax)
        return out
    f.__name__ = f.__qualname__ = name
    return f


cumulative_sum = _cumulative(cp.cumsum, 0, "cumulative_sum", widen=True)
cumulative_prod = _cumulative(cp.cumprod, 1, "cumulative_prod")


def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum with NaNs counted as zero."""
    a = asarray_operand(a)
    return cumsum(uf.where(uf.isnan(a), 0, a), axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    a = asarray_operand(a)
    return cumprod(uf.where(uf.isnan(a), 1, a), axis, dtype)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """n-th discrete difference along axis.  >>> xnp.diff(xnp.array([1, 4, 9]))  # [3, 5]"""
    a = asarray_operand(a)
    nd = aval(a).ndim
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = canon_axis(axis, nd)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")

    def side(v):
        v = asarray_operand(v)
        if aval(v).ndim == 0:
            shape = list(aval(a).shape)
            shape[ax] = 1
            from ...primitives.operands import broadcast_to
            v = broadcast_to(v, tuple(shape))
        return v
    if prepend is not None or append is not None:
        seq = ([side(prepend)] if prepend is not None else []) + [a] + (
            [side(append)] if append is not None else [])
        a = man.concatenate(seq, ax)
    is_bool = aval(a).dtype.kind == "b"
    for _ in range(n):
        m = aval(a).shape[ax]
        if m == 0:
            break
        hi, lo = man.split(a, [1], ax)[1], man.split(a, [m - 1], ax)[0]
        a = uf.not_equal(hi, lo) if is_bool else uf.subtract(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with optional values before and after."""
    d = diff(man.ravel(asarray_operand(ary)))
    seq = []
    if to_begin is not None:
        seq.append(convert(man.ravel(asarray_operand(to_begin)), aval(d).dtype))
    seq.append(d)
    if to_end is not None:
        seq.append(convert(man.ravel(asarray_operand(to_end)), aval(d).dtype))
    return man.concatenate(seq, 0) if len(seq) > 1 else d


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral by the trapezoid rule along axis, as JAX computes it: with one spacing,
    dx * (sum(y) - (y[0] + y[-1]) / 2) (an infinite end gives NaN there, as in JAX).
    >>> xnp.trapezoid(xnp.array([1.0, 2.0, 4.0]))      # 4.5"""
    from . import aggregates as red
    if x is None:
        (y,) = promote_keep_shapes((y,), inexact=True)
        d = asarray_operand(dx)
        if aval(d).ndim > 0:
            d = man.expand_dims(d, tuple(range(aval(y).ndim - aval(d).ndim)))
            d = man.moveaxis(d, axis, -1)
    else:
        y, x = promote_keep_shapes((y, x), inexact=True)
        d = diff(x) if aval(x).ndim == 1 else man.moveaxis(diff(x, axis=axis), axis, -1)
    y = man.moveaxis(y, axis, -1)
    if aval(d).ndim == 0 or aval(d).shape[-1] == 1:
        d = d if aval(d).ndim == 0 else d[..., 0]
        ends = uf.multiply(0.5, uf.add(y[..., 0], y[..., -1]))
        return uf.multiply(d, uf.subtract(red.sum(y, axis=-1), ends))
    return uf.multiply(0.5, red.sum(uf.multiply(d, uf.add(y[..., 1:], y[..., :-1])), axis=-1))


def gradient(f, *varargs, axis=None, edge_order=None):
    """Second-order central differences inside, first-order at the ends (NumPy's rule for
    unit or scalar spacing, or coordinate arrays)."""
    if edge_order not in (None, 1):
        raise NotImplementedError("gradient: edge_order=2 is not supported")
    f, *varargs = promote_keep_shapes((f,) + varargs, inexact=True)    # JAX's dtypes
    nd = aval(f).ndim
    axes = list(range(nd)) if axis is None else [
        canon_axis(a, nd) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    if len(varargs) == 0:
        # unit spacing: no division at all, as XLA folds jax's x / 1.0 away (a complex
        # division by 1 would make inf+2j inf+nanj)
        spacing = [None] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError("gradient: invalid number of spacing arguments")
    out = []
    for ax, h in zip(axes, spacing):
        n = aval(f).shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        sl = lambda lo, hi: man.split(man.split(f, [hi], ax)[0], [lo], ax)[1]
        if h is None or np.ndim(h) == 0:
            over_h = (lambda v: v) if h is None else (lambda v: uf.divide(v, h))
            mid = over_h(uf.multiply(uf.subtract(sl(2, n), sl(0, n - 2)), 0.5)) \
                if n > 2 else None
            first = over_h(uf.subtract(sl(1, 2), sl(0, 1)))
            last = over_h(uf.subtract(sl(n - 1, n), sl(n - 2, n - 1)))
        else:
            x = asarray_operand(h)
            dx = diff(x)
            shape = [1] * nd
            def col(v, k):
                shape_k = list(shape)
                shape_k[ax] = k
                return man.reshape(v, tuple(shape_k))
            first = uf.divide(uf.subtract(sl(1, 2), sl(0, 1)), col(dx[:1], 1))
            last = uf.divide(uf.subtract(sl(n - 1, n), sl(n - 2, n - 1)), col(dx[-1:], 1))
            mid = None
            if n > 2:
                h1, h2 = col(dx[:-1], n - 2), col(dx[1:], n - 2)
                a = uf.divide(uf.negative(h2), uf.multiply(h1, uf.add(h1, h2)))
                b = uf.divide(uf.subtract(h2, h1), uf.multiply(h1, h2))
                c = uf.divide(h1, uf.multiply(h2, uf.add(h1, h2)))
                mid = uf.add(uf.add(uf.multiply(a, sl(0, n - 2)), uf.multiply(b, sl(1, n - 1))),
                             uf.multiply(c, sl(2, n)))
        parts = [first] + ([mid] if mid is not None else []) + [last]
        out.append(man.concatenate(parts, ax))
    return out[0] if len(out) == 1 else out


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Remove jumps larger than discont (default period/2) by adding multiples of period."""
    from ...primitives.operands import promote
    if np.dtype(aval(asarray_operand(p)).dtype).kind == "c":
        raise ValueError("unwrap: complex inputs are not supported (as jnp.unwrap)")
    p, period = promote(p, period, name="unwrap")     # JAX's dtype: int32 p is float64
    ax = canon_axis(axis, aval(p).ndim)
    d = diff(p, axis=ax)
    half = period // 2 if aval(p).dtype.kind in "iu" else period / 2
    discont = period / 2 if discont is None else discont
    dd = uf.subtract(uf.remainder(uf.add(d, half), period), half)
    dd = uf.where(uf.logical_and(uf.equal(dd, -half), uf.greater(d, 0)), half, dd)
    corr = uf.subtract(dd, d)
    corr = uf.where(uf.less(uf.abs(d), discont), 0, corr)
    n = aval(p).shape[ax]
    first = man.split(p, [1], ax)[0]
    rest = man.split(p, [1], ax)[1] if n > 1 else None
    if rest is None:
        return p
    return man.concatenate([first, uf.add(rest, cumsum(corr, axis=ax))], ax)
