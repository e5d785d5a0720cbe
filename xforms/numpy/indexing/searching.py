"""Positions of true elements, with JAX's static `size=` under transforms: nonzero argwhere
flatnonzero extract compress, and index arithmetic: unravel_index ravel_multi_index.

With `size`, the (k+1)-th true position is found as the number of positions whose running
count of trues is <= k (one comparison per position and k, fused into a reduction); slots
past the number of trues get `fill_value` (default 0).  Without `size` the input must be
concrete.

    >>> xf.jit(lambda x: xnp.nonzero(x, size=3))(np.array([0, 5, 0, 7]))  # ([1, 3, 0],)
"""
import numpy as np

from ...core import trace as core
from ...core import staging
from ...core.engine_prims import ints
from ...core.trace import Tracer
from ..manipulation import shapes as man
from ..reductions import aggregates as red
from ..elementwise import ufuncs as uf
from ...primitives.operands import aval, asarray_operand, convert
from ..reductions.cumulative import cumsum
from .subscripts import nonzero as _nonzero_concrete
from .subscripts import take


def _flat_positions(a, size, fill_value):
    """Flat indices of the first `size` nonzeros of a (int64), padded with fill_value."""
    mask = man.ravel(uf.not_equal(a, 0))
    n = aval(mask).shape[0]
    count = cumsum(mask)
    k = np.arange(size, dtype=np.int64)
    pos = red.sum(uf.less_equal(man.expand_dims(count, 0), k[:, None]), axis=1)
    valid = uf.less(k, red.sum(mask, dtype=np.int64))
    fill = 0 if fill_value is None else fill_value
    return uf.where(valid, uf.minimum(pos, np.int64(max(n - 1, 0))), convert(fill, np.int64)), \
        valid


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per dimension."""
    a = asarray_operand(a)
    if size is None:
        return _nonzero_concrete(a)
    shape = aval(a).shape
    if not shape:
        a, shape = man.reshape(a, (1,)), (1,)
    flat, valid = _flat_positions(a, int(size), None)
    out = unravel_index(flat, shape)
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * len(out)
        out = tuple(uf.where(valid, o, convert(f, np.int64)) for o, f in zip(out, fills))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(man.ravel(asarray_operand(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """(count, ndim) array of the indices of nonzero elements."""
    a = asarray_operand(a)
    if aval(a).ndim == 0:                    # NumPy: one row per true value, no columns
        rows = nonzero(man.reshape(a, (1,)), size=size, fill_value=fill_value)[0]
        return man.reshape(rows, (aval(rows).shape[0], 1))[:, :0]
    return man.stack(nonzero(a, size=size, fill_value=fill_value), 1)


def extract(condition, arr, *, size=None, fill_value=0):
    """Elements of arr where condition (both flattened); static size under transforms."""
    arr = man.ravel(asarray_operand(arr))
    cond = man.ravel(asarray_operand(condition))
    if size is None:
        idx = _nonzero_concrete(cond)[0]
        return take(arr, idx)
    flat, valid = _flat_positions(cond, int(size), None)
    return uf.where(valid, take(arr, flat), convert(fill_value, aval(arr).dtype))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """Slices of a along axis where the 1-D condition holds."""
    a = asarray_operand(a)
    if axis is None:
        a, axis = man.ravel(a), 0
    cond = asarray_operand(condition)
    if aval(cond).ndim != 1:        # (NumPy and jax: a 0-d or 2-d condition is an error)
        raise ValueError(f"compress: condition must be a 1-D array, got shape "
                         f"{aval(cond).shape}")
    n = aval(a).shape[axis]
    if aval(cond).shape[0] > n:
        raise ValueError("compress: condition is longer than the axis")
    if size is None:
        val = staging.known_value(cond) if isinstance(cond, Tracer) else np.asarray(cond)
        if val is None:
            raise core.ConcretizationError("compress: pass size= under a transform")
        return take(a, np.nonzero(np.asarray(val))[0], axis=axis)
    flat, valid = _flat_positions(cond, int(size), None)
    picked = take(a, flat, axis=axis)
    shape = [1] * aval(picked).ndim
    shape[axis % aval(picked).ndim] = int(size)
    return uf.where(man.reshape(valid, tuple(shape)), picked,
                    convert(fill_value, aval(a).dtype))


def unravel_index(indices, shape):
    """Tuple of coordinate arrays for flat indices into shape (C order), as JAX: the sizes
    may be traced scalars; an index in [-size, -1] counts from the end, one beyond either
    end gives the nearest corner.  The dtype is the indices' promoted with the sizes' (a
    Python int size keeps int32 indices int32; bool indices become int64).

        >>> xnp.unravel_index(np.array([5, -1]), (3, 4))     # ([1, 2], [1, 3])
    """
    idx = asarray_operand(indices)
    if aval(idx).dtype.kind not in "iu":
        idx = convert(idx, np.int64)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any((aval(s).ndim if isinstance(s, Tracer) else np.ndim(s)) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out = [None] * len(shape)
    for i in reversed(range(len(shape))):     # floor divmod, as JAX
        out[i] = uf.remainder(idx, shape[i])
        idx = uf.floor_divide(idx, shape[i])
    over = uf.greater(idx, 0)                # past the end: the last element
    under = uf.less(idx, -1) if aval(idx).dtype.kind == "i" else False
    return tuple(uf.where(over, s - 1, uf.where(under, 0, o))      # (a Python int stays weak)
                 for s, o in zip(shape, out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices of coordinate arrays (mode 'clip' or 'wrap'; 'raise' needs concrete
    values, as in JAX), in the indices' integer dtype (jax's result_type(int, *indices)).

        >>> ravel_multi_index((xnp.int8([1]), xnp.int8([2])), (3, 4))     # int8 [6]
    """
    dims = ints(dims, "ravel_multi_index's dims")
    if len(multi_index) != len(dims):
        raise ValueError("ravel_multi_index: one index array per dimension is needed")
    from ..array_api import result_type
    dtype = np.dtype(dtype if dtype is not None else result_type(
        int, *[asarray_operand(i) for i in multi_index]))
    if dtype.kind not in "iu":
        raise ValueError(f"ravel_multi_index: dtype={dtype} is not an integer type")
    if int(np.prod(dims, dtype=object)) - 1 > np.iinfo(dtype).max:
        raise ValueError(f"ravel_multi_index: dtype={dtype} cannot hold the flat indices of "
                         f"dims={dims}; pass dtype= (as in JAX)")
    if order not in ("C", "F"):
        raise ValueError("ravel_multi_index: order must be 'C' or 'F'")
    idx = [convert(asarray_operand(i), np.int64) for i in multi_index]
    if mode == "raise":
        for i, d in zip(idx, dims):
            val = staging.known_value(i) if isinstance(i, Tracer) else np.asarray(i)
            if val is None:
                raise core.ConcretizationError("ravel_multi_index: mode='raise' needs concrete "
                                               "indices; use mode='clip' or 'wrap'")
            if np.any((np.asarray(val) < 0) | (np.asarray(val) >= d)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        idx = [uf.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [uf.remainder(i, np.int64(d)) for i, d in zip(idx, dims)]
    else:
        raise ValueError(f"ravel_multi_index: invalid mode {mode!r}")
    order_dims = list(range(len(dims))) if order == "C" else list(reversed(range(len(dims))))
    out, stride = None, 1
    for k in reversed(order_dims):
        term = uf.multiply(idx[k], np.int64(stride))
        out = term if out is None else uf.add(out, term)
        stride *= dims[k]
    if out is None:                 # (no dimensions: the flat index 0, jax's)
        from ..creation.constructors import zeros
        return zeros((), dtype)
    return convert(out, dtype)

