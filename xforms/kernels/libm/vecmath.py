"""Vectorisable scalar math for generated Numba loops.

Why
---
Inside an ``@njit`` loop ``math.exp/log/tanh/...`` become scalar libm calls
(no SVML here), which LLVM cannot vectorise: a fused loop such as
``out[i] = math.exp(a[i]) * math.tanh(b[i])`` runs one element at a time.
The ``vm_*`` functions below compute the same values with branch-free
float64 arithmetic only, so after Numba inlines them
(``@numba.njit(inline="always")``) LLVM's loop vectoriser turns the whole
loop body into packed AVX code.  Generated code calls them by name::

    from xforms.kernels.libm.vecmath import vm_exp, vm_tanh
    for i in range(n):
        out[i] = vm_exp(a[i]) * vm_tanh(b[i])

``VECMATH`` maps primitive names to these names.

Approach
--------
* Classic fdlibm/SLEEF algorithms: Cody-Waite argument reduction with a
  multi-part constant, then a minimax polynomial (coefficients from fdlibm
  ``e_log.c``, ``k_sin.c``, ``k_cos.c``, ``s_atan.c`` and SLEEF's ``xexp``),
  then reconstruction.  Every ``if`` is an arithmetic select
  (``a if c else b``) that LLVM if-converts; all lanes compute everything
  (the one real branch is the libm fallback of vm_sin/vm_cos/vm_tan).
* Tiny target-generic Numba intrinsics (xforms/kernels/libm/vecmath_base.py, which also
  keeps the registry ``rebuild_with`` uses), no other machinery:
  ``_as_bits``/``_from_bits`` (IEEE-754 bitcast: builds 2**k for exp and
  splits exponent/mantissa for log; vectorises to nothing or to integer
  shifts), ``_like`` (rounds the float64 result to float32 for float32
  inputs), ``_div`` (a bare ``fdiv``: Numba's ``/`` under the default
  ``error_model='python'`` adds a ZeroDivisionError branch that blocks
  vectorisation) and ``_mad`` (``llvm.fmuladd``: an FMA where the target has
  one, otherwise mul + add; used only inside polynomial evaluation, never in
  the compensated (2Sum / Cody-Waite) steps).
* float32, two ways.  ``vm_*`` widen the input exactly, compute in float64
  and round once (correctly rounded except for a ~2**-28 ulp double-rounding
  window, bound 0.501 ulp; float32 in -> float32 out; integers are treated
  as float64).  ``vmf_*`` (xforms/kernels/libm/vecmath_f32.py: exp, log, tanh, sin, cos,
  tan) compute in float32 throughout, twice the lanes, about 3x faster, within
  ``ERROR_BOUNDS_ULP_F32``; the code generator uses them for float32 operands
  (``VECMATH_F32``) and ``vm_*`` for the rest.
* Only arithmetic, ``math.floor/fabs/copysign`` and the intrinsics above are
  used (no NumPy), so ``rebuild_with(decorator)`` can recompile the family for
  another Numba target (e.g. CUDA device functions; not tested here).
* Small leaf helpers are plain ``@njit`` functions that LLVM inlines; the
  public functions and mid-level helpers use ``inline="always"``.  Compiling
  a loop that uses one function costs roughly 0.3-0.8 s (Numba's IR inliner
  dominates).

Callers: any ``error_model`` works.  Do not compile callers with fastmath
flags other than ``{"contract"}``: ``nnan``/``ninf`` delete the special-value
selects and ``reassoc`` destroys the compensated arithmetic of the
reductions (the inlined code takes the caller's flags).

Algorithms and special values (as NumPy, incl. the sign of zero)
---------------------------------------------------------------
exp       k = round(x/ln2) by the shifter (t = x/ln2 + 1.5*2**52 holds k in
          its low bits: no float<->int conversion), r = x - k*ln2 (2-part ln2,
          FMAs), exp(r) degree-11 minimax, scaled by 2**k in two exact steps
          (gradual underflow is rounded once).  exp(+inf)=inf, exp(-inf)=0, overflow -> inf above
          709.78, underflow to subnormals then 0 below -745.13, nan -> nan.
expm1     same reduction; 2**k*(expm1(r) + (1 - 2**-k)) for k > 0 and
          2**k*expm1(r) + (2**k - 1) for k <= 0; |x| < 2**-54 returns x.
log       exponent/mantissa by bitcast (subnormals pre-scaled by 2**54),
          m in [sqrt(.5), sqrt(2)), fdlibm's s = f/(2+f) degree-14 kernel.
          log(0)=-inf, log(x<0)=nan, log(inf)=inf.
log1p     log(u) with u = fl(1+x) plus the exact first-order correction
          (x - (u-1))/u; log1p(-1)=-inf, x < -1 -> nan, |x| < 2**-54 -> x.
tanh      E/(E+2), E = expm1(2|x|) = 2**k*expm1(r) + (2**k - 1) as one FMA
          (|x| clipped at 22 where tanh == 1), sign restored; no select for nan
          or tiny x (both come out of the arithmetic); tanh(+-inf)=+-1,
          tanh(+-0)=+-0.  32 vector instructions per 4 lanes (was 46).
logistic  e = exp(-|x|): 1/(1+e) for x >= 0, e/(1+e) for x < 0 (no overflow,
          correct subnormal results for x < -708); (+inf)=1, (-inf)=0.
sinh      H + H/(2H+1), H = expm1(|x|)/2 computed scaled (no overflow before
          the true overflow at |x| = 710.4758); sign restored.
cosh      G + 1/(4G), G = exp(|x|)/2 computed scaled.
atan      fdlibm's five intervals (0, 7/16, 11/16, 19/16, 39/16, inf) as
          selects, one division; atan(+-inf) = +-pi/2.
sin/cos/tan  see xforms/kernels/libm/vecmath_trig.py.

Not provided: pow.  x**y as exp(y*log(x)) needs log in double-double (the
error of y*log(x) is multiplied by |y*log(x)| <= 745) plus the ~20 IEEE
special cases; not worth it for this module yet.

Accuracy
--------
``ERROR_BOUNDS_ULP`` (asserted by tests/test_vecmath.py) is the maximum
error in ulps of the output dtype, normal results; measured against NumPy in
x87 extended precision (``np.longdouble``).  "Observed" is the maximum over
4 x 400 000 random points per function (log-uniform magnitudes from 1e-320
to the overflow bound plus dense core ranges) and all x = fl(k*pi/2) <= 1e6:

    function   float64 observed   float64 bound   float32 (observed/bound)
    exp        0.98               1.0             0.500 / 0.501
    expm1      1.91               2.5             0.500 / 0.501
    log        0.82               1.0             0.500 / 0.501
    log1p      0.79               1.0             0.500 / 0.501
    sin        0.79               1.0             0.500 / 0.501
    cos        0.76               1.0             0.500 / 0.501
    tan        2.02               2.5             0.500 / 0.501
    tanh       2.56               3.0             0.500 / 0.501
    logistic   2.26               2.5             0.500 / 0.501
    sinh       2.26               2.5             0.500 / 0.501
    cosh       1.34               1.5             0.500 / 0.501
    atan       0.76               1.0             0.500 / 0.501

Subnormal results are rounded once onto the subnormal grid: error <= 1
subnormal ulp (SUBNORMAL_ERROR_BOUND_ULP; observed 0.73 for exp, 0.63 for
logistic), i.e. the relative error grows as results approach 5e-324.
These are measurements, not proofs.

Speed
-----
Measured 2026-11-21 by ``benchmarks/bench_vecmath.py`` on the project's
2-core VM (the brief called it an AMD EPYC; /proc/cpuinfo reports "Intel(R)
Xeon(R) Processor @ 2.50GHz", Cascade Lake, AVX-512, LLVM picks 256-bit
vectors), numba 0.65.1, numpy 2.4.6.  ns/element over 10**6 elements, best of
2 x 20 runs of the thread's CPU time (the machine was busy with other jobs,
expect +-30%).  vm: ``out[i] = vm_f(a[i])`` in an ``@njit`` loop; math: the
same loop with ``math.f`` (scalar libm); numpy: the ufunc with ``out=``
(NumPy's own AVX-512 code for exp/log/float32 sin/cos ...).  Every vm loop
was vectorised (``llvm.loop.isvectorized``, packed ymm arithmetic with FMA).

    function      float64: vm  math  numpy    float32: vm  math  numpy
    exp                  2.96  6.23   1.65             2.01  6.19   0.87
    expm1                3.80 16.74   2.18             2.82 18.83   0.52
    log                  3.20  5.64   2.09             2.19  5.80   0.86
    log1p                3.69 15.72   2.21             2.93 15.67   1.00
    tanh                 3.38 23.99   2.66             2.70 25.75   0.86
    logistic             3.57  6.99   4.07             2.57  7.62   1.78
    sinh                 4.14 24.67   2.42             3.14 26.67   0.73
    cosh                 3.35  9.74   1.91             2.37  9.77   0.56
    atan                 4.77 11.35   2.59             3.85 14.07   0.75
    sin_bounded          6.59 23.85  23.93             4.05 11.60   1.52
    cos_bounded          7.29 23.10  23.80             3.94 10.58   1.06
    tan_bounded          6.85 29.72   3.12             4.35 24.11   0.96
    sin (libm branch)   31.62 23.88  23.91            32.51 10.56   1.04
    cos (libm branch)   30.35 22.88  23.38            32.05 10.62   1.11
    tan (libm branch)   40.72 29.65   3.02            45.01 23.98   0.84

float32 ``vm_*`` run at roughly the float64 speed because they compute in
float64 (4 lanes, not 8); NumPy has dedicated float32 SIMD kernels.  The
float32 ``vmf_*`` family closes most of that gap (2026-11-24, AMD EPYC
znver4, load ~4 on 2 cores, ms per 10**6 elements, vmf / vm on float32 /
NumPy float32): exp 0.36/1.15/0.45, log 0.51/1.27/0.37, tanh 0.52/1.28/0.36,
sin_bounded 0.66/2.24/0.51, cos_bounded 0.64/2.18/0.53, tan_bounded
0.69/2.26/0.40; log without its division (2026-11-25, load 4.4): 0.40/1.26/0.37.

2026-11-28, 2-core Intel Xeon VM (AVX-512), one thread, 4096 elements in L1, ns per element
(256-bit vectors / 512-bit, the width generated kernels now use, xforms/kernels/numba_fixes/vector_width.py):
float64 tanh 0.86 / 0.67 (JAX 0.90), exp 0.90 / 0.61 (JAX 1.19), log 1.32 / 0.92 (JAX
3.21); float32 tanh 0.26 / 0.21 (JAX 0.29), exp 0.44 / 0.30 (JAX 0.37).  Before the
shifter rounding and the leaner tanh, at 256 bits: float64 tanh 1.50, exp 1.21.
"""

