"""Matrix-shaped helpers of `xforms.numpy`: trace diagonal diag diagflat tril triu
tril_indices triu_indices (and *_from) diag_indices kron cross vander rot90 roll.

Index sets are static (computed with NumPy), so each function is a gather, a scatter or a
masked select: linear, differentiable and batchable through those primitives.

    >>> xnp.trace(xnp.eye(3))      # 3.0
"""
import operator

import numpy as np

from ...core.trace import Tracer
from ...primitives import elementwise as ew
from ...primitives import indexing as pix
from ...primitives import structural as st
from ..manipulation import shapes as man
from ..reductions import aggregates as red
from ..elementwise import ufuncs as uf
from ...primitives.operands import aval, asarray, asarray_operand, canon_axis, convert
from ..indexing.subscripts import IndexUpdateRef, getitem


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal over axes (axis1, axis2) as the last axis.  >>> xnp.diagonal(xnp.eye(2))"""
    a = asarray_operand(a)
    nd = aval(a).ndim
    if nd < 2:
        raise ValueError("diagonal requires an array of at least two dimensions")
    a1, a2 = canon_axis(axis1, nd), canon_axis(axis2, nd)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    a = man.moveaxis(a, (a1, a2), (-2, -1))
    n, m = aval(a).shape[-2:]
    i = np.arange(max(0, -offset), min(n, m - offset)) if offset <= m else np.arange(0)
    i = i[i < n] if len(i) else i
    return getitem(a, (Ellipsis, i, i + offset))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum of a diagonal.  >>> xnp.trace(xnp.ones((2, 2)))"""
    return red.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v, k=0):
    """A 1-D v: the square matrix with v on diagonal k; a 2-D v: its k-th diagonal."""
    v = asarray_operand(v)
    nd = aval(v).ndim
    if nd == 2:
        return diagonal(v, k)
    if nd != 1:
        raise ValueError("diag: the input must be 1-D or 2-D")
    n = aval(v).shape[0] + abs(k)
    i = np.arange(aval(v).shape[0])
    rows, cols = (i, i + k) if k >= 0 else (i - k, i)
    from .constructors import zeros
    return IndexUpdateRef(zeros((n, n), aval(v).dtype), (rows, cols))._scatter(v, "set")


def diagflat(v, k=0):
    return diag(man.ravel(v), k)


def _tri_mask(shape, k, lower):
    n, m = shape[-2:]
    mask = np.tri(n, m, k, dtype=bool)
    return mask if lower else ~np.tri(n, m, k - 1, dtype=bool)


def _masked(m, k, lower, name):
    m = asarray_operand(m)
    if aval(m).ndim < 2:
        raise ValueError(f"{name}: the input must be at least 2-D, got shape {aval(m).shape}")
    mask = _tri_mask(aval(m).shape, k, lower)
    from .constructors import zeros_like
    return uf.where(mask, m, zeros_like(m))


def tril(m, k=0):
    """Lower triangle (elements above diagonal k are zero), over the last two axes."""
    return _masked(m, k, True, "tril")


def triu(m, k=0):
    return _masked(m, k, False, "triu")


def _tri_sizes(n, k, m):
    """n, k, m as Python ints (operator.index, as jax reads them): a uint8 n stays out of
    NumPy's uint8 arithmetic (its n - 1 overflowed) and a float n is refused as jax does."""
    return operator.index(n), operator.index(k), None if m is None else operator.index(m)


def tril_indices(n, k=0, m=None):
    """The indices of the lower triangle of an (n, m) array, from diagonal k down.

        >>> xnp.tril_indices(2)            # (Array([0, 1, 1]), Array([0, 0, 1]))
    """
    from ...primitives.operands import wrap_result
    return tuple(wrap_result(i) for i in np.tril_indices(*_tri_sizes(n, k, m)))


def triu_indices(n, k=0, m=None):
    """The indices of the upper triangle of an (n, m) array, from diagonal k up.

        >>> xnp.triu_indices(2)            # (Array([0, 0, 1]), Array([0, 1, 1]))
    """
    from ...primitives.operands import wrap_result
    return tuple(wrap_result(i) for i in np.triu_indices(*_tri_sizes(n, k, m)))


def tril_indices_from(arr, k=0):
    n, m = aval(arr).shape[-2:]
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    n, m = aval(arr).shape[-2:]
    return triu_indices(n, k, m)


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an n x n ... array, as jnp's: default-int
    arrays.  >>> xnp.diag_indices(2)   # (Array([0, 1]), Array([0, 1]))"""
    from ...primitives.operands import wrap_result
    # as ints first: NumPy's arange of a uint64 n is float64 (uint64 + int promotes)
    n, ndim = operator.index(n), operator.index(ndim)
    return tuple(wrap_result(i) for i in np.diag_indices(n, ndim))


def diag_indices_from(arr):
    """diag_indices of a square array of two or more axes (others refused, as NumPy and jax).

        >>> xnp.diag_indices_from(xnp.eye(2))       # (Array([0, 1]), Array([0, 1]))
    """
    shape = aval(arr).shape
    if len(shape) < 2:
        raise ValueError(f"diag_indices_from: input array must be at least 2-d, got shape "
                         f"{shape}")
    if len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: all dimensions of input must be of equal "
                         f"length, got shape {shape}")
    return diag_indices(shape[0], len(shape))


