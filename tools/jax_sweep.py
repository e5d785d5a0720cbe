"""Differential sweep of xforms' public surface against JAX (issue #31): every public callable
of xforms.numpy, xforms.lax, xforms.nn, xforms.scipy.special, numpy.linalg, numpy.fft,
scipy.linalg and each scipy.stats distribution (MODULES) that jax has under the same
name is called on small inputs (float32/float64/int32/bool/complex64/complex128 unless
--dtypes says otherwise; complex: the floats as real parts beside imaginary parts with their
own inf, NaN and -0.0; 0-d, 1-d, 2-d; 0, negatives, NaN and inf among the floats), with
`axis` and `keepdims` variants where JAX's signature takes them, by jax (64-bit mode), by
xforms eagerly and by `xforms.jit` (its fast tier; with --compiled, the compiled tier too:
slow), and the values and dtypes are compared.  The module
"operators" is the Python operators of eager Arrays beside jax.Arrays, with Python and NumPy
scalars and arrays of other dtypes on either side (tools/jax_operator_cases.py); "methods" is
the methods and properties of Arrays beside jax.Arrays' (x.sum(axis=-1), x.astype(int8),
x.at[1].add(2.5), x.T, with the argument mistakes users make: tools/jax_method_cases.py).

    python tools/jax_sweep.py                        # everything, a summary and each difference
    python tools/jax_sweep.py --names sinc,logaddexp --dtypes float32 --compiled
    python tools/jax_sweep.py --module nn -v         # -v: also the calls only one side accepts
    python tools/jax_sweep.py --module stats         # every distribution (or stats.norm, ...)
    python tools/jax_sweep.py --module numpy --chunk 2/8   # the 2nd of 8 slices of its names
    python tools/jax_sweep.py --module lax --dtypes complex64,complex128 --compiled
    python tools/jax_sweep.py --module fft --tiers compiled    # the compiled tier alone
    python tools/jax_sweep.py --module numpy --empty --dtypes float32,int8   # empty operands
    python tools/jax_sweep.py --module operators --names 'x**2j,2j**x' --dtypes complex64

Derivatives (grad, second order) and vmap of the same names: tools/jax_ad_sweep.py.

Needs jax installed (not a CI dependency: run by hand; the regression tests of what it found
carry JAX's values as literals).  A case counts as

    same        both return, same dtype, shape and values (to the dtype's rounding); a
                jitted xforms call may instead match jax.jit's answer
    both raise  jax and xforms refuse the input with the same exception class (xforms' error
                is an instance of the built-in class jax's derives from: a user's `except`
                behaves the same); else "both raise, class differs", a difference too
    DIFF        a different value, dtype or shape: a silent wrong number, to be fixed or
                allow-listed below with a reason
    refused     xforms raises where jax returns (NotImplementedError is the contract's way
                of saying "not yet"; any other error is reported with -v); a difference
                too, unless allow-listed below
    accepted    xforms returns where jax raises (reported with -v)

Exit status 1 when a DIFF is not allow-listed.
"""
import argparse
import collections
import enum
import faulthandler
import importlib
import inspect
import os
import signal
import sys
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(1, os.path.dirname(os.path.abspath(__file__)))
import jax_method_cases  # noqa: E402  (the "methods" module's cases)
import jax_operator_cases  # noqa: E402  (the "operators" module's cases)

MODULES = {"numpy": ("xforms.numpy", "jax.numpy"), "lax": ("xforms.lax", "jax.lax"),
           "nn": ("xforms.nn", "jax.nn"),
           "special": ("xforms.scipy.special", "jax.scipy.special"),
           "linalg": ("xforms.numpy.linalg", "jax.numpy.linalg"),
           "fft": ("xforms.numpy.fft", "jax.numpy.fft"),
           "scipy_linalg": ("xforms.scipy.linalg", "jax.scipy.linalg"),
           # the Python operators of eager Arrays and jax.Arrays (jax_operator_cases.py)
           "operators": ("xforms.numpy", "jax.numpy"),
           # the methods and properties of eager Arrays and jax.Arrays (jax_method_cases.py)
           "methods": ("xforms.numpy", "jax.numpy")}
# each distribution of scipy.stats is a module of its own: "stats.norm", "stats.gamma", ...
STATS = ("bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
         "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
         "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
         "truncnorm", "uniform", "vonmises", "wrapcauchy")
MODULES.update({f"stats.{d}": (f"xforms.scipy.stats.{d}", f"jax.scipy.stats.{d}")
                for d in STATS})

