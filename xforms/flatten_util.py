"""`ravel_pytree`: a pytree of arrays as one flat vector, and the function that undoes it.

    >>> flat, unravel = ravel_pytree({"w": np.ones((2, 2)), "b": np.zeros(3)})
    >>> flat.shape
    (7,)
    >>> unravel(flat)["w"].shape
    (2, 2)

The vector has the leaves' promoted dtype (JAX's `result_type`); `unravel` gives each leaf
back its own shape and dtype.  Both work on traced values (inside jit, grad, vmap).
"""
import numpy as np

from . import numpy as xnp
from .core.avals import promote_types
from .primitives.operands import aval
from .tree_util import tree_flatten, tree_unflatten


def ravel_pytree(pytree):
    """-> (1-D array of all leaves, unravel(flat) -> pytree)."""
    leaves, treedef = tree_flatten(pytree)
    leaves = [xnp.asarray(x) for x in leaves]
    shapes = [tuple(x.shape) for x in leaves]
    dtypes = [np.dtype(x.dtype) for x in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    if leaves:
        dtype = np.dtype(promote_types(*((a.dtype, a.weak_type) for a in map(aval, leaves)))[0])
    else:
        dtype = np.dtype(np.float32)
    if leaves:
        flat = xnp.concatenate([xnp.ravel(x).astype(dtype) for x in leaves])
    else:
        flat = xnp.zeros((0,), dtype)
    total = sum(sizes)

    def unravel(arr):
        if tuple(np.shape(arr)) != (total,):
            raise ValueError(f"unravel: expected a vector of shape ({total},) (the flattened "
                             f"pytree), got shape {tuple(np.shape(arr))}")
        out, start = [], 0
        for shape, dt, n in zip(shapes, dtypes, sizes):
            piece = xnp.reshape(arr[start:start + n], shape)
            out.append(piece if np.dtype(piece.dtype) == dt else piece.astype(dt))
            start += n
        return tree_unflatten(treedef, out)

    return flat, unravel
