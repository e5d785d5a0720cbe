"""The float64 family of vecmath beyond the trig functions: exp, expm1, log, log1p and what
is built on them (tanh, logistic, sinh, cosh), and atan.  Accuracy, method and timings: the
package docstring (xforms/kernels/libm/vecmath/__init__.py)."""
import math

from .base import (SHIFTER, SHIFTER_BITS, as_bits, div, finite_nonneg, from_bits, leaf,
                   like, mad, pow2_shifted, vm)

# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

_INF = math.inf
_NAN = math.nan
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # 0x3fe62e42fee00000: 32 significant bits
_LN2_LO = 1.90821492927058770002e-10
_SQRT2 = 1.4142135623730951
_TWO54 = 18014398509481984.0
_DBL_MIN = 2.2250738585072014e-308
_MANT_MASK = 0x000FFFFFFFFFFFFF
_ONE_BITS = 0x3FF0000000000000

# exp(r) = 1 + r + r*r*P(r), |r| <= ln2/2, minimax (SLEEF xexp coefficients)
_E11 = 2.08860621107283687536341e-09
_E10 = 2.51112930892876518610661e-08
_E9 = 2.75573911234900471893338e-07
_E8 = 2.75572362911928827629423e-06
_E7 = 2.4801587159235472998791e-05
_E6 = 0.000198412698960509205564975
_E5 = 0.00138888888889774492207962
_E4 = 0.00833333333331652721664984
_E3 = 0.0416666666666665047591422
_E2 = 0.166666666666666851703837

# log: fdlibm e_log.c, log(1+f) = f - f*f/2 + s*(f*f/2 + R(s*s)), s = f/(2+f)
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01


# atan: fdlibm s_atan.c
_AT0 = 3.33333333333329318027e-01
_AT1 = -1.99999999998764832476e-01
_AT2 = 1.42857142725034663711e-01
_AT3 = -1.11111104054623557880e-01
_AT4 = 9.09088713343650656196e-02
_AT5 = -7.69187620504482999495e-02
_AT6 = 6.66107313738753120669e-02
_AT7 = -5.83357013379057348645e-02
_AT8 = 4.97687799461593236017e-02
_AT9 = -3.65315727442169155270e-02
_AT10 = 1.62858201153657823623e-02
_ATAN_HALF_HI = 4.63647609000806093515e-01
_ATAN_HALF_LO = 2.26987774529616870924e-17
_ATAN_ONE_HI = 7.85398163397448278999e-01
_ATAN_ONE_LO = 3.06161699786838301793e-17
_ATAN_1P5_HI = 9.82793723247329054082e-01
_ATAN_1P5_LO = 1.39033110312309984516e-17
_PIO2_HI = 1.57079632679489655800e00
_PIO2_LO = 6.12323399573676603587e-17


# ---------------------------------------------------------------------------
# float64 building blocks (all inputs/outputs float64)
# ---------------------------------------------------------------------------


@leaf
def _pow2i(n):
    """2.0**n for an integer -1022 <= n <= 1023 (exact)."""
    return from_bits((n + 1023) << 52)


@leaf
def _scale(y, n):
    """y * 2**n for integer -2044 <= n <= 2046, one rounding (exact unless the
    result is subnormal or overflows)."""
    n1 = n >> 1
    return (y * _pow2i(n1)) * _pow2i(n - n1)


@leaf
def _exp_poly(r):
    """P(r) with exp(r) = 1 + r + r*r*P(r) on |r| <= ln2/2 (Estrin-style)."""
    r2 = r * r
    r4 = r2 * r2
    p01 = mad(r, _E3, _E2)
    p23 = mad(r, _E5, _E4)
    p45 = mad(r, _E7, _E6)
    p67 = mad(r, _E9, _E8)
    p89 = mad(r, _E11, _E10)
    q0 = mad(r2, p23, p01)
    q1 = mad(r2, p67, p45)
    q = mad(r4, p89, q1)
    return mad(r, mad(r4, q, q0), 0.5)


@vm
def _reduce_ln2(x):
    """(r, t) with x = k*ln2 + r, |r| <= ln2/2 (to rounding), for |x| < 2**50: k rounded by
    the shifter (t = fl(k + SHIFTER) holds k in its bits), r by Cody-Waite with FMAs."""
    t = mad(x, _LOG2E, SHIFTER)
    kf = t - SHIFTER
    r = mad(kf, -_LN2_HI, x)
    return mad(kf, -_LN2_LO, r), t