# Names not called: they draw random numbers, print, take callables or shapes rather than
# arrays, or build objects (what the sweep's array inputs cannot exercise).
SKIP = {"numpy": {"save", "load", "savez", "printoptions", "set_printoptions", "fromfile",
                  "fromiter", "frompyfunc", "vectorize", "piecewise", "apply_along_axis",
                  "apply_over_axes", "from_dlpack", "fromfunction", "einsum_path",
                  "get_printoptions", "show_config", "fromstring", "frombuffer"},
        "lax": {"cond", "switch", "while_loop", "fori_loop", "scan", "map", "associative_scan",
                "custom_root", "custom_linear_solve", "composite", "reduce", "reduce_window",
                "sort_key_val",
                "psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
                "all_to_all", "axis_index", "pshuffle", "pbroadcast", "infeed", "outfeed",
                "stop_gradient"},
        }

# (module, name) or (module, name, dtype) -> why the difference is intended.
ALLOWED = {
    ("lax", "select", "int32"): "jax reads an int predicate as select_n's case index; the "
                                "sweep's -3 is out of range, undefined there",
    ("lax", "select", "int8"): "the int32 entry's reason (-3 is no case of two)",
    ("lax", "select", "int16"): "the int32 entry's reason (-3 is no case of two)",
    ("lax", "select", "int64"): "the int32 entry's reason (-3 is no case of two)",
    ("numpy", "unravel_index", "int32"): "the sweep's second int32 operand is a shape with "
                                         "zero and negative sizes: no index is valid",
    ("numpy", "unravel_index", "float32"): "the int32 entry's reason, with float sizes "
                                           "(-0.5, 0.25, -inf) and NaN/inf indices: jax's "
                                           "float remainders and xforms' differ past the "
                                           "first bad size (NumPy refuses float indices)",
    ("numpy", "unravel_index", "float64"): "the float32 entry's reason",
    ("numpy", "unravel_index", "float16"): "the float32 entry's reason (checked s30: float16 sizes "
                                           "(-0.5, 0.25, -inf), NaN/inf indices)",
    ("numpy", "roots", "bool"): "a double root (-1): jax's companion-matrix eigenvalues split "
                                "it by sqrt(eps) (-0.9999997 +- 3e-4j); xforms' is exact",
    ("numpy", "convolve", "float32"): "XLA's float32 convolution multiplies its zero padding "
                                      "by the kernel (0 * -inf = NaN); its float64 one and "
                                      "NumPy skip the padding, as xforms does for both",
    ("numpy", "polymul", "float32"): "a convolution: the float32 convolve entry's reason",
    ("numpy", "convolve", "float16"): "the float32 entry's reason (XLA's float16 convolution "
                                      "is its float32 one's)",
    ("scipy_linalg", "toeplitz"): "jax builds it with conv_general_dilated_patches (a "
                                  "convolution with a one-hot kernel): an inf in c or r "
                                  "spreads NaN (0 * inf) along its row; xforms gathers, as SciPy",
    ("scipy_linalg", "hankel"): "toeplitz's reason (jax's one-hot convolution)",
    ("stats.pareto", "cdf"): "at a NaN x with b = 0 (no valid law): jax's 1 - nan**-0 = 0; "
                             "xforms' NaN, as at any other b (its cdf, -expm1(-b log z), "
                             "keeps the digits near z = 1)",
    ("stats.pareto", "logcdf"): "cdf's reason (jax's log1p(-nan**-0) = -inf there)",
    ("stats.cauchy", "ppf", "int32"): "the sweep's integer q (-3, 5) sit on tan's poles: both "
                                      "answers are rounding noise (SciPy: NaN outside [0, 1]); "
                                      "xforms' tan(pi (q - 0.5)) keeps the digits near q = 1/2 "
                                      "that jax's tan(pi q - pi/2) cancels (0.5 + 1e-10: rel. "
                                      "error 1e-16 vs 2e-7)",
    ("stats.cauchy", "isf", "int32"): "ppf's reason (the poles of tan)",
    ("special", "expn", "uint8"): "expn(255, 0): jax 0.10.2's 1/255; E_n(0) = 1/(n - 1), "
                                  "xforms' and SciPy's 1/254",
    ("stats.chi2", "cdf", "bool"): "df = False = 0 at x = 1: jax's gammainc(0, x) is its "
                                   "series' 0/0 = NaN for 0 < x < 1 (1 from x = 1 on, and its "
                                   "gammaincc(0, x) is 0 for every x > 0); xforms' 1, as "
                                   "SciPy's gammainc(0, x)",
    ("stats.chi2", "logcdf", "bool"): "cdf's reason (log of jax's NaN)",
    ("special", "hyp1f1", "int32"): "float32 results: jax's 1F1(5; 3; -4) = -0.0061005 is off "
                                    "by 8e-4 relative (its alternating series cancels; SciPy "
                                    "and xforms' Kummer transform: -0.0061052)",
    ("special", "hyp1f1", "int8"): "the int32 entry's reason (1F1(5; 3; -4), checked s30)",
    ("special", "hyp1f1", "int16"): "the int32 entry's reason (1F1(5; 3; -4), checked s30)",
    ("special", "hyp1f1", "uint8"): "1F1(1; 254; 252) (the sweep's -2, -4 wrapped): jax 0.10.2 "
                                    "NaN; xforms 19.312096 float32, SciPy 19.312109 (checked "
                                    "s30)",
    ("special", "hyp1f1", "uint16"): "1F1(1; 65534; 65532): jax 0.10.2 NaN; xforms 320.17682 "
                                     "float32, SciPy 320.17726 (1.4e-6 relative; checked s30)",
    ("special", "sici", "float16"): "Si(+-inf): jax 0.10.2's float16 NaN; SciPy's (and jax's "
                                    "float32) +-pi/2, xforms' +-1.57 (checked s30)",
    ("special", "hyp1f1", "float16"): "1F1(2; -0.5; 1.5): jax 0.10.2 -116.375; SciPy -116.5256, "
                                      "xforms -116.5 (the nearest float16; checked s30): jax "
                                      "sums its series in float16, xforms in float32 "
                                      "rounded once (s31)",
    ("special", "owens_t", "int32"): "jax 0.10.2's owens_t returns float64 for int32 and "
                                     "float32 operands in 64-bit mode (its docstring: the "
                                     "promoted inputs' dtype, float32); xforms' float32 is that",
    ("special", "owens_t", "float32"): "the int32 entry's reason (jax's float64)",
    ("special", "owens_t", "bool"): "the int32 entry's reason (jax's float64)",
    ("special", "owens_t", "int8"): "the int32 entry's reason (jax's float64; s30: dtype only)",
    ("special", "owens_t", "uint8"): "the int32 entry's reason (jax's float64; s30: dtype only)",
    ("special", "owens_t", "int16"): "the int32 entry's reason (jax's float64; s30: dtype only)",
    ("special", "owens_t", "uint16"): "the int32 entry's reason (jax's float64; s30: dtype only)",
    ("special", "owens_t", "uint32"): "the int32 entry's reason (jax's float64; s30: dtype only)",
    ("special", "owens_t", "float16"): "the int32 entry's reason (jax's float64; s30: dtype only)",
    ("special", "owens_t", "complex64"): "the int32 entry's reason (jax's complex128; its "
                                         "values: sign(a) T(|h|, |a|), as xforms')",
    ("stats.wrapcauchy", "pdf", "int32"): "jax.jit's float32 exp of logpdf at c outside (0, 1) "
                                          "returns garbage that changes from run to run "
                                          "(-7.4e2, 3.9e13, denormals); eager jax gives NaN, "
                                          "as xforms",
    ("linalg", "cond", "bool"): "the sweep's bool matrix [[0, 1, 1], [0, 1, 1]] is singular "
                                "(singular values 2 and 0 exactly): both answers are 2 over "
                                "rounding noise (jax's float32 sgesdd gives 6e-8 for the 0, "
                                "NumPy's 2e-16), not a condition number",
    ("linalg", "lstsq", "uint16"): "the residuals of an exact fit (2 x 3, full rank): 0 "
                                   "to rounding, and the sweep's uint16 entries (65533, "
                                   "65535) make that noise 6e-5 in float32 (1e-14 of b's "
                                   "squared norm), jax's and xforms' each their own",
    ("fft", "fftfreq"): "refused: a float or bool n (the sweep's 0-d operands), as NumPy "
                        "refuses it; jax's arange(0.5) makes fftfreq(0.5) = [0.], a "
                        "length no window has",
    ("fft", "rfftfreq"): "fftfreq's reason",
    ("numpy", "repeat", "int32"): "refused: the sweep's counts hold negatives, which NumPy "
                                  "refuses; jax's output length is their sum, negatives "
                                  "included, filled from a cumsum scatter (no defined value)",
    ("numpy", "repeat", "int8"): "the int32 entry's reason (negative counts)",
    ("numpy", "repeat", "int16"): "the int32 entry's reason (negative counts)",
    ("numpy", "repeat", "int64"): "the int32 entry's reason (negative counts)",
    ("numpy", "roll", "float32"): "refused: the sweep's float shifts hold inf, which has no "
                                  "integer (Python's int(inf) raises); jax's cast of inf to "
                                  "int64 is implementation-defined",
    ("numpy", "roll", "float64"): "the float32 entry's reason",
    ("numpy", "roll", "float16"): "the float32 entry's reason",
    ("numpy", "roots", "uint32"): "the same three roots, -1 and (1 +- i sqrt 3) / 2, in "
                                  "another order: neither NumPy nor jax sorts them (the "
                                  "eigensolver's order; jax's float32 values carry 2e-7 "
                                  "noise besides)",
    ("numpy", "roll", "complex64"): "the float32 entry's reason (complex shifts: inf parts, "
                                    "and no int() of a complex)",
    ("numpy", "roll", "complex128"): "the complex64 entry's reason",
    ("numpy", "histogram", "int64"): "the sweep's integers sit on the bin edges of "
                                     "linspace(-3, 7, 11), and which bin a value on an edge "
                                     "takes is the edge's last ulp: XLA's fused float64 "
                                     "linspace gives 5.6e-16, 2.0000000000000004 where xforms' "
                                     "start * (1 - t) + stop * t, as NumPy, gives 4.4e-16, 2.0 "
                                     "(int32 and narrower: float32 edges, same counts)",
    ("numpy", "logspace", "uint8"): "10 ** linspace(0, 253) in float32: the exponent's "
                                    "last-ulp rounding (histogram's int64 entry's reason) "
                                    "times ln(10) * 253 is 3.5e-5 relative at 2.3e17",
    ("special", "expi", "float16"): "jax 0.10.2's float16 expi is NaN everywhere (expi(0.5) "
                                    "too): its rational coefficients overflow when cast to "
                                    "float16 (its own RuntimeWarning); xforms' 0.4536 is "
                                    "float32's 0.4542 to float16's tolerance",
    ("numpy", "histogram2d", "int64"): "histogram's int64 entry's reason (linspace's ulps)",
    ("methods", "x.argpartition(1)"): "past the kth element a partition's order is "
                                      "unspecified (NumPy's docs): jax's is its top_k's, "
                                      "xforms' another; the first k + 1 agree",
    ("numpy", "histogramdd", "bool"): "XLA rounds the middle bin edge of [-0.5, 0.5] to "
                                      "3.7e-9 (a reciprocal multiply and a fused "
                                      "multiply-add), so jax bins a 0 below it; xforms' "
                                      "edge is 0.0 exactly, as NumPy's",
}

