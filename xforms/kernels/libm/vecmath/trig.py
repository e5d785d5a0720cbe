"""Vectorisable float64 sin/cos/tan for generated Numba loops (see xforms/kernels/libm/vecmath/__init__.py).

Trigonometric functions
-----------------------
``vm_sin_bounded``/``vm_cos_bounded``/``vm_tan_bounded`` reduce
x = k*pi/2 + r with a four-part Cody-Waite pi/2 (33+33+33+53 bits, ~152 bits;
k*part is exact for |k| < 2**20) and two compensated subtractions, then use
fdlibm's sin/cos kernels with the tail of r (tan = sin/cos of the reduced
argument).  The reduction is accurate for |x| <= TRIG_MAX_ARG = 1e6 -- the
tests check every x = fl(k*pi/2) up to 1e6, the inputs with the smallest
|r| -- and these variants return nan beyond it (and for inf/nan).

``vm_sin``/``vm_cos``/``vm_tan`` add ``if not |x| <= TRIG_MAX_ARG: return
math.sin(x)``.  This is exact everywhere, and it does *not* stop
vectorisation -- but only because LLVM if-converts the branch: ``llvm.sin``
is speculatable, so the vectorised loop calls libm for every lane and is
slower than a plain ``math.sin`` loop.  A libm call that is not speculatable
blocks loop vectorisation instead (LLVM only vectorises calls to intrinsics or
functions with vector variants).  So ``VECMATH`` leaves sin/cos/tan out,
``VECMATH_TRIG_EXACT`` lists the exact variants (good in scalar code, where
the branch is real), and the code generator (xforms/kernels/cpu/numba/emit.py,
``Emitter.emit_loop``) uses the bounded ones in a guarded loop: it ors a flag
with ``y != y`` after each bounded call (this vectorises) and redoes the whole
loop with libm when the flag is set (an argument beyond the bound, inf or
nan)::

    bad = False
    for i in range(n):
        s = vm_sin_bounded(b[i])
        bad |= s != s
        out[i] = vm_exp(a[i]) * s
    if bad:                          # rare: |t| > 1e6, inf or nan somewhere
        for i in range(n):
            out[i] = vm_exp(a[i]) * math.sin(b[i])

Both kernels are computed and one selected (``c if odd else s``): branch-free,
and small enough that LLVM inlines the whole function into the caller's loop
(with the kernels in the two arms of a branch it stayed a call per element,
5x slower).  float32: xforms/kernels/libm/vecmath/f32.py has the same structure in float32.

Measured 2026-11-24 (AMD EPYC znver4, loaded machine; ns/element over 2**16
elements, vectorised loop): sin_bounded 1.96, cos_bounded 1.91, tan_bounded
2.04; scalar libm sin 8.7; a bounded sin in a loop that does not vectorise
(a floating-point sum) 47, which is why the generator keeps libm there.
"""
import math

from .base import div, leaf, like, mad, vm

_NAN = math.nan

# sin/cos kernels on |r| <= pi/4: fdlibm k_sin.c / k_cos.c
_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11

# Cody-Waite pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 + _PIO2_4 (33+33+33+53 bits,
# ~152 bits in all).  k * _PIO2_{1,2,3} is exact for |k| < 2**20.
_PIO2_1 = 1.5707963267341256  # 0x1.921fb544p+0
_PIO2_2 = 6.077100506303966e-11  # 0x1.0b4611a6p-34
_PIO2_3 = 2.0222662487111665e-21  # 0x1.3198a2ep-69
_PIO2_4 = 8.4784276603689e-32  # 0x1.b839a252049c1p-104
_TWO_OVER_PI = 0.6366197723675814

#: |x| bound of the branch-free sin/cos/tan argument reduction.  Beyond it the
#: ``vm_sin``/``vm_cos``/``vm_tan`` fall back to ``math.*`` and the
#: ``*_bounded`` variants return nan.  1e6 keeps |k| = |round(2x/pi)| < 2**20.
TRIG_MAX_ARG = 1.0e6


