"""`lax.collapse` and `lax.slice_in_dim`, and the axis check they share: the shape helpers
lax's control flow needs (`map`'s batches), kept apart from the rest of lax, which builds
on xforms.numpy, so that the control flow xforms.numpy is built on imports nothing of it
(tests/tooling/test_layering.py `WRAPPERS`).

    >>> lax.collapse(xnp.zeros((2, 3, 4)), 0, 2).shape      # (6, 4)
"""
import math

from ...core import trace as core
from ...core.avals import static_index
from ...primitives import structural as st
from ...errors import AxisError


def canonical_axis(axis, ndim, name):
    axis = static_index(axis, f"{name}'s axis")
    if not -ndim <= axis < ndim:
        raise AxisError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def collapse(operand, start_dimension, stop_dimension=None):
    """Merge dimensions [start_dimension, stop_dimension) into one (Python slice rules).

    >>> lax.collapse(xnp.zeros((2, 3, 4)), 0, 2).shape      # (6, 4)
    """
    shape = core.get_aval(operand).shape
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    size = math.prod(shape[lo:hi])
    return st.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """operand[start:limit:stride] along `axis` (None and negative indices as in Python,
    but no clipping: JAX's rules).

    >>> lax.slice_in_dim(xnp.arange(6.0), 1, -1, 2)          # [1., 3.]
    """
    shape = core.get_aval(operand).shape
    start, limit, stride = (None if v is None else static_index(v, f"slice_in_dim's {what}")
                            for v, what in ((start_index, "start_index"),
                                            (limit_index, "limit_index"), (stride, "stride")))
    axis = canonical_axis(axis, len(shape), "slice_in_dim")
    n = shape[axis]
    start, limit = 0 if start is None else start, n if limit is None else limit
    start, limit = (start + n if start < 0 else start), (limit + n if limit < 0 else limit)
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return st.slice(operand, starts, limits, strides)
