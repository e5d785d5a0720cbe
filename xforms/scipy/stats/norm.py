"""Normal distribution: jax.scipy.stats.norm.  >>> norm.cdf(1.96)   # 0.975"""
import math

from .. import special as sp
from ._util import exp_of, quantile, standardized

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)

logpdf = standardized("norm", "logpdf", lambda z: -0.5 * z * z - _HALF_LOG_2PI, density=True)
pdf = exp_of(logpdf)
cdf = standardized("norm", "cdf", sp.ndtr)
logcdf = standardized("norm", "logcdf", sp.log_ndtr)
sf = standardized("norm", "sf", sp.ndtr, reflect=True)
logsf = standardized("norm", "logsf", sp.log_ndtr, reflect=True)
ppf = quantile("norm", "ppf", sp.ndtri)
isf = quantile("norm", "isf", sp.ndtri, reflect=True)
