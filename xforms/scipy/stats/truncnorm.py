"""Truncated normal distribution: jax.scipy.stats.truncnorm (bounds a < b in standard units,
then loc and scale).  The normaliser log(Phi(b) - Phi(a)) is computed in the tail it lies in
(log_ndtr and log1mexp; the right tail mirrored onto the left), so far tails keep their
precision (a = 8, b = 12 is fine)."""
import math

from ... import numpy as xnp
from .. import special as sp
from ._util import api_as_jax_at_nan, exp_of, log1mexp, nan_where, standardized

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
    outside = (z < a) | (z > b)         # (JAX's test: a NaN bound gives its formula's NaN)
    return xnp.where(outside, -xnp.inf, -0.5 * z * z - _HALF_LOG_2PI - _log_mass(a, b))


def _inside(z, a, b):
    """z where a < z < b, else a point inside: the masses of an empty interval (log 0) would
    give every derivative 0 * inf = NaN where JAX's are 0 (x below a for the cdf)."""
    inside = (z > a) & (z < b)
    return xnp.where(inside, z, 0.5 * (a + b))


def _logcdf(z, a, b):
    zc = _inside(z, a, b)
    out = _log_mass(a, zc) - _log_mass(a, b)
    return _select(z >= b, z <= a, z > a, 0.0, -xnp.inf, out)


def _logsf(z, a, b):
    zc = _inside(z, a, b)
    out = _log_mass(zc, b) - _log_mass(a, b)
    return _select(z <= a, z >= b, z < b, 0.0, -xnp.inf, out)


def _select(full, empty, between, at_full, at_empty, out):
    """JAX's select of the log cdf (the log sf is that of the reflected law): 0 past the
    upper bound, -inf below the lower, the mass between, and 0 where no test holds (a NaN x
    or bound: jax 0.10.2's truncnorm.cdf(nan, 0, 1) is 1)."""
    return xnp.where(full, at_full, xnp.where(empty, at_empty, xnp.where(between, out, 0.0)))


def _bounded(fn):
    """fn(z, a, b), NaN where a >= b (JAX's test); fn sees the bounds (-1, 1) there, so that
    the empty interval's log mass leaks no NaN derivative (JAX's are 0 there)."""
    def g(z, a, b):
        bad = a >= b
        return nan_where(bad, fn(z, xnp.where(bad, -1.0, a), xnp.where(bad, 1.0, b)))
    return g


logpdf = standardized("truncnorm", "logpdf", _bounded(_logpdf), nshape=2, density=True)
pdf = exp_of(logpdf)
logcdf = standardized("truncnorm", "logcdf", _bounded(_logcdf), nshape=2,
                      at_nan=api_as_jax_at_nan)
cdf = exp_of(logcdf)
logsf = standardized("truncnorm", "logsf", _bounded(_logsf), nshape=2,
                     at_nan=api_as_jax_at_nan)
sf = exp_of(logsf)
