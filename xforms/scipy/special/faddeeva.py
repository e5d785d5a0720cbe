"""The Faddeeva function wofz and what follows from it on lines of the complex plane: Dawson's
integral dawsn and the Fresnel integrals.

wofz uses Weideman's rational expansion (SIAM J. Numer. Anal. 31, 1994) in the upper half
plane, w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)) with Z = (L + iz) / (L - iz),
and w(z) = 2 exp(-z^2) - w(-z) below it.  Its 40 coefficients come from one FFT at first
use (JAX tabulates 32: 40 gives a relative error below 3e-14 against SciPy where 32 gives
3e-13).
"""
import math

import numpy as np

from ... import lax
from ... import numpy as xnp
from ...custom import custom_jvp
from ...primitives.operands import returns_arrays
from ._util import float_operands

_N = 40
_L = math.sqrt(_N / math.sqrt(2))
_COEFFS = None
_SQRT_PI = math.sqrt(math.pi)


def _weideman_coefficients():
    """p's coefficients (highest power first): the Fourier coefficients of
    exp(-t^2) (L^2 + t^2) on the circle t = L tan(theta / 2)."""
    m = 2 * _N
    theta = np.arange(-m + 1, m) * np.pi / m
    t = _L * np.tan(theta / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (_L * _L + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return [float(v) for v in a[_N:0:-1]]


def _w_upper(z):
    """w(z) for Im z >= 0."""
    global _COEFFS
    if _COEFFS is None:         # (one small FFT on first use: importing stays cheap)
        _COEFFS = _weideman_coefficients()
    iz = 1j * z
    denom = _L - iz
    big_z = (_L + iz) / denom
    p = xnp.zeros_like(z)
    for c in _COEFFS:
        p = p * big_z + c
    return 2.0 * p / (denom * denom) + (1.0 / _SQRT_PI) / denom


@custom_jvp
def _wofz(z):
    upper = xnp.imag(z) >= 0
    w = _w_upper(xnp.where(upper, z, -z))
    return xnp.where(upper, w, 2.0 * xnp.exp(-z * z) - w)


_wofz.defjvps(lambda t, ans, z: (2j / _SQRT_PI - 2.0 * z * ans) * t)


def _complex(x):
    """x + 0j; float16 becomes complex64, the narrowest complex type (jax's wofz too)."""
    if x.dtype == np.float16:
        x = x.astype(np.float32)
    return lax.complex(x, xnp.zeros_like(x))


@returns_arrays
def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz); real arguments become complex.

        >>> wofz(xnp.array([1.0 + 1.0j, 0.5]))
    """
    z = xnp.asarray(z)
    if not xnp.iscomplexobj(z):
        (z,) = float_operands(z, name="wofz")
        z = _complex(z)
    return _wofz(z)


@custom_jvp
def _dawsn(x):
    # F(x) = sqrt(pi) / 2 Im w(x) on the real line
    out = (0.5 * _SQRT_PI) * xnp.imag(_wofz(_complex(xnp.where(xnp.isinf(x), 0.0, x))))
    out = out.astype(x.dtype)                     # (float16: computed in float32)
    return xnp.where(xnp.isinf(x) | (x == 0), xnp.copysign(0.0, x), out)


_dawsn.defjvps(lambda t, ans, x: (1.0 - 2.0 * x * ans) * t)


@returns_arrays
def dawsn(x):
    """Dawson's integral F(x) = exp(-x^2) int_0^x exp(t^2) dt (real x).

        >>> dawsn(xnp.array([0.5, 3.0]))
    """
    x = xnp.asarray(x)
    if xnp.iscomplexobj(x):
        raise ValueError("dawsn does not support complex-valued inputs.")
    (x,) = float_operands(x, name="dawsn")
    return _dawsn(x)


def _fresnel_series(x):
    """(S, C) by their power series in t = pi x^2 / 2 (used for |x| <= 1, where the
    alternating terms stay below 1.3)."""
    t = (0.5 * math.pi) * x * x
    term = x                                    # (-1)^k t^(2k) x / (2k)!: C's k-th numerator
    c, s = x, xnp.zeros_like(x)
    for k in range(1, 13):
        term_s = term * t / (2 * k - 1)         # (-1)^(k-1) t^(2k-1) x / (2k-1)!
        s = s + term_s / (4 * k - 1)
        term = -term_s * t / (2 * k)
        c = c + term / (4 * k + 1)
    return s, c


def _fresnel_w(x):
    """(S, C) for x > 0 from C + iS = (1 + i)/2 (1 - exp(i pi x^2/2) w((1 + i) sqrt(pi) x/2))."""
    z = _complex(x) * ((0.5 + 0.5j) * _SQRT_PI)
    phase = xnp.exp(_complex(x * x) * (0.5j * math.pi))
    v = (0.5 + 0.5j) * (1.0 - phase * _wofz(z))
    return xnp.imag(v), xnp.real(v)


@custom_jvp
def _fresnel(x):
    # float16 is computed in float32 and rounded once, as jax's (its w is complex64 anyway)
    wide = x.astype(np.float32) if x.dtype == np.float16 else x
    ax = xnp.abs(wide)
    near = ax <= 1.0
    s1, c1 = _fresnel_series(xnp.where(near, ax, 0.5))
    s2, c2 = _fresnel_w(xnp.where(near | xnp.isinf(ax), 2.0, ax))
    s = xnp.where(near, s1, xnp.where(xnp.isinf(ax), 0.5, s2))
    c = xnp.where(near, c1, xnp.where(xnp.isinf(ax), 0.5, c2))
    neg = wide < 0                              # both are odd
    return (xnp.where(neg, -s, s).astype(x.dtype), xnp.where(neg, -c, c).astype(x.dtype))


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    s, c = _fresnel(x)
    arg = (0.5 * math.pi) * x * x
    return (s, c), (xnp.sin(arg) * t, xnp.cos(arg) * t)


@returns_arrays
def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt (real x).

        >>> s, c = fresnel(xnp.array([0.5, 2.0]))
    """
    x = xnp.asarray(x)
    if xnp.iscomplexobj(x):
        # (jax 0.10.2's class and words: its complex Fresnel integrals are "not yet")
        raise NotImplementedError("fresnel: support for complex-valued inputs is not "
                                  "implemented yet (as in JAX); pass real values")
    (x,) = float_operands(x, name="fresnel")
    return _fresnel(x)
