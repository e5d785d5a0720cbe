"""Sorting and searching of `xforms.numpy`: sort argsort lexsort partition argpartition
searchsorted sort_complex, on the `sort` primitive (xforms/primitives/sorting.py).

JAX's order: NaNs last, complex numbers by (real, imag), stable; `descending=True`
reverses the order while keeping equal elements in their original order.  Gradients follow
the permutation.

    >>> xnp.argsort(xnp.array([3.0, 1.0, 2.0]))     # [1, 2, 0]
"""
import numpy as np

from ..primitives import elementwise as ew
from ..primitives import sorting as sp
from ..primitives import structural as st
from ..core.avals import static_index
from .manipulation import shapes as man
from .reductions import aggregates as red
from .elementwise import ufuncs as uf
from ..primitives.operands import aval, asarray_operand, canon_axis, convert, promote_dtypes


def _axis(a, axis):
    """The operand and its sort axis (None: flattened); a 0-d operand has no axis to sort
    along, which JAX refuses (ValueError) rather than sorting its one element."""
    a = asarray_operand(a)
    if axis is None:
        return man.ravel(a), 0
    if aval(a).ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0 (sort a 0-d "
                         "array with axis=None, or reshape it to 1-d first)")
    return a, canon_axis(axis, aval(a).ndim)


