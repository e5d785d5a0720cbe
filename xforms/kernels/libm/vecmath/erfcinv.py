"""erfc^-1 (the erfc_inv primitive: scipy.special's erfcinv, ndtri's core) branch-free, so
that a loop calling it vectorises (issue #37: jitted ndtri at 10^6 float64 ran ~3x JAX's
time, one scalar function per element: libm's log, exp and erfc and a Halley step behind
branches).

Method: w = -log(t (2 - t)) from the tail mass t = min(z, 2 - z) (exact: z or 2 - z), so
both tails keep their relative precision.  For w < 36 (t above ~1e-16) erf^-1(y) = y p(w),
y = 1 - z, with Giles' double-precision polynomials -- XLA's float64 erf_inv, JAX's
(xforms/primitives/special/erf_inv_poly.py): p in w - 3.125 below w = 6.25, in sqrt(w) -
3.25 below 16, in sqrt(w) - 5 above.  Beyond (t down to the smallest subnormal, w <= 745)
x^2 = w + F(u), F a degree-16 polynomial of ours in u = log(w) rescaled to [-1, 1]
(tools/erfcinv_fit.py fits it; 1.0 ulp of x over w in [36, 702]).  Every element computes
the four polynomials (independent Horner chains: one chain with its coefficients selected
per term ran 15% slower) and keeps one; vm_log for the logs, sqrt as LLVM's instruction: no
branch.  vmf_erfcinv (float32 loops) computes in float32: Giles' single-precision
polynomials (XLA's float32 erf_inv) below w = 16, x^2 = w + F32(u) beyond (w <= 104);
vm_erfcinv of a float32 computes in float64 and rounds once.

Accuracy against scipy.special.erfcinv (itself a few ulp off): float64 max 8 ulp, median
1 (Giles' polynomials, as JAX's erfinv; the earlier Halley-polished scalar code was within
6); float32 max 4 (JAX's float32 ndtri: 4).  Specials: erfcinv(0) = inf, erfcinv(2) =
-inf, nan outside [0, 2] and for nan, erfcinv(1) = +0.0.

    vm_erfcinv(1.0) == 0.0;  vm_erfcinv(0.5) == 0.47693627620446977
"""
import math

from xforms.primitives.special.erf_inv_poly import (ERFINV32_LARGE, ERFINV32_SMALL, ERFINV64_A,
                                                   ERFINV64_B, ERFINV64_C)

from .base import f32, fsqrt, fsqrtf, like, mad, madf, vm
from .explog import vm_log
from .f32 import vmf_log

#: x^2 - w as a polynomial in u (highest degree first): tools/erfcinv_fit.py's output
FAR = (-7.222374996774977e-11, 2.7062323922211305e-10, 5.890123995294546e-11,
       -3.7465049185832524e-09, 2.0014897420657454e-08, -7.092608140659068e-08,
       1.5480296368315702e-07, 8.072160697352999e-08, -2.8826458889726066e-06,
       1.745034524146323e-05, -6.97283869995801e-05, 0.00019821063272286332,
       -0.0003511885040864151, 7.997706370916016e-05, 0.0015568165512239887,
       -0.7618071577156785, -2.424062650579193)
FAR_W = (36.0, 745.0)           # the fit's range of w; u = (2 log w - log(36 745)) / log(745/36)
U_SCALE = 2.0 / math.log(FAR_W[1] / FAR_W[0])
U_SHIFT = -math.log(FAR_W[0] * FAR_W[1]) / math.log(FAR_W[1] / FAR_W[0])
_EI_INF = float("inf")
_EI_NAN = float("nan")

#: float32 (vmf_erfcinv): x^2 - w as a polynomial in u over w in [16, 104] (float32's
#: smallest subnormal), coefficients rounded to float32 (tools/erfcinv_fit.py --f32)
FAR32 = (-1.0070430107589345e-05, 8.672894182382151e-05, -0.0003972970589529723,
         0.0010936642065644264, -0.0011415791232138872, -0.470947802066803,
         -1.7242804765701294)
