"""Cauchy distribution: jax.scipy.stats.cauchy."""
import math

from ... import numpy as xnp
from ._util import exp_of, quantile, standardized


def _cdf(z):
    return 0.5 + xnp.arctan(z) / math.pi


logpdf = standardized("cauchy", "logpdf", lambda z: -math.log(math.pi) - xnp.log1p(z * z),
                      density=True)
pdf = exp_of(logpdf)
cdf = standardized("cauchy", "cdf", _cdf)
logcdf = standardized("cauchy", "logcdf", lambda z: xnp.log(_cdf(z)))
sf = standardized("cauchy", "sf", _cdf, reflect=True)
logsf = standardized("cauchy", "logsf", lambda z: xnp.log(_cdf(z)), reflect=True)
ppf = quantile("cauchy", "ppf", lambda q: xnp.tan(math.pi * (q - 0.5)))
isf = quantile("cauchy", "isf", lambda q: xnp.tan(math.pi * (q - 0.5)), reflect=True)
