"""Samplers that need a matrix factorisation: multivariate_normal (Cholesky) and orthogonal
(QR).  While `xforms.numpy.linalg` lacks cholesky and qr, both are composed here from
elementwise operations and reductions, column by column (O(n) traced steps: meant for the
small matrices of covariance and weight initialisation); the results equal JAX's up to the
rounding of the factorisation.

    >>> random.orthogonal(random.PRNGKey(0), 3)       # a 3 x 3 orthogonal matrix
"""
import numpy as np

from .. import numpy as xnp
from .keys import check_key
from .samplers import check_shape, as_param, canonical_shape, float_dtype, raw_normal


def cholesky(a):
    """Lower Cholesky factor of (a batch of) symmetric positive definite matrices."""
    lin = getattr(xnp.linalg, "cholesky", None)
    if lin is not None:
        return lin(a)
    n = a.shape[-1]
    cols = []
    for j in range(n):
        prev = xnp.stack(cols, axis=-1) if cols else None        # (..., n, j)
        s = a[..., :, j]
        if prev is not None:
            s = s - xnp.sum(prev * prev[..., j:j + 1, :], axis=-1)
        d = xnp.sqrt(s[..., j:j + 1])
        below = (xnp.arange(n) >= j)
        cols.append(xnp.where(below, s / d, xnp.zeros((), s.dtype)))
    return xnp.stack(cols, axis=-1)


def _orthonormal_columns(z):
    """Q of z = QR with R's diagonal positive (modified Gram-Schmidt): unique, so the same
    matrix as JAX's q * sign(diag(r)) from Householder QR, up to rounding."""
    qs = []
    for j in range(z.shape[-1]):
        v = z[..., :, j]
        for q in qs:
            v = v - xnp.sum(q * v, axis=-1, keepdims=True) * q
        qs.append(v / xnp.sqrt(xnp.sum(v * v, axis=-1, keepdims=True)))
    return xnp.stack(qs, axis=-1)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """mean + L @ normal, L the Cholesky factor of cov (method='cholesky' only)."""
    key, _ = check_key("multivariate_normal", key)
    if method not in ("cholesky", "svd", "eigh"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    if method != "cholesky":
        raise NotImplementedError(f"multivariate_normal(method={method!r}): xforms has no "
                                  "svd/eigh yet; use method='cholesky'")
    dtype = float_dtype(dtype, "multivariate_normal")
    mean, cov = as_param(mean, dtype), as_param(cov, dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got {mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got {cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    shape = canonical_shape(shape, "multivariate_normal")
    if shape is None:
        shape = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    factor = cholesky(cov)
    z = raw_normal(key, tuple(shape) + (n,), dtype)
    return mean + xnp.einsum("...ij,...j->...i", factor, z)


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Uniformly (Haar) distributed n x m matrices with orthonormal columns (or rows)."""
    key, _ = check_key("orthogonal", key)
    dtype = float_dtype(dtype, "orthogonal")
    shape = canonical_shape(shape, "orthogonal")
    n = int(n)
    m = n if m is None else int(m)
    z = raw_normal(key, tuple(shape) + (max(n, m), min(n, m)), dtype)
    q = _orthonormal_columns(z)
    return xnp.swapaxes(q, -1, -2) if n < m else q
