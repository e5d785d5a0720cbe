"""`xforms.scipy.special`: jax.scipy.special's functions (plus scipy's erfcinv).

Primitives (xforms/primitives/special.py, compiled from xforms/kernels/libm/special.py on the CPU and
on CUDA): gammaln, digamma, zeta, erf, erfc, erfinv, erfcinv, gammainc, gammaincc, betainc,
i0e, i1e, bessel_jn, bessel_yn, bessel_iv, bessel_ive.  Everything else is composed from them and the elementwise primitives, so it fuses
and differentiates like user code.  Arguments broadcast and promote as in JAX (integers
become floating).  Accuracy: see xforms/kernels/libm/special.py (errors against scipy.special).

    >>> import xforms.scipy.special as xsp
    >>> xsp.gammaln(xnp.array([0.5, 10.0]))

Not provided: hyp1f1, hyp2f1, expn, dawsn, fresnel, owens_t, sici, sph_harm_y, wofz.
Derivatives in shape parameters (zeta's s, gammainc's a, betainc's a and b) raise
NotImplementedError.
"""
import math

import numpy as np

from .. import lax
from .. import numpy as xnp
from .. import nn as _nn
from ..custom import custom_jvp
from ..nn import logsumexp  # noqa: F401  (jax.scipy.special names)
from ..numpy._util import aval, promote, returns_arrays
from ..primitives import elementwise as ew
from ..primitives import special as ps


def _floats(*xs, name):
    return promote(*xs, name=name, inexact=True)


def _c(v, like):
    return ew._like(float(v), like)


# ---- gamma and relatives -----------------------------------------------------------------------
@returns_arrays
def gammaln(x):
    """log|Gamma(x)|."""
    (x,) = _floats(x, name="gammaln")
    return ps.lgamma(x)


loggamma = gammaln


@returns_arrays
def gammasgn(x):
    """The sign of Gamma(x): 1 for x > 0, alternating between the poles for x < 0 (nan at
    the poles 0, -1, ...)."""
    (x,) = _floats(x, name="gammasgn")
    fl = xnp.floor(x)
    odd = xnp.remainder(fl, 2.0) != 0          # Gamma < 0 on (-1, 0), (-3, -2), ...
    one = xnp.ones_like(x)
    out = xnp.where(x > 0, one, xnp.where(odd, -one, one))
    return xnp.where((x <= 0) & (x == fl), xnp.nan, out)


@returns_arrays
def gamma(x):
    """Gamma(x) = gammasgn(x) exp(gammaln(x))."""
    (x,) = _floats(x, name="gamma")
    return gammasgn(x) * xnp.exp(ps.lgamma(x))


@returns_arrays
def digamma(x):
    """psi(x) = d/dx log Gamma(x)."""
    (x,) = _floats(x, name="digamma")
    return ps.digamma(x)


psi = digamma


@returns_arrays
def zeta(x, q=None):
    """Hurwitz zeta sum_k (q + k)^-x (Riemann's when q is None)."""
    if q is None:
        (x,) = _floats(x, name="zeta")
        return ps.zeta(x, _c(1.0, x))
    x, q = _floats(x, q, name="zeta")
    return ps.zeta(x, q)


@returns_arrays
def polygamma(n, x):
    """The n-th derivative of digamma: psi(x) for n = 0, else (-1)^(n+1) n! zeta(n+1, x)."""
    n, x = _floats(n, x, name="polygamma")
    n1 = n + 1
    one = xnp.ones_like(x)
    sign = xnp.where(xnp.remainder(n, 2.0) == 0, -one, one)
    higher = sign * xnp.exp(ps.lgamma(n1)) * ps.zeta(n1, x)
    return xnp.where(n == 0, ps.digamma(x), higher)


@returns_arrays
def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = _floats(a, b, name="betaln")
    return ps.lgamma(a) + ps.lgamma(b) - ps.lgamma(a + b)


@returns_arrays
def beta(a, b):
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    a, b = _floats(a, b, name="beta")
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * xnp.exp(betaln(a, b))


