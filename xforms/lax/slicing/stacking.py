"""An array as pieces along an axis: split (consecutive pieces of given sizes), stack (pieces
joined along a new axis) and unstack (the slices along an axis).

    >>> lax.split(xnp.arange(5.0), (2, 3))                   # [0, 1], [2, 3, 4]
"""
import numpy as np

from ...core.engine_prims import ints
from ...core.trace import get_aval as aval_of
from ...primitives import structural as st
from .indices import index_in_dim
from .slices import canonical_axis, slice_in_dim


def split(operand, sizes, axis=0):
    """Consecutive pieces of the given sizes along `axis` (they must sum to its size).

    >>> lax.split(xnp.arange(5.0), (2, 3))                   # [0, 1], [2, 3, 4]
    """
    shape, sizes = aval_of(operand).shape, list(ints(sizes, "split's sizes"))
    axis = canonical_axis(axis, len(shape), "split")
    if sum(sizes) != shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(f"split: sizes {sizes} must be non-negative and sum to the size of "
                         f"axis {axis}, {shape[axis]}")
    ends = np.cumsum([0] + sizes)
    return [slice_in_dim(operand, int(a), int(b), 1, axis) for a, b in zip(ends, ends[1:])]


def stack(operands, axis=0):
    """The operands (same shape) stacked along a new axis."""
    operands = list(operands)
    if not operands:
        raise ValueError("stack: needs at least one operand")
    axis = canonical_axis(axis, aval_of(operands[0]).ndim + 1, "stack")
    return st.concatenate([st.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis=0):
    """The slices of x along `axis`, as a tuple."""
    shape = aval_of(x).shape
    axis = canonical_axis(axis, len(shape), "unstack")
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(shape[axis]))
