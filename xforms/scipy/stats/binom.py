"""Binomial distribution: jax.scipy.stats.binom."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api_as_jax_at_nan, exp_of, floats


@api_as_jax_at_nan
def logpmf(k, n, p, loc=0):
    k, n, p, loc = floats(k, n, p, loc, name="binom.logpmf")
    x = k - loc
    ok = (x >= 0) & (x < n + 1)   # JAX's range; a fractional k gets its formula's value
    safe = xnp.where(ok, x, 0.0)
    comb = sp.gammaln(n + 1) - sp.gammaln(safe + 1) - sp.gammaln(n - safe + 1)
    val = comb + sp.xlogy(safe, p) + sp.xlog1py(n - safe, -p)
    return xnp.where(ok, val, -xnp.inf)


pmf = exp_of(logpmf)
