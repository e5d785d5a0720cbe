"""Elementwise special functions: lgamma, digamma, zeta, erf, erfc, erf_inv, erfc_inv, igamma,
igammac, betainc, bessel_i0e, bessel_i1e, bessel_jn, bessel_yn, bessel_iv, bessel_ive, and
logaddexp (a primitive for its derivative rule at infinite operands, JAX's).

Each is an elementwise primitive on real floating operands of one dtype (xforms.scipy.special
broadcasts and promotes first) with its rules in one block: abstract evaluation, a NumPy
implementation (scipy.special, imported on the first eager call: importing it costs more than the
rest of xforms), the jvp from the known derivative, batching, lowering facts.
lgamma, erf and erfc lower to libm's (their math names); erf_inv computes XLA's polynomial
(erf_inv_poly.py: the lowering inlines it, the eager tier runs its NumPy form), so its values
are JAX's to rounding.  The others' compiled implementation
is a scalar function of xforms/kernels/libm/special.py or xforms/kernels/libm/bessel.py (plain Python on
`math`), which
xforms/kernels/ops/special.py registers as the primitive's elementwise Numba implementation (the
xforms/kernels/user_prims.py path, which both emitters take before scalar rules): fused into loops
on the CPU, an inlined device function on CUDA.  `SCALAR_IMPLS` names it per primitive.

Derivatives with respect to shape parameters: igamma's and igammac's a through the
`igamma_grad_a` primitive (as JAX; its own a-derivative raises, as JAX's does; the scalar code
is xforms/primitives/special/igamma_grad.py); zeta's s and betainc's a and b raise NotImplementedError, as in JAX.

    >>> lgamma(np.array([0.5, 3.0]))          # [log(sqrt(pi)), log(2)]
"""
import math

import numpy as np

from .erf_inv_poly import erf_inv_composite, erf_inv_numpy
from .erfcx_poly import erfcx_composite
from .igamma_grad import igamma_grad_a as _igamma_grad_a_scalar

from ...core.facts import math_names
from ...transforms.jvp import defjvp
from .. import elementwise as ew
from ..elementwise.base import define

_real = lambda dt: dt.kind == "f"
SCALAR_IMPLS = {}            # primitive -> name of its scalar function in kernels/special_math


def _scipy_special():
    """scipy.special, imported when first needed (its import pulls in scipy's array-API
    layer and numpy.f2py: ~0.15 s, more than all of xforms' own modules)."""
    from scipy import special
    return special


def _ufunc(name):
    """scipy.special's ufunc `name`, looked up on the first call.

    >>> _ufunc("erf")(np.array([0.0]))      # imports scipy.special here, not at import
    array([0.])
    """
    def fn(*xs):
        return getattr(_scipy_special(), name)(*xs)
    fn.__name__ = name
    return fn


def _sp(fn):
    """A scipy.special ufunc (or its name, resolved on first use) as the NumPy
    implementation (the result keeps the dtype)."""
    if isinstance(fn, str):
        fn = _ufunc(fn)

    def impl(*xs):
        dt = np.result_type(*xs)
        with np.errstate(all="ignore"):
            return np.asarray(fn(*xs)).astype(dt)
    return impl


def _prim(name, fn, nargs=1, scalar=None, math=None, cost=40.0, kernel=False, vec=None):
    """An elementwise primitive: lowered through its libm name (`math`, a lowering fact)
    or else through the scalar function `scalar` of xforms/kernels/libm/special.py, of about
    `cost` ns per element (xforms/kernels/cpu/loop_cost.py; digamma 38 measured); `vec`:
    the branch-free function of xforms/kernels/libm/vecmath a CPU loop of 64+ elements calls
    instead (as exp's `vm_exp`; both CPU paths, the same bits).  With
    `kernel`, an un-jitted call on float arrays runs `jit`'s loop once it is compiled
    (xforms/core/eager/kernels.py): where that beats scipy's ufunc (see below)."""
    ek = "f" if kernel else None
    if math is not None:
        return define(name, _sp(fn), nargs, accept=_real, math=math_names(math, cmath=None),
                      eager_kernel=ek)
    p = define(name, _sp(fn), nargs, accept=_real, cost=cost, eager_kernel=ek, vec=vec)
    SCALAR_IMPLS[p] = scalar or name
    return p