def _check(kind, order):
    if order is not None:
        raise NotImplementedError("sort: the 'order' argument (structured arrays) is not "
                                  "supported")


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Sorted copy along axis (None: flattened).  >>> xnp.sort(xnp.array([2.0, 1.0]))"""
    _check(kind, order)
    a, ax = _axis(a, axis)
    if descending:
        return st.rev(sp.sort(st.rev(a, (ax,)), dimension=ax)[0], (ax,))
    return sp.sort(a, dimension=ax)[0]


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """Indices that sort a along axis (stable; int64)."""
    _check(kind, order)
    a, ax = _axis(a, axis)
    shape = aval(a).shape
    idx = st.iota(np.int64, shape, ax)
    if descending:
        n = shape[ax]
        rev_idx = sp.sort(st.rev(a, (ax,)), idx, dimension=ax)[1]
        out = st.rev(ew.sub(np.int64(n - 1), rev_idx), (ax,))
    else:
        out = sp.sort(a, idx, dimension=ax)[1]
    return out if dtype is None else convert(out, dtype)


def lexsort(keys, axis=-1):
    """Indices sorting by the last key first, then the others (NumPy's lexsort)."""
    keys = [asarray_operand(k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shapes = {aval(k).shape for k in keys}
    if len(shapes) != 1:
        raise ValueError("all keys need to be the same shape")
    shape = shapes.pop()
    if not shape:           # 0-d keys (a 1-d array is a sequence of them): one element, 0
        return np.int64(0)
    ax = canon_axis(axis, len(shape))
    idx = st.iota(np.int64, shape, ax)
    ks = list(reversed(keys))
    return sp.sort(*ks, idx, dimension=ax, num_keys=len(ks))[-1]


def partition(a, kth, axis=-1):
    """The kth element in its sorted place, smaller before, larger after (here: all
    sorted, which satisfies the contract)."""
    a, ax = _axis(a, axis)
    _kth(a, kth, ax)
    return sp.sort(a, dimension=ax)[0]


def argpartition(a, kth, axis=-1):
    a, ax = _axis(a, axis)
    _kth(a, kth, ax)
    return convert(argsort(a, ax), np.int32)     # int32 indices, as jax.numpy (top_k's)


def _kth(a, kth, ax):
    """kth as JAX reads it (an integer: operator.index); JAX's refusals of bool (its negation)
    and complex operands (not implemented)."""
    kind = np.dtype(aval(a).dtype).kind
    if kind == "b":
        raise TypeError("partition/argpartition does not accept dtype bool (JAX negates the "
                        "operand: neg does not accept dtype bool)")
    if kind == "c":
        raise NotImplementedError("partition/argpartition of complex values is not "
                                  "implemented (as in JAX)")
    kth = static_index(kth, "kth")
    n = aval(a).shape[ax]
    if not -n <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds ({n})")


def sort_complex(a):
    """sort(a) as complex numbers: complex128 from a 64-bit dtype, else complex64 (jax's
    to_complex_dtype: int8 ... uint32, float16 and bool give complex64).

        >>> sort_complex(xnp.array([3, 1], xnp.int8))        # complex64 [1, 3]
    """
    a = asarray_operand(a)
    if aval(a).dtype.kind != "c":
        a = convert(a, np.complex128 if aval(a).dtype.itemsize == 8 else np.complex64)
    return sort(a, axis=-1)


def _lt(x, y):
    """x < y in sort order (NaN largest)."""
    if aval(x).dtype.kind == "c":
        xr, yr = uf.real(x), uf.real(y)
        return uf.logical_or(_lt(xr, yr), uf.logical_and(uf.equal(xr, yr),
                                                         _lt(uf.imag(x), uf.imag(y))))
    lt = uf.less(x, y)
    if aval(x).dtype.kind == "f":
        lt = uf.logical_or(lt, uf.logical_and(uf.isnan(y), uf.logical_not(uf.isnan(x))))
    return lt


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion points of v into the sorted 1-D a (side 'left': before equal elements).

    Methods as JAX's: 'scan' (default) and 'scan_unrolled' run a binary search, ceil(log2(n
    + 1)) unrolled steps of a gather and a compare per v (O(m log n)); 'compare_all' compares
    every v with every a (one fused reduction; O(n m)); 'sort' sorts a and v together once
    (O((n + m) log(n + m))).  Result dtype int32, as in JAX."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in ("compare_all", "scan", "scan_unrolled", "sort"):
        raise ValueError(f"searchsorted: unknown method {method!r}")
    a, v = asarray_operand(a), asarray_operand(v)
    if aval(a).ndim != 1:
        raise ValueError("searchsorted: a must be one-dimensional")
    if sorter is not None:
        from .indexing.subscripts import take
        a = take(a, sorter)
    a, v = _promote_keep(a, v)
    n, m = aval(a).shape[0], aval(v).size
    if method in ("scan", "scan_unrolled") and n and m:
        return _binary_search(a, v, side)
    if method == "sort" and n and m:
        return _searchsorted_by_sort(a, v, side)
    vb = man.expand_dims(v, -1)
    if side == "left":
        hit = _lt(a, vb)
    else:
        hit = uf.logical_not(_lt(vb, a))
    return convert(red.sum(hit, axis=-1), np.int32)


def _binary_search(a, v, side):
    """lo/hi bracket per v, halved ceil(log2(n + 1)) times (a static, unrolled loop)."""
    from .indexing.subscripts import take
    n = aval(a).shape[0]
    from .creation.constructors import full
    lo = full(aval(v).shape, 0, np.int64)
    hi = full(aval(v).shape, n, np.int64)
    for _ in range(int(np.ceil(np.log2(n + 1)))):
        mid = uf.floor_divide(uf.add(lo, hi), np.int64(2))
        am = take(a, uf.minimum(mid, np.int64(n - 1)))
        go = _lt(am, v) if side == "left" else uf.logical_not(_lt(v, am))
        go = uf.logical_and(go, uf.less(mid, hi))
        lo = uf.where(go, uf.add(mid, np.int64(1)), lo)
        hi = uf.where(go, hi, mid)
    return convert(lo, np.int32)


def _searchsorted_by_sort(a, v, side):
    """Sort a and v together (ties: v first for 'left', a first for 'right'); each v's
    answer is the number of a's before it."""
    from .reductions.cumulative import cumsum
    from .indexing.subscripts import IndexUpdateRef
    n = aval(a).shape[0]
    vf = man.ravel(v)
    m = aval(vf).shape[0]
    keys = man.concatenate([a, vf], 0)
    a_first = side == "right"
    flag = np.concatenate([np.full(n, 0 if a_first else 1, np.int8),
                           np.full(m, 1 if a_first else 0, np.int8)]).astype(np.int32)
    idx = st.iota(np.int64, (n + m,), 0)
    _, _, perm = sp.sort(keys, flag, idx, dimension=0, num_keys=2)
    is_a = uf.less(perm, n)
    before = uf.subtract(cumsum(is_a), convert(is_a, np.int64))   # a's strictly before
    placed = IndexUpdateRef(st.iota(np.int64, (n + m,), 0), perm)._scatter(before, "set")
    return convert(man.reshape(placed[n:], aval(v).shape), np.int32)


def _promote_keep(a, v):
    dt, _ = promote_dtypes((aval(a).dtype, aval(a).weak_type), (aval(v).dtype, aval(v).weak_type))
    return convert(a, dt), convert(v, dt)
