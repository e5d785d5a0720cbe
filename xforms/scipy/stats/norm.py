"""Normal distribution: jax.scipy.stats.norm.  >>> norm.cdf(1.96)   # 0.975"""
import math

from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


@api
def logpdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="norm.logpdf")
    z = (x - loc) / scale
    return -0.5 * z * z - _HALF_LOG_2PI - xnp.log(scale)


pdf = exp_of(logpdf)


@api
def cdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="norm.cdf")
    return sp.ndtr((x - loc) / scale)


@api
def logcdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="norm.logcdf")
    return sp.log_ndtr((x - loc) / scale)


@api
def sf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="norm.sf")
    return sp.ndtr((loc - x) / scale)


@api
def logsf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="norm.logsf")
    return sp.log_ndtr((loc - x) / scale)


@api
def ppf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale, name="norm.ppf")
    return sp.ndtri(q) * scale + loc


@api
def isf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale, name="norm.isf")
    return loc - sp.ndtri(q) * scale
