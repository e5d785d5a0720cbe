"""`xforms.scipy.interpolate.RegularGridInterpolator`: linear or nearest interpolation on a
rectilinear grid, as jax.scipy.interpolate has it (each grid axis strictly increasing; a
point outside the grid gives `fill_value`, NaN by default; `bounds_error` is not supported).

    >>> f = RegularGridInterpolator((xnp.array([1., 2., 3.]), xnp.array([4., 5., 6.])),
    ...                             xnp.arange(9.0).reshape(3, 3))
    >>> f(xnp.array([[1.5, 4.5], [2.2, 5.8]]))          # [2., 4.4]
"""
import itertools

import numpy as np

from .. import numpy as xnp
from ..tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _points(xi, ndim):
    """Query points as an (..., ndim) array: a tuple of coordinate arrays is stacked, a flat
    array read as rows of ndim."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        return xnp.stack(xnp.broadcast_arrays(*xi), axis=-1)
    xi = xnp.asarray(xi)
    return xi.reshape(-1, ndim) if xi.ndim == 1 else xi


class RegularGridInterpolator:
    """Interpolate `values` given on the grid `points` (one increasing 1-D array per leading
    dimension of values); call it with query points (..., ndim)."""

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True needs the "
                                      "query values, which are not known under jit (as in "
                                      "JAX); use fill_value")
        values = xnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        self.values = values.astype(xnp.result_type(values, np.float64))
        self.method, self.bounds_error = method, bounds_error
        self.fill_value = None if fill_value is None else xnp.asarray(fill_value)
        if self.fill_value is not None and not np.can_cast(
                self.fill_value.dtype, self.values.dtype, casting="same_kind"):
            raise ValueError("fill_value must be either 'None' or of a type compatible with "
                             f"values ({self.values.dtype}), got {self.fill_value.dtype}")
        self.grid = tuple(xnp.asarray(p) for p in points)

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        shape = xi.shape
        cells = [self._cell(x, g) for x, g in zip(xi.reshape(-1, ndim).T, self.grid)]
        result = (self._linear if method == "linear" else self._nearest)(cells)
        if self.fill_value is not None:
            outside = None
            for x, g in zip(xi.reshape(-1, ndim).T, self.grid):
                off = (x < g[0]) | (x > g[-1])
                outside = off if outside is None else outside | off
            trail = (1,) * (result.ndim - 1)
            result = xnp.where(outside.reshape(outside.shape + trail), self.fill_value,
                               result)
        return result.reshape(shape[:-1] + self.values.shape[ndim:])

    @staticmethod
    def _cell(x, g):
        """(index of the grid interval holding x, clamped to the grid; x's position in it,
        0 at its left end and 1 at its right)."""
        i = xnp.clip(xnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
        return i, (x - g[i]) / (g[i + 1] - g[i])

    def _linear(self, cells):
        trail = (slice(None),) + (None,) * (self.values.ndim - len(cells))
        total = None
        for corner in itertools.product((0, 1), repeat=len(cells)):
            weight, index = None, []
            for up, (i, t) in zip(corner, cells):
                w = t if up else 1 - t
                weight = w if weight is None else weight * w
                index.append(i + up)
            term = self.values[tuple(index)] * weight[trail]
            total = term if total is None else total + term
        return total

    def _nearest(self, cells):
        return self.values[tuple(xnp.where(t <= 0.5, i, i + 1) for i, t in cells)]


register_pytree_node(
    RegularGridInterpolator,
    lambda f: ((f.grid, f.values, f.fill_value), (f.method, f.bounds_error)),
    lambda aux, children: RegularGridInterpolator(children[0], children[1], aux[0], aux[1],
                                                  children[2]))
