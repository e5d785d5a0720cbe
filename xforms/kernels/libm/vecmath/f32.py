"""float32 vectorisable math computed in float32 (8 lanes per AVX register, 16 on AVX-512).

The float64 family (xforms/kernels/libm/vecmath/__init__.py) widens a float32 argument and rounds once, which is
accurate but runs at float64 speed.  These ``vmf_*`` functions keep every operation in
float32: float32 constants (``f32``), float32 intrinsics (xforms/kernels/libm/vecmath/base.py) and
minimax polynomials fitted for float32 (weighted least squares iterated to equal ripple on
the reduced interval, coefficients rounded to float32).  Branch-free like the float64 family
(selects only), so LLVM vectorises a loop that calls them::

    for i in range(n):
        out[i] = vmf_exp(a[i])        # a, out float32

Algorithms (k integral float32, r the reduced argument):

exp   k = rint(x/ln2), r = x - k*ln2 (ln2 in 15 + 24 bits: k*hi exact), exp(r) = 1 + r +
      r^2*P4(r), times 2**k in two exact steps (subnormal results rounded once).
      x clipped to [-104, 89]: overflow to inf, underflow to 0, nan kept.
log   x = 2**k * m, m in [sqrt(.5), sqrt(2)) from the bits (subnormals scaled by 2**23
      first), f = m - 1, log(1+f) = f - f^2/2 + f^3*P7(f) (no division: a float32 vdivps
      cost a fifth of the loop), plus k*ln2 in two parts; k*ln2_lo joins the f^3 term so the
      small part rounds once.  log(0) = -inf, log(<0) = nan, log(inf) = inf.
tanh  |x| clipped at 9 (tanh rounds to 1 beyond), x*P6(x^2)/Q3(x^2), one division; sign
      restored, -0 kept.  (Was a polynomial near 0 and 1 - 2/(exp(2|x|) + 1) elsewhere, both
      computed for every element: 0.51 ns against XLA's 0.38 over 10^6 on two threads.)
sin/cos/tan  k = rint(x*2/pi), r = x - k*pi/2 with pi/2 in five parts (12+12+12+12+24
      bits, ~82 bits; every k*part is exact for |k| < 2**12), sin(r) = r + r^3*P3(r^2),
      cos(r) = 1 - r^2/2 + r^4*Q3(r^2), quadrant by the bits of k; tan = sin/cos of r.
      Accurate for |x| <= TRIG_MAX_ARG_F32 = 6000; the ``*_bounded`` variants return nan
      beyond it (and for inf/nan); ``vmf_sin/cos/tan`` branch to float64 libm there (exact,
      but the branch keeps LLVM from vectorising: see xforms/kernels/libm/vecmath/__init__.py "Trigonometric
      functions" for how the code generator guards the bounded ones).

Error bounds (ulps of float32, asserted by tests/kernels/numba/test_vecmath.py) are in
``ERROR_BOUNDS_ULP_F32``.
"""
import math

import numpy as np

from ..names import VECMATH_F32  # noqa: F401  (re-exported)
from .base import (absf, bitf, copysignf, divf, finite_nonneg, log2_kf, log2_mf,
                   madf, pow2f, rintf, vm, f32)

__all__ = ["ERROR_BOUNDS_ULP_F32", "TRIG_MAX_ARG_F32", "VECMATH_F32", "vmf_cos",
           "vmf_cos_bounded", "vmf_exp", "vmf_log", "vmf_sin", "vmf_sin_bounded", "vmf_tan",
           "vmf_tan_bounded", "vmf_tanh"]

_F0 = f32(0.0)
_F1 = f32(1.0)
_F2 = f32(2.0)
_FHALF = f32(0.5)
_FINF = f32(np.inf)
_FNAN = f32(np.nan)
_FLOG2E = f32(1.4426950408889634)
_FLN2_HI = f32(0.693145751953125)        # 15 significant bits: k*hi exact for |k| < 512
_FLN2_LO = f32(1.428606765330187e-06)
_FTINY = f32(1.1754943508222875e-38)     # smallest normal float32
_FTWO23 = f32(8388608.0)
_F23 = f32(23.0)
_FEXP_HI = f32(89.0)        # exp(89) overflows float32
_FEXP_LO = f32(-104.0)      # exp(-104) rounds to 0

