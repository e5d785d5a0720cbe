"""Multinomial distribution: jax.scipy.stats.multinomial (counts x over the last axis, n
trials, probabilities p).  x and n must be integers (as in JAX); counts not summing to n have
probability 0."""
from ... import numpy as xnp
from .. import special as sp
from ...primitives.operands import aval
from ._util import exp_of, floats, multivariate


@multivariate
def logpmf(x, n, p):
    x, n = xnp.asarray(x), xnp.asarray(n)
    # bools count as integers (jax promotes x and n as numbers first: bool -> int)
    if aval(x).dtype.kind not in "iub" or aval(n).dtype.kind not in "iub":
        raise ValueError(f"multinomial.logpmf: x and n must be of integer type; got "
                         f"x.dtype={aval(x).dtype}, n.dtype={aval(n).dtype}")
    total = xnp.sum(x, axis=-1)
    xf, nf, p = floats(x, xnp.expand_dims(n, -1), p, name="multinomial.logpmf")
    val = (sp.gammaln(nf[..., 0] + 1)
           + xnp.sum(sp.xlogy(xf, p) - sp.gammaln(xf + 1), axis=-1))
    return xnp.where(total == n, val, -xnp.inf)


pmf = exp_of(logpmf)
