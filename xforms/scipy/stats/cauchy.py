"""Cauchy distribution: jax.scipy.stats.cauchy."""
import math

from ... import numpy as xnp
from ._util import api, exp_of, floats


@api
def logpdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="cauchy.logpdf")
    z = (x - loc) / scale
    return -math.log(math.pi) - xnp.log(scale) - xnp.log1p(z * z)


pdf = exp_of(logpdf)


@api
def cdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="cauchy.cdf")
    return 0.5 + xnp.arctan((x - loc) / scale) / math.pi


@api
def logcdf(x, loc=0, scale=1):
    return xnp.log(cdf(x, loc, scale))


@api
def sf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="cauchy.sf")
    return 0.5 - xnp.arctan((x - loc) / scale) / math.pi


@api
def logsf(x, loc=0, scale=1):
    return xnp.log(sf(x, loc, scale))


@api
def ppf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale, name="cauchy.ppf")
    return loc + scale * xnp.tan(math.pi * (q - 0.5))


@api
def isf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale, name="cauchy.isf")
    return loc + scale * xnp.tan(math.pi * (0.5 - q))