# exp(r) = 1 + r + r^2*P(r) on |r| <= ln2/2 (relative error of the fit 3e-9)
_FE0 = f32(0.4999999403953552)
_FE1 = f32(0.1666652113199234)
_FE2 = f32(0.04166838899254799)
_FE3 = f32(0.008368715643882751)
_FE4 = f32(0.0013814592966809869)

# log(1+f) = f - f^2/2 + f^3*P(f) on sqrt(.5)-1 <= f < sqrt(2)-1 (P's coefficients rounded to
# float32: relative error of the fit 8e-9 of log(1+f), 0.1 ulp)
_FL0 = f32(0.3333333134651184)
_FL1 = f32(-0.250008225440979)
_FL2 = f32(0.20001226663589478)
_FL3 = f32(-0.16623356938362122)
_FL4 = f32(0.14201761782169342)
_FL5 = f32(-0.1316019594669342)
_FL6 = f32(0.1276155263185501)
_FL7 = f32(-0.0763443186879158)
_FMHALF = f32(-0.5)

# tanh(x) = x*P(x^2)/Q(x^2) on |x| <= 9 (where float32 tanh rounds to 1 beyond): a rational
# fit of our own (linearised least squares on relative error, Lawson-reweighted toward
# equal ripple; 6.6e-9 relative in float64, far below float32's 6e-8 ulp)
_FTP0 = f32(1.0)
_FTP1 = f32(0.13084012269973755)
_FTP2 = f32(0.003103958209976554)
_FTP3 = f32(1.1154327694384847e-05)
_FTP4 = f32(-2.0225300545462233e-08)
_FTP5 = f32(5.2779829118332344e-11)
_FTP6 = f32(-8.488794113166789e-14)
_FTQ1 = f32(0.4641733765602112)
_FTQ2 = f32(0.024495186284184456)
_FTQ3 = f32(0.0002546148025430739)
_FTANH_CLIP = f32(9.0)

# sin(r) = r + r^3*P(r^2), cos(r) = 1 - r^2/2 + r^4*Q(r^2) on |r| <= pi/4
_FS0 = f32(-0.16666655242443085)
_FS1 = f32(0.008332161232829094)
_FS2 = f32(-0.0001951528392964974)
_FC0 = f32(0.04166664555668831)
_FC1 = f32(-0.0013887316454201937)
_FC2 = f32(2.443315133859869e-05)

# pi/2 = sum of five parts (12, 12, 12, 12, 24 significant bits; remainder 2e-25)
_FPIO2_1 = f32(1.57080078125)
_FPIO2_2 = f32(-4.453584551811218e-06)
_FPIO2_3 = f32(-8.706138032721356e-10)
_FPIO2_4 = f32(6.222800053024002e-14)
_FPIO2_5 = f32(5.721188916458728e-18)
_FTWO_OVER_PI = f32(0.6366197723675814)

#: |x| bound of the float32 trig reduction (|k| < 2**12 keeps every k*part exact).
TRIG_MAX_ARG_F32 = 6000.0
_FTRIG_MAX = f32(TRIG_MAX_ARG_F32)
_FTINY_ARG = f32(2.0 ** -12)      # |x| below: sin(x) and tan(x) round to x (keeps -0.0)


@vm
def _expf_core(x):
    """exp(x) for float32 x in [-104, 89] (no special values)."""
    kf = rintf(x * _FLOG2E)
    r = (x - kf * _FLN2_HI) - kf * _FLN2_LO
    p = madf(r, madf(r, madf(r, madf(r, _FE4, _FE3), _FE2), _FE1), _FE0)
    y = _F1 + madf(r * r, p, r)
    k1 = rintf(kf * _FHALF)
    return (y * pow2f(k1)) * pow2f(kf - k1)


