"""Right-skewed Gumbel distribution: jax.scipy.stats.gumbel_r (cdf exp(-exp(-z)))."""
from ... import numpy as xnp
from ._util import exp_of, log1mexp, nan_where, quantile, standardized

logpdf = standardized("gumbel_r", "logpdf", lambda z: -(z + xnp.exp(-z)), density=True)
pdf = exp_of(logpdf)
logcdf = standardized("gumbel_r", "logcdf", lambda z: -xnp.exp(-z))
cdf = exp_of(logcdf)
sf = standardized("gumbel_r", "sf", lambda z: -xnp.expm1(-xnp.exp(-z)))
logsf = standardized("gumbel_r", "logsf", lambda z: log1mexp(-xnp.exp(-z)))
# NaN outside 0 < p < 1 (gumbel_l's ppf)
ppf = quantile("gumbel_r", "ppf",
               lambda p: nan_where(~((p > 0) & (p < 1)), -xnp.log(-xnp.log(p))))
