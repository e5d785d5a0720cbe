"""Bernoulli distribution: jax.scipy.stats.bernoulli."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats, nan_where


@api
def logpmf(k, p, loc=0):
    k, p, loc = floats(k, p, loc, name="bernoulli.logpmf")
    x = k - loc
    # JAX's formula on all of [0, 1], fractional k too (scipy's -inf there): jax 0.10.2
    val = sp.xlogy(x, p) + sp.xlog1py(1 - x, -p)
    return xnp.where((x < 0) | (x > 1), -xnp.inf, val)


pmf = exp_of(logpmf)


@api
def cdf(k, p):
    k, p = floats(k, p, name="bernoulli.cdf")
    return nan_where(_bad(p), xnp.where(k < 0, 0.0, xnp.where(k < 1, 1 - p, 1.0)))


@api
def ppf(q, p):
    q, p = floats(q, p, name="bernoulli.ppf")
    one = xnp.ones_like(q)
    return nan_where(_bad(p) | (q < 0) | (q > 1), xnp.where(q <= 1 - p, 0 * one, one))


def _bad(p):
    """JAX's test of p (cdf, ppf): NaN, below 0 or above 1."""
    return xnp.isnan(p) | (p < 0) | (p > 1)
