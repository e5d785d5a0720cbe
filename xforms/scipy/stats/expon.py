"""Exponential distribution: jax.scipy.stats.expon."""
from ... import numpy as xnp
from ._util import api, exp_of, floats


@api
def logpdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="expon.logpdf")
    y = (x - loc) / scale
    return xnp.where(y < 0, -xnp.inf, -y - xnp.log(scale))


pdf = exp_of(logpdf)


@api
def cdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="expon.cdf")
    return -xnp.expm1(-xnp.maximum((x - loc) / scale, 0.0))


@api
def logcdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="expon.logcdf")
    y = (x - loc) / scale
    return xnp.where(y <= 0, -xnp.inf, xnp.log(-xnp.expm1(-xnp.where(y > 0, y, 1.0))))


@api
def sf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="expon.sf")
    return xnp.exp(-xnp.maximum((x - loc) / scale, 0.0))


@api
def logsf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="expon.logsf")
    return -xnp.maximum((x - loc) / scale, 0.0)


@api
def ppf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale, name="expon.ppf")
    return xnp.where((q < 0) | (q > 1), xnp.nan, -xnp.log1p(-q) * scale + loc)