import math
import sys

from . import vecmath_base, vecmath_f32, vecmath_trig
from .vecmath_base import (_SHIFTER, _SHIFTER_BITS, _as_bits, _div, _finite_nonneg, _from_bits,
                           _leaf, _like, _mad, _pow2_shifted, _vm)
from .vecmath_f32 import (ERROR_BOUNDS_ULP_F32, TRIG_MAX_ARG_F32, VECMATH_F32, vmf_cos,
                          vmf_cos_bounded, vmf_exp, vmf_log, vmf_sin, vmf_sin_bounded, vmf_tan,
                          vmf_tan_bounded, vmf_tanh)
from .vecmath_trig import (TRIG_MAX_ARG, vm_cos, vm_cos_bounded, vm_sin, vm_sin_bounded, vm_tan,
                           vm_tan_bounded)

__all__ = [
    "ERROR_BOUNDS_ULP",
    "ERROR_BOUNDS_ULP_F32",
    "SUBNORMAL_ERROR_BOUND_ULP",
    "TRIG_BOUNDED",
    "TRIG_MAX_ARG",
    "TRIG_MAX_ARG_F32",
    "VECMATH",
    "VECMATH_BOUNDED",
    "VECMATH_F32",
    "VECMATH_TRIG_EXACT",
    "measured_error_bounds",
    "rebuild_with",
    "vm_atan",
    "vm_cos",
    "vm_cos_bounded",
    "vm_cosh",
    "vm_exp",
    "vm_expm1",
    "vm_log",
    "vm_log1p",
    "vm_logistic",
    "vm_sin",
    "vm_sin_bounded",
    "vm_sinh",
    "vm_tan",
    "vm_tan_bounded",
    "vm_tanh",
    "vmf_cos",
    "vmf_cos_bounded",
    "vmf_exp",
    "vmf_log",
    "vmf_sin",
    "vmf_sin_bounded",
    "vmf_tan",
    "vmf_tan_bounded",
    "vmf_tanh",
]

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


