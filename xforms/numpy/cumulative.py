"""Cumulative functions of `xforms.numpy`: cumsum cumprod cumulative_sum cumulative_prod
nancumsum nancumprod diff ediff1d trapezoid.

cumsum/cumprod are the `cumsum`/`cumprod` primitives (xforms/primitives/cumulative.py);
bool operands accumulate as int64 and other integers keep their dtype, as in JAX.

    >>> xnp.cumsum(xnp.arange(4))      # [0, 1, 3, 6]
"""
import numpy as np

from ..primitives import cumulative as cp
from . import manipulation as man
from . import ufuncs as uf
from ._util import aval, asarray_operand, canon_axis, convert, dtype_arg


def _prepare(a, axis, dtype):
    a = asarray_operand(a)
    if axis is None:
        a, axis = man.ravel(a), 0
    if dtype is not None:
        a = convert(a, dtype_arg(dtype))
    elif aval(a).dtype.kind == "b":
        a = convert(a, np.int64)
    if aval(a).ndim == 0:
        a = man.reshape(a, (1,))
    return a, canon_axis(axis, aval(a).ndim)


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
            from .creation import full
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
            from ._util import broadcast_to
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
    """Integral by the trapezoid rule along axis."""
    from . import reductions as red
    y = asarray_operand(y)
    ax = canon_axis(axis, aval(y).ndim)
    n = aval(y).shape[ax]
    hi, lo = man.split(y, [1], ax)[1], man.split(y, [n - 1], ax)[0]
    avg = uf.divide(uf.add(hi, lo), 2.0)
    if x is None:
        return uf.multiply(red.sum(avg, axis=ax), dx)
    x = asarray_operand(x)
    if aval(x).ndim == 1:
        dxs = diff(x)
        shape = [1] * aval(y).ndim
        shape[ax] = aval(dxs).shape[0]
        dxs = man.reshape(dxs, tuple(shape))
    else:
        dxs = diff(x, axis=ax)
    return red.sum(uf.multiply(avg, dxs), axis=ax)


def gradient(f, *varargs, axis=None, edge_order=None):
    """Second-order central differences inside, first-order at the ends (NumPy's rule for
    unit or scalar spacing, or coordinate arrays)."""
    if edge_order not in (None, 1):
        raise NotImplementedError("gradient: edge_order=2 is not supported")
    f = asarray_operand(f)
    nd = aval(f).ndim
    axes = list(range(nd)) if axis is None else [
        canon_axis(a, nd) for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
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
        if np.ndim(h) == 0:
            mid = uf.divide(uf.subtract(sl(2, n), sl(0, n - 2)), 2.0 * h) if n > 2 else None
            first = uf.divide(uf.subtract(sl(1, 2), sl(0, 1)), h)
            last = uf.divide(uf.subtract(sl(n - 1, n), sl(n - 2, n - 1)), h)
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
    from ._util import float_of
    p = float_of(asarray_operand(p))
    ax = canon_axis(axis, aval(p).ndim)
    d = diff(p, axis=ax)
    half = period / 2
    discont = half if discont is None else discont
    dd = uf.subtract(uf.remainder(uf.add(d, half), period), half)
    dd = uf.where(uf.logical_and(uf.equal(dd, -half), uf.greater(d, 0)), half, dd)
    corr = uf.subtract(dd, d)
    corr = uf.where(uf.less(uf.abs(d), discont), 0.0, corr)
    n = aval(p).shape[ax]
    first = man.split(p, [1], ax)[0]
    rest = man.split(p, [1], ax)[1] if n > 1 else None
    if rest is None:
        return p
    return man.concatenate([first, uf.add(rest, cumsum(corr, axis=ax))], ax)
