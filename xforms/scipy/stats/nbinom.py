"""Negative binomial distribution: jax.scipy.stats.nbinom (k failures before the n-th success
of probability p).  As JAX, k is not rounded (a continuous extension between integers); k < loc
has probability 0."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats


@api
def logpmf(k, n, p, loc=0):
    k, n, p, loc = floats(k, n, p, loc, name="nbinom.logpmf")
    y = k - loc
    ok = y >= 0
    ys = xnp.where(ok, y, 0.0)
    val = (sp.gammaln(n + ys) - sp.gammaln(ys + 1) - sp.gammaln(n) + sp.xlogy(n, p)
           + sp.xlog1py(ys, -p))
    return xnp.where(ok, val, -xnp.inf)


pmf = exp_of(logpmf)