@leaf
def _two_sum_err(a, b, s):
    """Rounding error of s = fl(a + b): a + b == s + err exactly (Knuth)."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


@vm
def _trig_reduce(x):
    """x = k*pi/2 + (rh + rl), |rh| <= ~pi/4; valid for |x| <= TRIG_MAX_ARG.

    Returns (rh, rl, k).  Four-part Cody-Waite with exact products and
    compensated subtractions: |error| ~ 2**-136 * |k| + 2**-105 * |rh| (the
    products k*_PIO2_{1,2,3} and the first two subtractions are exact).
    """
    k = math.floor(x * _TWO_OVER_PI + 0.5)
    kf = float(k)
    a = x - kf * _PIO2_1  # exact
    b = kf * _PIO2_2  # exact
    s1 = a - b
    e1 = _two_sum_err(a, -b, s1)
    c = kf * _PIO2_3  # exact
    s2 = s1 - c
    e2 = _two_sum_err(s1, -c, s2)
    lo = (e1 + e2) - kf * _PIO2_4
    rh = s2 + lo
    rl = lo - (rh - s2)
    return rh, rl, k


@leaf
def _ksin(x, y):
    """sin(x + y) for |x| <= ~pi/4, |y| <= ulp(x)/2 (fdlibm __kernel_sin)."""
    z = x * x
    v = z * x
    r = mad(z, mad(z, mad(z, mad(z, _S6, _S5), _S4), _S3), _S2)
    return x - ((z * (0.5 * y - v * r) - y) - v * _S1)


@leaf
def _kcos(x, y):
    """cos(x + y) for |x| <= ~pi/4, |y| <= ulp(x)/2 (fdlibm __kernel_cos)."""
    z = x * x
    r = z * mad(z, mad(z, mad(z, mad(z, mad(z, _C6, _C5), _C4), _C3), _C2), _C1)
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + (z * r - x * y))


@vm
def _sincos_bounded_f64(x, phase):
    """sin(x + phase*pi/2) for float64 x; nan when not |x| <= TRIG_MAX_ARG."""
    ok = math.fabs(x) <= TRIG_MAX_ARG
    xr = x if ok else 0.0
    rh, rl, k = _trig_reduce(xr)
    q = k + phase
    s = _ksin(rh, rl)       # both kernels, then a select: branch-free, and small enough
    c = _kcos(rh, rl)       # for LLVM to inline the whole function into a caller's loop
    v = c if (q & 1) != 0 else s
    v = -v if (q & 2) != 0 else v
    return v if ok else _NAN


@vm
def _tan_bounded_f64(x):
    ok = math.fabs(x) <= TRIG_MAX_ARG
    xr = x if ok else 0.0
    rh, rl, k = _trig_reduce(xr)
    s = _ksin(rh, rl)
    c = _kcos(rh, rl)
    odd = (k & 1) != 0
    t = div(-c if odd else s, s if odd else c)
    return t if ok else _NAN



# public functions: float64 in and out; a float32 argument is widened exactly and the
# result rounded once (the float32 family is xforms/kernels/libm/vecmath/f32.py)

@vm
def vm_sin_bounded(x):
    """sin(x), branch-free; nan for |x| > TRIG_MAX_ARG (and inf/nan)."""
    xd = x * 1.0
    y = _sincos_bounded_f64(xd, 0)
    y = xd if math.fabs(xd) < 7.450580596923828e-09 else y  # |x| < 2**-27, keeps -0.0
    return like(y, x)


@vm
def vm_cos_bounded(x):
    """cos(x), branch-free; nan for |x| > TRIG_MAX_ARG (and inf/nan)."""
    xd = x * 1.0
    return like(_sincos_bounded_f64(xd, 1), x)


@vm
def vm_tan_bounded(x):
    """tan(x), branch-free; nan for |x| > TRIG_MAX_ARG (and inf/nan)."""
    xd = x * 1.0
    y = _tan_bounded_f64(xd)
    y = xd if math.fabs(xd) < 7.450580596923828e-09 else y
    return like(y, x)


@vm
def vm_sin(x):
    """sin(x); |x| > TRIG_MAX_ARG, inf and nan go to math.sin (a branch)."""
    xd = x * 1.0
    if not (math.fabs(xd) <= TRIG_MAX_ARG):
        return like(math.sin(xd), x)
    return vm_sin_bounded(x)


@vm
def vm_cos(x):
    """cos(x); |x| > TRIG_MAX_ARG, inf and nan go to math.cos (a branch)."""
    xd = x * 1.0
    if not (math.fabs(xd) <= TRIG_MAX_ARG):
        return like(math.cos(xd), x)
    return vm_cos_bounded(x)


@vm
def vm_tan(x):
    """tan(x); |x| > TRIG_MAX_ARG, inf and nan go to math.tan (a branch)."""
    xd = x * 1.0
    if not (math.fabs(xd) <= TRIG_MAX_ARG):
        return like(math.tan(xd), x)
    return vm_tan_bounded(x)