def _c(v, like):
    """The Python float v as a literal of like's dtype (keeps float32 float32)."""
    return ew.like(float(v), like)


def _no_grad(prim, arg):
    def rule(*a, **k):
        raise NotImplementedError(f"the derivative of {prim} with respect to {arg} is not "
                                  "implemented (JAX neither provides it, or xforms not yet); "
                                  "wrap that argument in stop_gradient if it is a constant")
    return rule


# ---- gamma family ----------------------------------------------------------------------------
def _lgamma(x):
    """scipy's gammaln, but inf at -inf as JAX's and libm's lgamma (the compiled tier's)
    give: scipy's -inf there made the two tiers disagree."""
    return np.where(np.isneginf(x), np.inf, _ufunc("gammaln")(x))


# The primitives whose un-jitted calls run `jit`'s loop once it is built (`_prim`'s
# `kernel`): CPU ms at 10^6 float64 / float32, scipy's ufunc (NumPy form) -> the kernel,
# 2 threads, load 6 (2026-12-01): erf_inv 79 / 18 -> 9.2 / 3.4, lgamma 25 / 24 -> 14 / 14,
# digamma 21 / 20 -> 16 / 15, erf and erfc 20 -> 17 (on [-3, 3]; 5.5 on [0, 1]), zeta
# 286 / 329 -> 244 / 242, igamma(c) 137-186 -> 125-135, bessel_iv 466 -> 113-119,
# bessel_ive 265 -> 112-132; at 10^5, igamma_grad_a (np.vectorize) 906 / 1119 -> 27 / 25,
# bessel_jn 33 -> 10.  Not erfc_inv (15 -> 87 with session 33's scalar erfcinv; session
# 34's vectorised vm_erfcinv not measured as an eager kernel: un-jitted ndtri, scipy's, is
# under JAX's), betainc (148-205 -> 263), bessel_i0e / i1e (34-42 -> 66-70), bessel_yn
# (10^5: 3.5-5.2 -> 13): scipy's code is faster there.
lgamma_p = _prim("lgamma", _lgamma, math="lgamma", kernel=True)
def _digamma(x):
    """scipy's psi, but NaN at 0 as at the other poles (JAX's; scipy gives -inf there)."""
    return np.where(x == 0, np.nan, _ufunc("psi")(x))


digamma_p = _prim("digamma", _digamma, kernel=True)
def _zeta(x, q):
    """scipy's zeta with JAX's (XLA's) edges, as the compiled tier's libm zeta: NaN where
    x or q is NaN or infinite (scipy: inf for zeta(nan, 0), 0 at q = inf), NaN for x < 1
    and for q <= 0 with a non-integer x; at the poles q = 0, -1, ..., -inf, inf only for
    an even integer x (the limit's sign is +- for the others: NaN); inf wherever x = 1.
    Below q = -32 libm zeta's three sums over positive arguments (scipy sums |q| terms);
    from x = 1e4 on, q > 0, the first term q^-x, the next ones below its 1e-43 (scipy's
    and jax's NaN past x ~ 1e13 / 1e16 is their corrections' overflow: docs/testing.md).

        >>> _zeta(np.array([2.0, 3.0]), np.array([1.0, -1e9 - 0.5]))    # [1.6449, 5e-19]
    """
    sz = _ufunc("zeta")
    x, q = np.asarray(x), np.asarray(q)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        far = (q < -32) & (q > -2.0 ** 52) & (x == np.floor(x))
        out = sz(x, np.where(far, 1.0, q).astype(q.dtype))
        if far.any():       # (in float64, summed in libm zeta's order: its bits)
            x64, p = x.astype(np.float64), np.where(far, -q, 40.5).astype(np.float64)
            f = p - np.floor(p)
            odd = np.where(np.fmod(x64, 2) == 0, 1.0, -1.0)
            folded = (sz(x64, 1 - f) + odd * sz(x64, f)) - odd * sz(x64, p + 1)
            out = np.where(far, folded, out)
        out = np.where((x >= 1e4) & (q > 0), np.power(q, -x), out)
        out = np.where(np.isnan(x) | np.isnan(q) | np.isinf(x) | (q == np.inf), np.nan, out)
        out = np.where((x < 1) | ((q <= 0) & (x != np.floor(x))), np.nan, out)
        even = (np.fmod(x, 2) == 0) & (x == np.floor(x))
        out = np.where((q <= 0) & (q == np.floor(q)), np.where(even, np.inf, np.nan), out)
        return np.where(x == 1, np.inf, out)