ALLOWED.update({("stats.cauchy", fn, dt): "the int32 entry's reason (integer q on the poles "
                 "of tan)" for fn in ("ppf", "isf")
                 for dt in ("int8", "uint8", "int16", "uint16", "uint32", "int64", "uint64")})

ALLOWED.update({("stats.t", fn, dt): "a large wrapped df (uint8 253 ... uint64 2**64 - 3): "
                 "jax 0.10.2 subtracts two large gammalns (float32 logpdf(1, 255) -1.420779, "
                 "SciPy -1.4208980; -0.5 at df = 2**64, where the normal limit is -1.419); "
                 "xforms' log-gamma ratio gives SciPy's values (session 30)"
                 for fn in ("logpdf", "pdf") for dt in ("uint8", "uint16", "uint32", "uint64")})

# the complex sweep's (--dtypes complex64,complex128) differences at complex infinities and
# NaNs, where XLA's formulas and NumPy's C99 (Annex G) functions part; each checked in
# session 25 on the sweep's inputs, finite operands agree
_COMPLEX_INF = {
    ("lax", "exp2"): "at inf+2j and -inf+1.5j: XLA's exp(ln2 * z) multiplies as complex "
                     "numbers (inf * 0 = NaN parts: nan+nanj); NumPy's C99 cexp2 gives "
                     "inf+infj and 0j",
    ("numpy", "exp2"): "lax.exp2's reason",
    # (lax.logistic, special.expit, lax.pow and numpy's pow, power, float_power were
    # here until session 29: XLA's exp and division, XLA's power on every tier now)
    ("nn", "softplus"): "at inf+2j: jax's logaddexp(x, 0) meets inf - inf (nan+nanj); "
                        "xforms' branch for large Re x gives x + log1p(exp(-x)) = inf+2j, "
                        "the limit (its numpy.logaddexp gives jax's nan+nanj)",
    ("nn", "log_sigmoid"): "-softplus(-x): softplus's reason (at -inf+1.5j)",
    ("nn", "squareplus"): "at inf+2j: (x + sqrt(x^2 + 4)) / 2 is inf+infj op by op in jax "
                          "too; its jitted squareplus divides by 2 as complex numbers "
                          "((inf+infj) / (2+0j) = nan+nanj)",
    ("numpy", "geomspace"): "endpoints with inf/NaN parts: log and exp of complex infinities "
                            "(exp2's reason: XLA's complex products meet inf * 0); jax's "
                            "nan+nanj, xforms the end value",
    ("numpy", "logspace"): "geomspace's reason",
    ("numpy", "vander"): "fast tier only: powers of inf+2j by repeated complex products "
                         "(inf+infj ...) where jax's give nan+nanj (its integer_pow's "
                         "products meet inf * 0 first)",
    ("numpy", "mean"): "a column summing to -inf+infj (session 35's inf imaginary parts): "
                       "XLA rewrites jax's division by the constant count as a product with "
                       "its reciprocal, (-inf+infj) * (0.5+0j) = nan+nanj; xforms divides, as "
                       "jnp.divide of that sum does (sharp-bits: XLA's reciprocal)",
    ("numpy", "average"): "mean's reason (no weights: jax's average is its mean)",
    ("stats.norm", "logpdf"): "eager only, at 2+infj, inf+2j, -inf+1.5j: eager jax gives "
                              "inf-infj, -inf-infj, -inf+infj, jax.jit nan+nanj (XLA's complex "
                              "-0.5 * z**2 per op or fused); xforms gives jax.jit's on every tier",
    ("numpy", "histogram2d"): "the bin edges span complex values with inf and NaN parts, so "
                              "every edge is NaN: which bin a value falls in is undefined",
}
ALLOWED.update({(m, n, dt): why for (m, n), why in _COMPLEX_INF.items()
                for dt in ("complex64", "complex128")})
