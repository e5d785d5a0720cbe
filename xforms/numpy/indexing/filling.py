"""Functional versions of NumPy's in-place writers (JAX requires inplace=False):
fill_diagonal, place, put.

    >>> xnp.fill_diagonal(xnp.zeros((3, 3)), 1.0, inplace=False)
"""
import numpy as np

from ..manipulation import shapes as man
from ...primitives.operands import aval, asarray_operand
from .subscripts import IndexUpdateRef


def _inplace(name, inplace, error=ValueError):
    """JAX's refusal of the default inplace=True: ValueError for put and place,
    NotImplementedError for fill_diagonal (jax 0.10.2's classes)."""
    if inplace:
        raise error(f"{name}: xforms arrays are immutable; pass inplace=False and use the "
                    f"returned array")


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with its main diagonal set to val (repeated as needed)."""
    _inplace("fill_diagonal", inplace, NotImplementedError)
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not supported (as in JAX)")
    a = asarray_operand(a)
    shape = aval(a).shape
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    pos = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    if len(shape) == 2:
        n, m = shape
        flat = np.arange(n * m)[:m * m][::m + 1]
    else:
        flat = np.array([pos[(i,) * len(shape)] for i in range(shape[0])])
    v = man.ravel(asarray_operand(val))
    k = aval(v).shape[0]
    vals = v if k == len(flat) else man.tile(v, -(-len(flat) // max(k, 1)))[:len(flat)]
    return man.reshape(IndexUpdateRef(man.ravel(a), flat)._scatter(vals, "set"), shape)


def place(arr, mask, vals, *, inplace=True):
    """arr with the positions where mask is true set to vals, cycled in order (the i-th
    true position gets vals[i % len(vals)]; the mask may be traced)."""
    _inplace("place", inplace)
    from ..elementwise import ufuncs as uf
    from ...primitives.operands import broadcast_to, convert
    from ..reductions.cumulative import cumsum
    from .subscripts import take
    arr = asarray_operand(arr)
    m = man.ravel(broadcast_to(convert(asarray_operand(mask), np.bool_), aval(arr).shape))
    n = aval(m).shape[0]
    v = man.ravel(convert(asarray_operand(vals), aval(arr).dtype))
    k = aval(v).shape[0]
    if k == 0:
        raise ValueError("Cannot place values from an empty array")
    if n == 0:
        return arr
    rank = uf.subtract(cumsum(m), np.int64(1))           # which true position this is
    picked = take(v, uf.remainder(uf.maximum(rank, np.int64(0)), np.int64(k)))
    return man.reshape(uf.where(m, picked, man.ravel(arr)), aval(arr).shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """a with the flat positions ind set to v (mode 'clip' or 'wrap'; default clip)."""
    _inplace("put", inplace)
    a = asarray_operand(a)
    from ..elementwise import ufuncs as uf
    size = aval(a).size
    ind = man.ravel(asarray_operand(ind))
    if mode == "wrap":
        ind = uf.remainder(ind, size)
    elif mode in (None, "clip", "fill"):
        ind = uf.where(uf.less(ind, 0), uf.add(ind, size), ind) if mode is None else ind
        ind = uf.clip(ind, 0, size - 1)
    else:
        raise ValueError(f"put: mode must be 'clip' or 'wrap', got {mode!r}")
    vals = man.ravel(asarray_operand(v))
    n = aval(ind).shape[0]
    k = aval(vals).shape[0]
    vals = man.tile(vals, -(-n // max(k, 1)))[:n] if k != n else vals
    return man.reshape(IndexUpdateRef(man.ravel(a), ind)._scatter(vals, "set"), aval(a).shape)