@leaf
def _expm1_small(r):
    """expm1(r) = r + r*r*P(r) for |r| <= ln2/2, one rounding at the end."""
    return mad(r * r, _exp_poly(r), r)


@leaf
def _shifted_int(t):
    """The integer k held by t = fl(k + SHIFTER)."""
    return as_bits(t) - SHIFTER_BITS


@vm
def _exp_f64(x, shift):
    """exp(x) * 2**shift for float64 x (shift a small integer, 0 or -1)."""
    xc = x if x < 711.0 else 711.0
    xc = xc if xc > -746.0 else -746.0  # also maps nan -> -746 (fixed by caller)
    r, t = _reduce_ln2(xc)
    return _scale(1.0 + _expm1_small(r), _shifted_int(t) + shift)


@vm
def _log_f64(x, c):
    """log(x) + c for finite x > 0 (c is a tiny correction term, |c| < ulp)."""
    sub = x < _DBL_MIN
    xs = x * _TWO54 if sub else x
    ix = as_bits(xs)
    e = (ix >> 52) - (1077 if sub else 1023)
    m = from_bits((ix & _MANT_MASK) | _ONE_BITS)  # [1, 2)
    big = m > _SQRT2
    m = m * 0.5 if big else m
    e = e + 1 if big else e
    f = m - 1.0
    s = div(f, 2.0 + f)
    dk = float(e)
    z = s * s
    w = z * z
    t1 = w * mad(w, mad(w, _LG6, _LG4), _LG2)
    t2 = z * mad(w, mad(w, mad(w, _LG7, _LG5), _LG3), _LG1)
    rr = t2 + t1
    hfsq = 0.5 * f * f
    return dk * _LN2_HI - ((hfsq - (s * (hfsq + rr) + (dk * _LN2_LO + c))) - f)


# ---------------------------------------------------------------------------
# Public functions.  Each converts its argument to float64 (``x * 1.0`` is
# exact and keeps -0.0/nan), computes in float64 and rounds the result back to
# float32 for float32 inputs (``like``).
# ---------------------------------------------------------------------------


@vm
def vm_exp(x):
    """exp(x)."""
    xd = x * 1.0
    y = _exp_f64(xd, 0)
    return like(y if xd == xd else xd, x)


@vm
def vm_expm1(x):
    """exp(x) - 1, accurate near 0."""
    xd = x * 1.0
    xc = xd if xd < 710.0 else 710.0
    xc = xc if xc > -45.0 else -45.0  # expm1(-45) == -1 in float64
    r, tk = _reduce_ln2(xc)
    k = _shifted_int(tk)  # -65 <= k <= 1024
    em = _expm1_small(r)
    pos = k > 0
    ka = k if pos else -k
    ka = ka if ka < 1022 else 1022
    t = _pow2i(-ka)  # 2**-|k|
    # k > 0: 2**k * (em + (1 - 2**-k));  k <= 0: 2**k * em + (2**k - 1)
    a = em + (1.0 - t) if pos else em * t + (t - 1.0)
    y = _scale(a, k if pos else 0)
    y = xd if math.fabs(xd) < 5.551115123125783e-17 else y  # |x| < 2**-54 (and +-0)
    return like(y if xd == xd else xd, x)


@vm
def vm_log(x):
    """Natural logarithm."""
    xd = x * 1.0
    ok = finite_nonneg(xd)        # +0.0 too (not `x > 0`: see finite_nonneg); fixed below
    y = _log_f64(xd if ok else 1.0, 0.0)
    y = y if ok else (_INF if xd == _INF else _NAN)
    return like(-_INF if xd == 0.0 else y, x)


@vm
def vm_log1p(x):
    """log(1 + x), accurate near 0."""
    xd = x * 1.0
    ok = (xd > -1.0) & (xd < _INF)
    xs = xd if ok else 0.0
    u = 1.0 + xs
    # exact rounding error of u = fl(1 + x), divided by u (first-order term)
    c = div((1.0 - (u - xs)) if xs >= 1.0 else (xs - (u - 1.0)), u)
    y = _log_f64(u, c)
    y = xd if math.fabs(xd) < 5.551115123125783e-17 else y
    y = y if ok else (-_INF if xd == -1.0 else (_INF if xd == _INF else _NAN))
    return like(y, x)


