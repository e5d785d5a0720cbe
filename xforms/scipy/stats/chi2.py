"""Chi-squared distribution: jax.scipy.stats.chi2."""
import math

from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats, log_prob, nan_where, on_support


@api
def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = floats(x, df, loc, scale, name="chi2.logpdf")
    y = (x - loc) / scale
    k = 0.5 * df
    safe = xnp.where(y > 0, y, 1.0)
    val = (sp.xlogy(k - 1, safe) - 0.5 * safe - k * math.log(2) - sp.gammaln(k)
           - xnp.log(scale))
    # at 0 JAX's (k - 1) log 0 - gammaln(k): inf below df = 2, NaN at its poles df = 0, -2, ...
    below = xnp.inf - sp.gammaln(xnp.where(df < 2, k, 1.0))
    at0 = xnp.where(df == 2, -math.log(2) - xnp.log(scale), xnp.where(df < 2, below, -xnp.inf))
    return xnp.where(y > 0, val, xnp.where(y == 0, at0, -xnp.inf))


pdf = exp_of(logpdf)


@api
def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = floats(x, df, loc, scale, name="chi2.cdf")
    # below the support JAX's gammainc(df / 2, 0): 0, NaN for df <= 0 (as above it)
    return on_support((x - loc) / scale, lambda y: sp.gammainc(0.5 * df, 0.5 * y),
                      nan_where(~(df > 0), xnp.zeros_like(df)))


@api
def logcdf(x, df, loc=0, scale=1):
    return log_prob(cdf(x, df, loc, scale), sf(x, df, loc, scale), shapes=(df,))


@api
def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = floats(x, df, loc, scale, name="chi2.sf")
    return on_support((x - loc) / scale, lambda y: sp.gammaincc(0.5 * df, 0.5 * y),
                      nan_where(~(df > 0), xnp.ones_like(df)))


@api
def logsf(x, df, loc=0, scale=1):
    return log_prob(sf(x, df, loc, scale), cdf(x, df, loc, scale))