@_leaf
def _pow2i(n):
    """2.0**n for an integer -1022 <= n <= 1023 (exact)."""
    return _from_bits((n + 1023) << 52)


@_leaf
def _scale(y, n):
    """y * 2**n for integer -2044 <= n <= 2046, one rounding (exact unless the
    result is subnormal or overflows)."""
    n1 = n >> 1
    return (y * _pow2i(n1)) * _pow2i(n - n1)


@_leaf
def _exp_poly(r):
    """P(r) with exp(r) = 1 + r + r*r*P(r) on |r| <= ln2/2 (Estrin-style)."""
    r2 = r * r
    r4 = r2 * r2
    p01 = _mad(r, _E3, _E2)
    p23 = _mad(r, _E5, _E4)
    p45 = _mad(r, _E7, _E6)
    p67 = _mad(r, _E9, _E8)
    p89 = _mad(r, _E11, _E10)
    q0 = _mad(r2, p23, p01)
    q1 = _mad(r2, p67, p45)
    q = _mad(r4, p89, q1)
    return _mad(r, _mad(r4, q, q0), 0.5)


@_vm
def _reduce_ln2(x):
    """(r, t) with x = k*ln2 + r, |r| <= ln2/2 (to rounding), for |x| < 2**50: k rounded by
    the shifter (t = fl(k + _SHIFTER) holds k in its bits), r by Cody-Waite with FMAs."""
    t = _mad(x, _LOG2E, _SHIFTER)
    kf = t - _SHIFTER
    r = _mad(kf, -_LN2_HI, x)
    return _mad(kf, -_LN2_LO, r), t


