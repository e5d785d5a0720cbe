"""Pareto distribution: jax.scipy.stats.pareto (shape b; support z = (x - loc)/scale >= 1)."""
from ... import numpy as xnp
from ._util import exp_of, log1mexp, nan_where, quantile, standardized


def _safe(z):
    return xnp.where(z >= 1, z, 1.0)


def _logpdf(z, b):
    return xnp.where(z >= 1, xnp.log(b) - (b + 1) * xnp.log(_safe(z)), -xnp.inf)


def _logsf(z, b):
    return xnp.where(z >= 1, -b * xnp.log(_safe(z)), 0.0)


logpdf = standardized("pareto", "logpdf", _logpdf, nshape=1, density=True)
pdf = exp_of(logpdf)
logsf = standardized("pareto", "logsf", _logsf, nshape=1)
sf = exp_of(logsf)
cdf = standardized("pareto", "cdf", lambda z, b: -xnp.expm1(_logsf(z, b)), nshape=1)


def _logcdf(z, b):
    # below the support the value is the constant branch -inf, as JAX's where(x < loc +
    # scale, -inf, ...): log1mexp(0) there would be log(0), whose forward derivative is 0/0
    return xnp.where(z >= 1, log1mexp(_logsf(z, b)), -xnp.inf)


logcdf = standardized("pareto", "logcdf", _logcdf, nshape=1)
ppf = quantile("pareto", "ppf", lambda q, b: nan_where((q < 0) | (q > 1),
                                                       xnp.power(-q + 1.0, -1.0 / b)), nshape=1)
