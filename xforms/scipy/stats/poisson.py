"""Poisson distribution: jax.scipy.stats.poisson (k counts, rate mu, shift loc)."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, api_as_jax_at_nan, exp_of, floats


@api_as_jax_at_nan
def logpmf(k, mu, loc=0):
    k, mu, loc = floats(k, mu, loc, name="poisson.logpmf")
    x = k - loc
    ok = (x >= 0) & (x == xnp.floor(x))
    safe = xnp.where(ok, x, 0.0)
    val = sp.xlogy(safe, mu) - mu - sp.gammaln(safe + 1)
    return xnp.where(ok, val, -xnp.inf)


pmf = exp_of(logpmf)


@api
def cdf(k, mu, loc=0):
    k, mu, loc = floats(k, mu, loc, name="poisson.cdf")
    x = xnp.floor(k - loc)
    return xnp.where(x < 0, 0.0, sp.gammaincc(xnp.maximum(x, 0.0) + 1, mu))
