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
* Tiny target-generic intrinsics (xforms/kernels/libm/vecmath/base.py, which also
  keeps the registry ``rebuild_with`` uses; written once, Numba's ``@intrinsic`` made of
  them in jit.py: the package's modules are plain Python, imported without Numba, and
  ``vm_exp`` ... are built with Numba on first use), no other machinery:
  ``as_bits``/``from_bits`` (IEEE-754 bitcast: builds 2**k for exp and
  splits exponent/mantissa for log; vectorises to nothing or to integer
  shifts), ``like`` (rounds the float64 result to float32 for float32
  inputs), ``div`` (a bare ``fdiv``: Numba's ``/`` under the default
  ``error_model='python'`` adds a ZeroDivisionError branch that blocks
  vectorisation) and ``mad`` (``llvm.fmuladd``: an FMA where the target has
  one, otherwise mul + add; used only inside polynomial evaluation, never in
  the compensated (2Sum / Cody-Waite) steps).
* float32, two ways.  ``vm_*`` widen the input exactly, compute in float64
  and round once (correctly rounded except for a ~2**-28 ulp double-rounding
  window, bound 0.501 ulp; float32 in -> float32 out; integers are treated
  as float64).  ``vmf_*`` (xforms/kernels/libm/vecmath/f32.py: exp, log, tanh, sin, cos,
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
sin/cos/tan  see xforms/kernels/libm/vecmath/trig.py.

Not provided: pow.  x**y as exp(y*log(x)) needs log in double-double (the
error of y*log(x) is multiplied by |y*log(x)| <= 745) plus the ~20 IEEE
special cases; not worth it for this module yet.

Accuracy
--------
``ERROR_BOUNDS_ULP`` (asserted by tests/kernels/numba/test_vecmath.py) is the maximum
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
    cbrt       0.50               0.51            0.500 / 0.501

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
import sys

from . import base, erfcinv, explog, f32, roots, trig
from ..names import (PUBLIC_FUNCTIONS, TRIG_BOUNDED, VECMATH, VECMATH_BOUNDED,  # noqa: F401
                     VECMATH_F32, VECMATH_TRIG_EXACT)
from .f32 import ERROR_BOUNDS_ULP_F32, TRIG_MAX_ARG_F32
from .trig import TRIG_MAX_ARG

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
    "vm_cbrt",
    "vm_cos",
    "vm_cos_bounded",
    "vm_cosh",
    "vm_erfcinv",
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
    "vmf_erfcinv",
    "vmf_exp",
    "vmf_log",
    "vmf_sin",
    "vmf_sin_bounded",
    "vmf_tan",
    "vmf_tan_bounded",
    "vmf_tanh",
]

# ---------------------------------------------------------------------------
# Tables for the code generator and the tests
# ---------------------------------------------------------------------------

#: Maximum error in ulps of the output dtype for normal (non-subnormal)
#: results, asserted by tests/kernels/numba/test_vecmath.py.  Observed maxima over the test
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
    ("cbrt", "float64"): 0.51,
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
    from . import jit
    return jit.rebuild_with(decorator, _MODULES)


_MODULES = (base, trig, f32, explog, roots, erfcinv, sys.modules[__name__])


def __getattr__(name):
    """``vm_exp`` and the other functions and helpers as Numba functions (jit.py), built
    on first use: importing the package imports no Numba (the direct LLVM path reads the
    plain-Python functions, base._PY_FUNCS)."""
    if name in base._PY_FUNCS:
        from . import jit
        return jit.numba_family(_MODULES)[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
