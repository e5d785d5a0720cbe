"""take_along_axis / put_along_axis of `xforms.numpy`: per-position indices along one axis,
as a gather (scatter) over all axes.  A negative index counts from the end (once); then an
out-of-bounds one is taken as JAX takes it: `take_along_axis` gives `fill_value` (NaN, ...)
by default or clamps (mode "clip", "promise_in_bounds"), `put_along_axis` drops the update
by default or clamps (mode "clip").

    >>> a = xnp.array([[3.0, 1.0], [0.0, 2.0]])
    >>> xnp.take_along_axis(a, xnp.argsort(a, axis=1), axis=1)      # rows sorted
"""
import numpy as np

from ...core.avals import broadcast_shapes
from ...primitives import indexing as pix
from ...primitives import structural as st
from ..manipulation import shapes as man
from ..elementwise import ufuncs as uf
from .subscripts import SCATTER_MODES, index_mode, gather
from ...primitives.operands import aval, asarray_operand, broadcast_to, canon_axis, convert


def _index_arrays(arr, indices, axis, name):
    arr, indices = asarray_operand(arr), asarray_operand(indices)
    if axis is None:
        arr, axis = man.ravel(arr), 0
        if aval(indices).ndim != 1:
            raise ValueError(f"{name}: with axis=None, indices must be one-dimensional")
    if aval(indices).dtype.kind not in "iu":
        raise TypeError(f"{name}: indices must be integers, got {aval(indices).dtype}")
    nd = aval(arr).ndim
    if aval(indices).ndim != nd:
        raise ValueError(f"{name}: indices ({aval(indices).ndim}-D) and arr ({nd}-D) must "
                         f"have the same number of dimensions")
    ax = canon_axis(axis, nd)
    sa, si = list(aval(arr).shape), list(aval(indices).shape)
    k = si[ax]
    sa[ax] = si[ax] = 1
    rest = broadcast_shapes(tuple(sa), tuple(si), op=name)
    out_shape = rest[:ax] + (k,) + rest[ax + 1:]
    full_arr = list(rest)
    full_arr[ax] = aval(arr).shape[ax]
    arr = broadcast_to(arr, tuple(full_arr))
    idx = broadcast_to(pix.index_values(asarray_operand(indices)), out_shape)
    n = aval(arr).shape[ax]
    idx = uf.where(uf.less(idx, 0), uf.add(idx, np.int64(n)), idx)
    ids = [idx if d == ax else st.iota(np.int64, out_shape, d) for d in range(nd)]
    return arr, ids, out_shape


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """arr[..., indices, ...] position by position along axis; mode "fill" (the default),
    "drop", "clip" or "promise_in_bounds" for out-of-bounds indices, as JAX's."""
    arr, ids, _ = _index_arrays(arr, indices, axis, "take_along_axis")
    return gather(arr, ids, tuple(range(len(ids))), "fill" if mode is None else mode,
                  fill_value)


def put_along_axis(arr, indices, values, axis, inplace=True, mode=None):
    """A copy of arr with values written at indices along axis (JAX: inplace=False)."""
    if inplace:
        raise ValueError("put_along_axis: JAX arrays are immutable; pass inplace=False")
    arr2, ids, out_shape = _index_arrays(arr, indices, axis, "put_along_axis")
    if aval(arr2).shape != aval(asarray_operand(arr)).shape:
        raise ValueError("put_along_axis: indices must not broadcast arr")
    v = broadcast_to(convert(asarray_operand(values), aval(arr2).dtype), out_shape)
    return pix.scatter(arr2, v, ids, tuple(range(len(ids))), index_mode(SCATTER_MODES, mode))
