"""Bernoulli distribution: jax.scipy.stats.bernoulli."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats


@api
def logpmf(k, p, loc=0):
    k, p, loc = floats(k, p, loc, name="bernoulli.logpmf")
    x = k - loc
    val = xnp.where(x == 1, sp.xlogy(xnp.ones_like(p), p), sp.xlog1py(xnp.ones_like(p), -p))
    return xnp.where((x == 0) | (x == 1), val, -xnp.inf)


pmf = exp_of(logpmf)


@api
def cdf(k, p):
    k, p = floats(k, p, name="bernoulli.cdf")
    return xnp.where(k < 0, 0.0, xnp.where(k < 1, 1 - p, 1.0))


@api
def ppf(q, p):
    q, p = floats(q, p, name="bernoulli.ppf")
    one = xnp.ones_like(q)
    return xnp.where((q < 0) | (q > 1), xnp.nan, xnp.where(q <= 1 - p, 0 * one, one))
