"""One index along one axis: index_in_dim (a static index), dynamic_index_in_dim and
dynamic_update_index_in_dim (a traced one, clamped as dynamic_slice clamps), and index_take
(index vectors over several axes, wrapped modulo the axis sizes).

    >>> lax.index_in_dim(xnp.eye(3), -1, 1, keepdims=False)  # [0., 0., 1.]
"""
import numpy as np

from ...core.avals import static_index
from ...core.engine_prims import ints
from ...core.trace import get_aval as aval_of
from ...primitives import structural as st
from ...primitives.indexing import dynamic_slice, dynamic_update_slice, index_values
from ...numpy.indexing.subscripts import getitem as _getitem
from ...numpy.manipulation.shapes import moveaxis as _moveaxis
from ...numpy.elementwise.ufuncs import remainder as _remainder
from .slices import canonical_axis, slice_in_dim


def index_in_dim(operand, index, axis=0, keepdims=True):
    """operand[index] along `axis` (a static index; negative counts from the end).

    >>> lax.index_in_dim(xnp.eye(3), -1, 1, keepdims=False)  # [0., 0., 1.]
    """
    shape, i = aval_of(operand).shape, static_index(index, "index_in_dim's index")
    axis = canonical_axis(axis, len(shape), "index_in_dim")
    n = shape[axis]
    if not -n <= i < n:
        raise IndexError(f"index_in_dim: index {i} is out of bounds for axis {axis} with "
                         f"size {n}")
    i = i + n if i < 0 else i
    out = slice_in_dim(operand, i, i + 1, 1, axis)
    return out if keepdims else st.squeeze(out, (axis,))


def _dynamic_start(index, n, allow_negative):
    """A traced index as int64.  dynamic_slice counts a negative start from the end itself
    (JAX's rule), so it is not shifted here (twice, -9 of 5 would become 1, not 0).
    With allow_negative=False the caller promises a start >= 0 (as in JAX)."""
    return index_values(index)


def _starts(ndim, axis, index):
    starts = [np.int64(0)] * ndim
    starts[axis] = index
    return starts


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    """operand[index] along `axis` for a traced index (clamped into range as
    dynamic_slice does).

    >>> lax.dynamic_index_in_dim(xnp.arange(4.0), i, keepdims=False)
    """
    shape = aval_of(operand).shape
    axis = canonical_axis(axis, len(shape), "dynamic_index_in_dim")
    i = _dynamic_start(index, shape[axis], allow_negative_indices)
    sizes = list(shape)
    sizes[axis] = 1
    out = dynamic_slice(operand, _starts(len(shape), axis, i), sizes)
    return out if keepdims else st.squeeze(out, (axis,))


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """operand with operand[index] (along `axis`) replaced by `update` (whose rank may
    lack that axis).

    >>> lax.dynamic_update_index_in_dim(xnp.zeros(3), 5.0, 1, 0)   # [0., 5., 0.]
    """
    shape = aval_of(operand).shape
    axis = canonical_axis(axis, len(shape), "dynamic_update_index_in_dim")
    if aval_of(update).ndim == len(shape) - 1:
        update = st.expand_dims(update, (axis,))
    i = _dynamic_start(index, shape[axis], allow_negative_indices)
    return dynamic_update_slice(operand, update, _starts(len(shape), axis, i))


def index_take(src, idxs, axes):
    """src's entries at the index vectors `idxs` (one 1-d array per axis in `axes`, indices
    wrapped modulo the axis size as in JAX): shape (len(idxs[0]), *the other axes of src).

    >>> lax.index_take(xnp.arange(6.0).reshape(2, 3), (xnp.array([1, -1]),), (0,))
    Array([[3., 4., 5.],
           [3., 4., 5.]])
    """
    axes = ints(axes, "index_take's axes")
    if list(axes) != sorted(axes):     # JAX's gather keeps collapsed axes in order
        raise TypeError(f"collapsed_slice_dims in gather op must be sorted; got {axes}")
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    shape = aval_of(src).shape
    moved = _moveaxis(src, axes, tuple(range(len(axes))))
    return _getitem(moved, tuple(_remainder(i, shape[a]) for i, a in zip(idxs, axes)))
