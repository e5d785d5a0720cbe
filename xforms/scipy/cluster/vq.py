"""`xforms.scipy.cluster.vq.vq`: the nearest code of a code book for each observation, as
jax.scipy.cluster.vq has it (Euclidean distance; `check_finite` is accepted and unused).

    >>> code, dist = vq(xnp.array([[1.1, 2.1], [5.9, 4.8]]), xnp.array([[1., 2.], [6., 5.]]))
    >>> code                                   # [0, 1]
"""
from ... import numpy as xnp

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """-> (code, dist): for each row of `obs` (M, N) the index of the nearest row of
    `code_book` (K, N) and the distance to it. 1-D inputs are M and K scalars (N = 1)."""
    del check_finite                    # (JAX's too: a traced array cannot be checked)
    obs, book = _promote_inexact(obs, code_book)
    if obs.ndim != book.ndim:
        raise ValueError("vq: the observations and the code book should have the same rank, "
                         f"got {obs.ndim} and {book.ndim}")
    if obs.ndim == 1:
        obs, book = obs[:, None], book[:, None]
    if obs.ndim != 2:
        raise ValueError(f"vq: observations of rank {obs.ndim}: only ranks 1 and 2 are supported")
    dist = xnp.linalg.norm(obs[:, None, :] - book[None, :, :], axis=-1)     # (M, K)
    code = xnp.argmin(dist, axis=-1)
    return code, xnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]


def _promote_inexact(a, b):
    """a and b as arrays of their common floating (or complex) dtype: integers and bools
    become the default float, as JAX's promote_dtypes_inexact makes them."""
    a, b = xnp.asarray(a), xnp.asarray(b)
    dtype = xnp.result_type(a, b)
    if not xnp.issubdtype(dtype, xnp.inexact):
        dtype = xnp.float_
    return a.astype(dtype), b.astype(dtype)
