"""The error functions and the normal distribution: erf, erfc, erfinv, erfcinv, erfcx, ndtr,
ndtri, log_ndtr.
"""
import math

import numpy as np

from ... import lax
from ... import numpy as xnp
from ...custom import custom_jvp
from ...primitives.operands import aval, returns_arrays
from ...primitives.special import functions as ps
from ._util import const_like, float_operands
from .faddeeva import wofz


# ---- error functions and the normal distribution -------------------------------------------------
@returns_arrays
def erf(x):
    (x,) = float_operands(x, name="erf")
    return ps.erf(x)


@returns_arrays
def erfc(x):
    (x,) = float_operands(x, name="erfc")
    return ps.erfc(x)


@returns_arrays
def erfinv(x):
    (x,) = float_operands(x, name="erfinv")
    return ps.erf_inv(x)


@returns_arrays
def erfcinv(x):
    (x,) = float_operands(x, name="erfcinv")
    return ps.erfc_inv(x)


_SQRT1_2 = 1 / math.sqrt(2)


@returns_arrays
def ndtr(x):
    """Standard normal cdf: erfc(-x / sqrt(2)) / 2."""
    (x,) = float_operands(x, name="ndtr")
    return const_like(0.5, x) * ps.erfc(x * const_like(-_SQRT1_2, x))


@returns_arrays
def ndtri(p):
    """Inverse of ndtr: -sqrt(2) erfcinv(2p) (full relative precision in both tails)."""
    (p,) = float_operands(p, name="ndtri")
    return const_like(-math.sqrt(2), p) * ps.erfc_inv(p * const_like(2.0, p))


@returns_arrays
def log_ndtr(x):
    """log(ndtr(x)), accurate in both tails: log1p(-ndtr(-x)) for x > 0, the asymptotic
    series -x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - 15/x^6 + 105/x^8) for
    x < -20 (-10 in float32; ndtr underflows further out), log(ndtr(x)) between."""
    (x,) = float_operands(x, name="log_ndtr")
    lo = -10.0 if aval(x).dtype == np.float32 else -20.0
    tail = x < lo
    xt = xnp.where(tail, x, lo)                  # each branch sees safe arguments
    r = 1.0 / (xt * xt)
    series = 1.0 - r * (1.0 - r * (3.0 - r * (15.0 - r * 105.0)))
    asym = -0.5 * xt * xt - xnp.log(-xt) - 0.5 * math.log(2 * math.pi) + xnp.log(series)
    xm = xnp.where(tail, lo, x)
    pos = xm > 0
    mid = xnp.where(pos, xnp.log1p(-ndtr(xnp.where(pos, -xm, 0.0))),
                    xnp.log(ndtr(xnp.where(pos, 0.0, xm))))
    return xnp.where(tail, asym, mid)




@returns_arrays
def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x), accurate where erfc
    underflows; inf for x < -26.6 (float64).

        >>> erfcx(xnp.array([0.0, 30.0]))       # [1, 0.018795888861416751]
    """
    (x,) = float_operands(x, name="erfcx")
    if xnp.iscomplexobj(x):        # erfcx(z) = w(iz), as JAX's
        return wofz(lax.complex(-xnp.imag(x), xnp.real(x)))
    return ps.erfcx(x)          # (scipy's un-jitted; one-pass composite compiled: functions.py)


# ---- Owen's T ----------------------------------------------------------------------------------
_GL = None
_SQRT_2 = math.sqrt(2)


def _owens_t_unit(h, a):
    """T(h, a) for h >= 0, 0 <= a <= 1: (1/2pi) int_0^a exp(-h^2 (1 + u^2)/2) / (1 + u^2) du
    by 48-point Gauss-Legendre (relative error below 1e-13 against SciPy for h < 37, past
    which T underflows; JAX's 13 points give 0.6 near h = 35)."""
    global _GL
    if _GL is None:             # (built on first use: importing stays cheap)
        _GL = [(float(t), float(w)) for t, w in zip(*np.polynomial.legendre.leggauss(48))]
    total = xnp.zeros_like(h)
    for t, w in _GL:
        u2 = (a * (0.5 * (t + 1.0))) ** 2
        total = total + w * xnp.exp(-0.5 * h * h * u2) / (1.0 + u2)
    return xnp.exp(-0.5 * h * h) * total * a / (4.0 * math.pi)


@custom_jvp
def _owens_t(h, a):
    h, abs_a = xnp.abs(h), xnp.abs(a)
    unit = abs_a <= 1.0
    inner = _owens_t_unit(xnp.where(unit, h, abs_a * h),
                          xnp.where(unit, abs_a, 1.0 / xnp.where(unit, 1.0, abs_a)))
    # |a| > 1: T(h, a) = (Q(h) + Q(ah))/2 - Q(h) Q(ah) - T(ah, 1/a), Q the normal tail
    qh, qah = 0.5 * erfc(h / _SQRT_2), 0.5 * erfc(abs_a * h / _SQRT_2)
    outer = 0.5 * (qh + qah) - qh * qah - inner
    out = xnp.where(unit, inner, xnp.where(xnp.isinf(abs_a), 0.5 * qh, outer))
    return xnp.where(xnp.isnan(h) | xnp.isnan(a), xnp.nan, xnp.sign(a) * out)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (th, ta) = primals, tangents
    dh = -xnp.exp(-0.5 * h * h) * erf(a * h / _SQRT_2) / (2.0 * math.sqrt(2 * math.pi))
    da = xnp.exp(-0.5 * (1.0 + a * a) * h * h) / (2.0 * math.pi * (1.0 + a * a))
    return _owens_t(h, a), dh * th + da * ta


@returns_arrays
def owens_t(h, a):
    """Owen's T function T(h, a) = (1/2pi) int_0^a exp(-h^2 (1 + x^2)/2) / (1 + x^2) dx.

        >>> owens_t(xnp.array([0.5, 2.0]), 0.7)
    """
    h, a = float_operands(h, a, name="owens_t")
    return _owens_t_complex(h, a) if xnp.iscomplexobj(h) else _owens_t(h, a)


def _owens_t_complex(h, a):
    """JAX's complex owens_t: its real algorithm on |h| and |a|, times lax.sign(a) = a/|a|
    (NaN, with a zero imaginary part, where a part of h or a is NaN).  JAX cannot
    differentiate it (its rule calls erf of complex operands); xforms differentiates this
    composition, with a/|a|'s own derivative (lax.sign's is 0, as JAX's)."""
    t = _owens_t(xnp.abs(h), xnp.abs(a))
    out = _unit(a) * lax.complex(t, xnp.zeros_like(t))
    nan = const_like(np.nan, t)
    return xnp.where(xnp.isnan(h) | xnp.isnan(a), lax.complex(nan, xnp.zeros_like(t)), out)


@custom_jvp
def _unit(a):
    """lax.sign(a) = a/|a| of complex a, differentiable: lax.sign's derivative is 0, right
    for reals only (with it owens_t's complex derivatives disagreed with its values)."""
    return lax.sign(a)


@_unit.defjvp
def _unit_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    s, r = _unit(a), xnp.abs(a)     # (_unit again: its second derivative is right too)
    # d(a/r) = da/r - a dr/r^2 with dr = Re(conj(a) da)/r
    return s, (da - s * xnp.real(xnp.conj(s) * da)) / r
