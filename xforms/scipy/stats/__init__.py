"""`xforms.scipy.stats`: jax.scipy.stats's distributions, one module each, composed from
xforms.scipy.special and xforms.numpy (so they fuse, batch and differentiate like user code).

    >>> from xforms.scipy.stats import norm
    >>> norm.logpdf(xnp.array([0.0, 1.0]), loc=0.0, scale=2.0)

Differentiable in x and in loc/scale; derivatives in shape parameters that go through
gammainc/betainc (chi2.cdf's df, gamma.cdf's a, beta.cdf's a and b, t.cdf's df, poisson.cdf's
k) raise NotImplementedError.  multivariate_normal needs xforms.numpy.linalg.cholesky and
xforms.scipy.linalg.solve_triangular.  Location-scale methods share one helper
(`_util.standardized` / `quantile`: f(x, *shape, loc=0, scale=1) = g((x - loc) / scale)).
Not provided: poisson.entropy.
"""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon,  # noqa
               gamma, gennorm, geom, gumbel_l, gumbel_r, laplace, logistic, lognorm,
               multinomial, multivariate_normal, nbinom, norm, pareto, poisson, t, truncnorm,
               uniform, vonmises, wrapcauchy)
from ._descriptive import ModeResult, mode, rankdata, sem  # noqa: F401
from .kde import gaussian_kde  # noqa: F401
