"""Wrapped Cauchy distribution: jax.scipy.stats.wrapcauchy (0 < c < 1; support [0, 2 pi])."""
import math

from ... import numpy as xnp
from ._util import api, exp_of, floats, nan_where


@api
def logpdf(x, c):
    x, c = floats(x, c, name="wrapcauchy.logpdf")
    val = xnp.log1p(-c * c) - math.log(2 * math.pi) - xnp.log1p(c * c - 2 * c * xnp.cos(x))
    return nan_where(~((c > 0) & (c < 1)), xnp.where((x >= 0) & (x <= 2 * math.pi), val,
                                                     -xnp.inf))


pdf = exp_of(logpdf)