@_leaf
def _expm1_small(r):
    """expm1(r) = r + r*r*P(r) for |r| <= ln2/2, one rounding at the end."""
    return _mad(r * r, _exp_poly(r), r)


@_leaf
def _shifted_int(t):
    """The integer k held by t = fl(k + _SHIFTER)."""
    return _as_bits(t) - _SHIFTER_BITS


@_vm
def _exp_f64(x, shift):
    """exp(x) * 2**shift for float64 x (shift a small integer, 0 or -1)."""
    xc = x if x < 711.0 else 711.0
    xc = xc if xc > -746.0 else -746.0  # also maps nan -> -746 (fixed by caller)
    r, t = _reduce_ln2(xc)
    return _scale(1.0 + _expm1_small(r), _shifted_int(t) + shift)


@_vm
def _log_f64(x, c):
    """log(x) + c for finite x > 0 (c is a tiny correction term, |c| < ulp)."""
    sub = x < _DBL_MIN
    xs = x * _TWO54 if sub else x
    ix = _as_bits(xs)
    e = (ix >> 52) - (1077 if sub else 1023)
    m = _from_bits((ix & _MANT_MASK) | _ONE_BITS)  # [1, 2)
    big = m > _SQRT2
    m = m * 0.5 if big else m
    e = e + 1 if big else e
    f = m - 1.0
    s = _div(f, 2.0 + f)
    dk = float(e)
    z = s * s
    w = z * z
    t1 = w * _mad(w, _mad(w, _LG6, _LG4), _LG2)
    t2 = z * _mad(w, _mad(w, _mad(w, _LG7, _LG5), _LG3), _LG1)
    rr = t2 + t1
    hfsq = 0.5 * f * f
    return dk * _LN2_HI - ((hfsq - (s * (hfsq + rr) + (dk * _LN2_LO + c))) - f)


# ---------------------------------------------------------------------------
# Public functions.  Each converts its argument to float64 (``x * 1.0`` is
# exact and keeps -0.0/nan), computes in float64 and rounds the result back to
# float32 for float32 inputs (``_like``).
# ---------------------------------------------------------------------------


@_vm
def vm_exp(x):
    """exp(x)."""
    xd = x * 1.0
    y = _exp_f64(xd, 0)
    return _like(y if xd == xd else xd, x)


@_vm
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
    return _like(y if xd == xd else xd, x)


@_vm
def vm_log(x):
    """Natural logarithm."""
    xd = x * 1.0
    ok = _finite_nonneg(xd)        # +0.0 too (not `x > 0`: see _finite_nonneg); fixed below
    y = _log_f64(xd if ok else 1.0, 0.0)
    y = y if ok else (_INF if xd == _INF else _NAN)
    return _like(-_INF if xd == 0.0 else y, x)


