"""Gamma distribution: jax.scipy.stats.gamma (shape a, loc, scale)."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, api_as_jax_at_nan, exp_of, floats, log_prob, on_support


@api_as_jax_at_nan
def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = floats(x, a, loc, scale, name="gamma.logpdf")
    y = (x - loc) / scale
    safe = xnp.where(y >= 0, y, 1.0)
    val = sp.xlogy(a - 1, safe) - safe - sp.gammaln(a) - xnp.log(scale)
    return xnp.where(y >= 0, val, -xnp.inf)      # (-inf at a NaN x too, as JAX)


pdf = exp_of(logpdf)


@api
def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = floats(x, a, loc, scale, name="gamma.cdf")
    return on_support((x - loc) / scale, lambda y: sp.gammainc(a, y), 0.0)


@api
def logcdf(x, a, loc=0, scale=1):
    return log_prob(cdf(x, a, loc, scale), sf(x, a, loc, scale), shapes=(a,))


@api
def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = floats(x, a, loc, scale, name="gamma.sf")
    return on_support((x - loc) / scale, lambda y: sp.gammaincc(a, y), 1.0)


@api
def logsf(x, a, loc=0, scale=1):
    return log_prob(sf(x, a, loc, scale), cdf(x, a, loc, scale))
