"""lax's arrays made like another: full_like (x's shape and dtype unless given) and empty
(zeros, as JAX's).

    >>> lax.full_like(xnp.ones((2, 3)), 7, xnp.int32).dtype   # int32
"""
import numpy as np

from ...core.engine_prims import ints
from ...core.trace import get_aval as aval_of
from ...primitives import structural as st


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like x (its shape and dtype unless given) filled with fill_value."""
    a = aval_of(x)
    dt = np.dtype(dtype) if dtype is not None else a.dtype
    shape = a.shape if shape is None else ints(shape, "full_like's shape")
    return st.full(shape, fill_value, dt)


def empty(shape, dtype):
    """An array of the shape and dtype; its values are zeros (JAX's are too)."""
    shape = ints((shape,) if np.ndim(shape) == 0 else shape, "empty's shape")
    return st.full(shape, 0, np.dtype(dtype))
