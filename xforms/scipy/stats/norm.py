"""Normal distribution: jax.scipy.stats.norm.  >>> norm.cdf(1.96)   # 0.975"""
import math

import numpy as np

from ... import numpy as xnp

from .. import special as sp
from ._util import exp_of, quantile, standardized

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)

logpdf = standardized("norm", "logpdf", lambda z: -0.5 * z * z - _HALF_LOG_2PI, density=True)
pdf = exp_of(logpdf)
cdf = standardized("norm", "cdf", sp.ndtr)
logcdf = standardized("norm", "logcdf", sp.log_ndtr)
sf = standardized("norm", "sf", sp.ndtr, reflect=True)
logsf = standardized("norm", "logsf", sp.log_ndtr, reflect=True)
_ppf = quantile("norm", "ppf", sp.ndtri)
_isf = quantile("norm", "isf", sp.ndtri, reflect=True)


# jax.scipy.stats.norm.ppf (and isf, its reflection) returns the default float dtype,
# float64, whatever q's: float32 quantiles give float64 (other laws keep float32)
def ppf(q, loc=0, scale=1):
    """The quantile function.  >>> norm.ppf(0.975)   # 1.95996..."""
    return xnp.asarray(_ppf(q, loc, scale), np.float64)


def isf(q, loc=0, scale=1):
    """The inverse survival function ppf(1 - q).  >>> norm.isf(0.025)   # 1.95996..."""
    return xnp.asarray(_isf(q, loc, scale), np.float64)