@returns_arrays
def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b)."""
    a, b, x = _floats(a, b, x, name="betainc")
    return ps.betainc(a, b, x)


@returns_arrays
def gammainc(a, x):
    """Regularized lower incomplete gamma P(a, x)."""
    a, x = _floats(a, x, name="gammainc")
    return ps.igamma(a, x)


@returns_arrays
def gammaincc(a, x):
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    a, x = _floats(a, x, name="gammaincc")
    return ps.igammac(a, x)


@returns_arrays
def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (a Python int)."""
    d = int(d)
    (a,) = _floats(a, name="multigammaln")
    out = _c(d * (d - 1) / 4 * math.log(math.pi), a)
    for j in range(d):
        out = out + ps.lgamma(a - _c(j / 2, a))
    return out


@returns_arrays
def factorial(n, exact=False):
    """n! = Gamma(n + 1), 0 for n < 0."""
    if exact:
        raise NotImplementedError("factorial(exact=True) (JAX neither): use exact=False")
    (n,) = _floats(n, name="factorial")
    return xnp.where(n < 0, 0.0, xnp.exp(ps.lgamma(n + 1)))


@returns_arrays
def comb(N, k, exact=False, repetition=False):
    """Binomial coefficient C(N, k) through gammaln; 0 outside 0 <= k <= N."""
    if exact:
        raise NotImplementedError("comb(exact=True): use exact=False")
    N, k = _floats(N, k, name="comb")
    if repetition:
        N = N + k - 1
    out = xnp.exp(ps.lgamma(N + 1) - ps.lgamma(k + 1) - ps.lgamma(N - k + 1))
    return xnp.where((k < 0) | (k > N), 0.0, out)


# ---- error functions and the normal distribution -------------------------------------------------
@returns_arrays
def erf(x):
    (x,) = _floats(x, name="erf")
    return ps.erf(x)


@returns_arrays
def erfc(x):
    (x,) = _floats(x, name="erfc")
    return ps.erfc(x)


@returns_arrays
def erfinv(x):
    (x,) = _floats(x, name="erfinv")
    return ps.erf_inv(x)


@returns_arrays
def erfcinv(x):
    (x,) = _floats(x, name="erfcinv")
    return ps.erfc_inv(x)


_SQRT1_2 = 1 / math.sqrt(2)


@returns_arrays
def ndtr(x):
    """Standard normal cdf: erfc(-x / sqrt(2)) / 2."""
    (x,) = _floats(x, name="ndtr")
    return _c(0.5, x) * ps.erfc(x * _c(-_SQRT1_2, x))


@returns_arrays
def ndtri(p):
    """Inverse of ndtr: -sqrt(2) erfcinv(2p) (full relative precision in both tails)."""
    (p,) = _floats(p, name="ndtri")
    return _c(-math.sqrt(2), p) * ps.erfc_inv(p * _c(2.0, p))


@returns_arrays
def log_ndtr(x):
    """log(ndtr(x)), accurate in both tails: log1p(-ndtr(-x)) for x > 0, the asymptotic
    series -x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - 15/x^6 + 105/x^8) for
    x < -20 (-10 in float32; ndtr underflows further out), log(ndtr(x)) between."""
    (x,) = _floats(x, name="log_ndtr")
    lo = -10.0 if aval(x).dtype == np.float32 else -20.0
    tail = x < lo
    xt = xnp.where(tail, x, lo)                  # each branch sees safe arguments
    r = 1.0 / (xt * xt)
    series = 1.0 - r * (1.0 - r * (3.0 - r * (15.0 - r * 105.0)))
    asym = -0.5 * xt * xt - xnp.log(-xt) - 0.5 * math.log(2 * math.pi) + xnp.log(series)
    xm = xnp.where(tail, lo, x)
    pos = xm > 0
    mid = xnp.where(pos, xnp.log1p(-ndtr(xnp.where(pos, -xm, 0.0))),
                    xnp.log(ndtr(xnp.where(pos, 0.0, xm))))
    return xnp.where(tail, asym, mid)


# ---- logistic, logs and entropies --------------------------------------------------------------
@returns_arrays
def expit(x):
    """1 / (1 + exp(-x))."""
    (x,) = _floats(x, name="expit")
    return ew.logistic(x)


@returns_arrays
def logit(x):
    """log(x / (1 - x))."""
    (x,) = _floats(x, name="logit")
    return xnp.log(x / (1 - x))


