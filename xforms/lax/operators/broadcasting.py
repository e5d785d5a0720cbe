"""lax's broadcasts: an operand given new leading axes (broadcast, broadcast_to_rank), broadcast
like another (broadcast_like), tiled (tile), and the broadcast of shapes.  Compositions of
broadcast_in_dim and reshape, so they differentiate and batch by those primitives' rules.

    >>> lax.broadcast(xnp.ones(3), (2,)).shape              # (2, 3)
"""
import numpy as np

from ...core.engine_prims import ints
from ...core.trace import get_aval as aval_of
from ...primitives import structural as st


def broadcast(operand, sizes):
    """Prepend the dimensions `sizes` to operand's shape.

    >>> lax.broadcast(xnp.ones(3), (2,)).shape              # (2, 3)
    """
    shape = aval_of(operand).shape
    if getattr(sizes, "dtype", None) == np.bool_ or any(isinstance(s, np.bool_)
                                                        for s in sizes):
        # (jax 0.10.2 refuses NumPy bools and accepts Python's True/False, ints)
        raise TypeError(f"lax.broadcast: sizes must be integers, got {tuple(sizes)!r}")
    sizes = ints(sizes, "broadcast's sizes")
    dims = tuple(range(len(sizes), len(sizes) + len(shape)))
    return st.broadcast_in_dim(operand, sizes + shape, dims)


def broadcast_to_rank(x, rank):
    """Prepend size-1 dimensions up to `rank` (x itself when its rank is at least that)."""
    if not isinstance(rank, (int, np.integer)):     # (JAX's (1,) * rank refuses the rest)
        raise TypeError(f"broadcast_to_rank: rank must be an integer, got {rank!r} (as in "
                        "JAX: can't multiply sequence by non-int)")
    nd = aval_of(x).ndim
    return x if nd >= rank else broadcast(x, (1,) * (rank - nd))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of the shapes, as a tuple (ValueError if they do not broadcast)."""
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def broadcast_like(arr, like_arr):
    """arr broadcast (NumPy rules) to like_arr's shape."""
    a, shape = aval_of(arr), aval_of(like_arr).shape
    dims = tuple(range(len(shape) - a.ndim, len(shape)))
    return st.broadcast_in_dim(arr, shape, dims) if a.shape != shape else arr


def tile(operand, reps):
    """operand repeated reps[k] times along each axis k (len(reps) == operand's rank).

    >>> lax.tile(xnp.eye(2), (1, 2)).shape                   # (2, 4)
    """
    shape = aval_of(operand).shape
    reps = ints(reps, "tile's reps")
    if len(reps) != len(shape):
        raise TypeError(f"tile: reps length must equal the rank of the operand, got "
                        f"len(reps)={len(reps)} and rank {len(shape)}")
    inter = tuple(d for r, n in zip(reps, shape) for d in (r, n))
    b = st.broadcast_in_dim(operand, inter, tuple(range(1, 2 * len(shape), 2)))
    return st.reshape(b, tuple(r * n for r, n in zip(reps, shape)))
