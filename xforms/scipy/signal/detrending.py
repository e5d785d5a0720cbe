"""`xforms.scipy.signal.detrend`: remove the mean or a (piecewise) linear least-squares fit
along an axis (JAX's semantics: type 'linear' or 'constant', breakpoints `bp`).

    >>> detrend(xnp.array([1., 4., 8., 8., 9.]))          # [-1, 0, 2, 0, -1]

The breakpoints are static, so each piece's fit is a fixed linear map: the projection onto the
span of [1, t] on that piece, built once in NumPy as an orthonormal basis Q (a constant of the
program), so the trend is Q (Q^T x) -- linear in the data, hence differentiated and batched by
the ordinary rules of a product.
"""
import numpy as np

from ... import numpy as xnp
from ...primitives.operands import canon_axis
from ._util import promote_inexact


def _pieces(bp, n):
    edges = np.sort(np.unique(np.r_[0, np.asarray(bp, dtype=np.int64).ravel(), n]))
    if edges[0] < 0 or edges[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    return list(zip(edges[:-1], edges[1:]))


def _line_basis(npts, dtype):
    """An orthonormal basis of the lines [1, t] on `npts` points (one column for one point)."""
    t = np.arange(1, npts + 1, dtype=np.float64) / npts
    q, _ = np.linalg.qr(np.stack([np.ones(npts), t], axis=1))
    return q[:, :min(npts, 2)].astype(np.finfo(dtype).dtype)


def _remove_lines(x, bp):
    """x (n, m): each piece between breakpoints minus its least-squares line."""
    out = []
    for lo, hi in _pieces(bp, x.shape[0]):
        piece = x[lo:hi]
        q = _line_basis(hi - lo, x.dtype)
        out.append(piece - xnp.matmul(q, xnp.matmul(q.T, piece)))
    return xnp.concatenate(out, axis=0) if out else x


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """Remove a linear trend (piecewise between the breakpoints `bp`) or the mean ('constant')
    along `axis` (scipy.signal.detrend).

        >>> detrend(xnp.array([6., 5., 9., 6.]), type="constant")    # [-0.5, -1.5, 2.5, -0.5]
    """
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = promote_inexact(data)
    if type == "constant":
        return x - xnp.mean(x, axis, keepdims=True)
    axis = canon_axis(axis, x.ndim)
    moved = xnp.moveaxis(x, axis, 0)
    flat = xnp.reshape(moved, (moved.shape[0], -1))
    out = _remove_lines(flat, bp)
    return xnp.moveaxis(xnp.reshape(out, moved.shape), 0, axis)


__all__ = ["detrend"]
