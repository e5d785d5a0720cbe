"""Multi-dimensional histograms of `xforms.numpy`: histogramdd and histogram2d (static
numbers of bins; edges may be traced), on the 1-D binning of statistics.histogram.

    >>> h, xe, ye = xnp.histogram2d(x, y, bins=4)
"""
import numpy as np

from ..manipulation import shapes as man
from . import aggregates as red
from .. import sorting as srt
from ..elementwise import ufuncs as uf
from ...primitives.operands import (asarray_operand, aval, broadcast_to, float_of,
                                    promote_keep_shapes)
from .statistics import histogram_edges


def _per_dim(v, d, what):
    """bins/range given once for all dimensions or as a sequence of d."""
    if v is None or isinstance(v, (int, np.integer)) or (
            what == "bins" and not isinstance(v, (list, tuple))):     # one array of edges
        return [v] * d
    v = list(v)
    if len(v) != d:
        raise ValueError(f"histogramdd: {what} must give one entry per dimension ({d}), got "
                         f"{len(v)}")
    return v


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """Counts (or summed weights) of the (N, D) sample over a D-dimensional grid of bins
    -> (H, [edges per dimension]); the last bin of each dimension includes its right edge."""
    if weights is None:          # JAX's dtypes: sample and weights promoted, made inexact
        (s,) = promote_keep_shapes((sample,), inexact=True)
    else:
        s, weights = promote_keep_shapes((sample, weights), inexact=True)
    if aval(s).ndim == 1:
        s = man.reshape(s, (-1, 1))
    n, d = aval(s).shape
    edges, flat, inside, sizes = [], None, None, []
    for k, (b, r) in enumerate(zip(_per_dim(bins, d, "bins"), _per_dim(range, d, "range"))):
        col = s[:, k]
        e = histogram_edges(col, b, r, "histogramdd")
        nb = aval(e).shape[0] - 1
        idx = srt.searchsorted(e, col, side="right")
        idx = uf.where(uf.equal(col, e[-1]), np.int32(nb), idx)         # the closed last bin
        ok = uf.logical_and(uf.greater_equal(idx, 1), uf.less_equal(idx, nb))
        pos = uf.clip(idx - 1, 0, nb - 1)
        flat = pos if flat is None else flat * nb + pos
        inside = ok if inside is None else uf.logical_and(inside, ok)
        edges.append(e)
        sizes.append(nb)
    # without weights the counts are integers (int64), as jax.numpy's
    w = np.int64(1) if weights is None else man.ravel(weights)
    w = uf.where(inside, broadcast_to(w, (n,)), 0)
    total = int(np.prod(sizes))
    onehot = uf.equal(man.expand_dims(flat, -1), np.arange(total, dtype=np.int32))
    counts = red.sum(uf.where(onehot, man.expand_dims(w, -1), 0), axis=0)
    h = man.reshape(counts, tuple(sizes))
    if density:
        vol = None
        for k, e in enumerate(edges):
            width = uf.subtract(e[1:], e[:-1])
            shape = [1] * d
            shape[k] = sizes[k]
            width = man.reshape(width, tuple(shape))
            vol = width if vol is None else vol * width
        h = h / red.sum(h) / vol
    return h, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """histogramdd of the points (x, y) -> (H, xedges, yedges); x and y one-dimensional
    (jax 0.10.2 refuses other ranks).

        >>> histogram2d(xnp.array([0.0, 1.0]), xnp.array([1.0, 0.0]), bins=2)[0]   # [[0,1],[1,0]]
    """
    x, y = float_of(asarray_operand(x)), float_of(asarray_operand(y))
    if aval(x).ndim != 1 or aval(y).ndim != 1:
        raise ValueError(f"histogram2d: x and y must be one-dimensional (as in JAX), got "
                         f"shapes {aval(x).shape} and {aval(y).shape}")
    if isinstance(bins, (list, tuple)) and len(bins) == 2:
        b = list(bins)
    elif np.ndim(bins) == 1 and not isinstance(bins, (int, np.integer)):
        b = [bins, bins]
    else:
        b = bins
    h, (xe, ye) = histogramdd(man.stack([man.ravel(x), man.ravel(y)], axis=1), b, range,
                              weights, density)
    return h, xe, ye
