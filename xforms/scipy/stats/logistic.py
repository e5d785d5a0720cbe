"""Logistic distribution: jax.scipy.stats.logistic."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats


@api
def logpdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="logistic.logpdf")
    z = (x - loc) / scale
    a = xnp.abs(z)
    return -a - 2 * xnp.log1p(xnp.exp(-a)) - xnp.log(scale)


pdf = exp_of(logpdf)


@api
def cdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="logistic.cdf")
    return sp.expit((x - loc) / scale)


@api
def sf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="logistic.sf")
    return sp.expit((loc - x) / scale)


@api
def ppf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale, name="logistic.ppf")
    return sp.logit(q) * scale + loc


@api
def isf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale, name="logistic.isf")
    return loc - sp.logit(q) * scale
