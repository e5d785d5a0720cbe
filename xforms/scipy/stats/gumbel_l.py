"""Left-skewed Gumbel distribution: jax.scipy.stats.gumbel_l (sf exp(-exp(z)))."""
from ... import numpy as xnp
from ._util import exp_of, log1mexp, nan_where, quantile, standardized

logpdf = standardized("gumbel_l", "logpdf", lambda z: z - xnp.exp(z), density=True)
pdf = exp_of(logpdf)
logsf = standardized("gumbel_l", "logsf", lambda z: -xnp.exp(z))
sf = exp_of(logsf)
cdf = standardized("gumbel_l", "cdf", lambda z: -xnp.expm1(-xnp.exp(z)))
logcdf = standardized("gumbel_l", "logcdf", lambda z: log1mexp(-xnp.exp(z)))
# NaN outside 0 < p < 1, -inf and inf at 0 and 1 included (JAX's; scipy's are the infinities)
ppf = quantile("gumbel_l", "ppf",
               lambda p: nan_where(~((p > 0) & (p < 1)), xnp.log(-xnp.log1p(-p))))
