"""Geometric distribution on k = 1, 2, ...: jax.scipy.stats.geom."""
from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats


@api
def logpmf(k, p, loc=0):
    k, p, loc = floats(k, p, loc, name="geom.logpmf")
    x = k - loc
    ok = x > 0      # JAX's test; a fractional k gets its formula's value
    safe = xnp.where(ok, x, 1.0)
    val = sp.xlog1py(safe - 1, -p) + xnp.log(p)
    return xnp.where(ok, val, -xnp.inf)


pmf = exp_of(logpmf)