zeta_p = _prim("zeta", _zeta, 2, kernel=True)


def lgamma(x):
    return lgamma_p.bind(x)


def digamma(x):
    return digamma_p.bind(x)


def zeta(s, q):
    """Hurwitz zeta: sum over k >= 0 of (q + k)^-s."""
    s, q = ew.like(s, q), ew.like(q, s)
    return zeta_p.bind(s, q)


def trigamma(x):
    """psi'(x) = zeta(2, x) for x > 0; reflection psi'(x) = pi^2/sin^2(pi x) - psi'(1 - x)."""
    one = _c(1.0, x)
    neg = ew.lt(x, _c(0.5, x))
    xr = ew.select_n(neg, x, ew.sub(one, x))
    z = zeta(_c(2.0, x), xr)
    s = ew.sin(ew.mul(_c(math.pi, x), x))
    refl = ew.sub(ew.div(_c(math.pi ** 2, x), ew.mul(s, s)), z)
    return ew.select_n(neg, z, refl)


defjvp(lgamma_p, lambda t, ans, x: ew.mul(t, digamma(x)))
defjvp(digamma_p, lambda t, ans, x: ew.mul(t, trigamma(x)))
defjvp(zeta_p, _no_grad("zeta", "s"),
       lambda t, ans, s, q: ew.mul(t, ew.neg(ew.mul(s, zeta(ew.add(s, _c(1.0, s)), q)))))

# ---- error functions -------------------------------------------------------------------------
erf_p = _prim("erf", "erf", math="erf", kernel=True)
def erfc_numpy(x):
    """scipy's erfc, but erfcx(x) exp(-x^2) from x = 2 on, the square split exactly (x = h
    + l, h of 24 bits: exp(-h^2) exp(-(2h + l) l)): scipy's rounds x^2 inside its exp, up to
    5.7e-14 relative off on [5, 26] (as JAX's), where libm's erfc -- the compiled tier's, which
    un-jitted calls take once it is built -- is within 1.2 ulp and this within 2.7.  So an
    un-jitted erfc no longer moves by up to 250 ulp when its kernel arrives.

        >>> erfc_numpy(np.array([10.0]))        # 2.088487583762545e-45 (libm's bits)
    """
    sp = _scipy_special()
    x = np.asarray(x)
    xd = x.astype(np.float64)
    with np.errstate(all="ignore"):
        out = np.array(sp.erfc(xd), ndmin=1)
        far = np.array((xd >= 2.0) & (xd < 30.0), ndmin=1)     # (libm's 0 from 27.3 on)
        if far.any():
            a = np.array(xd, ndmin=1)[far]
            h = a.astype(np.float32).astype(np.float64)
            low = a - h
            out[far] = sp.erfcx(a) * np.exp(-h * h) * np.exp(-(2.0 * h + low) * low)
    out = out.reshape(x.shape)
    return out.astype(x.dtype) if x.dtype.kind == "f" else out


erfc_p = _prim("erfc", erfc_numpy, math="erfc", kernel=True)
# erfc_inv's loops of 64+ elements call vm_erfcinv (vecmath/erfcinv.py: branch-free, Giles'
# polynomials, the loop vectorises; jitted ndtri was ~3x JAX, issue #37), smaller ones and
# CUDA the scalar erfcinv, the same polynomials through libm's log
erfc_inv_p = _prim("erfc_inv", "erfcinv", scalar="erfcinv", cost=12.0, vec="vm_erfcinv")