@returns_arrays
def softmax(x, *, axis=None):
    """exp(x) / sum(exp(x)) over `axis`: by default over all elements, as
    jax.scipy.special.softmax (jax.nn.softmax's default is the last axis).
    >>> softmax(np.array([[1.0, 2.0], [3.0, 4.0]])).sum() -> 1.0"""
    return _nn.softmax(x, axis=axis)


def log_softmax(x, *, axis=None):
    """x - logsumexp(x) over `axis`, by default all elements (jax.scipy.special)."""
    return _nn.log_softmax(x, axis=axis)


def _x_times(log, safe_y, dlog):
    """x log(y), 0 where x == 0 whatever log(y) is, with jax.scipy.special's derivatives:
    log(y) dx + x dlog(y) dy, taken as written (at x == 0 and the pole of log they are
    -inf and nan, as JAX's; a select would make them 0)."""
    @custom_jvp
    def f(x, y):
        zero = x == 0
        return xnp.where(zero, 0.0, x * log(xnp.where(zero, safe_y, y)))

    @f.defjvp
    def _(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), tx * log(y) + ty * x * dlog(y)
    return f


_xlogy = _x_times(xnp.log, 1.0, lambda y: 1.0 / y)
_xlog1py = _x_times(xnp.log1p, 0.0, lambda y: 1.0 / (1.0 + y))


def xlogy(x, y):
    """x log(y), 0 where x == 0 (even for y == 0).  >>> xlogy(0.0, 0.0) -> 0.0"""
    return _xlogy(*_floats(x, y, name="xlogy"))


@returns_arrays
def xlog1py(x, y):
    """x log1p(y), 0 where x == 0.  >>> xlog1py(0.0, -1.0) -> 0.0"""
    return _xlog1py(*_floats(x, y, name="xlog1py"))


@returns_arrays
def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0."""
    (x,) = _floats(x, name="entr")
    pos = x > 0
    v = -x * xnp.log(xnp.where(pos, x, 1.0))
    return xnp.where(pos, v, xnp.where(x == 0, 0.0, -xnp.inf))


@returns_arrays
def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 at x == 0, y >= 0; inf otherwise."""
    x, y = _floats(x, y, name="rel_entr")
    both = (x > 0) & (y > 0)
    v = x * xnp.log(xnp.where(both, x, 1.0) / xnp.where(both, y, 1.0))
    return xnp.where(both, v, xnp.where((x == 0) & (y >= 0), 0.0, xnp.inf))


@returns_arrays
def kl_div(x, y):
    """x log(x / y) - x + y for x, y > 0; y at x == 0, y >= 0; inf otherwise."""
    x, y = _floats(x, y, name="kl_div")
    both = (x > 0) & (y > 0)
    v = x * xnp.log(xnp.where(both, x, 1.0) / xnp.where(both, y, 1.0)) - x + y
    return xnp.where(both, v, xnp.where((x == 0) & (y >= 0), y, xnp.inf))


# ---- modified Bessel functions of order 0 and 1 ------------------------------------------------
@returns_arrays
def i0e(x):
    (x,) = _floats(x, name="i0e")
    return ps.bessel_i0e(x)


@returns_arrays
def i1e(x):
    (x,) = _floats(x, name="i1e")
    return ps.bessel_i1e(x)


@returns_arrays
def i0(x):
    """I_0(x) = exp(|x|) i0e(x)."""
    (x,) = _floats(x, name="i0")
    return xnp.exp(xnp.abs(x)) * ps.bessel_i0e(x)


@returns_arrays
def i1(x):
    """I_1(x) = exp(|x|) i1e(x)."""
    (x,) = _floats(x, name="i1")
    return xnp.exp(xnp.abs(x)) * ps.bessel_i1e(x)


# ---- Bessel functions: J_n, Y_n of integer order, I_v of real order (scipy's names) -----------
def _order(n, x, name):
    return _floats(n, x, name=name)


@returns_arrays
def jn(n, x):
    """J_n(x), Bessel function of the first kind of integer order n (nan for non-integer n:
    scipy's jn also takes real orders, as its jv).  d/dx J_n = (J_{n-1} - J_{n+1}) / 2.

        >>> jn(2, xnp.array([1.0, 5.0]))
    """
    return ps.bessel_jn(*_order(n, x, "jn"))


@returns_arrays
def yn(n, x):
    """Y_n(x), Bessel function of the second kind of integer order n (truncated, as in
    scipy); -inf at 0, nan for x < 0."""
    n, x = _order(n, x, "yn")
    return ps.bessel_yn(xnp.trunc(n), x)


