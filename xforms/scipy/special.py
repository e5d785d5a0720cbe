"""`xforms.scipy.special`: jax.scipy.special's functions (plus scipy's erfcinv).

Primitives (xforms/primitives/special/functions.py, compiled from xforms/kernels/libm/special.py on the CPU and
on CUDA): gammaln, digamma, zeta, erf, erfc, erfinv, erfcinv, gammainc, gammaincc, betainc,
i0e, i1e, bessel_jn, bessel_yn, bessel_iv, bessel_ive.  Everything else is composed from them and the elementwise primitives, so it fuses
and differentiates like user code.  Arguments broadcast and promote as in JAX (integers
become floating).  Accuracy: see xforms/kernels/libm/special.py (errors against scipy.special).

    >>> import xforms.scipy.special as xsp
    >>> xsp.gammaln(xnp.array([0.5, 10.0]))

Not provided: hyp1f1, hyp2f1, expi, expn,
exp1, dawsn, erfcx, fresnel, owens_t, poch, sici, spence, sph_harm_y, wofz, boxcox.
Derivatives in shape parameters (zeta's s, gammainc's a, betainc's a and b) raise
NotImplementedError.
"""
import math

import numpy as np

from .. import numpy as xnp
from .. import nn as _nn
from ..custom import custom_jvp
from ..nn import logsumexp  # noqa: F401  (jax.scipy.special names)
from ..numpy._util import aval, promote, returns_arrays
from ..primitives import elementwise as ew
from ..primitives.special import functions as ps


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


@returns_arrays
def loggamma(x):
    """log Gamma(x) for real x > 0; NaN elsewhere (JAX's real loggamma, where gammaln is
    log|Gamma|)."""
    (x,) = _floats(x, name="loggamma")
    return xnp.where(x > 0, ps.lgamma(xnp.where(x > 0, x, 1.0)), xnp.nan)


@returns_arrays
def gammasgn(x):
    """The sign of Gamma(x), as JAX's: 1 for x > 0 and at +0, -1 at -0, alternating
    between the poles for x < 0, NaN at the poles -1, -2, ... and at NaN."""
    (x,) = _floats(x, name="gammasgn")
    fl = xnp.floor(x)
    odd = xnp.remainder(fl, 2.0) != 0          # Gamma < 0 on (-1, 0), (-3, -2), ...
    one = xnp.ones_like(x)
    neg = ((x < 0) & odd) | ((x == 0) & xnp.signbit(x))
    return xnp.where(((x < 0) & (x == fl)) | xnp.isnan(x), xnp.nan, xnp.where(neg, -one, one))


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
    """The n-th derivative of digamma (lax.polygamma: NaN for n < 0 or not an integer)."""
    from .. import lax
    n, x = _floats(n, x, name="polygamma")
    return lax.polygamma(n, x)


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
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0, NaN at NaN."""
    (x,) = _floats(x, name="entr")
    v = -x * xnp.log(xnp.where(x > 0, x, 1.0))
    return xnp.where(x < 0, -xnp.inf, v)


@returns_arrays
def rel_entr(x, y):
    """x log(x / y) for x, y > 0; 0 at x == 0, y >= 0; inf otherwise."""
    x, y = _floats(x, y, name="rel_entr")
    both = (x > 0) & (y > 0)
    v = x * xnp.log(xnp.where(both, x, 1.0) / xnp.where(both, y, 1.0))
    return xnp.where(both, v, xnp.where((x == 0) & (y >= 0), 0.0, xnp.inf))


@returns_arrays
def kl_div(x, y):
    """rel_entr(x, y) - x + y, as JAX's (NaN stays NaN: kl_div(nan, 0) was inf)."""
    x, y = _floats(x, y, name="kl_div")
    return rel_entr(x, y) - x + y


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


__all__ = ["bessel_jn", "iv", "ive", "j0", "j1", "jn", "y0", "y1", "yn", "beta", "betainc", "betaln", "comb", "digamma", "entr", "erf", "erfc", "erfcinv",
           "erfinv", "expit", "factorial", "gamma", "gammainc", "gammaincc", "gammaln",
           "gammasgn", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax", "logit",
           "loggamma", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "psi",
           "rel_entr", "softmax", "xlog1py", "xlogy", "zeta"]
