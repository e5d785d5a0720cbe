"""Gamma and its relatives: gammaln, digamma, polygamma, zeta, beta, betainc, gammainc,
multigammaln, factorial, comb, poch, and the Bernoulli numbers.
"""
import math

import numpy as np

from ... import lax
from ... import numpy as xnp
from ...custom import custom_jvp
from ...primitives.operands import aval, returns_arrays
from ...primitives.special import functions as ps
from ._util import const_like, float_operands, real_operands


# ---- gamma and relatives -----------------------------------------------------------------------
@returns_arrays
def gammaln(x):
    """log|Gamma(x)|."""
    (x,) = float_operands(x, name="gammaln")
    return ps.lgamma(x)


@returns_arrays
def loggamma(x):
    """log Gamma(x) for real x > 0; NaN elsewhere (JAX's real loggamma, where gammaln is
    log|Gamma|).  Complex x: the principal branch (one cut, the negative real axis), as
    JAX's and SciPy's; nan+nanj at the poles and NaN parts.

        >>> loggamma(xnp.array([0.5 - 2j]))        # [-2.2226559+0.592537j]
    """
    (x,) = float_operands(x, name="loggamma")
    if xnp.iscomplexobj(x):
        return _complex_loggamma(x)
    return xnp.where(x > 0, ps.lgamma(xnp.where(x > 0, x, 1.0)), xnp.nan)


@returns_arrays
def gammasgn(x):
    """The sign of Gamma(x), as JAX's: 1 for x > 0 and at +0, -1 at -0, alternating
    between the poles for x < 0, NaN at the poles -1, -2, ... and at NaN."""
    (x,) = real_operands(x, name="gammasgn")
    fl = xnp.floor(x)
    odd = xnp.remainder(fl, 2.0) != 0          # Gamma < 0 on (-1, 0), (-3, -2), ...
    one = xnp.ones_like(x)
    neg = ((x < 0) & odd) | ((x == 0) & xnp.signbit(x))
    return xnp.where(((x < 0) & (x == fl)) | xnp.isnan(x), xnp.nan, xnp.where(neg, -one, one))


@returns_arrays
def gamma(x):
    """Gamma(x) = gammasgn(x) exp(gammaln(x)); complex x: exp of JAX's Lanczos log-gamma
    (with its reflection for Re x < 0.5), nan+nanj at the poles and NaN parts.

        >>> gamma(xnp.array([2.0, 0.5 - 2j]))     # [1, 0.0898552+0.0604938j]
    """
    (x,) = float_operands(x, name="gamma")
    if xnp.iscomplexobj(x):
        bad = _pole_or_nan(x)
        out = xnp.exp(_lanczos_reflected(xnp.where(bad, xnp.ones_like(x), x)))
        return xnp.where(bad, const_like(np.nan, xnp.real(x)) * (1 + 1j), out)
    return gammasgn(x) * xnp.exp(ps.lgamma(x))


# ---- complex log-gamma: JAX's Lanczos approximation (g = 7, 9 terms; GSL's coefficients,
# those of jax/_src/scipy/special.py), so that values agree to rounding -------------------
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lanczos(z):
    """log Gamma(z) for Re z >= 0.5 (the principal branch there)."""
    zz = z - 1.0
    ag = _LANCZOS[0] + sum(c / (zz + k) for k, c in enumerate(_LANCZOS[1:], 1))
    t = zz + (_LANCZOS_G + 0.5)
    return 0.5 * math.log(2 * math.pi) + (zz + 0.5) * xnp.log(t) - t + xnp.log(ag)


def _lanczos_reflected(z):
    """JAX's _complex_loggamma: _lanczos, and for Re z < 0.5 the reflection
    log pi - log sin(pi z) - log Gamma(1 - z) (a log of Gamma, not its principal branch;
    gamma exponentiates it)."""
    reflect = xnp.real(z) < 0.5
    lg = _lanczos(xnp.where(reflect, 1.0 - z, z))
    z_safe = xnp.where(reflect, z, xnp.full_like(z, 0.5))
    return xnp.where(reflect, math.log(math.pi) - xnp.log(xnp.sin(math.pi * z_safe)) - lg, lg)


def _pole_or_nan(z):
    re = xnp.real(z)
    return xnp.isnan(z) | ((xnp.imag(z) == 0) & (re == xnp.floor(re)) & (re <= 0))


def _complex_loggamma(z):
    """The principal branch of log Gamma(z).  JAX shifts z right by n = ceil(0.5 - Re z)
    and subtracts log z + ... + log(z + n - 1) in a while loop (which never ends at
    Re z = -inf); here the reflection of `_lanczos_reflected` gets the branch Hare's
    correction names, 2 pi i copysign(1, Im z) floor(Re z / 2 + 1/4) (D. E. G. Hare,
    Computing the principal branch of log-Gamma, J. Algorithms 1997): the same values to
    rounding (3.5e-15 relative on a grid of Re z in [-12, 6]), nan+nanj where JAX hangs."""
    bad = _pole_or_nan(z)
    z = xnp.where(bad, xnp.ones_like(z), z)
    re, im = xnp.real(z), xnp.imag(z)
    branch = xnp.copysign(const_like(2 * math.pi, re), im) * xnp.floor(0.5 * re + 0.25)
    branch = xnp.where(re < 0.5, branch, xnp.zeros_like(branch))   # (reflected only)
    out = _lanczos_reflected(z) + lax.complex(xnp.zeros_like(branch), branch)
    # On the real axis left of 0.5 Gamma is real and the imaginary part is pi floor(x),
    # jax's for both signed zeros (the cut's upper side: loggamma(-2.5-0j) = -0.056-9.42j);
    # computed, it hangs on the sign of a rounded zero, Im sin(pi z) (complex64: -3.14j)
    axis = (im == 0) & (re < 0.5)
    out = xnp.where(axis, lax.complex(xnp.real(out), const_like(math.pi, re) * xnp.floor(re)), out)
    return xnp.where(bad, const_like(np.nan, re) * (1 + 1j), out)


