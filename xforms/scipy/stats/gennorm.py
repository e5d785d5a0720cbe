"""Generalized normal distribution: jax.scipy.stats.gennorm (shape beta; beta = 2 is a normal
of variance 1/2, beta = 1 a Laplace).  No loc/scale, as in JAX."""
import math

from ... import numpy as xnp
from .. import special as sp
from ._util import api, api_as_jax_at_nan, exp_of, floats


@api_as_jax_at_nan       # (NaN at a NaN x from the formula, but -inf at beta = 0, as JAX)
def logpdf(x, beta):
    x, beta = floats(x, beta, name="gennorm.logpdf")
    return xnp.log(beta) - math.log(2) - sp.gammaln(1 / beta) - xnp.power(xnp.abs(x), beta)


pdf = exp_of(logpdf)


@api
def cdf(x, beta):
    x, beta = floats(x, beta, name="gennorm.cdf")
    # the upper incomplete gamma Q keeps the left tail's relative precision
    half_q = 0.5 * sp.gammaincc(1 / beta, xnp.power(xnp.abs(x), beta))
    return xnp.where(x < 0, half_q, 1 - half_q)
