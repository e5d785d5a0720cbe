"""Numba helper for the CPU rule of a reverse float cumsum/cumprod
(xforms/kernels/ops/cumulative.py): the line folded in XLA's CPU order, which
xforms/primitives/cumulative.py `reverse_in_xla_order` describes (there on whole arrays, here
on one contiguous line), kept on disk like the other runtime helpers.

    >>> reverse_line(np.array([1.0, 1e16, -1e16]), False)     # [0., 0., -1e16], as jax
"""
import numba
import numpy as np

from .helper_cache import CACHE as _CACHE

BASE = 16       # XLA CPU's scan base length (its reduce-window rewrite of a cumulative op)


@numba.njit(cache=_CACHE, nogil=True)
def _windows(x, out, lo, hi, prod):
    """out[i] = x[i] (op) x[i+1] ... (op) x[hi-1], folded in index order from the identity,
    for lo <= i < hi (hi - lo <= BASE)."""
    init = x.dtype.type(1) if prod else x.dtype.type(0)
    for i in range(lo, hi):
        out[i] = init
    for k in range(lo, hi):
        v = x[k]
        for i in range(lo, k + 1):
            out[i] = out[i] * v if prod else out[i] + v


@numba.njit(cache=_CACHE, nogil=True)
def reverse_line(x, prod):
    """The reverse cumulative sum (`prod`: product) of the 1-D array x, in XLA's CPU order:
    blocks of BASE scanned by windows, the block totals (and the identity) scanned the same
    way, each block's windows combined with the scan of the blocks after it."""
    m = x.shape[0]
    out = np.empty(m, x.dtype)
    if m <= BASE:
        _windows(x, out, 0, m, prod)
        return out
    init = x.dtype.type(1) if prod else x.dtype.type(0)
    rows = (m + BASE - 1) // BASE
    padded = np.full(rows * BASE, init, x.dtype)
    padded[:m] = x
    o = np.empty(rows * BASE, x.dtype)
    totals = np.full(rows + 1, init, x.dtype)
    for r in range(rows):
        _windows(padded, o, r * BASE, (r + 1) * BASE, prod)
        totals[r] = o[r * BASE]
    after = reverse_line(totals, prod)
    for i in range(m):
        e = after[i // BASE + 1]
        out[i] = o[i] * e if prod else o[i] + e
    return out
