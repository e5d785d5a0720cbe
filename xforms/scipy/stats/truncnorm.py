"""Truncated normal distribution: jax.scipy.stats.truncnorm (bounds a < b in standard units,
then loc and scale).  The normaliser log(Phi(b) - Phi(a)) is computed in the tail it lies in
(log_ndtr and log1mexp; the right tail mirrored onto the left), so far tails keep their
precision (a = 8, b = 12 is fine)."""
import math

from ... import numpy as xnp
from .. import special as sp
from ._util import exp_of, log1mexp, standardized

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _log_mass(lo, hi):
    """log(Phi(hi) - Phi(lo)) for lo <= hi."""
    right = lo >= 0
    tail = (hi <= 0) | right
    l2, h2 = xnp.where(right, -hi, lo), xnp.where(right, -lo, hi)     # both <= 0 when tail
    lh = sp.log_ndtr(h2)
    in_tail = lh + log1mexp(xnp.minimum(sp.log_ndtr(l2) - lh, 0.0))
    mid = xnp.log1p(-sp.ndtr(xnp.where(tail, -1.0, lo)) - sp.ndtr(-xnp.where(tail, 1.0, hi)))
    return xnp.where(tail, in_tail, mid)


def _logpdf(z, a, b):
    inside = (z >= a) & (z <= b)
    return xnp.where(inside, -0.5 * z * z - _HALF_LOG_2PI - _log_mass(a, b), -xnp.inf)


def _inside(z, a, b):
    """z where a < z < b, else a point inside: the masses of an empty interval (log 0) would
    give every derivative 0 * inf = NaN where JAX's are 0 (x below a for the cdf)."""
    inside = (z > a) & (z < b)
    return xnp.where(inside, z, 0.5 * (a + b))


def _logcdf(z, a, b):
    zc = _inside(z, a, b)
    out = _log_mass(a, zc) - _log_mass(a, b)
    return xnp.where(z <= a, -xnp.inf, xnp.where(z >= b, 0.0, out))


def _logsf(z, a, b):
    zc = _inside(z, a, b)
    out = _log_mass(zc, b) - _log_mass(a, b)
    return xnp.where(z <= a, 0.0, xnp.where(z >= b, -xnp.inf, out))


logpdf = standardized("truncnorm", "logpdf", _logpdf, nshape=2, density=True)
pdf = exp_of(logpdf)
logcdf = standardized("truncnorm", "logcdf", _logcdf, nshape=2)
cdf = exp_of(logcdf)
logsf = standardized("truncnorm", "logsf", _logsf, nshape=2)
sf = exp_of(logsf)