@_vm
def vm_log1p(x):
    """log(1 + x), accurate near 0."""
    xd = x * 1.0
    ok = (xd > -1.0) & (xd < _INF)
    xs = xd if ok else 0.0
    u = 1.0 + xs
    # exact rounding error of u = fl(1 + x), divided by u (first-order term)
    c = _div((1.0 - (u - xs)) if xs >= 1.0 else (xs - (u - 1.0)), u)
    y = _log_f64(u, c)
    y = xd if math.fabs(xd) < 5.551115123125783e-17 else y
    y = y if ok else (-_INF if xd == -1.0 else (_INF if xd == _INF else _NAN))
    return _like(y, x)


@_vm
def _expm1_nonneg(a):
    """(exp(a) - 1, k) pieces for 0 <= a <= 711: returns (A, k) with
    expm1(a) == A * 2**k."""
    r, t = _reduce_ln2(a)
    k = _shifted_int(t)  # 0 <= k <= 1026
    kc = k if k < 1022 else 1022
    return _expm1_small(r) + (1.0 - _pow2i(-kc)), k


@_vm
def vm_tanh(x):
    """tanh(x) = E / (E + 2) with E = expm1(2|x|) = 2**k*expm1(r) + (2**k - 1) (one FMA),
    sign restored.  No select for nan or tiny x: a nan flows through the arithmetic, and for
    |x| < 2**-28 the formula gives x to within an ulp (k = 0, E = 2|x| to rounding)."""
    xd = x * 1.0
    a = math.fabs(xd)
    a = 22.0 if a > 22.0 else a  # tanh(22) == 1.0 in float64; a nan stays nan
    r, t = _reduce_ln2(a + a)
    p = _pow2_shifted(t)  # 2**k, 0 <= k <= 64
    e = _mad(p, _expm1_small(r), p - 1.0)
    return _like(math.copysign(_div(e, e + 2.0), xd), x)


@_vm
def vm_logistic(x):
    """Logistic sigmoid 1 / (1 + exp(-x)), computed as e/(1+e) or 1/(1+e)
    with e = exp(-|x|) (no overflow, subnormal results handled)."""
    xd = x * 1.0
    e = _exp_f64(-math.fabs(xd), 0)
    y = _div(1.0 if xd >= 0.0 else e, 1.0 + e)
    return _like(y if xd == xd else xd, x)


@_vm
def vm_sinh(x):
    """sinh(x) = H + H/(2H+1), H = expm1(|x|)/2 (scaled, no early overflow)."""
    xd = x * 1.0
    a = math.fabs(xd)
    a = a if a < 711.0 else 711.0
    A, k = _expm1_nonneg(a)
    h = _scale(A, k - 1)
    y = h + (_div(h, 2.0 * h + 1.0) if h < 1.152921504606847e18 else 0.0)
    y = math.copysign(y, xd)
    y = xd if math.fabs(xd) < 3.725290298461914e-09 else y
    return _like(y if xd == xd else xd, x)


@_vm
def vm_cosh(x):
    """cosh(x) = G + 1/(4G), G = exp(|x|)/2 (scaled, no early overflow)."""
    xd = x * 1.0
    a = math.fabs(xd)
    a = a if a < 711.0 else 711.0
    g = _exp_f64(a, -1)
    y = g + _div(0.25, g)
    return _like(y if xd == xd else xd, x)


@_vm
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
    t = _div(num, den) if i1 else a
    hi = _PIO2_HI if i4 else (_ATAN_1P5_HI if i3 else (_ATAN_ONE_HI if i2 else _ATAN_HALF_HI))
    lo = _PIO2_LO if i4 else (_ATAN_1P5_LO if i3 else (_ATAN_ONE_LO if i2 else _ATAN_HALF_LO))
    z = t * t
    w = z * z
    s1 = z * _mad(w, _mad(w, _mad(w, _mad(w, _mad(w, _AT10, _AT8), _AT6), _AT4), _AT2), _AT0)
    s2 = w * _mad(w, _mad(w, _mad(w, _mad(w, _AT9, _AT7), _AT5), _AT3), _AT1)
    y = (hi - ((t * (s1 + s2) - lo) - t)) if i1 else (t - t * (s1 + s2))
    y = math.copysign(y, xd)
    y = xd if a < 3.725290298461914e-09 else y
    return _like(y if xd == xd else xd, x)


