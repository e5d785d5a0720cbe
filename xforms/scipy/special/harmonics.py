"""Spherical harmonics: sph_harm_y, from the orthonormal associated Legendre functions by
their three-term recurrence in the degree (stable for all degrees: every step is a
rotation-like combination of normalised values, nothing grows like a factorial).
"""
import math

import numpy as np

from ... import lax
from ... import numpy as xnp
from ...primitives.operands import returns_arrays
from ._util import float_operands


def _legendre_normalised(n, m, x, s, n_max):
    """N P_n^m(x) with N = sqrt((2n + 1)/(4 pi) (n - m)!/(n + m)!), m >= 0, for x = cos t,
    s = sin t: P_m^m from its closed form, then
    P_l = a_l (x P_{l-1} - P_{l-2} / a_{l-1}), a_l = sqrt((4 l^2 - 1) / (l^2 - m^2))."""
    def seed(k, p):          # p_mm *= -sqrt((2k - 1)/(2k)) s for k <= m (Condon-Shortley)
        kf = k.astype(x.dtype)
        return xnp.where(kf <= m, -p * xnp.sqrt((2.0 * kf - 1.0) / (2.0 * kf)) * s, p)
    p_mm = lax.fori_loop(1, n_max + 1, seed, xnp.full_like(x, 1.0 / math.sqrt(4 * math.pi)))
    p_mm = p_mm * xnp.sqrt(2.0 * m + 1.0)

    def raise_degree(j, state):   # degree l = m + j from (P_{l-2}, P_{l-1}, a_{l-1})
        p2, p1, a1, out = state
        l = m + j.astype(x.dtype)
        a = xnp.sqrt((4.0 * l * l - 1.0) / xnp.maximum(l * l - m * m, 1.0))
        p = a * (x * p1 - p2 / a1)
        return p1, p, a, xnp.where(l == n, p, out)
    p1 = xnp.sqrt(2.0 * m + 3.0) * x * p_mm        # degree m + 1
    out = xnp.where(n == m, p_mm, xnp.where(n == m + 1, p1, 0.0))
    a1 = xnp.sqrt(2.0 * m + 3.0)
    return lax.fori_loop(2, n_max + 1, raise_degree, (p_mm, p1, a1, out))[3]


def _static_n_max(n, n_max):
    if n_max is not None:
        return int(n_max)
    try:
        return int(np.max(np.asarray(n)))
    except Exception:           # a tracer: its values are not known here
        raise TypeError("sph_harm_y: n is traced (under jit, vmap or grad), so its largest "
                        "value is not known; pass n_max= (an int) to sph_harm_y") from None


@returns_arrays
def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic Y_n^m(theta, phi) = N_n^m P_n^m(cos theta) exp(i m phi)
    (theta the polar angle, phi the azimuth; orthonormal on the sphere, with the
    Condon-Shortley phase, as SciPy's sph_harm_y).  n_max is the largest degree (static;
    required when n is traced): larger n are clipped to it, as JAX does.  |m| > n gives 0.
    The arguments broadcast.

        >>> sph_harm_y(xnp.array([2, 3]), xnp.array([1, -2]), 0.5, 0.2, n_max=3)
    """
    if diff_n is not None:
        raise NotImplementedError("sph_harm_y: diff_n is not supported (nor is it by JAX); "
                                  "differentiate with xforms.grad instead")
    n_max = _static_n_max(n, n_max)
    theta, phi = (xnp.asarray(v) for v in float_operands(theta, phi, name="sph_harm_y"))
    dtype = xnp.result_type(theta)
    n = xnp.minimum(xnp.asarray(n), n_max).astype(dtype)
    m = xnp.asarray(m).astype(dtype)
    n, m, theta, phi = xnp.broadcast_arrays(n, m, theta, phi)
    am = xnp.abs(m)
    # sin(theta) >= 0 (sqrt(1 - cos^2), as JAX and SciPy take it outside [0, pi] too)
    p = _legendre_normalised(n, am, xnp.cos(theta), xnp.abs(xnp.sin(theta)), max(n_max, 1))
    # Y_n^-m = (-1)^m conj(Y_n^m)
    p = xnp.where((m < 0) & (xnp.remainder(am, 2.0) == 1.0), -p, p)
    p = xnp.where((am > n) | (n < 0), 0.0, p)
    return lax.complex(p * xnp.cos(m * phi), p * xnp.sin(m * phi))
