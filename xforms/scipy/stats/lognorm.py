"""Log-normal distribution (scipy.stats.lognorm's s, loc, scale; not in jax.scipy.stats)."""
import math

from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats


@api
def logpdf(x, s, loc=0, scale=1):
    x, s, loc, scale = floats(x, s, loc, scale, name="lognorm.logpdf")
    y = (x - loc) / scale
    pos = y > 0
    ly = xnp.log(xnp.where(pos, y, 1.0))
    val = -0.5 * (ly / s) ** 2 - ly - xnp.log(s) - 0.5 * math.log(2 * math.pi) - xnp.log(scale)
    return xnp.where(pos, val, -xnp.inf)


pdf = exp_of(logpdf)


@api
def cdf(x, s, loc=0, scale=1):
    x, s, loc, scale = floats(x, s, loc, scale, name="lognorm.cdf")
    y = (x - loc) / scale
    pos = y > 0
    return xnp.where(pos, sp.ndtr(xnp.log(xnp.where(pos, y, 1.0)) / s), 0.0)
