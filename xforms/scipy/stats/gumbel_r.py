"""Right-skewed Gumbel distribution: jax.scipy.stats.gumbel_r (cdf exp(-exp(-z)))."""
from ... import numpy as xnp
from ._util import exp_of, log1mexp, quantile, standardized

logpdf = standardized("gumbel_r", "logpdf", lambda z: -(z + xnp.exp(-z)), density=True)
pdf = exp_of(logpdf)
logcdf = standardized("gumbel_r", "logcdf", lambda z: -xnp.exp(-z))
cdf = exp_of(logcdf)
sf = standardized("gumbel_r", "sf", lambda z: -xnp.expm1(-xnp.exp(-z)))
logsf = standardized("gumbel_r", "logsf", lambda z: log1mexp(-xnp.exp(-z)))
ppf = quantile("gumbel_r", "ppf", lambda p: -xnp.log(-xnp.log(p)))