def _erf_inv_impl(x):
    """XLA's polynomial on NumPy operands (erf_inv_poly.py: the compiled paths inline it)."""
    return erf_inv_numpy(x)


def _erf_inv_inline(eqn):
    """erf_inv's lowering: erf_inv_poly's composite, traced once per aval and inlined, so
    every path (Numba, direct LLVM, CUDA) fuses XLA's one-pass polynomial into its loop."""
    from ...transforms.tracing import trace_cached
    avals = [v.aval for v in eqn.invars]
    closed, _ = trace_cached((erf_inv_p, tuple(avals)),
                             lambda x: [erf_inv_composite(x)], avals)
    return closed


# eager_ns: its NumPy form's ~75 passes, 77 ns/element at 10^6 float64 (21 float32),
# 2026-12-01 (what an un-jitted call costs until its kernel, `jit`'s loop, is built: 9)
erf_inv_p = define("erf_inv", _erf_inv_impl, accept=_real, inline=_erf_inv_inline,
                   eager_ns=75.0, eager_kernel="f")


def _erfcx_inline(eqn):
    """erfcx's lowering: erfcx_poly's one-pass composite (the operations
    xforms.scipy.special.erfcx composed before it was a primitive: jit's bits), inlined."""
    from ...transforms.tracing import trace_cached
    avals = [v.aval for v in eqn.invars]
    closed, _ = trace_cached((erfcx_p, tuple(avals)),
                             lambda x: [erfcx_composite(x, erfc)], avals)
    return closed


# erfcx: un-jitted, scipy.special.erfcx (one C call: 25 ms at 10^6 float64 against JAX's 37,
# where the composite's ~35 NumPy passes took 72-82, issue #37); compiled, the composite
# inlined into the loop (its libm erfc beside the exp polynomials: the loop vectorises)
erfcx_p = define("erfcx", _sp("erfcx"), accept=_real, inline=_erfcx_inline, eager_ns=25.0)


def erf(x):
    return erf_p.bind(x)


def erfcx(x):
    """exp(x^2) erfc(x), accurate where erfc underflows; inf where exp(x^2) overflows."""
    return erfcx_p.bind(x)


def erfc(x):
    return erfc_p.bind(x)


def erf_inv(x):
    return erf_inv_p.bind(x)


def erfc_inv(x):
    return erfc_inv_p.bind(x)


def _gauss(x, c):
    """c * exp(-x^2)."""
    return ew.mul(_c(c, x), ew.exp(ew.neg(ew.mul(x, x))))


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
defjvp(erf_p, lambda t, ans, x: ew.mul(t, _gauss(x, _TWO_OVER_SQRT_PI)))
defjvp(erfc_p, lambda t, ans, x: ew.mul(t, _gauss(x, -_TWO_OVER_SQRT_PI)))
defjvp(erfcx_p, lambda t, ans, x: ew.mul(t, ew.sub(ew.mul(_c(2.0, x), ew.mul(x, ans)),
                                                  _c(_TWO_OVER_SQRT_PI, x))))
# (erf^-1)'(y) = 1 / erf'(x) = sqrt(pi)/2 exp(x^2) at x = erf^-1(y)
defjvp(erf_inv_p, lambda t, ans, y: ew.mul(t, ew.mul(_c(math.sqrt(math.pi) / 2, ans),
                                                     ew.exp(ew.mul(ans, ans)))))
defjvp(erfc_inv_p, lambda t, ans, y: ew.mul(t, ew.mul(_c(-math.sqrt(math.pi) / 2, ans),
                                                      ew.exp(ew.mul(ans, ans)))))