ALLOWED.update({("numpy", "convolve", "complex64"): "the float32 convolve entry's reason "
                "(XLA's complex64 convolution multiplies the zero padding by inf: NaN)",
                ("numpy", "polymul", "complex64"): "the complex64 convolve entry's reason"})

# (module, name, dtype, ndim) -> why the case is not called: jax never returns there, inside
# XLA's C++ (where SIGALRM cannot interrupt it, so the sweep would hang with it)
_EXPN_INF = ("jax 0.10.2's expn loops for ever inside XLA on an array of orders holding inf "
             "beside a finite one (expn([0., inf], [1., 3.]); each pair alone returns): "
             "tools/expn_check.py compares xforms' values, vmap and grad pair by pair")
HANGS = {("special", "expn", "int32", 2): "jax 0.10.2's expn of the sweep's int32 (2, 3) "
                                          "operands loops for ever (their 1-d form, the "
                                          "same pairs and one more, returns in a second)",
         ("special", "expn", "float32", 1): _EXPN_INF, ("special", "expn", "float32", 2): _EXPN_INF,
         ("special", "expn", "float64", 1): _EXPN_INF, ("special", "expn", "float64", 2): _EXPN_INF,
         ("special", "expn", "float16", 1): _EXPN_INF, ("special", "expn", "float16", 2): _EXPN_INF}
