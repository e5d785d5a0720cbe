"""Logistic distribution: jax.scipy.stats.logistic."""
from ... import numpy as xnp
from .. import special as sp
from ._util import exp_of, quantile, standardized


def _logpdf(z):
    if xnp.iscomplexobj(z):     # JAX's -2 logaddexp(z/2, -z/2): |z| would drop Im z
        return -(2 * xnp.logaddexp(z / 2, -z / 2))     # (-0j at 0j, as jax's neg(2) * ...)
    a = xnp.abs(z)
    return -a - 2 * xnp.log1p(xnp.exp(-a))


logpdf = standardized("logistic", "logpdf", _logpdf, density=True)
pdf = exp_of(logpdf)
cdf = standardized("logistic", "cdf", sp.expit)
sf = standardized("logistic", "sf", sp.expit, reflect=True)
ppf = quantile("logistic", "ppf", sp.logit)
isf = quantile("logistic", "isf", sp.logit, reflect=True)
