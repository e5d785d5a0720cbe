"""Beta-binomial distribution: jax.scipy.stats.betabinom (n trials, Beta(a, b) success
probability).  k is rounded down, as in JAX; outside 0 <= k - loc <= n the probability is 0."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats


@api
def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = floats(k, n, a, b, loc, name="betabinom.logpmf")
    y = xnp.floor(k - loc)
    ok = (y >= 0) & (y <= n)
    ys = xnp.where(ok, y, 0.0)
    comb = sp.gammaln(n + 1) - sp.gammaln(ys + 1) - sp.gammaln(n - ys + 1)
    val = comb + sp.betaln(ys + a, n - ys + b) - sp.betaln(a, b)
    return xnp.where(ok, val, -xnp.inf)


pmf = exp_of(logpmf)
