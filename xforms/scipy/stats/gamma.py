"""Gamma distribution: jax.scipy.stats.gamma (shape a, loc, scale)."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, api_as_jax_at_nan, exp_of, floats, log_prob, nan_where, on_support


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
    # below the support JAX's gammainc(a, 0): 0, NaN for a <= 0 (as above it)
    return on_support((x - loc) / scale, lambda y: sp.gammainc(a, y),
                      nan_where(~(a > 0), xnp.zeros_like(a)))


@api
def logcdf(x, a, loc=0, scale=1):
    return log_prob(cdf(x, a, loc, scale), sf(x, a, loc, scale), shapes=(a,))


@api
def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = floats(x, a, loc, scale, name="gamma.sf")
    y = (x - loc) / scale
    # JAX's 1 below the support, its gammaincc(a, 0) at 0: 1, NaN for a <= 0
    return on_support(y, lambda y: sp.gammaincc(a, y),
                      nan_where((y == 0) & ~(a > 0), xnp.ones_like(a)))


@api
def logsf(x, a, loc=0, scale=1):
    return log_prob(sf(x, a, loc, scale), cdf(x, a, loc, scale))