FAR32_W = (16.0, 104.0)
U32_SCALE = 2.0 / math.log(FAR32_W[1] / FAR32_W[0])
U32_SHIFT = -math.log(FAR32_W[0] * FAR32_W[1]) / math.log(FAR32_W[1] / FAR32_W[0])
_EIF_ZERO, _EIF_ONE, _EIF_TWO = f32(0.0), f32(1.0), f32(2.0)
_EIF_HALF, _EIF_2P5, _EIF_3 = f32(0.5), f32(2.5), f32(3.0)
_EIF_5, _EIF_16 = f32(5.0), f32(16.0)
_EIF_USCALE, _EIF_USHIFT = f32(U32_SCALE), f32(U32_SHIFT)
_EIF_INF, _EIF_NAN = f32(math.inf), f32(math.nan)

# the four tables as one of 23 terms each, the shorter padded with leading zeros, named
# _EI_A0 ... _EI_F22 (the translator and Numba read module constants, not tuple items)
for _tag, _table in (("A", ERFINV64_A), ("B", ERFINV64_B), ("C", ERFINV64_C), ("F", FAR)):
    _padded = (0.0,) * (23 - len(_table)) + tuple(float(c) for c in _table)
    for _k, _c in enumerate(_padded):
        globals()[f"_EI_{_tag}{_k}"] = _c
for _tag, _table in (("S", ERFINV32_SMALL), ("L", ERFINV32_LARGE), ("F", FAR32)):
    for _k, _c in enumerate(_table):        # (float32 constants: Numba keeps float32)
        globals()[f"_EIF_{_tag}{_k}"] = f32(_c)
del _tag, _table, _padded, _k, _c


@vm
def _giles_small(z):
    p = _EI_A0
    p = mad(p, z, _EI_A1)
    p = mad(p, z, _EI_A2)
    p = mad(p, z, _EI_A3)
    p = mad(p, z, _EI_A4)
    p = mad(p, z, _EI_A5)
    p = mad(p, z, _EI_A6)
    p = mad(p, z, _EI_A7)
    p = mad(p, z, _EI_A8)
    p = mad(p, z, _EI_A9)
    p = mad(p, z, _EI_A10)
    p = mad(p, z, _EI_A11)
    p = mad(p, z, _EI_A12)
    p = mad(p, z, _EI_A13)
    p = mad(p, z, _EI_A14)
    p = mad(p, z, _EI_A15)
    p = mad(p, z, _EI_A16)
    p = mad(p, z, _EI_A17)
    p = mad(p, z, _EI_A18)
    p = mad(p, z, _EI_A19)
    p = mad(p, z, _EI_A20)
    p = mad(p, z, _EI_A21)
    p = mad(p, z, _EI_A22)
    return p


@vm
def _giles_mid(z):
    p = _EI_B4
    p = mad(p, z, _EI_B5)
    p = mad(p, z, _EI_B6)
    p = mad(p, z, _EI_B7)
    p = mad(p, z, _EI_B8)
    p = mad(p, z, _EI_B9)
    p = mad(p, z, _EI_B10)
    p = mad(p, z, _EI_B11)
    p = mad(p, z, _EI_B12)
    p = mad(p, z, _EI_B13)
    p = mad(p, z, _EI_B14)
    p = mad(p, z, _EI_B15)
    p = mad(p, z, _EI_B16)
    p = mad(p, z, _EI_B17)
    p = mad(p, z, _EI_B18)
    p = mad(p, z, _EI_B19)
    p = mad(p, z, _EI_B20)
    p = mad(p, z, _EI_B21)
    p = mad(p, z, _EI_B22)
    return p


@vm
def _giles_large(z):
    p = _EI_C6
    p = mad(p, z, _EI_C7)
    p = mad(p, z, _EI_C8)
    p = mad(p, z, _EI_C9)
    p = mad(p, z, _EI_C10)
    p = mad(p, z, _EI_C11)
    p = mad(p, z, _EI_C12)
    p = mad(p, z, _EI_C13)
    p = mad(p, z, _EI_C14)
    p = mad(p, z, _EI_C15)
    p = mad(p, z, _EI_C16)
    p = mad(p, z, _EI_C17)
    p = mad(p, z, _EI_C18)
    p = mad(p, z, _EI_C19)
    p = mad(p, z, _EI_C20)
    p = mad(p, z, _EI_C21)
    p = mad(p, z, _EI_C22)
    return p