def kron(a, b):
    """Kronecker product.  >>> xnp.kron(xnp.eye(2), xnp.ones((2, 2)))"""
    a, b = asarray_operand(a), asarray_operand(b)
    sa, sb = aval(a).shape, aval(b).shape
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    a = man.reshape(a, tuple(x for s in sa for x in (s, 1)))
    b = man.reshape(b, tuple(x for s in sb for x in (1, s)))
    return man.reshape(uf.multiply(a, b), tuple(x * y for x, y in zip(sa, sb)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors along the given axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = man.moveaxis(asarray_operand(a), axisa, -1)
    b = man.moveaxis(asarray_operand(b), axisb, -1)
    na, nb = aval(a).shape[-1], aval(b).shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product (dimension must be 2 or 3)")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if na == 3 else None
    b2 = b[..., 2] if nb == 3 else None
    z = uf.subtract(uf.multiply(a0, b1), uf.multiply(a1, b0))
    if na == 2 and nb == 2:
        return z
    a2 = a2 if a2 is not None else 0
    b2 = b2 if b2 is not None else 0
    x = uf.subtract(uf.multiply(a1, b2), uf.multiply(a2, b1))
    y = uf.subtract(uf.multiply(a2, b0), uf.multiply(a0, b2))
    x, y, z = man.broadcast_arrays(x, y, z)
    return man.moveaxis(asarray([x, y, z]), 0, axisc)     # (strong, as jnp.cross's array)


def vander(x, N=None, increasing=False):
    """Columns are powers of x (decreasing by default), built by repeated multiplication."""
    x = asarray_operand(x)
    if aval(x).ndim != 1:
        raise ValueError("vander: x must be a one-dimensional array")
    if aval(x).dtype == np.bool_:          # (jax 0.10.2's iota refuses bool: TypeError)
        raise TypeError("vander: x of dtype bool is not accepted (as in JAX); cast it to "
                        "an integer or float dtype first")
    N = aval(x).shape[0] if N is None else int(N)
    from .constructors import ones_like
    cols, p = [], ones_like(x)
    for _ in range(N):
        cols.append(p)
        p = uf.multiply(p, x)
    if not cols:
        from .constructors import zeros
        return zeros((aval(x).shape[0], 0), aval(x).dtype)
    out = man.stack(cols if increasing else cols[::-1], axis=1)
    return out


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees k times in the plane of `axes`."""
    m = asarray_operand(m)
    nd = aval(m).ndim
    a0, a1 = canon_axis(axes[0], nd), canon_axis(axes[1], nd)
    if a0 == a1:
        raise ValueError("rot90: axes must be different")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return man.flip(man.flip(m, a0), a1)
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return man.transpose(man.flip(m, a1), perm)
    return man.flip(man.transpose(m, perm), a1)


def _roll1(a, shift, ax):
    n = aval(a).shape[ax]
    if n == 0:
        return a
    if isinstance(shift, Tracer):
        from ...primitives.elementwise import rem
        s = convert(convert(shift, np.int32), np.int64)     # (JAX: an int32 shift)
        start = ew.sub(np.int64(n), rem(ew.add(rem(s, np.int64(n)), np.int64(n)), np.int64(n)))
        doubled = man.concatenate([a, a], axis=ax)
        starts = [np.int64(0)] * aval(a).ndim
        starts[ax] = start
        return pix.dynamic_slice(doubled, starts, aval(a).shape)
    s = int(shift) % n
    if s == 0:
        return a
    parts = man.split(a, [n - s], axis=ax)
    return man.concatenate([parts[1], parts[0]], axis=ax)


def roll(a, shift, axis=None):
    """Shift elements along axes, wrapping around; a traced shift uses a dynamic slice.  As
    JAX, shift may be a sequence or a 0-d or 1-d array (traced or not, float shifts truncate
    to integers), broadcast against the axes and applied in turn.

    >>> xnp.roll(xnp.arange(4), 1)     # [3, 0, 1, 2]"""
    a = asarray_operand(a)
    if axis is None:
        return man.reshape(roll(man.ravel(a), shift, 0), aval(a).shape)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    shifts = _shift_list(shift)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length")
    nd = aval(a).ndim
    for s, ax in zip(shifts, axes):
        a = _roll1(a, s, canon_axis(ax, nd))
    return a


def _shift_list(shift):
    """roll's shifts as a list of scalars (Python numbers or 0-d values)."""
    if isinstance(shift, (tuple, list)):
        return list(shift)
    nd = aval(shift).ndim if isinstance(shift, Tracer) else np.ndim(shift)
    size = aval(shift).size if isinstance(shift, Tracer) else np.size(shift)
    if nd > 1 and size == 0:            # (jax iterates over it: no shifts)
        return []
    if nd > 1:
        raise ValueError("roll: 'shift' and 'axis' must be scalars or 1-d arrays, got a "
                         f"{nd}-d shift")
    return [shift] if nd == 0 else [shift[i] for i in range(len(shift))]


del st