_LOGGAMMA_C = ("jax 0.10.2's loggamma of the sweep's complex64 1-d operands (inf and NaN parts "
               "among them) gave no answer in 180 s inside XLA (session 25; the 0-d one "
               "returns); the other complex cases are skipped with it, untried")
HANGS.update({("special", "loggamma", dt, nd): _LOGGAMMA_C
              for dt in ("complex64", "complex128") for nd in (1, 2)})
_EXPN_HUGE = ("jax 0.10.2's expn of n = 2**32 - 3 (the sweep's -3 as uint32/uint64) gave no "
              "answer in 120 s (session 30, a process of its own; xforms answers in 1 s)")
HANGS.update({("special", "expn", dt, nd): _EXPN_HUGE
              for dt in ("uint32", "uint64") for nd in (1, 2)})
# Why a hang stalled the sweep (session 22, gdb): jax dispatches asynchronously, so `fn(...)`
# returns and the main thread blocks in np.asarray of the result (PyArray_bf_getbuffer ->
# BlockUntilReady, a futex wait) while an XLA worker runs the looping kernel; SIGALRM's
# Python handler never runs inside that C call.  `call` therefore also arms faulthandler's
# watchdog (a C thread): a call that hangs past WATCHDOG ends the process with every thread's
# traceback (run with -v to see the case it reached) instead of stalling for ever.

DTYPES = ("float32", "float64", "int32", "bool", "complex64", "complex128")
# a module's own paths for a narrower dtype, which a before-run (session 35, xforms at
# 0bc67422) showed the default dtypes miss: fft of float16 goes through complex64
EXTRA_DTYPES = {"fft": ("float16",)}

CLASS = "both raise, class differs"   # jax's built-in exception class is not xforms'

