"""XLA's complex atan2, rendered in NumPy for the fuzzers' oracles (independent of xforms'
numpy/elementwise/complex_atan2.py, but for both following jax 0.10.2's CPU IR): -i log((x + i y) /
sqrt(x^2 + y^2)) with XLA's products, its polar square root (sqrt(M) (1 + (m/M)^2)^(1/4),
half the angle), XLA's division (complex_division.py) and log of M sqrt(1 + (m/M)^2).  On
the paper the imaginary part is often 0; XLA's roundings decide its sign, and so the side of
a later branch cut: arctan2(0, -0 - 0.625j) is +pi in jax, -pi by NumPy's complex formula
(promotion seed 3102, session 32; jax: 3.1415925 + 0j).  Values may differ from XLA's in a
last bit (FMAs).

    >>> atan2(np.array([0j], np.complex64), np.array([complex(-0.0, -0.625)], np.complex64))
    array([3.1415927+0.j], dtype=complex64)
"""
import numpy as np

from .complex_division import divide


def _abs(re, im):
    big, small = np.fmax(np.abs(re), np.abs(im)), np.fmin(np.abs(re), np.abs(im))
    nan = np.isnan(re) | np.isnan(im)
    big, small = np.where(nan, np.nan, big), np.where(nan, np.nan, small)
    return big, small


def _sqrt(re, im):
    big, small = _abs(re, im)
    r = small / np.where(big == 0, 1, big)
    mag = np.sqrt(big) * np.power(r * r + 1, re.dtype.type(0.25))
    mag = np.where(np.isnan(mag), small, mag)
    half = np.arctan2(im, re) * re.dtype.type(0.5)
    out_re, sin = mag * np.cos(half), np.sin(half)
    out_im = np.where(sin == 0, 0, mag * sin)
    im_inf, re_pinf, re_ninf = np.isinf(im), re == np.inf, re == -np.inf
    out_re = np.where(re_ninf & ~im_inf & ~np.isnan(im), 0, out_re)
    out_re = np.where(im_inf | re_pinf, np.inf, out_re)
    out_im = np.where(np.isnan(mag), np.nan, out_im)
    out_im = np.where(im_inf | re_ninf, np.copysign(np.inf, im), out_im)
    zero = mag == 0
    return np.where(zero, 0, out_re).astype(re.dtype), np.where(zero, 0, out_im).astype(re.dtype)


def atan2(y, x):
    """Complex atan2(y, x) of one complex dtype, as XLA's CPU emitter (the module docstring)."""
    with np.errstate(all="ignore"):
        y, x = np.broadcast_arrays(np.asarray(y), np.asarray(x))
        ct = np.result_type(y, x)
        ft = np.finfo(ct).dtype
        yr, yi = y.real.astype(ft), y.imag.astype(ft)
        xr, xi = x.real.astype(ft), x.imag.astype(ft)
        zero = ft.type(0)
        sr = (xr * xr - xi * xi) + (yr * yr - yi * yi)
        si = (xi * xr + xi * xr) + (yi * yr + yi * yr)
        qr, qi = _sqrt(sr, si)
        nr, ni = xr + (yr * zero - yi), xi + (yr + yi * zero)
        q = divide((nr + 1j * ni).astype(ct), (qr + 1j * qi).astype(ct))
        big, small = _abs(q.real, q.imag)
        r = small / np.where(big == 0, 1, big)
        mag = big * np.sqrt(r * r + 1)
        mag = np.where(np.isnan(mag), small, mag)
        log_mod, arg = np.log(mag), np.arctan2(q.imag, q.real)
        out = np.empty(y.shape, ct)
        out.real, out.imag = arg + log_mod * zero, arg * zero - log_mod
        return out
