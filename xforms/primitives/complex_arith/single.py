"""Complex64 log, sqrt, 1/sqrt, sin, cos and expm1 for the eager tier, vectorised in float32 as the compiled
tiers compute them (elementary.py's scalar functions, XLA's algorithms in the parts' type):
NumPy's complex64 ufuncs use other formulas (np.sqrt and np.log of ordinary complex64 values
were 202 and 555 of 2,000 values away from jax 0.10.2's bits, the compiled tier 0 and 144).

Each function computes the ordinary elements (finite, nonzero parts); the caller
(patching.unary) redoes the special ones with the scalar function, and so any element made
NaN here (sqrt's scaled branch, where the sum under- or overflows).  float32 libm values are
float64's rounded to float32, as the scalar functions give them in Python: libm's float32
function (the compiled tiers') can differ in a rare last bit; NumPy's float32 log and atan2
(its SIMD code) differ in many more.

    >>> log(np.array([3 + 4j], np.complex64))     # [1.609438+0.9272952j]
"""
import math

import numpy as np

from . import select
from .division import fma32

_F32 = np.float32


def _libm(fn, *args):
    """fn (a NumPy float64 ufunc) of float32 arrays, rounded to float32."""
    return fn(*(a.astype(np.float64) for a in args)).astype(_F32)


def _square_error(v):
    """v*v's rounding error (elementary._square_error, with its fma), elementwise."""
    t = v * _F32(4097.0)
    hi = t + (v - t)
    lo = v - hi
    hl = hi * lo
    return fma32(lo, lo, (fma32(hi, hi, -(v * v)) + hl) + hl)


def log(z):
    """log of complex64 z (elementary.log_scalar) on its ordinary elements."""
    x, y = z.real, z.imag
    half = _F32(0.5)
    with np.errstate(all="ignore"):
        xx, yy = x * x, y * y
        big, small = np.maximum(xx, yy), np.minimum(xx, yy)
        s1 = big + _F32(-1.0)
        s2 = s1 + small
        ey, ex = _square_error(y), _square_error(x)
        s3 = s2 + ey
        s4 = s3 + ex
        err = (big - big) + (small - (s2 - s1)) + (ey - (s3 - s2)) + (ex - (s4 - s3))
        d = s4 + err
        ax, ay = np.abs(x), np.abs(y)
        hi, lo = np.maximum(ax, ay), np.minimum(ax, ay)
        r = np.where(lo == hi, _F32(1.0), lo / hi)
        far = _libm(np.log, hi) + half * _libm(np.log1p, r * r)
        near = select.lanes(np.abs(d) < half, _F32)    # (data's branch: select.py)
        re = select.pick(near, half * _libm(np.log1p, d), far)
        return _complex(re, _libm(np.arctan2, y, x))


def _hypot(big, small):
    """elementary._hypot, elementwise."""
    r = small / big
    rr = r * r
    s = np.sqrt(rr + _F32(1.0))
    h = np.where((s == 1) & (rr > 0), big + big * rr * _F32(0.5), big * s)
    return np.where(big == small, big * _F32(math.sqrt(2.0)), h)


def sqrt(z):
    """sqrt of complex64 z (elementary.sqrt_scalar) on its ordinary elements; NaN where it
    takes the scaled branch (the caller redoes those)."""
    x, y = z.real, z.imag
    half = _F32(0.5)
    with np.errstate(all="ignore"):
        ax, ay = np.abs(x), np.abs(y)
        same = ax == ay
        w = np.sqrt(_hypot(np.maximum(ax, ay), np.minimum(ax, ay)) * half + ax * half)
        u = np.where(same, np.sqrt(ax) * _F32(1.0986841134678098), w)
        v = np.where(same, np.sqrt(ay) * _F32(0.45508986056222733), ay / (w * _F32(2.0)))
        scaled = ~same & ((w == 0) | (w == np.inf))
        u, v = np.where(scaled, _F32(np.nan), u), np.where(scaled, _F32(np.nan), v)
        re, im = select.swap(select.lanes(x >= 0, _F32), u, v)
        return _complex(re, select.pick(select.lanes(y < 0, _F32), -im, im))


def rsqrt(z):
    """1 / sqrt of complex64 z (elementary.rsqrt_scalar) on its ordinary elements."""
    x, y = z.real, z.imag
    one = _F32(1.0)
    with np.errstate(all="ignore"):
        ax, ay = np.abs(x), np.abs(y)
        big, small = np.maximum(ax, ay), np.minimum(ax, ay)
        r = small / big
        q = (one / np.sqrt(big)) * np.sqrt(one / np.sqrt(fma32(r, r, one)))
        a = _libm(np.arctan2, y, x) * _F32(-0.5)
        return _complex(q * _libm(np.cos, a), q * _libm(np.sin, a))


def _sh_ch(y):
    """trigonometric._sh_ch, elementwise: sinh y and cosh y from expm1."""
    a, b = _libm(np.expm1, y), _libm(np.expm1, -y)
    return (a - b) * _F32(0.5), (a + b + _F32(2.0)) * _F32(0.5)


def sin(z):
    """sin of complex64 z (trigonometric.sin_scalar) on its ordinary elements."""
    x, y = z.real, z.imag
    with np.errstate(all="ignore"):
        sh, ch = _sh_ch(y)
        re = np.where(x == 0, _F32(0.0), _libm(np.sin, x) * ch)
        return _complex(re, _libm(np.cos, x) * sh)


def cos(z):
    """cos of complex64 z (trigonometric.cos_scalar) on its ordinary elements."""
    x, y = z.real, z.imag
    with np.errstate(all="ignore"):
        sh, ch = _sh_ch(y)
        im = np.where(x == 0, _F32(0.0), -_libm(np.sin, x) * sh)
        return _complex(_libm(np.cos, x) * ch, im)


def expm1(z):
    """e^z - 1 of complex64 z (elementary.expm1_scalar, its cosm1 and fma) on its ordinary
    elements."""
    x, y = z.real, z.imag
    one = _F32(1.0)
    with np.errstate(all="ignore"):
        half_sin = _libm(np.sin, _F32(0.5) * y)
        cm = select.pick(select.lanes(np.abs(y) > _F32(math.pi / 4), _F32),
                         _libm(np.cos, y) - one,
                         _F32(-2.0) * half_sin * half_sin + _F32(0.0))    # (_cosm1's +0)
        em = _libm(np.expm1, x)
        im = np.where(y == 0, _F32(0.0), (em + one) * _libm(np.sin, y))
        return _complex(fma32(em, cm + one, cm), im)


def _complex(re, im):
    out = np.empty(np.shape(re), np.complex64)
    out.real, out.imag = re, im
    return out