@returns_arrays
def iv(v, x):
    """I_v(x), modified Bessel function of the first kind of real order v (x < 0 only for
    integer v, as in scipy)."""
    return ps.bessel_iv(*_order(v, x, "iv"))


@returns_arrays
def ive(v, x):
    """exp(-|x|) I_v(x)."""
    return ps.bessel_ive(*_order(v, x, "ive"))


def j0(x):
    return jn(0, x)


def j1(x):
    return jn(1, x)


def y0(x):
    return yn(0, x)


def y1(x):
    return yn(1, x)


@returns_arrays
def bessel_jn(z, *, v, n_iter=50):
    """J_0(z) ... J_v(z) stacked along a new leading axis (shape (v + 1, *z.shape)), as
    jax.scipy.special.bessel_jn.  `n_iter` is accepted for JAX's signature and unused: the
    kernel picks its own recurrence length, so large |z| stays accurate (JAX's default
    n_iter=50 loses accuracy beyond |z| ~ 50) and J(0) is exact (JAX gives nan there).

        >>> bessel_jn(xnp.array([1.0, 2.0]), v=2).shape
        (3, 2)
    """
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"bessel_jn: the order v must be a Python int, got {v!r}")
    if v < 0:
        raise ValueError(f"bessel_jn: the order v must be >= 0, got {v}")
    (z,) = _floats(z, name="bessel_jn")
    return xnp.stack([ps.bessel_jn(_c(k, z), z) for k in range(int(v) + 1)])


# ---- Pochhammer, Box-Cox, Bernoulli numbers ----------------------------------------------------
@custom_jvp
def _poch(z, m):
    return xnp.where(m == 0.0, xnp.ones_like(z), gamma(z + m) / gamma(z))


_poch.defjvps(lambda dz, ans, z, m: (digamma(z + m) - digamma(z)) * ans * dz,
              lambda dm, ans, z, m: digamma(z + m) * ans * dm)


@returns_arrays
def poch(z, m):
    """The rising factorial (z)_m = Gamma(z + m) / Gamma(z), 1 where m == 0 (real only, as
    in JAX); derivatives by digamma in both arguments.

        >>> poch(xnp.array([2.0, 3.0]), 2.0)     # [6, 12]
    """
    z, m = _floats(z, m, name="poch")
    if aval(z).dtype.kind == "c":
        raise ValueError("poch does not support complex-valued inputs")
    return _poch(z, m)


def _boxcox(log_term, lmbda):
    """(exp(lmbda t) - 1) / lmbda, t where lmbda == 0 (t = log x or log1p x)."""
    zero = lmbda == 0
    safe = xnp.where(zero, xnp.ones_like(lmbda), lmbda)
    return xnp.where(zero, log_term, xnp.expm1(safe * log_term) / safe)


@returns_arrays
def boxcox(x, lmbda):
    """The Box-Cox transform (x ** lmbda - 1) / lmbda, log(x) at lmbda == 0; nan for x <= 0.

        >>> boxcox(xnp.array([1.0, 4.0]), 0.5)    # [0, 2]
    """
    x, lmbda = _floats(x, lmbda, name="boxcox")
    return _boxcox(xnp.log(x), lmbda)


@returns_arrays
def boxcox1p(x, lmbda):
    """boxcox(1 + x, lmbda), accurate for small x; nan for x <= -1.

        >>> boxcox1p(xnp.array([0.0, 3.0]), 0.5)  # [0, 2]
    """
    x, lmbda = _floats(x, lmbda, name="boxcox1p")
    return _boxcox(xnp.log1p(x), lmbda)