@vm
def vmf_exp(x):
    """exp(x) in float32."""
    xc = x if x < _FEXP_HI else _FEXP_HI            # nan -> 89, restored below
    xc = xc if xc > _FEXP_LO else _FEXP_LO
    y = _expf_core(xc)
    return y if x == x else x


@vm
def vmf_log(x):
    """Natural logarithm in float32."""
    ok = finite_nonneg(x)         # +0.0 too (not `x > 0`: see finite_nonneg); fixed below
    xs = x if ok else _F1
    sub = xs < _FTINY
    xs = xs * _FTWO23 if sub else xs
    k = log2_kf(xs) - (_F23 if sub else _F0)
    f = log2_mf(xs) - _F1
    z = f * f
    p = madf(f, madf(f, madf(f, madf(f, madf(f, madf(f, madf(f, _FL7, _FL6), _FL5),
                                                         _FL4), _FL3), _FL2), _FL1), _FL0)
    r = madf(_FMHALF, z, madf(z * f, p, k * _FLN2_LO))     # -f^2/2 + f^3 P + k ln2_lo
    y = madf(k, _FLN2_HI, f + r)
    y = y if ok else (_FINF if x == _FINF else _FNAN)
    return -_FINF if x == _F0 else y


@vm
def vmf_tanh(x):
    """tanh(x) in float32: one rational function of x on |x| <= 9, sign restored."""
    a = absf(x)
    a = a if a < _FTANH_CLIP else _FTANH_CLIP        # nan -> clip, restored below
    z = a * a
    p = madf(z, madf(z, madf(z, madf(z, madf(z, madf(z, _FTP6, _FTP5), _FTP4), _FTP3),
                                         _FTP2), _FTP1), _FTP0)
    q = madf(z, madf(z, madf(z, _FTQ3, _FTQ2), _FTQ1), _F1)
    r = divf(a * p, q)
    r = r if r < _F1 else _F1       # rounding can overshoot 1 near the clip
    y = copysignf(r, x)
    return y if x == x else x


@vm
def _two_diff_err(a, b, s):
    """Rounding error of s = fl(a - b): a - b == s + err exactly (Knuth's two-sum)."""
    bb = s - a
    return (a - (s - bb)) - (b + bb)


@vm
def _trig_reduce_f32(x):
    """(rh, rl, k) with x = k*pi/2 + rh + rl, |rh| <= ~pi/4, |rl| <= ulp(rh)/2, for
    |x| <= TRIG_MAX_ARG_F32.  x - k*p1 and every k*part are exact; the rounding errors
    of the next two subtractions are recovered exactly (two-sum) and carried in rl with
    the two smallest parts."""
    kf = rintf(x * _FTWO_OVER_PI)
    a = x - kf * _FPIO2_1
    s1 = a - kf * _FPIO2_2
    e1 = _two_diff_err(a, kf * _FPIO2_2, s1)
    s2 = s1 - kf * _FPIO2_3
    e2 = _two_diff_err(s1, kf * _FPIO2_3, s2)
    lo = (e1 + e2) - (kf * _FPIO2_4 + kf * _FPIO2_5)
    rh = s2 + lo
    return rh, lo - (rh - s2), kf


@vm
def _ksinf(r, rl):
    """sin(r + rl), |r| <= ~pi/4, rl tiny (first order: sin(r + rl) ~ sin(r) + rl)."""
    z = r * r
    return r + madf(r * z, madf(z, madf(z, _FS2, _FS1), _FS0), rl)


@vm
def _kcosf(r, rl):
    """cos(r + rl), |r| <= ~pi/4, rl tiny (first order: cos(r + rl) ~ cos(r) - r*rl)."""
    z = r * r
    q = madf(z, madf(z, _FC2, _FC1), _FC0)
    hz = _FHALF * z
    w = _F1 - hz
    return w + (((_F1 - w) - hz) + madf(z * z, q, -(r * rl)))