# ---- regularized incomplete gamma and beta ------------------------------------------------------
def _incomplete_gamma(name, upper):
    """scipy's gammainc/gammaincc with JAX's edges (as the compiled tier's libm): at x = 0
    P = 0 and Q = 1 and at x = inf P = 1 and Q = 0, for any a >= 0 (scipy: NaN at
    a = inf); where a = inf, P = 0 for x < 1 and NaN from x = 1 (a log x - lgamma(a) is
    inf - inf there; scipy: 0 throughout); NaN for a < 0, x < 0 or a = x = 0."""
    def fn(a, x):
        with np.errstate(invalid="ignore"):
            at_inf = np.where(x < 1, float(upper), np.nan)
            out = np.where(np.isposinf(a), at_inf, _ufunc(name)(a, x))
            out = np.where(x == 0, float(upper), np.where(x == np.inf, float(not upper), out))
            bad = (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | np.isnan(a) | np.isnan(x)
            return np.where(bad, np.nan, out)
    fn.__name__ = name
    return fn


igamma_p = _prim("igamma", _incomplete_gamma("gammainc", False), 2, scalar="gammainc",
                 kernel=True)
igammac_p = _prim("igammac", _incomplete_gamma("gammaincc", True), 2, scalar="gammaincc",
                  kernel=True)
igamma_grad_a_p = _prim("igamma_grad_a", np.vectorize(_igamma_grad_a_scalar, otypes=[float]),
                        2, kernel=True)
betainc_p = _prim("betainc", "betainc", 3)


def igamma(a, x):
    a, x = ew.like(a, x), ew.like(x, a)
    return igamma_p.bind(a, x)


def igammac(a, x):
    a, x = ew.like(a, x), ew.like(x, a)
    return igammac_p.bind(a, x)


def betainc(a, b, x):
    return betainc_p.bind(a, b, x)


def igamma_grad_a(a, x):
    """d/da P(a, x) (JAX's lax.igamma_grad_a)."""
    a, x = ew.like(a, x), ew.like(x, a)
    return igamma_grad_a_p.bind(a, x)


def _igamma_dx(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)."""
    one = _c(1.0, x)
    return ew.exp(ew.sub(ew.sub(ew.mul(ew.sub(a, one), ew.log(x)), x), lgamma(a)))


def _betainc_dx(a, b, x):
    """d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)."""
    one = _c(1.0, x)
    lbeta = ew.sub(ew.add(lgamma(a), lgamma(b)), lgamma(ew.add(a, b)))
    logs = ew.add(ew.mul(ew.sub(a, one), ew.log(x)), ew.mul(ew.sub(b, one), ew.log1p(ew.neg(x))))
    return ew.exp(ew.sub(logs, lbeta))


defjvp(igamma_p, lambda t, ans, a, x: ew.mul(t, igamma_grad_a(a, x)),
       lambda t, ans, a, x: ew.mul(t, _igamma_dx(a, x)))
defjvp(igammac_p, lambda t, ans, a, x: ew.neg(ew.mul(t, igamma_grad_a(a, x))),
       lambda t, ans, a, x: ew.neg(ew.mul(t, _igamma_dx(a, x))))
# d/dx dP/da = d/da dP/dx = dP/dx (log x - psi(a)); d/da of it is not provided (JAX neither)
defjvp(igamma_grad_a_p, _no_grad("igamma_grad_a", "a"),
       lambda t, ans, a, x: ew.mul(t, ew.mul(_igamma_dx(a, x), ew.sub(ew.log(x), digamma(a)))))
defjvp(betainc_p, _no_grad("betainc", "a"), _no_grad("betainc", "b"),
       lambda t, ans, a, b, x: ew.mul(t, _betainc_dx(a, b, x)))

# ---- exponentially scaled modified Bessel functions ---------------------------------------------
bessel_i0e_p = _prim("bessel_i0e", "i0e", scalar="i0e")
bessel_i1e_p = _prim("bessel_i1e", "i1e", scalar="i1e")


def bessel_i0e(x):
    return bessel_i0e_p.bind(x)


def bessel_i1e(x):
    return bessel_i1e_p.bind(x)


def _i1e_dx(ans, x):
    """i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x), and 1/2 at x = 0."""
    zero = ew.eq(x, _c(0.0, x))
    safe = ew.select_n(zero, x, _c(1.0, x))
    d = ew.sub(bessel_i0e(x), ew.mul(ans, ew.add(ew.sign(x), ew.div(_c(1.0, x), safe))))
    return ew.select_n(zero, d, _c(0.5, x))


defjvp(bessel_i0e_p, lambda t, ans, x: ew.mul(t, ew.sub(bessel_i1e(x), ew.mul(ew.sign(x), ans))))
defjvp(bessel_i1e_p, lambda t, ans, x: ew.mul(t, _i1e_dx(ans, x)))


# ---- Bessel functions of integer order (J, Y) and real order (I) ----------------------------------
def _jn_ref(n, x):
    """scipy's jv at integer orders, nan elsewhere (the kernel's domain)."""
    return np.where(n == np.floor(n), _scipy_special().jv(n, x), np.nan)


bessel_jn_p = _prim("bessel_jn", _jn_ref, 2, scalar="jn", kernel=True)
bessel_yn_p = _prim("bessel_yn", lambda n, x: _scipy_special().yn(np.trunc(n), x), 2,
                    scalar="yn")
bessel_iv_p = _prim("bessel_iv", "iv", 2, scalar="iv", kernel=True)
bessel_ive_p = _prim("bessel_ive", "ive", 2, scalar="ive", kernel=True)


def _order_args(n, x):
    return ew.like(n, x), ew.like(x, n)


def bessel_jn(n, x):
    """J_n(x) for integer-valued n (a float operand)."""
    return bessel_jn_p.bind(*_order_args(n, x))


def bessel_yn(n, x):
    return bessel_yn_p.bind(*_order_args(n, x))


def bessel_iv(v, x):
    return bessel_iv_p.bind(*_order_args(v, x))


def bessel_ive(v, x):
    return bessel_ive_p.bind(*_order_args(v, x))


def _neighbours(f, n, x, sign):
    """(f(n - 1, x) + sign f(n + 1, x)) / 2: the derivative of every Bessel function in x."""
    one = _c(1.0, n)
    return ew.mul(_c(0.5, x), ew.add(f(ew.sub(n, one), x), ew.mul(_c(sign, x),
                                                                 f(ew.add(n, one), x))))


# J_n' = (J_{n-1} - J_{n+1}) / 2 (J_0' = -J_1 as J_-1 = -J_1), Y_n likewise,
# I_v' = (I_{v-1} + I_{v+1}) / 2 and (e^-|x| I_v)' = (ive_{v-1} + ive_{v+1}) / 2 - sign(x) ive_v
defjvp(bessel_jn_p, _no_grad("jn", "n"),
       lambda t, ans, n, x: ew.mul(t, _neighbours(bessel_jn, n, x, -1.0)))
defjvp(bessel_yn_p, _no_grad("yn", "n"),
       lambda t, ans, n, x: ew.mul(t, _neighbours(bessel_yn, n, x, -1.0)))
defjvp(bessel_iv_p, _no_grad("iv", "v"),
       lambda t, ans, v, x: ew.mul(t, _neighbours(bessel_iv, v, x, 1.0)))
defjvp(bessel_ive_p, _no_grad("ive", "v"),
       lambda t, ans, v, x: ew.mul(t, ew.sub(_neighbours(bessel_ive, v, x, 1.0),
                                             ew.mul(ew.sign(x), ans))))


# ---- logaddexp: a primitive for JAX's derivative at infinite operands ------------------------------
# d out = t_x exp(r(x) - r(out)) + t_y exp(r(y) - r(out)), r replacing +inf by 0: JAX's rule,
# finite where one operand is +inf (a composition cannot carry x's tangent through x = inf).
logaddexp_p = _prim("logaddexp", np.logaddexp, 2, cost=3.5)


def logaddexp(x, y):
    x, y = ew.like(x, y), ew.like(y, x)
    return logaddexp_p.bind(x, y)


def _no_posinf(z):
    return ew.select_n(ew.eq(z, _c(math.inf, z)), z, _c(0.0, z))


def _logaddexp_weight(z, ans):
    return ew.exp(ew.sub(_no_posinf(z), _no_posinf(ans)))


defjvp(logaddexp_p, lambda t, ans, x, y: ew.mul(t, _logaddexp_weight(x, ans)),
       lambda t, ans, x, y: ew.mul(t, _logaddexp_weight(y, ans)))