@vm
def _expm1_nonneg(a):
    """(exp(a) - 1, k) pieces for 0 <= a <= 711: returns (A, k) with
    expm1(a) == A * 2**k."""
    r, t = _reduce_ln2(a)
    k = _shifted_int(t)  # 0 <= k <= 1026
    kc = k if k < 1022 else 1022
    return _expm1_small(r) + (1.0 - _pow2i(-kc)), k


@vm
def vm_tanh(x):
    """tanh(x) = E / (E + 2) with E = expm1(2|x|) = 2**k*expm1(r) + (2**k - 1) (one FMA),
    sign restored.  No select for nan or tiny x: a nan flows through the arithmetic, and for
    |x| < 2**-28 the formula gives x to within an ulp (k = 0, E = 2|x| to rounding)."""
    xd = x * 1.0
    a = math.fabs(xd)
    a = 22.0 if a > 22.0 else a  # tanh(22) == 1.0 in float64; a nan stays nan
    r, t = _reduce_ln2(a + a)
    p = pow2_shifted(t)  # 2**k, 0 <= k <= 64
    e = mad(p, _expm1_small(r), p - 1.0)
    return like(math.copysign(div(e, e + 2.0), xd), x)


@vm
def vm_logistic(x):
    """Logistic sigmoid 1 / (1 + exp(-x)), computed as e/(1+e) or 1/(1+e)
    with e = exp(-|x|) (no overflow, subnormal results handled)."""
    xd = x * 1.0
    e = _exp_f64(-math.fabs(xd), 0)
    y = div(1.0 if xd >= 0.0 else e, 1.0 + e)
    return like(y if xd == xd else xd, x)


@vm
def vm_sinh(x):
    """sinh(x) = H + H/(2H+1), H = expm1(|x|)/2 (scaled, no early overflow)."""
    xd = x * 1.0
    a = math.fabs(xd)
    a = a if a < 711.0 else 711.0
    A, k = _expm1_nonneg(a)
    h = _scale(A, k - 1)
    y = h + (div(h, 2.0 * h + 1.0) if h < 1.152921504606847e18 else 0.0)
    y = math.copysign(y, xd)
    y = xd if math.fabs(xd) < 3.725290298461914e-09 else y
    return like(y if xd == xd else xd, x)


@vm
def vm_cosh(x):
    """cosh(x) = G + 1/(4G), G = exp(|x|)/2 (scaled, no early overflow)."""
    xd = x * 1.0
    a = math.fabs(xd)
    a = a if a < 711.0 else 711.0
    g = _exp_f64(a, -1)
    y = g + div(0.25, g)
    return like(y if xd == xd else xd, x)


@vm
def vm_atan(x):
    """atan(x): fdlibm's 5-interval reduction as arithmetic selects."""
    xd = x * 1.0
    a = math.fabs(xd)
    a = a if a < 1e300 else 1e300  # atan(1e300) rounds to pi/2; keeps inf finite
    i1 = a >= 0.4375
    i2 = a >= 0.6875
    i3 = a >= 1.1875
    i4 = a >= 2.4375
    # reduced argument t = (a - c) / (1 + c*a), or -1/a on the last interval
    cc = 1.5 if i3 else (1.0 if i2 else 0.5)
    num = -1.0 if i4 else ((a - 1.0) if (i2 & (not i3)) else (a - cc))
    den = a if i4 else ((a + 1.0) if (i2 & (not i3)) else (1.0 + cc * a))
    t = div(num, den) if i1 else a
    hi = _PIO2_HI if i4 else (_ATAN_1P5_HI if i3 else (_ATAN_ONE_HI if i2 else _ATAN_HALF_HI))
    lo = _PIO2_LO if i4 else (_ATAN_1P5_LO if i3 else (_ATAN_ONE_LO if i2 else _ATAN_HALF_LO))
    z = t * t
    w = z * z
    s1 = z * mad(w, mad(w, mad(w, mad(w, mad(w, _AT10, _AT8), _AT6), _AT4), _AT2), _AT0)
    s2 = w * mad(w, mad(w, mad(w, mad(w, _AT9, _AT7), _AT5), _AT3), _AT1)
    y = (hi - ((t * (s1 + s2) - lo) - t)) if i1 else (t - t * (s1 + s2))
    y = math.copysign(y, xd)
    y = xd if a < 3.725290298461914e-09 else y
    return like(y if xd == xd else xd, x)
