"""The functions of the process-history fuzzer (special_history.py): every special-function
primitive (`SCALAR_IMPLS` of xforms/primitives/special/functions.py, and lgamma, erf, erfc,
erf_inv, which lower through libm names or inline), the Bessel functions, and the complex
elementwise functions -- each with its xforms spelling, an independent reference (scipy's
or NumPy's ufunc: neither shares xforms' compiled code), and the inputs where the two
agree to a loose tolerance.  The tolerance is there to tell functions apart, not rounding:
a program served another function's code (gammainc's for gammaincc, i0e's for i1e)
misses by far more.

    FUNCTIONS["igammac"].xf(a, x)     # xforms.lax.igammac
    SIBLINGS                           # pairs that share a body, a factory, a formula
"""
import numpy as np


class Fn:
    """`xf(*args)` (traceable), `ref(*args)` (NumPy/scipy), `domain`: one (low, high) per
    operand (an int pair draws integers: a Bessel order), `kind`: "f" or "c"."""

    def __init__(self, xf, ref, domain, kind="f"):
        self.xf, self.ref, self.domain, self.kind = xf, ref, domain, kind


def _sp(name):
    def ref(*xs):
        import scipy.special
        with np.errstate(all="ignore"):
            return getattr(scipy.special, name)(*xs)
    ref.__name__ = name
    return ref


def _lax(name):
    def xf(*xs):
        from xforms import lax
        return getattr(lax, name)(*xs)
    xf.__name__ = name
    return xf


def _xs(name):
    def xf(*args):
        import xforms.scipy.special as xsp
        return getattr(xsp, name)(*args)
    xf.__name__ = name
    return xf


def _xnp(name):
    def xf(*xs):
        import xforms.numpy as xnp
        return getattr(xnp, name)(*xs)
    xf.__name__ = name
    return xf


def _np(name):
    def ref(*xs):
        with np.errstate(all="ignore"):
            return getattr(np, name)(*xs)
    ref.__name__ = name
    return ref


def _logaddexp_ref(x, y):
    return np.logaddexp(x, y)


A, X = (0.5, 5.0), (0.1, 8.0)
ORDER = (0, 3)              # integer Bessel orders, as floats
REAL = {
    # SCALAR_IMPLS (libm/special.py, libm/bessel.py, igamma_grad.py through ops/special.py)
    "digamma": Fn(_lax("digamma"), _sp("psi"), [(0.5, 6.0)]),
    "zeta": Fn(_lax("zeta"), _sp("zeta"), [(1.5, 6.0), (0.5, 3.0)]),
    "erfc_inv": Fn(_xs("erfcinv"), _sp("erfcinv"), [(0.1, 1.9)]),
    "igamma": Fn(_lax("igamma"), _sp("gammainc"), [A, X]),
    "igammac": Fn(_lax("igammac"), _sp("gammaincc"), [A, X]),
    "igamma_grad_a": Fn(_lax("igamma_grad_a"), None, [A, X]),      # (reference: below)
    "betainc": Fn(_lax("betainc"), _sp("betainc"), [A, A, (0.05, 0.95)]),
    "bessel_i0e": Fn(_lax("bessel_i0e"), _sp("i0e"), [(-6.0, 6.0)]),
    "bessel_i1e": Fn(_lax("bessel_i1e"), _sp("i1e"), [(-6.0, 6.0)]),
    "bessel_jn": Fn(_xs("jn"), _sp("jv"), [ORDER, (0.5, 8.0)]),
    "bessel_yn": Fn(_xs("yn"), _sp("yn"), [ORDER, (0.5, 8.0)]),
    "bessel_iv": Fn(_xs("iv"), _sp("iv"), [(0.0, 3.0), (0.5, 6.0)]),
    "bessel_ive": Fn(_xs("ive"), _sp("ive"), [(0.0, 3.0), (0.5, 6.0)]),
    "logaddexp": Fn(_xnp("logaddexp"), _logaddexp_ref, [(-5.0, 5.0), (-5.0, 5.0)]),
    # the other special primitives (libm's names; erf_inv inlined)
    "lgamma": Fn(_lax("lgamma"), _sp("gammaln"), [(0.5, 6.0)]),
    "erf": Fn(_lax("erf"), _sp("erf"), [(-2.0, 2.0)]),
    "erfc": Fn(_lax("erfc"), _sp("erfc"), [(-2.0, 2.0)]),
    "erf_inv": Fn(_lax("erf_inv"), _sp("erfinv"), [(-0.9, 0.9)]),
    # Bessel functions built on them
    "i0": Fn(_xs("i0"), _sp("i0"), [(-6.0, 6.0)]),
    "i1": Fn(_xs("i1"), _sp("i1"), [(-6.0, 6.0)]),
    "j0": Fn(_xs("j0"), _sp("j0"), [(0.5, 8.0)]),
    "j1": Fn(_xs("j1"), _sp("j1"), [(0.5, 8.0)]),
    "y0": Fn(_xs("y0"), _sp("y0"), [(0.5, 8.0)]),
    "y1": Fn(_xs("y1"), _sp("y1"), [(0.5, 8.0)]),
}