@returns_arrays
def digamma(x):
    """psi(x) = d/dx log Gamma(x)."""
    (x,) = float_operands(x, name="digamma")
    return ps.digamma(x)


psi = digamma


@returns_arrays
def zeta(x, q=None):
    """Hurwitz zeta sum_k (q + k)^-x.  q is required, as in jax 0.10.2 (whose Riemann
    zeta, q=None, raises NotImplementedError): zeta(x, 1.0) is Riemann's.

        >>> zeta(2.0, 1.0)          # pi^2 / 6
    """
    if q is None:
        raise NotImplementedError("zeta: the Riemann zeta function (q=None) is not "
                                  "implemented, as in JAX; pass q=1.0 for Riemann's zeta")
    x, q = float_operands(x, q, name="zeta")
    return ps.zeta(x, q)


@returns_arrays
def polygamma(n, x):
    """The n-th derivative of digamma (lax.polygamma: NaN for n < 0 or not an integer)."""
    n, x = real_operands(n, x, name="polygamma")
    return lax.polygamma(n, x)


@returns_arrays
def betaln(a, b):
    """log|B(a, b)|: gammaln(a) + gammaln(b) - gammaln(a + b) while the larger argument is
    below 8; above, gammaln(a) + `log_gamma_ratio` (SciPy's cdflib betaln, as JAX's), which
    keeps the digits the difference of two huge gammalns loses.

        >>> betaln(1.0, 2.0 ** 64)        # -44.36 (the plain formula gives 0)
    """
    a, b = float_operands(a, b, name="betaln")
    a, b = xnp.minimum(a, b), xnp.maximum(a, b)
    small = ps.lgamma(a) + (ps.lgamma(b) - ps.lgamma(a + b))
    # (b clamped where unused: the ratio's series wants b >= 8, and its where() would
    # otherwise carry a NaN into the derivative of the small branch)
    large = ps.lgamma(a) + log_gamma_ratio(a, xnp.maximum(b, const_like(8.0, b)))
    return xnp.where(b < 8, small, large)


# cdflib's algdiv: the Stirling series' coefficients of del(b) - del(a + b) (below)
_ALGDIV = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
           -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def log_gamma_ratio(a, b):
    """log(Gamma(b) / Gamma(a + b)) for a <= b, b >= 8 (cdflib's algdiv): Stirling's series
    of both, the corrections del(x) = log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2)
    expanded in 1/b, so no huge terms cancel.  Its series runs in x = b / (a + b), as
    cdflib's; jax 0.10.2's runs in a / (a + b), which costs it up to 1.2e-6 relative
    (betaln(0.5, 8)); this one is SciPy's to 1e-15.

        >>> log_gamma_ratio(1.0, 8.0)        # log(1/8) = -2.0794
    """
    h = a / b
    x = 1.0 / (1.0 + h)                          # b / (a + b)
    x2 = x * x
    s = [1.0]                                    # s[k] = 1 + x + x^2 + ... + x^(2k)
    for _ in range(5):
        s.append(1.0 + (x + x2 * s[-1]))
    t = (1.0 / b) ** 2
    c = _ALGDIV
    w = c[5] * s[5] * t
    for k in (4, 3, 2, 1):
        w = (w + c[k] * s[k]) * t
    w = (w + c[0]) * (h / (1.0 + h) / b)         # a / (a + b) / b
    u = (b + (a - 0.5)) * xnp.log1p(h)
    v = a * (xnp.log(b) - 1.0)
    return xnp.where(u <= v, (w - v) - u, (w - u) - v)


@returns_arrays
def beta(a, b):
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
    a, b = real_operands(a, b, name="beta")
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * xnp.exp(betaln(a, b))


@returns_arrays
def betainc(a, b, x):
    """Regularized incomplete beta I_x(a, b)."""
    a, b, x = real_operands(a, b, x, name="betainc")
    return ps.betainc(a, b, x)


@returns_arrays
def gammainc(a, x):
    """Regularized lower incomplete gamma P(a, x)."""
    a, x = float_operands(a, x, name="gammainc")
    return ps.igamma(a, x)


@returns_arrays
def gammaincc(a, x):
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    a, x = float_operands(a, x, name="gammaincc")
    return ps.igammac(a, x)


@returns_arrays
def multigammaln(a, d):
    """log of the multivariate gamma function of dimension d (a Python int)."""
    d = int(d)
    a, _ = float_operands(a, d, name="multigammaln")     # JAX's dtype: bool a with int d is float64
    out = const_like(d * (d - 1) / 4 * math.log(math.pi), a)
    for j in range(d):
        out = out + ps.lgamma(a - const_like(j / 2, a))
    return out


@returns_arrays
def factorial(n, exact=False):
    """n! = Gamma(n + 1), 0 for n < 0."""
    if exact:
        raise NotImplementedError("factorial(exact=True) (JAX neither): use exact=False")
    (n,) = float_operands(n, name="factorial")
    return xnp.where(n < 0, 0.0, xnp.exp(ps.lgamma(n + 1)))


@returns_arrays
def comb(N, k, exact=False, repetition=False):
    """Binomial coefficient C(N, k) through gammaln; 0 unless 0 <= k <= N and N >= 0 (so
    0 where N or k is NaN, as JAX's); with repetition C(N + k - 1, k), 1 at k = 0."""
    if exact:
        raise NotImplementedError("comb(exact=True): use exact=False")
    N, k = float_operands(N, k, name="comb")
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
    z, m = float_operands(z, m, name="poch")
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
