"""An operand's static type as a value: lax.dtype (the canonical dtype of an array, scalar or
dtype-like) and lax.shape_as_value (a shape as an integer array).

    >>> lax.shape_as_value((2, 3))
    array([2, 3], dtype=int32)
"""
import operator

import numpy as np

from ...core import trace as core
from ...core.avals import aval_of_value, canonicalize_dtype
from ...primitives import elementwise as ew


def shape_as_value(shape):
    """A static shape as a 1-d integer NumPy array (int32 while every size fits, else int64),
    as jax 0.10.2 gives it (xforms' shapes are always concrete).

        >>> lax.shape_as_value((2, 3))
        array([2, 3], dtype=int32)
    """
    if isinstance(shape, core.Tracer) or any(isinstance(d, core.Tracer) for d in shape):
        # (a traced array as the shape, under jit: jax converts each size to int64 and
        # concatenates them, where its constant shapes are NumPy arrays)
        from ...numpy.manipulation.shapes import stack
        return stack([ew.convert_element_type(d, np.dtype(np.int64), False) for d in shape])
    dims = tuple(operator.index(d) for d in shape)
    wide = any(d > np.iinfo(np.int32).max for d in dims)
    return np.asarray(dims, dtype=np.int64 if wide else np.int32)


def dtype(x):
    """The (xforms-canonical) dtype of an array, scalar or dtype-like: float64 for a Python
    float, as in JAX's 64-bit mode; float16 -> float32, as xforms holds it."""
    if isinstance(x, (type, str, np.dtype)):
        return canonicalize_dtype(x)
    if isinstance(x, (bool, int, float, complex)):
        return aval_of_value(x).dtype
    return canonicalize_dtype(x.dtype)