Z = (-1.5, 1.5)             # real and imaginary parts of a complex operand
COMPLEX = {name: Fn(_xnp(name), _np(name), [Z], "c") for name in (
    "exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos",
    "arctan", "arcsinh", "arccosh", "arctanh", "expm1", "log1p", "reciprocal", "square")}
COMPLEX["power"] = Fn(_xnp("power"), _np("power"), [Z, Z], "c")
COMPLEX["divide"] = Fn(_xnp("divide"), _np("divide"), [Z, Z], "c")
COMPLEX["multiply"] = Fn(_xnp("multiply"), _np("multiply"), [Z, Z], "c")

FUNCTIONS = {**REAL, **{"c_" + k: v for k, v in COMPLEX.items()}}

# functions that share what a cache might key on: one factory's closures (igamma,
# igammac), one body text and arity (every pair of one arity and dtype: `np.float32(f(a0,
# a1))`), one formula scaled (i0/i0e, iv/ive), one kernel name's neighbours
SIBLINGS = [("igamma", "igammac"), ("igamma", "igamma_grad_a"), ("erf", "erfc"),
            ("erf_inv", "erfc_inv"), ("bessel_i0e", "bessel_i1e"), ("i0", "bessel_i0e"),
            ("i1", "bessel_i1e"), ("i0", "i1"), ("bessel_iv", "bessel_ive"),
            ("bessel_jn", "bessel_yn"), ("j0", "j1"), ("y0", "y1"), ("lgamma", "digamma"),
            ("zeta", "igamma"), ("betainc", "igamma"), ("logaddexp", "igammac"),
            ("c_exp", "c_expm1"), ("c_log", "c_log1p"), ("c_sin", "c_cos"),
            ("c_sinh", "c_cosh"), ("c_tan", "c_tanh"), ("c_arcsin", "c_arccos"),
            ("c_arcsinh", "c_arccosh"), ("c_arctan", "c_arctanh"), ("c_sqrt", "c_reciprocal"),
            ("c_divide", "c_multiply"), ("c_power", "c_multiply")]


def _igamma_grad_a_ref(a, x):
    """d/da P(a, x) by a central difference of scipy's gammainc in float64 (h ~ 1e-5:
    about 1e-9 relative, far inside the float32 tolerance and enough for float64's)."""
    import scipy.special
    a64, x64 = np.asarray(a, np.float64), np.asarray(x, np.float64)
    h = 1e-5 * np.maximum(a64, 1.0)
    return (scipy.special.gammainc(a64 + h, x64) - scipy.special.gammainc(a64 - h, x64)) / (2 * h)


REAL["igamma_grad_a"].ref = _igamma_grad_a_ref

# relative tolerance by dtype (of the array's largest reference value, so a value near a
# Bessel function's zero is not asked for more digits than the function has)
RTOL = {"float32": 2e-3, "float64": 1e-6, "complex64": 2e-3, "complex128": 1e-6}


def inputs(fn, dtype, rng, n):
    """`n` inputs of each operand of `fn` in its domain, of `dtype` (complex dtypes: both
    parts drawn)."""
    out = []
    for lo, hi in fn.domain:
        if isinstance(lo, int):
            v = rng.integers(lo, hi + 1, n).astype(dtype)
        elif fn.kind == "c":
            v = (rng.uniform(lo, hi, n) + 1j * rng.uniform(lo, hi, n)).astype(dtype)
        else:
            v = rng.uniform(lo, hi, n).astype(dtype)
        out.append(v)
    return out


def reference(fn, args, dtype):
    """The reference values at `args`, in float64/complex128 where the operands are
    upcast (scipy's float32 loops are float64 loops rounded; the comparison is loose)."""
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    with np.errstate(all="ignore"):
        return np.asarray(fn.ref(*(np.asarray(a, wide) for a in args)))


def agrees(got, want, dtype):
    """Whether `got` equals `want` to RTOL of the largest |want| (elementwise, NaNs where
    both are NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    scale = np.max(np.abs(want[np.isfinite(want)]), initial=1e-30)
    tol = RTOL[np.dtype(dtype).name]
    return bool(np.allclose(got, want, rtol=tol, atol=tol * scale, equal_nan=True))
