"""Uniform distribution on [loc, loc + scale]: jax.scipy.stats.uniform."""
from ... import numpy as xnp
from ._util import api, api_as_jax_at_nan, exp_of, floats


@api_as_jax_at_nan
def logpdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="uniform.logpdf")
    outside = (x < loc) | (x > loc + scale)      # (not outside at a NaN x: JAX's -log(scale))
    return xnp.where(outside, -xnp.inf, -xnp.log(scale))


pdf = exp_of(logpdf)


@api_as_jax_at_nan
def cdf(x, loc=0, scale=1):
    x, loc, scale = floats(x, loc, scale, name="uniform.cdf")
    hi = loc + scale
    inside = (x >= loc) & (x <= hi)
    # JAX's select: 0 where no case holds (a NaN x; x above loc + scale < loc gives 1)
    return xnp.where(x < loc, 0.0, xnp.where(x > hi, 1.0, xnp.where(
        inside, (x - loc) / scale, 0.0)))


@api
def ppf(q, loc=0, scale=1):
    q, loc, scale = floats(q, loc, scale, name="uniform.ppf")
    return xnp.where((q < 0) | (q > 1), xnp.nan, loc + q * scale)
