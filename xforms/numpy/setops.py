"""Set operations of `xforms.numpy`: unique (and unique_values/counts/inverse/all),
union1d, isin.

unique's result size depends on the values, so under a transform JAX's rule applies: pass
a static `size=` (the result is cut or padded to it; padding is `fill_value`, by default
the smallest element, with index fill the position of that element and count 0).
Eagerly without `size` the NumPy result is returned.

    >>> xnp.unique(xnp.array([3, 1, 3]))                    # [1, 3]
    >>> xf.jit(lambda x: xnp.unique(x, size=3))(x)           # [1, 3, 1]
"""
import numpy as np

from ..core import trace as core
from ..core import staging
from ..core.trace import Tracer
from ..primitives import sorting as sp
from ..primitives import structural as st
from .manipulation import shapes as man
from .reductions import aggregates as red
from .elementwise import ufuncs as uf
from ..primitives.operands import aval, asarray_operand, convert
from .reductions.cumulative import cumsum
from .indexing.subscripts import IndexUpdateRef, take


def _eager(ar, return_index, return_inverse, return_counts, axis, equal_nan):
    ar = np.asarray(ar)
    # NumPy's unique along an axis orders float16 slices by their bytes (NaN first, -inf
    # after inf); float32 holds every float16 exactly and orders them as jax (NaN last)
    wide = ar.astype(np.float32) if axis is not None and ar.dtype == np.float16 else ar
    res = np.unique(wide, return_index=return_index, return_inverse=return_inverse,
                    return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    res = res if isinstance(res, tuple) else (res,)
    out = [res[0].astype(ar.dtype, copy=False)]
    k = 1
    for flag in (return_index, return_inverse, return_counts):
        if flag:
            v = res[k]
            out.append(v.astype(np.int64))
            k += 1
    if return_inverse and axis is None:
        i = 1 + int(return_index)
        out[i] = out[i].reshape(np.shape(ar))
    return out


def _sized(ar, size, fill_value, return_index, return_inverse, return_counts, equal_nan):
    shape = aval(ar).shape
    x = man.ravel(ar)
    n = aval(x).shape[0]
    if n == 0:
        raise ValueError("unique: size= needs a non-empty array")
    s, perm = sp.sort(x, st.iota(np.int64, (n,), 0), dimension=0)
    prev, cur = s[:-1], s[1:]
    same = uf.equal(cur, prev)
    if equal_nan and aval(x).dtype.kind in "fc":
        same = uf.logical_or(same, uf.logical_and(uf.isnan(cur), uf.isnan(prev)))
    first = man.concatenate([np.array([True]), uf.logical_not(same)], 0)
    group = uf.subtract(cumsum(first), np.int64(1))                 # group of each sorted x
    n_unique = red.sum(first, dtype=np.int64)
    k = np.arange(size + 1, dtype=np.int64)
    # start of group j = how many sorted elements belong to groups before j (n past the last)
    bounds = red.sum(uf.less(man.expand_dims(group, 0), k[:, None]), axis=1)
    starts, k = bounds[:-1], k[:-1]
    valid = uf.less(k, n_unique)
    start_c = uf.minimum(starts, np.int64(n - 1))
    fill = s[0] if fill_value is None else convert(fill_value, aval(x).dtype)
    values = uf.where(valid, take(s, start_c), fill)
    out = [values]
    if return_index:
        out.append(uf.where(valid, take(perm, start_c), perm[0]))
    if return_inverse:
        inv = IndexUpdateRef(st.iota(np.int64, (n,), 0), perm)._scatter(group, "set")
        out.append(man.reshape(inv, shape))
    if return_counts:
        out.append(uf.where(valid, uf.subtract(bounds[1:], starts), np.int64(0)))
    return out


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):
    """Sorted unique elements, with first indices, inverse map and counts on request."""
    ar = asarray_operand(ar)
    traced = isinstance(ar, Tracer) and staging.known_value(ar) is None
    if size is None:
        if traced:
            raise core.ConcretizationError(
                "unique: under a transform pass a static size= (the number of unique "
                "elements depends on the values), e.g. xnp.unique(x, size=x.size)")
        val = np.asarray(staging.known_value(ar) if isinstance(ar, Tracer) else ar)
        out = _eager(val, return_index, return_inverse, return_counts, axis, equal_nan)
    else:
        if axis is not None:
            raise NotImplementedError("unique: axis= together with size= is not supported")
        out = _sized(ar, int(size), fill_value, return_index, return_inverse, return_counts,
                     equal_nan)
    return out[0] if len(out) == 1 else tuple(out)


