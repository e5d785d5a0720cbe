"""Multivariate normal: jax.scipy.stats.multivariate_normal (logpdf, pdf), through a
Cholesky factor: logpdf = -(|L^-1 (x - mean)|^2 + k log 2 pi) / 2 - sum log diag L.
(L^-1 by xforms.numpy.linalg.solve; a triangular solve would do half the work.)"""
import math

from ... import numpy as xnp
from ._util import exp_of, floats, multivariate


@multivariate
def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular (JAX neither)")
    x, mean, cov = (xnp.asarray(v) for v in floats(x, mean, cov, name="mvn.logpdf")) \
        if xnp.ndim(mean) == 0 else (*floats(x, mean, name="mvn.logpdf"), xnp.asarray(cov))
    if mean.ndim == 0:                      # one dimension: cov is the variance
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (math.log(2 * math.pi) + xnp.log(cov))
    k = mean.shape[-1]
    if cov.ndim != 2 or cov.shape != (k, k):
        raise ValueError(f"multivariate_normal.logpdf: cov must have shape {(k, k)} for a "
                         f"mean of shape {mean.shape}, got {cov.shape}")
    try:
        from ...numpy.linalg import cholesky, solve
    except ImportError as e:
        raise NotImplementedError("multivariate_normal.logpdf with a covariance matrix needs "
                                  "xforms.numpy.linalg.cholesky and solve") from e
    L = cholesky(cov)
    d = x - mean
    y = xnp.moveaxis(solve(L, xnp.moveaxis(d.reshape((-1, k)), -1, 0)), 0, -1)
    y = y.reshape(d.shape)
    diag = xnp.sum(L * xnp.eye(k, dtype=L.dtype), axis=-1)
    half_logdet = xnp.sum(xnp.log(diag), axis=-1)
    return -0.5 * (xnp.sum(y * y, axis=-1) + k * math.log(2 * math.pi)) - half_logdet


pdf = exp_of(logpdf)
