"""von Mises distribution: jax.scipy.stats.vonmises (concentration kappa; periodic in x, no
support restriction, as in JAX).  The normaliser 2 pi I_0(kappa) through i0e, so large kappa
does not overflow."""
import math

from ... import numpy as xnp
from .. import special as sp
from ._util import api, exp_of, floats, nan_where


@api
def logpdf(x, kappa):
    x, kappa = floats(x, kappa, name="vonmises.logpdf")
    val = kappa * (xnp.cos(x) - 1) - math.log(2 * math.pi) - xnp.log(sp.i0e(kappa))
    return nan_where(~(kappa > 0), val)


pdf = exp_of(logpdf)