def unique_values(x, *, size=None, fill_value=None):
    return unique(x, size=size, fill_value=fill_value)


def unique_counts(x, *, size=None, fill_value=None):
    return unique(x, return_counts=True, size=size, fill_value=fill_value)


def unique_inverse(x, *, size=None, fill_value=None):
    return unique(x, return_inverse=True, size=size, fill_value=fill_value)


def unique_all(x, *, size=None, fill_value=None):
    return unique(x, return_index=True, return_inverse=True, return_counts=True, size=size,
                  fill_value=fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    return unique(man.concatenate([man.ravel(ar1), man.ravel(ar2)], 0), size=size,
                  fill_value=fill_value)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """element == any of test_elements, elementwise (compares with every test element)."""
    element = asarray_operand(element)
    t = man.ravel(asarray_operand(test_elements))
    hit = red.any(uf.equal(man.expand_dims(element, -1), t), axis=-1)
    return uf.logical_not(hit) if invert else hit


def _concrete_or_none(*xs):
    vals = []
    for x in xs:
        x = asarray_operand(x)
        v = staging.known_value(x) if isinstance(x, Tracer) else np.asarray(x)
        if v is None:
            return None
        vals.append(np.asarray(v))
    return vals


def _sized_filter(ar1, ar2, keep_in, size, fill_value, name):
    """Sorted unique elements of ar1 that are (keep_in) / are not in ar2, cut to size."""
    from .indexing.searching import extract
    x = man.ravel(asarray_operand(ar1))
    n = aval(x).shape[0]
    u, counts = unique(x, return_counts=True, size=n)
    inside = isin(u, ar2)
    keep = uf.logical_and(uf.greater(counts, 0), inside if keep_in else uf.logical_not(inside))
    fill = u[0] if fill_value is None else fill_value
    return extract(keep, u, size=int(size), fill_value=fill)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of ar1 not in ar2 (static size= under a transform)."""
    if size is None:
        vals = _concrete_or_none(ar1, ar2)
        if vals is None:
            raise core.ConcretizationError("setdiff1d: pass a static size= under a transform")
        return np.setdiff1d(*vals, assume_unique=assume_unique)
    return _sized_filter(ar1, ar2, False, size, fill_value, "setdiff1d")


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """Sorted unique values in both (static size= under a transform; return_indices only
    on concrete inputs)."""
    if size is None or return_indices:
        vals = _concrete_or_none(ar1, ar2)
        if vals is None:
            raise core.ConcretizationError(
                "intersect1d: pass a static size= under a transform (return_indices needs "
                "concrete inputs)")
        out = np.intersect1d(*vals, assume_unique=assume_unique, return_indices=return_indices)
        return tuple(o.astype(np.int64) if k else o for k, o in enumerate(out)) \
            if return_indices else out
    return _sized_filter(ar1, ar2, True, size, fill_value, "intersect1d")


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values in exactly one of the arrays (concrete inputs)."""
    vals = _concrete_or_none(ar1, ar2)
    if vals is None:
        raise NotImplementedError("setxor1d: traced inputs are not supported; use "
                                  "setdiff1d with size= twice")
    out = np.setxor1d(*vals, assume_unique=assume_unique)
    if size is not None:
        fill = (out.min() if out.size else 0) if fill_value is None else fill_value
        out = np.concatenate([out, np.full(max(0, size - out.size), fill, out.dtype)])[:size]
    return out
