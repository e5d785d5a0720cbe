"""Student's t distribution: jax.scipy.stats.t (logpdf, pdf) plus cdf and sf through betainc
(not differentiable in df)."""
import math

from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats


@api
def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = floats(x, df, loc, scale, name="t.logpdf")
    z = (x - loc) / scale
    half = 0.5 * (df + 1)
    norm = (sp.gammaln(half) - sp.gammaln(0.5 * df) - 0.5 * xnp.log(df * math.pi)
            - xnp.log(scale))
    return norm - half * xnp.log1p(z * z / df)


pdf = exp_of(logpdf)


@api
def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = floats(x, df, loc, scale, name="t.sf")
    z = (x - loc) / scale
    tail = 0.5 * sp.betainc(0.5 * df, xnp.full_like(df, 0.5), df / (df + z * z))
    return xnp.where(z > 0, tail, 1 - tail)


@api
def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = floats(x, df, loc, scale, name="t.cdf")
    return sf(2 * loc - x, df, loc, scale)