SEC = 60          # per call, seconds (a hang is reported as an error, not waited for)
WATCHDOG = 3 * SEC  # per call, seconds: then a call blocked in C ends the process (above)


def inputs(dtype, ndim, k, empty=False):
    """The k-th operand (0, 1, 2) of a call: fixed small values of `dtype`, rank `ndim`;
    with `empty`, ranks 1 and 2 are the empty shapes (0,) and (0, 3)."""
    if empty and ndim:
        return np.zeros((0,) if ndim == 1 else (0, 3), dtype)
    floats = [[0.0, -1.5, 2.0, np.nan, np.inf, -np.inf, 0.5],
              [1.0, 2.0, -0.5, 0.0, 3.0, -np.inf, 0.25],
              [0.5, -2.0, 1.5, 1.0, np.nan, 2.0, -0.75]][k]
    ints = [[0, -3, 2, 5, -1, 7, 1], [1, 2, -2, 3, 0, 4, -1], [2, 0, 1, -4, 3, 1, 6]][k]
    # complex: the floats as real parts (NaN, inf among them) beside imaginary parts with
    # their own specials (inf, -inf, NaN, -0.0 beside finite real parts: 2+infj, 0-0j, ...),
    # zeros and a purely imaginary value among them; the 0-d operands (elements 6, 2, 3)
    # stay finite
    imags = [[-0.0, 1.0, np.inf, 0.0, 2.0, 1.5, -2.0], [-1.0, np.nan, 2.0, -0.0, -1.5, 0.0, 1.0],
             [1.5, -np.inf, 0.0, -2.0, 1.0, -1.0, 0.25]][k]
    # unsigned: the ints wrapped modulo 2**bits (-3 -> 253 for uint8), as a cast does
    vals = {"f": floats, "i": ints, "b": [v > 0 for v in ints],
            "u": list(np.asarray(ints, np.int64).astype(dtype)),
            "c": [complex(r, i) for r, i in zip(floats, imags)]}[np.dtype(dtype).kind]
    if ndim == 0:
        return np.asarray(vals[k + 1 if k else 6], dtype)
    if ndim == 1:
        return np.asarray(vals, dtype)
    return np.asarray(vals[1:], dtype).reshape(2, 3)


