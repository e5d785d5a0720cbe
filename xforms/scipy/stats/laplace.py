"""Laplace distribution: jax.scipy.stats.laplace."""
import math

from ... import numpy as xnp
from ._util import exp_of, standardized


def _cdf(z):
    half = 0.5 * xnp.exp(-xnp.abs(z))
    return xnp.where(z <= 0, half, 1 - half)


logpdf = standardized("laplace", "logpdf", lambda z: -math.log(2) - xnp.abs(z), density=True)
pdf = exp_of(logpdf)
cdf = standardized("laplace", "cdf", _cdf)
