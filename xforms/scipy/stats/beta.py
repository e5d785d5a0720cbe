"""Beta distribution: jax.scipy.stats.beta (shapes a, b, loc, scale)."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats, log_prob, nan_where


@api
def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = floats(x, a, b, loc, scale, name="beta.logpdf")
    y = (x - loc) / scale
    inside = (y >= 0) & (y <= 1)
    safe = xnp.where(inside, y, 0.5)
    val = (sp.xlogy(a - 1, safe) + sp.xlog1py(b - 1, -safe) - sp.betaln(a, b)
           - xnp.log(scale))
    return nan_where((a <= 0) | (b <= 0) | (scale <= 0), xnp.where(inside, val, -xnp.inf))


pdf = exp_of(logpdf)


@api
def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = floats(x, a, b, loc, scale, name="beta.cdf")
    return sp.betainc(a, b, xnp.clip((x - loc) / scale, 0.0, 1.0))


@api
def logcdf(x, a, b, loc=0, scale=1):
    return log_prob(cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale))


@api
def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = floats(x, a, b, loc, scale, name="beta.sf")
    return sp.betainc(b, a, 1 - xnp.clip((x - loc) / scale, 0.0, 1.0))


@api
def logsf(x, a, b, loc=0, scale=1):
    return log_prob(sf(x, a, b, loc, scale), cdf(x, a, b, loc, scale))
