"""`xforms.scipy.ndimage.map_coordinates`: interpolation of an array at given coordinates
(order 0: nearest, 1: linear), with JAX's boundary modes -- its 'constant' and 'wrap' are
SciPy's 'grid-constant' and 'grid-wrap' (JAX's fix of scipy/scipy#2640).

    >>> map_coordinates(xnp.arange(12.0).reshape(3, 4), [xnp.array([0.5, 1.5]),
    ...                                                    xnp.array([1.5, 2.5])], order=1)
    Array([3.5, 8.5])
"""
import itertools

import numpy as np

from .. import lax
from .. import numpy as xnp

__all__ = ["map_coordinates"]


def _mirror(index, size):
    """Index folded into [0, size) as a triangle wave of half-period size - 1."""
    half = size - 1
    return xnp.abs((index + half) % (2 * half) - half) if half else xnp.zeros_like(index)


def _reflect(index, size):
    """Index folded into [0, size) with the edge samples repeated (SciPy's 'reflect')."""
    return (_mirror(2 * index + 1, 2 * size + 1) - 1) // 2


_FOLD = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: xnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _nodes(coordinate, order):
    """[(integer index, weight)] of the samples one coordinate array interpolates."""
    if order == 0:
        index = coordinate if coordinate.dtype.kind in "iu" else lax.round(coordinate)
        return [(index.astype(np.int32), None)]
    lower = xnp.floor(coordinate)
    upper = coordinate - lower
    return [(lower.astype(np.int32), 1 - upper), (lower.astype(np.int32) + 1, upper)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """input interpolated at `coordinates` (one array per input dimension, all of one shape).

    order: 0 (nearest; halves round away from zero) or 1 (linear).  mode: how a point
    outside the input is read -- 'constant' (`cval`), 'nearest', 'wrap', 'mirror',
    'reflect'.  An integer input's result is rounded back to its dtype.
    """
    x = xnp.asarray(input)
    coords = [xnp.asarray(c) for c in coordinates]
    if len(coords) != x.ndim:
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but "
                         f"{len(coords)} != {x.ndim}")
    if mode not in _FOLD:
        raise NotImplementedError(f"map_coordinates does not support mode {mode!r}; the "
                                  f"supported modes are {sorted(_FOLD)}")
    if order not in (0, 1):
        raise NotImplementedError(f"map_coordinates supports order 0 and 1, got {order}")
    per_axis = []
    for c, size in zip(coords, x.shape):
        per_axis.append([(_FOLD[mode](i, size), (i >= 0) & (i < size), w)
                         for i, w in _nodes(c, order)])
    total = None
    for corner in itertools.product(*per_axis):
        value = x[tuple(i for i, _, _ in corner)]
        if mode == "constant":
            inside = corner[0][1]
            for _, ok, _ in corner[1:]:
                inside = inside & ok
            value = xnp.where(inside, value, xnp.asarray(cval, x.dtype))
        for _, _, w in corner:
            value = value if w is None else value * w
        total = value if total is None else total + value
    if x.dtype.kind in "iu":
        total = lax.round(total)
    return total.astype(x.dtype)