def bernoulli(n):
    """The Bernoulli numbers B_0 ... B_n (float64; B_1 = -1/2, the odd ones beyond are 0),
    as jax.scipy.special.bernoulli.  n must be a concrete non-negative integer.  Even ones
    from B_m = (-1)^(m/2 + 1) 2 m! zeta(m) / (2 pi)^m (inf once they overflow).

        >>> bernoulli(4)     # [1, -1/2, 1/6, 0, -1/30]
    """
    import operator
    n = operator.index(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    out = np.zeros(n + 1)
    out[:3] = [1.0, -0.5, 1.0 / 6.0][:n + 1]
    m = np.arange(4, n + 1, 2)
    if m.size:
        zeta_m = np.asarray(zeta(m.astype(float)))
        log_mag = np.array([math.lgamma(v + 1) for v in m]) - m * math.log(2 * math.pi)
        with np.errstate(over="ignore"):
            mag = 2 * np.exp(log_mag) * zeta_m
        out[4::2] = np.where(m % 4 == 0, -mag, mag)
    return xnp.asarray(out)


# ---- erfcx and the exponential integrals -------------------------------------------------------
_EULER = 0.57721566490153286061
_SQRT_PI = math.sqrt(math.pi)


def _erfcx_pos(x):
    """exp(x^2) erfc(x) for x >= 0: the product below the point where erfc underflows
    (exp(x^2) from an exact square xh^2 and a small correction), the asymptotic series
    1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k above it."""
    f64 = aval(x).dtype == np.float64
    big, grid = (26.0, 4096.0) if f64 else (9.0, 64.0)
    small = xnp.where(x < big, x, 0.0)
    xh = xnp.floor(small * grid) / grid          # few enough bits that xh^2 is exact
    e = xnp.exp(xh * xh) * xnp.exp((small - xh) * (small + xh))
    near = e * ps.erfc(small)
    large = xnp.where(x < big, big, x)
    u = 0.5 / large / large
    series, term = xnp.ones_like(large), xnp.ones_like(large)
    for k in range(1, 10):
        term = -term * (2 * k - 1) * u
        series = series + term
    return xnp.where(x < big, near, series / (large * _SQRT_PI))


@custom_jvp
def _erfcx(x):
    neg = x < 0
    pos = _erfcx_pos(xnp.abs(x))
    with np.errstate(over="ignore"):
        return xnp.where(neg, 2.0 * xnp.exp(x * x) - pos, pos)


_erfcx.defjvps(lambda t, ans, x: (2.0 * x * ans - 2.0 / _SQRT_PI) * t)


@returns_arrays
def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x), accurate where erfc
    underflows; inf for x < -26.6 (float64).

        >>> erfcx(xnp.array([0.0, 30.0]))       # [1, 0.018795888861416751]
    """
    (x,) = _floats(x, name="erfcx")
    return _erfcx(x)


def _e1_pos(x):
    """E1(x) for x > 0: its power series up to 2, a continued fraction (modified Lentz,
    a fixed number of steps: enough from x = 2 on) beyond."""
    small = xnp.where(x <= 2.0, x, 2.0)
    term, total = xnp.ones_like(small), xnp.zeros_like(small)
    for k in range(1, 41):
        term = -term * small / k
        total = total - term / k
    series = -_EULER - xnp.log(small) + total
    large = xnp.where(x > 2.0, x, 3.0)
    b = large + 1.0
    tiny = np.finfo(aval(x).dtype).tiny

    def step(i, state):
        b, c, d, h = state
        an = -(i * i).astype(b.dtype)
        b = b + 2.0
        d = 1.0 / (an * d + b)
        c = b + an / c
        return b, c, d, h * (c * d)
    d = 1.0 / b
    _, _, _, h = lax.fori_loop(1, 60, step, (b, xnp.full_like(b, 1.0 / tiny), d, d))
    return xnp.where(x <= 2.0, series, h * xnp.exp(-large))


@custom_jvp
def _exp1(x):
    out = _e1_pos(xnp.where(x > 0, x, 1.0))
    return xnp.where(x > 0, out, xnp.where(x == 0, xnp.inf, xnp.nan))


_exp1.defjvps(lambda t, ans, x: -xnp.exp(-x) / x * t)


@returns_arrays
def exp1(x):
    """The exponential integral E1(x) = int_x^inf exp(-t) / t dt, x > 0 (inf at 0, nan
    below, as JAX and SciPy).

        >>> exp1(xnp.array([0.5, 2.0]))
    """
    (x,) = _floats(x, name="exp1")
    return _exp1(x)


def _ei_pos(x):
    """Ei(x) for x > 0: the power series (positive terms) up to 40, the asymptotic series
    exp(x)/x sum k!/x^k beyond (its smallest term there is below double precision)."""
    small = xnp.where(x <= 40.0, x, 1.0)

    def step(k, state):
        term, total = state
        kf = k.astype(small.dtype)
        term = term * small / kf
        return term, total + term / kf
    _, total = lax.fori_loop(1, 140, step, (xnp.ones_like(small), xnp.zeros_like(small)))
    series = _EULER + xnp.log(small) + total
    large = xnp.where(x > 40.0, x, 41.0)
    term, asym = xnp.ones_like(large), xnp.ones_like(large)
    for k in range(1, 40):
        term = term * k / large
        asym = asym + term
    with np.errstate(over="ignore"):
        return xnp.where(x <= 40.0, series, xnp.exp(large) / large * asym)


@custom_jvp
def _expi(x):
    pos = _ei_pos(xnp.where(x > 0, x, 1.0))
    neg = -_e1_pos(xnp.where(x < 0, -x, 1.0))
    return xnp.where(x > 0, pos, xnp.where(x < 0, neg, xnp.nan))


_expi.defjvps(lambda t, ans, x: xnp.exp(x) / x * t)


@returns_arrays
def expi(x):
    """The exponential integral Ei(x) = -PV int_-x^inf exp(-t) / t dt; Ei(x) = -E1(-x) for
    x < 0.  NaN at 0, as JAX gives (SciPy: -inf).

        >>> expi(xnp.array([-1.0, 1.0]))
    """
    (x,) = _floats(x, name="expi")
    return _expi(x)


# ---- Spence's function (the dilogarithm) --------------------------------------------------------
def _li2_coefficients(count=32):
    """B_n / (n + 1)! for n < count: the series of Li2 in u = -log(1 - t), which converges
    like (u / 2 pi)^n."""
    b = np.asarray(bernoulli(count - 1))
    return [float(b[n]) / math.factorial(n + 1) for n in range(count)]


_LI2 = None


def _li2_near(t):
    """Li2(t) for -1 <= t <= 1/2 (|u| <= log 2)."""
    global _LI2
    if _LI2 is None:       # (built on first use: importing the module stays cheap)
        _LI2 = _li2_coefficients()
    u = -xnp.log1p(-t)
    acc = xnp.zeros_like(u)
    for c in reversed(_LI2):
        acc = acc * u + c
    return acc * u


@custom_jvp
def _spence(x):
    inner = (x >= 0.5) & (x <= 2.0)
    # each branch reads a value that keeps its own formula in range
    xa = xnp.where(inner, x, 1.0)
    xb = xnp.where(x < 0.5, xnp.maximum(x, 0.0), 0.25)
    xc = xnp.where(x > 2.0, x, 3.0)
    a = _li2_near(1.0 - xa)                                    # Li2(1 - x) directly
    b = math.pi ** 2 / 6 - xnp.log1p(-xb) * xnp.log(xnp.where(xb > 0, xb, 1.0)) - \
        _li2_near(xb)                                          # reflection
    c = -math.pi ** 2 / 6 - 0.5 * xnp.log(xc - 1.0) ** 2 - _li2_near(1.0 / (1.0 - xc))
    out = xnp.where(inner, a, xnp.where(x < 0.5, b, c))
    return xnp.where((x < 0) | xnp.isinf(x) | xnp.isnan(x), xnp.nan, out)


_spence.defjvps(lambda t, ans, x: xnp.where(
    x == 1.0, -1.0, xnp.log(x) / xnp.where(x == 1.0, 0.5, 1.0 - x)) * t)


@returns_arrays
def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (nan below
    and at inf, as JAX and SciPy); float32 or float64.  Its derivative log(x) / (1 - x)
    is -1 at x = 1 (JAX's piecewise definition gives 0 there).

        >>> spence(xnp.array([0.0, 1.0, 2.0]))     # [pi^2/6, 0, -pi^2/12]
    """
    x = xnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    return _spence(x)


__all__ = ["bessel_jn", "iv", "ive", "j0", "j1", "jn", "y0", "y1", "yn", "beta", "betainc", "betaln", "comb", "digamma", "entr", "erf", "erfc", "erfcinv",
           "erfinv", "expit", "factorial", "gamma", "gammainc", "gammaincc", "gammaln",
           "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "logit",
           "loggamma", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "psi",
           "rel_entr", "softmax", "xlog1py", "xlogy", "zeta", "poch", "boxcox", "boxcox1p",
           "bernoulli", "erfcx", "exp1", "expi", "spence"]
