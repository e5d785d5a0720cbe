"""Descriptive statistics of jax.scipy.stats: `sem`, `rankdata`, `mode` (JAX's signatures
and results, nan_policy "propagate" only where JAX has no other).

    >>> from xforms.scipy import stats
    >>> stats.rankdata(xnp.array([1, 3, 2, 3]))      # [1, 3.5, 2, 3.5]
"""
import math
from typing import NamedTuple

import numpy as np

from ... import numpy as xnp
from ...batching_api import vmap
from ...primitives.operands import promote


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n), along `axis` (None: all).
    nan_policy "omit" leaves NaNs out of both.

        >>> sem(xnp.array([2, 4, 1, 1, 3, 4, 4, 2, 3]))
    """
    (b,) = promote(a, name="sem", inexact=True)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return xnp.std(b, axis, ddof=ddof, keepdims=keepdims) / \
            xnp.sqrt(np.asarray(size, b.dtype))
    if nan_policy == "omit":
        count = xnp.sum(~xnp.isnan(b), axis, keepdims=keepdims)
        return xnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / \
            xnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")


def _check_nan_policy(nan_policy, name):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"{name}: nan_policy={nan_policy!r} is not implemented "
                                  "(as in JAX); check for NaNs outside the function")


_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks from 1, ties resolved by `method` (average, min, max, dense, ordinal) as SciPy;
    float64; all NaN when the ranked values hold a NaN.  axis=None ranks the flattened array.

        >>> rankdata(xnp.array([10, 30, 20]))     # [1, 3, 2]
    """
    _check_nan_policy(nan_policy, "rankdata")
    if method not in _METHODS:
        raise ValueError(f"unknown method '{method}'")
    a = xnp.asarray(a)
    if axis is not None:
        return xnp.apply_along_axis(rankdata, axis, a, method)
    return _ranks(xnp.ravel(a), method)


def _ranks(a, method):
    n = a.size
    order = xnp.argsort(a, stable=True)
    inv = xnp.zeros(n, order.dtype).at[order].set(xnp.arange(n, dtype=order.dtype))
    if method == "ordinal":
        ranks = (inv + 1).astype(np.float64)
    else:
        s = a[order]
        new = xnp.concatenate([xnp.ones(min(n, 1), bool), s[1:] != s[:-1]])
        dense = xnp.cumsum(new)[inv]            # 1 + the number of smaller distinct values
        # ends[j]: how many values are below the (j + 1)-th distinct value; ends[-1] = n
        ends = xnp.nonzero(new, size=n + 1, fill_value=n)[0].astype(np.float64)
        ranks = {"dense": lambda: dense.astype(np.float64),
                 "max": lambda: ends[dense],
                 "min": lambda: ends[dense - 1] + 1,
                 "average": lambda: 0.5 * (ends[dense] + ends[dense - 1] + 1)}[method]()
    return xnp.where(xnp.any(xnp.isnan(a)), np.nan, ranks)


class ModeResult(NamedTuple):
    mode: object
    count: object


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along `axis` (None: all) and its count; the smallest value
    among ties.  -> ModeResult(mode, count).

        >>> mode(xnp.array([2, 4, 1, 1, 3, 4, 4, 2, 3]))      # (4, 3)
    """
    _check_nan_policy(nan_policy, "mode")
    x = xnp.atleast_1d(xnp.asarray(a))
    if axis is not None:
        if not -x.ndim <= int(axis) < x.ndim:
            raise ValueError(f"mode: axis {axis} is out of bounds for an array of "
                             f"dimension {x.ndim}")
        axis = int(axis) % x.ndim
    shape = x.shape
    if axis is None:
        out_shape = (1,) * len(shape) if keepdims else ()
        x, axis = xnp.ravel(x), 0
    else:
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(shape)) if keepdims \
            else tuple(s for i, s in enumerate(shape) if i != axis)
    x = xnp.moveaxis(x, axis, 0)
    x = xnp.reshape(x, (x.shape[0], math.prod(x.shape[1:])))
    vals, counts = vmap(_mode_1d, in_axes=1)(x)
    return ModeResult(xnp.reshape(vals, out_shape), xnp.reshape(counts, out_shape))


def _mode_1d(x):
    if x.size == 0:
        return xnp.asarray(np.nan), xnp.asarray(0.0)
    vals, counts = xnp.unique(x, return_counts=True, size=x.size)
    return vals[xnp.argmax(counts)], xnp.max(counts)


__all__ = ["sem", "rankdata", "mode", "ModeResult"]
