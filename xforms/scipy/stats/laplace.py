"""Laplace distribution: jax.scipy.stats.laplace."""
import math

from ... import numpy as xnp
from ._util import api, exp_of, floats


@api
def logpdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="laplace.logpdf")
    return -math.log(2) - xnp.log(scale) - xnp.abs(x - loc) / scale


pdf = exp_of(logpdf)


@api
def cdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="laplace.cdf")
    z = (x - loc) / scale
    half = 0.5 * xnp.exp(-xnp.abs(z))
    return xnp.where(z <= 0, half, 1 - half)