# ---------------------------------------------------------------------------
# Tables for the code generator and the tests
# ---------------------------------------------------------------------------

#: primitive name -> function name: drop-in replacements for ``math.*`` (same
#: results up to the documented ulps, same special values, all finite inputs),
#: each vectorisable and faster than libm inside a loop.  sin/cos/tan are not
#: listed: see "Trigonometric functions" in the module docstring.
VECMATH = {
    "exp": "vm_exp",
    "expm1": "vm_expm1",
    "log": "vm_log",
    "log1p": "vm_log1p",
    "tanh": "vm_tanh",
    "logistic": "vm_logistic",
    "sinh": "vm_sinh",
    "cosh": "vm_cosh",
    "atan": "vm_atan",
}

#: VECMATH plus the branch-free trig variants, which return nan for
#: |x| > TRIG_MAX_ARG; use with the guard-and-redo recipe of the docstring.
VECMATH_BOUNDED = dict(
    VECMATH, sin="vm_sin_bounded", cos="vm_cos_bounded", tan="vm_tan_bounded"
)

#: The exact trig functions (libm branch beyond TRIG_MAX_ARG): right for every
#: input, fast in scalar code, but no faster than ``math.*`` in vectorised loops.
VECMATH_TRIG_EXACT = {"sin": "vm_sin", "cos": "vm_cos", "tan": "vm_tan"}

#: exact trig function -> its branch-free bounded variant (float64 and float32 families),
#: for the code generator's guard-and-redo loops (xforms/kernels/cpu/emit.py).
TRIG_BOUNDED = {"vm_sin": "vm_sin_bounded", "vm_cos": "vm_cos_bounded",
                "vm_tan": "vm_tan_bounded", "vmf_sin": "vmf_sin_bounded",
                "vmf_cos": "vmf_cos_bounded", "vmf_tan": "vmf_tan_bounded"}

#: every function a generated kernel may call
PUBLIC_FUNCTIONS = sorted(set(VECMATH_BOUNDED.values()) | set(VECMATH_TRIG_EXACT.values())
                          | set(VECMATH_F32.values()))

#: Maximum error in ulps of the output dtype for normal (non-subnormal)
#: results, asserted by tests/test_vecmath.py.  Observed maxima over the test
#: sets (>= 10^5 points per function incl. the hard trig cases) rounded up;
#: they are measurements, not proofs.  float32 results are float64 results
#: rounded once, i.e. 0.5 ulp plus a ~2**-28 ulp double-rounding allowance.
ERROR_BOUNDS_ULP = {
    ("exp", "float64"): 1.0,
    ("expm1", "float64"): 2.5,
    ("log", "float64"): 1.0,
    ("log1p", "float64"): 1.0,
    ("sin", "float64"): 1.0,
    ("cos", "float64"): 1.0,
    ("tan", "float64"): 2.5,
    ("tanh", "float64"): 3.0,
    ("logistic", "float64"): 2.5,
    ("sinh", "float64"): 2.5,
    ("cosh", "float64"): 1.5,
    ("atan", "float64"): 1.0,
}
ERROR_BOUNDS_ULP.update({(name, "float32"): 0.501 for (name, _) in list(ERROR_BOUNDS_ULP)})

#: Bound for subnormal results, in units of the smallest subnormal (the result
#: is rounded once onto the subnormal grid, so relative accuracy degrades).
SUBNORMAL_ERROR_BOUND_ULP = 1.0


def measured_error_bounds():
    """Return {(name, dtype_name): max_ulp_error} as documented/tested."""
    return dict(ERROR_BOUNDS_ULP)


def rebuild_with(decorator):
    """Re-create every vm_*/vmf_* function (and its helpers) with ``decorator``
    instead of ``numba.njit(inline="always")``; returns {name: function}.

    Example for CUDA device code::

        dev = rebuild_with(lambda f: numba.cuda.jit(device=True, inline=True)(f))
        dev["vm_exp"]  # callable from a CUDA kernel

    The functions only use arithmetic, ``math.*`` and tiny target-generic
    intrinsics (bitcast, float cast, llvm.fmuladd/rint/fabs/copysign), so any
    Numba target can compile them.
    """
    mods = (vecmath_base, vecmath_trig, vecmath_f32, sys.modules[__name__])
    return vecmath_base.rebuild_with(decorator, mods)
