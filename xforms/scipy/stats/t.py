"""Student's t distribution: jax.scipy.stats.t (logpdf, pdf) plus cdf and sf through betainc
(not differentiable in df)."""
import math

from ... import numpy as xnp
from .. import special as sp
from ..special.gamma import log_gamma_ratio
from ._util import api, exp_of, floats


@api
def logpdf(x, df, loc=0, scale=1):
    """log of Student's t density.  The normalising log Gamma((df + 1) / 2) - log Gamma(df / 2)
    comes from cdflib's log-gamma ratio once df / 2 >= 8: the plain difference of two huge
    gammalns cancels (jax 0.10.2 gives -0.5 at df = 2**64, x = 1; the normal limit is -1.419).

        >>> logpdf(1.0, 2.0 ** 64)        # -1.4189 (log N(1; 0, 1))
    """
    x, df, loc, scale = floats(x, df, loc, scale, name="t.logpdf")
    z = (x - loc) / scale
    half_df = 0.5 * df
    half = half_df + 0.5
    return (_log_gamma_half_ratio(half_df) - 0.5 * xnp.log(df * math.pi) - xnp.log(scale)
            - half * xnp.log1p(z * z / df))


def _log_gamma_half_ratio(b):
    """log(Gamma(b + 1/2) / Gamma(b)): the gammaln difference below b = 8, above
    -log_gamma_ratio(1/2, b) (b clamped where unused so its where() carries no NaN into
    the derivative of the other branch).

        >>> _log_gamma_half_ratio(xnp.array([1.0]))        # log(sqrt(pi) / 2) = -0.1208
    """
    small = sp.gammaln(b + 0.5) - sp.gammaln(b)
    large = -log_gamma_ratio(xnp.full_like(b, 0.5), xnp.maximum(b, xnp.full_like(b, 8.0)))
    return xnp.where(b < 8, small, large)


pdf = exp_of(logpdf)


@api
def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = floats(x, df, loc, scale, name="t.sf")
    z = (x - loc) / scale
    tail = 0.5 * sp.betainc(0.5 * df, xnp.full_like(df, 0.5), df / (df + z * z))
    return xnp.where(z > 0, tail, 1 - tail)


@api
def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = floats(x, df, loc, scale, name="t.cdf")
    return sf(2 * loc - x, df, loc, scale)
