"""Dirichlet distribution: jax.scipy.stats.dirichlet (x and alpha along the last axis)."""
from ... import numpy as xnp
from .. import special as sp
from ._util import exp_of, floats, multivariate


@multivariate
def logpdf(x, alpha):
    """x: (K, ...) points on the simplex along the first axis (or (K-1, ...): the last
    coordinate is 1 - the sum, as in JAX and scipy); alpha: (K,)."""
    x, alpha = xnp.asarray(x), xnp.asarray(alpha)
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet.logpdf: alpha must be 1-d, got shape {alpha.shape}")
    if x.ndim and x.shape[0] == alpha.shape[0] - 1:
        x = xnp.concatenate([x, 1 - xnp.sum(x, axis=0, keepdims=True)], axis=0)
    if not x.ndim or x.shape[0] != alpha.shape[0]:
        raise ValueError(f"dirichlet.logpdf: x's first axis must have alpha's length "
                         f"{alpha.shape[0]}, got shape {x.shape}")
    x, a = floats(x, alpha.reshape(alpha.shape + (1,) * (x.ndim - 1)), name="dirichlet.logpdf")
    alpha = xnp.asarray(alpha, x.dtype)    # (an int32 alpha is float32 in JAX, not float64)
    norm = xnp.sum(sp.gammaln(alpha)) - sp.gammaln(xnp.sum(alpha))
    val = xnp.sum(sp.xlogy(a - 1, x), axis=0) - norm
    inside = xnp.all(x > 0, axis=0) & (xnp.abs(xnp.sum(x, axis=0) - 1) < 1e-6)
    return xnp.where(inside, val, -xnp.inf)


pdf = exp_of(logpdf)