@vm
def _far(z):
    p = _EI_F6
    p = mad(p, z, _EI_F7)
    p = mad(p, z, _EI_F8)
    p = mad(p, z, _EI_F9)
    p = mad(p, z, _EI_F10)
    p = mad(p, z, _EI_F11)
    p = mad(p, z, _EI_F12)
    p = mad(p, z, _EI_F13)
    p = mad(p, z, _EI_F14)
    p = mad(p, z, _EI_F15)
    p = mad(p, z, _EI_F16)
    p = mad(p, z, _EI_F17)
    p = mad(p, z, _EI_F18)
    p = mad(p, z, _EI_F19)
    p = mad(p, z, _EI_F20)
    p = mad(p, z, _EI_F21)
    p = mad(p, z, _EI_F22)
    return p


@vm
def _erfcinv_size(t, w):
    """|erfc^-1| of the tail mass t (<= 1) with w = -log(t (2 - t)): the four polynomials
    each in its own Horner chain (independent: the core overlaps them), one picked."""
    s = fsqrt(w)
    a = _giles_small(w - 3.125) * (1.0 - t)
    b = _giles_mid(s - 3.25) * (1.0 - t)
    c = _giles_large(s - 5.0) * (1.0 - t)
    f = fsqrt(w + _far(mad(vm_log(w), U_SCALE, U_SHIFT)))
    return a if w < 6.25 else (b if w < 16.0 else (c if w < 36.0 else f))


@vm
def vm_erfcinv(x):
    """erfc^-1(x) for x in [0, 2]: inf at 0, -inf at 2, nan outside and for nan."""
    v = x * 1.0
    lower = v <= 1.0
    t = v if lower else 2.0 - v
    ok = (v > 0.0) & (v < 2.0)
    ts = t if ok else 0.5
    r = _erfcinv_size(ts, -vm_log(ts * (2.0 - ts)))
    r = r if lower else -r
    r = r if ok else (_EI_INF if v == 0.0 else (-_EI_INF if v == 2.0 else _EI_NAN))
    return like(r, x)


@vm
def _giles32_small(z):
    p = _EIF_S0
    p = madf(p, z, _EIF_S1)
    p = madf(p, z, _EIF_S2)
    p = madf(p, z, _EIF_S3)
    p = madf(p, z, _EIF_S4)
    p = madf(p, z, _EIF_S5)
    p = madf(p, z, _EIF_S6)
    p = madf(p, z, _EIF_S7)
    p = madf(p, z, _EIF_S8)
    return p


@vm
def _giles32_large(z):
    p = _EIF_L0
    p = madf(p, z, _EIF_L1)
    p = madf(p, z, _EIF_L2)
    p = madf(p, z, _EIF_L3)
    p = madf(p, z, _EIF_L4)
    p = madf(p, z, _EIF_L5)
    p = madf(p, z, _EIF_L6)
    p = madf(p, z, _EIF_L7)
    p = madf(p, z, _EIF_L8)
    return p


@vm
def _far32(z):
    p = _EIF_F0
    p = madf(p, z, _EIF_F1)
    p = madf(p, z, _EIF_F2)
    p = madf(p, z, _EIF_F3)
    p = madf(p, z, _EIF_F4)
    p = madf(p, z, _EIF_F5)
    p = madf(p, z, _EIF_F6)
    return p


@vm
def vmf_erfcinv(x):
    """erfc^-1 of a float32 in float32 arithmetic (twice vm_erfcinv's lanes): Giles'
    single-precision polynomials (XLA's float32 erf_inv) below w = 16, x^2 = w + F32(u)
    beyond (w <= 104: float32's subnormals); specials as vm_erfcinv."""
    lower = x <= _EIF_ONE
    t = x if lower else _EIF_TWO - x
    ok = (x > _EIF_ZERO) & (x < _EIF_TWO)
    ts = t if ok else _EIF_HALF
    w = -vmf_log(ts * (_EIF_TWO - ts))
    s = fsqrtf(w)
    a = _giles32_small(w - _EIF_2P5)
    b = _giles32_large(s - _EIF_3)
    g = (a if w < _EIF_5 else b) * (_EIF_ONE - ts)
    f = fsqrtf(w + _far32(madf(vmf_log(w), _EIF_USCALE, _EIF_USHIFT)))
    r = g if w < _EIF_16 else f
    r = r if lower else -r
    return r if ok else (_EIF_INF if x == _EIF_ZERO else (-_EIF_INF if x == _EIF_TWO else _EIF_NAN))
