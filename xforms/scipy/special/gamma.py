"""Gamma and its relatives: gammaln, digamma, polygamma, zeta, beta, betainc, gammainc,
multigammaln, factorial, comb, poch, and the Bernoulli numbers.
"""
import math

import numpy as np

from ... import lax
from ... import numpy as xnp
from ...custom import custom_jvp
from ...numpy._util import aval, returns_arrays
from ...primitives.special import functions as ps
from ._util import _c, _floats, _real_floats


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
    (x,) = _real_floats(x, name="loggamma")
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
    (x,) = _real_floats(x, name="gamma")
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
    a, _ = _floats(a, d, name="multigammaln")     # JAX's dtype: bool a with int d is float64
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
    """Binomial coefficient C(N, k) through gammaln; 0 unless 0 <= k <= N and N >= 0 (so
    0 where N or k is NaN, as JAX's); with repetition C(N + k - 1, k), 1 at k = 0."""
    if exact:
        raise NotImplementedError("comb(exact=True): use exact=False")
    N, k = _floats(N, k, name="comb")
    if repetition:
        return xnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    inside = (k <= N) & (N >= 0) & (k >= 0)
    N, k = xnp.where(inside, N, 0.0), xnp.where(inside, k, 0.0)
    out = xnp.exp(ps.lgamma(N + 1) - ps.lgamma(k + 1) - ps.lgamma(N + 1 - k))
    return xnp.where(inside, out, 0.0)


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
        # SciPy's zeta of concrete orders: bernoulli is a constant even inside a trace
        import scipy.special             # (imported when first asked for: it is slow)
        zeta_m = scipy.special.zeta(m.astype(float), 1.0)
        log_mag = np.array([math.lgamma(v + 1) for v in m]) - m * math.log(2 * math.pi)
        with np.errstate(over="ignore"):
            mag = 2 * np.exp(log_mag) * zeta_m
        out[4::2] = np.where(m % 4 == 0, -mag, mag)
    return xnp.asarray(out)
