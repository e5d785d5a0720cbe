"""`xforms.scipy.stats`: jax.scipy.stats's distributions, one module each, composed from
xforms.scipy.special and xforms.numpy (so they fuse, batch and differentiate like user code).

    >>> from xforms.scipy.stats import norm
    >>> norm.logpdf(xnp.array([0.0, 1.0]), loc=0.0, scale=2.0)

Differentiable in x and in loc/scale; derivatives in shape parameters that go through
gammainc/betainc (chi2.cdf's df, gamma.cdf's a, beta.cdf's a and b, t.cdf's df, poisson.cdf's
k) raise NotImplementedError.  multivariate_normal needs xforms.numpy.linalg.cholesky and
xforms.scipy.linalg.solve_triangular.
"""
from . import (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma, geom,  # noqa
               laplace, logistic, lognorm, multivariate_normal, norm, poisson, t, uniform)