@vm
def _sincos_bounded_f32(x, phase):
    """sin(x + phase*pi/2); nan when not |x| <= TRIG_MAX_ARG_F32."""
    ok = absf(x) <= _FTRIG_MAX
    rh, rl, kf = _trig_reduce_f32(x if ok else _F0)
    q = kf + (_F1 if phase else _F0)
    s = _ksinf(rh, rl)      # both kernels, then a select (branch-free)
    c = _kcosf(rh, rl)
    v = c if bitf(q, 0) else s
    v = -v if bitf(q, 1) else v
    return v if ok else _FNAN


@vm
def vmf_sin_bounded(x):
    """sin(x) in float32, branch-free; nan for |x| > TRIG_MAX_ARG_F32, inf, nan."""
    y = _sincos_bounded_f32(x, False)
    return x if absf(x) < _FTINY_ARG else y


@vm
def vmf_cos_bounded(x):
    """cos(x) in float32, branch-free; nan for |x| > TRIG_MAX_ARG_F32, inf, nan."""
    return _sincos_bounded_f32(x, True)


@vm
def vmf_tan_bounded(x):
    """tan(x) in float32, branch-free; nan for |x| > TRIG_MAX_ARG_F32, inf, nan."""
    ok = absf(x) <= _FTRIG_MAX
    rh, rl, kf = _trig_reduce_f32(x if ok else _F0)
    s = _ksinf(rh, rl)
    c = _kcosf(rh, rl)
    odd = bitf(kf, 0)
    t = divf(-c if odd else s, s if odd else c)
    t = x if absf(x) < _FTINY_ARG else t
    return t if ok else _FNAN


@vm
def vmf_sin(x):
    """sin(x) in float32; beyond TRIG_MAX_ARG_F32 (and inf/nan) float64 libm (a branch)."""
    if not (absf(x) <= _FTRIG_MAX):
        return np.float32(math.sin(np.float64(x)))
    return vmf_sin_bounded(x)


@vm
def vmf_cos(x):
    """cos(x) in float32; beyond TRIG_MAX_ARG_F32 (and inf/nan) float64 libm (a branch)."""
    if not (absf(x) <= _FTRIG_MAX):
        return np.float32(math.cos(np.float64(x)))
    return vmf_cos_bounded(x)


@vm
def vmf_tan(x):
    """tan(x) in float32; beyond TRIG_MAX_ARG_F32 (and inf/nan) float64 libm (a branch)."""
    if not (absf(x) <= _FTRIG_MAX):
        return np.float32(math.tan(np.float64(x)))
    return vmf_tan_bounded(x)


#: Maximum error in float32 ulps for normal results, asserted by
#: tests/kernels/numba/test_vecmath.py.
#: Observed maxima over 600 000 points per function (whole float32 domain, dense core, every
#: float32 nearest to k*pi/2 up to the bound and its neighbours), 2026-11-24: exp 0.95,
#: sin 0.82, cos 0.81, tan 2.15 (a quotient of two kernels); log 0.87 over every
#: non-negative float32 (subnormals, 0, inf; 2026-11-25, against float64 log; every negative
#: float32 gives nan); bounds rounded up.  Measurements, not proofs (log's is exhaustive).
#: tanh (the rational form, 2026-11-28): 5.07 over every 16th float32 in [0, 9.5] (78 M
#: points, at 7.34; 3.3 below 0.625), where XLA's float32 tanh measures 4.52 (every 64th, at
#: 5.23); the former exp-based form had 1.30 at 3.7x the time.
#: Subnormal results: <= 1 subnormal ulp.
ERROR_BOUNDS_ULP_F32 = {
    "exp": 1.0,
    "log": 1.0,
    "tanh": 5.5,
    "sin": 1.0,
    "cos": 1.0,
    "tan": 2.5,
}