def arity(fn):
    """How many array operands a call takes (required positional parameters), and the
    keyword names it accepts; None when there is no signature."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None, set()
    ps = list(sig.parameters.values())
    n = sum(1 for p in ps if p.default is p.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    if n == 0 and any(p.kind is p.VAR_POSITIONAL for p in ps):
        n = 2
    return n, {p.name for p in ps}


def variants(keywords, ndim):
    """The keyword arguments each call is made with."""
    out = [{}]
    if "axis" in keywords and ndim >= 1:
        out += [{"axis": -1}] + ([{"axis": 0}] if ndim == 2 else [])
    if "keepdims" in keywords and ndim >= 1:
        out.append({"keepdims": True})
    return out


class Timeout(Exception):
    pass


def _alarm(*_):
    raise Timeout(f"no answer in {SEC} s")


def call(fn, args, kw):
    """('ok', leaves) or ('err', exception)."""
    signal.alarm(SEC)
    faulthandler.dump_traceback_later(WATCHDOG, exit=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(*args, **kw)
            return "ok", [np.asarray(v) for v in _leaves(out)]
    except Exception as e:            # (a refusal is data here, not a failure)
        return "err", e
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()


def _leaves(out):
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in _leaves(o)]
    if isinstance(out, dict):
        return [v for k in sorted(out) for v in _leaves(out[k])]
    return [out]


def compare(want, got, loose=1):
    """None when the leaves agree; else what differs.  `loose` scales the float tolerances
    (derivatives, computed by other formulas than jax's, agree to fewer digits)."""
    if len(want) != len(got):
        return f"{len(got)} results, jax {len(want)}"
    for w, g in zip(want, got):
        if w.shape != g.shape:
            return f"shape {g.shape}, jax {w.shape}"
        if w.dtype != g.dtype:
            return f"dtype {g.dtype}, jax {w.dtype}"
        if w.dtype.kind in "fc":
            rtol = loose * (2e-5 if w.dtype in (np.float32, np.complex64) else 1e-9)
            tiny = loose * 16 * np.finfo(w.dtype).eps     # near a zero of the function, an
            # absolute error of a few ulps of 1 (jax's float32 gammaln(1) is 4.8e-7)
            if not np.allclose(g, w, rtol=rtol, atol=tiny, equal_nan=True):
                bad = ~np.isclose(g, w, rtol=rtol, atol=tiny, equal_nan=True)
                return f"values {g[bad][:3]}, jax {w[bad][:3]}"
        elif w.dtype == object:   # (finfo, iinfo: objects of two libraries, read by repr)
            if [repr(v) for v in g.ravel()] != [repr(v) for v in w.ravel()]:
                return f"values {g.ravel()[:4]}, jax {w.ravel()[:4]}"
        elif not np.array_equal(g, w):
            return f"values {g.ravel()[:4]}, jax {w.ravel()[:4]}"
    return None


def runners(xf, tiers):
    """[(label, wrap)]: how xforms is called: eagerly, under jit's fast tier, compiled (the
    labels named in `tiers`)."""
    def fast(fn):
        return xf.jit(fn, tiered=True)
    out = [("eager", lambda fn: fn), ("jit", fast),
           ("compiled", lambda fn: xf.jit(fn, tiered=False))]
    return [(label, wrap) for label, wrap in out if label in tiers]


def public_names(mod_key, only=None, chunk=(1, 1)):
    """[(name, xforms function, jax function)]: the callables of one module that jax has
    under the same name, less SKIP's (and, given `only`, those named there); of those, in
    alphabetical order, the k-th of n contiguous slices for chunk=(k, n)."""
    k, n_chunks = chunk
    if mod_key in ("operators", "methods"):     # (no module holds them)
        rows = (jax_operator_cases.operator_names(only) if mod_key == "operators"
                else jax_method_cases.method_names(only))
        return rows[len(rows) * (k - 1) // n_chunks: len(rows) * k // n_chunks]
    xmod, jmod = (importlib.import_module(m) for m in MODULES[mod_key])
    names = sorted(n for n in dir(xmod) if not n.startswith("_") and hasattr(jmod, n)
                   and callable(getattr(xmod, n)) and not inspect.ismodule(getattr(xmod, n))
                   and not isinstance(getattr(xmod, n), enum.EnumMeta)   # (options' enums)
                   and n not in SKIP.get(mod_key, ()) and (not only or n in only))
    names = names[len(names) * (k - 1) // n_chunks: len(names) * k // n_chunks]
    return [(n, getattr(xmod, n), getattr(jmod, n)) for n in names]


def chunk_arg(s):
    """--chunk's value "k/n" -> (k, n): a run of a long module in n pieces (1 <= k <= n)."""
    k, n = (int(v) for v in s.split("/"))
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"--chunk {s}: want k/n with 1 <= k <= n")
    return k, n


def case_name(mod_key, name, dt, nd, kw):
    return f"{mod_key}.{name}({dt}, {nd}-d{', ' if kw else ''}" \
           f"{', '.join(f'{k}={v}' for k, v in kw.items())})"


def module_list(s):
    """--module's value: keys of MODULES; "stats" stands for every distribution."""
    keys = [k for m in s.split(",") for k in (
        [f"stats.{d}" for d in STATS] if m == "stats" else [m])]
    bad = [k for k in keys if k not in MODULES]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown module(s) {bad}; known: {sorted(MODULES)}")
    return keys


def sweep(args):
    import jax
    jax.config.update("jax_enable_x64", True)
    import xforms as xf
    from xforms.exec import tiered
    tiered._submit = lambda exe: None          # the fast tier only: no background compiles
    signal.signal(signal.SIGALRM, _alarm)
    counts, diffs, notes = collections.Counter(), [], []
    names_checked = 0
    for mod_key in args.module:
        for name, xfn, jfn in public_names(mod_key, args.names, args.chunk):
            n, keywords = arity(jfn)
            if not n or n > 3:
                counts["not exercised (no array signature)"] += 1
                continue
            names_checked += 1
            for dt in args.dtypes + [d for d in EXTRA_DTYPES.get(mod_key, ())
                                     if args.extra and d not in args.dtypes]:
                for nd in (0, 1, 2):
                    operands = [inputs(dt, nd, k, args.empty) for k in range(n)]
                    if (mod_key, name, dt, nd) in HANGS:
                        counts["not called (jax hangs: HANGS)"] += 1
                        continue
                    for kw in variants(keywords, nd):
                        case = case_name(mod_key, name, dt, nd, kw)
                        if args.verbose:
                            print("  ..", case, flush=True)
                        j = call(jfn, operands, kw)
                        for label, wrap in runners(xf, args.tiers):
                            x = call(wrap(lambda *a, f=xfn: f(*a, **kw)),
                                     operands, {})
                            kind, what = classify(j, x)
                            if label != "eager" and (kind in ("DIFF", "accepted", CLASS) or
                                                     kind.startswith("refused")):
                                # jax itself differs under jit at some edges (jnp.int32 of
                                # a NumPy array is NumPy's cast eagerly, XLA's convert under
                                # jit; fftfreq's n must be concrete; jnp.issubdtype reads a
                                # traced dtype argument's dtype where it refuses a NumPy
                                # array): a jitted xforms call answers to jax.jit
                                jj = call(jax.jit(lambda *a, f=jfn: f(*a, **kw)),
                                          operands, {})
                                if classify(jj, x)[0] in ("same", "both raise"):
                                    kind, what = classify(jj, x)
                            allowed = (ALLOWED.get((mod_key, name, dt))
                                       or ALLOWED.get((mod_key, name)))
                            allowed = allowed if kind.startswith(("DIFF", "refused", CLASS)) \
                                else None
                            counts[kind + (" allowed" if allowed else "")] += 1
                            if kind == CLASS:
                                counts[f"  class pair {what.split(':')[0]}"] += 1
                            if kind in ("DIFF", CLASS):
                                line = f"{case} [{label}]: {what}"
                                if allowed:
                                    line += f"  (allowed: {allowed})"
                                diffs.append((bool(allowed), line))
                                print("ALLOWED" if allowed else
                                      "DIFF   " if kind == "DIFF" else "CLASS  ", line, flush=True)
                            elif kind.startswith(("refused", "accepted")) and args.verbose:
                                notes.append(f"{case} [{label}]: {kind}: {what}"
                                             + (f"  (allowed: {allowed})" if allowed else ""))
                                print("  ", notes[-1], flush=True)
    return names_checked, counts, diffs, notes


def exc_family(e):
    """The built-in exception class a user's `except` would name for `e`: the first class of
    its MRO defined by Python itself (jax.errors.ConcretizationTypeError -> TypeError)."""
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def classify(j, x, loose=1):
    if j[0] == "err" and x[0] == "err":
        # a user's `except` of jax's (built-in) class must catch xforms' error too
        fam = exc_family(j[1])
        if isinstance(x[1], fam) or isinstance(j[1], Timeout):
            return "both raise", None
        xmsg = str(x[1]).splitlines()[0][:80] if str(x[1]) else ""
        return CLASS, f"jax {fam.__name__} / xforms {type(x[1]).__name__}: jax " \
                      f"{type(j[1]).__name__} {str(j[1])[:80]!r}, xforms {xmsg!r}"
    if j[0] == "err":
        return "accepted", f"jax: {type(j[1]).__name__}: {str(j[1])[:100]}"
    if x[0] == "err":
        e = x[1]
        kind = "refused (NotImplementedError)" if isinstance(e, NotImplementedError) \
            else "refused"
        return kind, f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    why = compare(j[1], x[1], loose)
    return ("same", None) if why is None else ("DIFF", why)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--module", default=",".join(MODULES), type=module_list,
                    help="numpy,lax,nn,special,linalg,fft,scipy_linalg,operators,methods,stats "
                         "(or stats.norm)")
    ap.add_argument("--names", type=lambda s: set(s.split(",")), default=None)
    ap.add_argument("--chunk", default=(1, 1), type=chunk_arg,
                    help="k/n: the k-th of n alphabetical slices of each module's names")
    ap.add_argument("--dtypes", default=None, type=lambda s: s.split(","),
                    help=f"default {','.join(DTYPES)} (and EXTRA_DTYPES' per module)")
    ap.add_argument("--compiled", action="store_true", help="also jit's compiled tier")
    ap.add_argument("--tiers", type=lambda s: s.split(","), default=None,
                    help="eager,jit,compiled: the tiers called (default eager,jit, with "
                         "--compiled all three); --tiers compiled: the compiled tier alone")
    ap.add_argument("--empty", action="store_true",
                    help="rank-1 and rank-2 operands of shapes (0,) and (0, 3) (rank 0 kept)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.extra = args.dtypes is None       # (EXTRA_DTYPES with the default dtypes only)
    args.dtypes = args.dtypes or list(DTYPES)
    if args.tiers is None:
        args.tiers = ["eager", "jit"] + (["compiled"] if args.compiled else [])
    bad = set(args.tiers) - {"eager", "jit", "compiled"}
    if bad:
        ap.error(f"--tiers: unknown {sorted(bad)}; known: eager, jit, compiled")
    names_checked, counts, diffs, notes = sweep(args)     # (each line printed as found)
    return summary(names_checked, counts, diffs)


def summary(names_checked, counts, diffs):
    """Print the counts; -> the exit status (1 when a difference is not allow-listed)."""
    print(f"\nnames checked: {names_checked}")
    for k, v in sorted(counts.items()):
        print(f"  {k}: {v}")
    return 1 if any(not a for a, _ in diffs) else 0


if __name__ == "__main__":
    sys.exit(main())
