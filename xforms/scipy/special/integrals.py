"""The exponential integrals exp1 and expi, and Spence's function (the dilogarithm).
"""
import math

import numpy as np

from ... import lax
from ... import numpy as xnp
from ...custom import custom_jvp
from ...primitives.operands import aval, returns_arrays
from ._util import float_operands, real_operands
from .gamma import bernoulli, digamma


_EULER = 0.57721566490153286061


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


# E1' = -exp(-x) / x where E1 is defined; NaN below 0, where E1 is (JAX's derivative,
# -E0(x), is NaN there too: a finite slope of a NaN value would be a silent wrong number)
_exp1.defjvps(lambda t, ans, x: -xnp.exp(-x) / xnp.where(x < 0, xnp.nan, x) * t)


@returns_arrays
def exp1(x):
    """The exponential integral E1(x) = int_x^inf exp(-t) / t dt, x > 0 (inf at 0, nan
    below, as JAX and SciPy).

        >>> exp1(xnp.array([0.5, 2.0]))
    """
    (x,) = real_operands(x, name="exp1")
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
    (x,) = real_operands(x, name="expi")
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


# 0 below the domain (x < 0), where spence is NaN: JAX's piecewise derivative (log of a
# negative number gave NaN)
_spence.defjvps(lambda t, ans, x: xnp.where(x < 0, 0.0, xnp.where(
    x == 1.0, -1.0, xnp.log(xnp.abs(x)) / xnp.where(x == 1.0, 0.5, 1.0 - x))) * t)


@returns_arrays
def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (nan below
    and at inf, as JAX and SciPy); float32 or float64.  Its derivative log(x) / (1 - x)
    is -1 at x = 1 (JAX's piecewise definition gives 0 there) and 0 below 0 (as JAX's).

        >>> spence(xnp.array([0.0, 1.0, 2.0]))     # [pi^2/6, 0, -pi^2/12]
    """
    x = xnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    return _spence(x)


# ---- sine and cosine integrals ---------------------------------------------------------------
def _sici_series(x):
    """(Si, Ci - gamma - log x) by their power series, for 0 <= x <= 4 (the alternating
    terms stay below e^4 times the result: two digits lost at worst)."""
    x2 = x * x
    t, u = x, xnp.ones_like(x)      # x^(2k+1) / (2k+1)!, x^(2k) / (2k)!, with sign (-1)^k
    si, ci = x, xnp.zeros_like(x)
    for k in range(1, 30):
        u = -u * x2 / ((2 * k - 1) * (2 * k))
        ci = ci + u / (2 * k)
        t = -t * x2 / ((2 * k) * (2 * k + 1))
        si = si + t / (2 * k + 1)
    return si, ci


def _e1_times_exp_imag(x):
    """E1(ix) exp(ix) for x >= 4 by its continued fraction (modified Lentz, 40 steps: the
    error is below 1e-15 there), as (real, imaginary) parts.

    1 / (z + 1 - 1 / (z + 3 - 4 / (z + 5 - ...))), z = ix, kept in real arithmetic."""
    def div(ar, ai, br, bi):
        den = br * br + bi * bi
        return (ar * br + ai * bi) / den, (ai * br - ar * bi) / den

    def step(i, state):
        br, cr, ci, dr, di, hr, hi = state
        an = -(i * i).astype(x.dtype)
        br = br + 2.0
        dr, di = div(xnp.ones_like(x), xnp.zeros_like(x), an * dr + br, an * di + x)
        qr, qi = div(an, xnp.zeros_like(x), cr, ci)
        cr, ci = br + qr, x + qi
        er, ei = cr * dr - ci * di, cr * di + ci * dr
        return br, cr, ci, dr, di, hr * er - hi * ei, hr * ei + hi * er
    one = xnp.ones_like(x)
    dr, di = div(one, xnp.zeros_like(x), one, x)
    # Lentz's "infinite" start, small enough that its square (in the complex division)
    # does not overflow
    big = xnp.full_like(x, 1.0 / math.sqrt(np.finfo(aval(x).dtype).tiny))
    state = (one, big, xnp.zeros_like(x), dr, di, dr, di)
    return lax.fori_loop(1, 40, step, state)[5:]


@custom_jvp
def _sici(x):
    ax = xnp.abs(x)
    near = ax <= 4.0
    xs = xnp.where(near, ax, 1.0)
    si1, ci1 = _sici_series(xs)
    ci1 = ci1 + _EULER + xnp.log(xnp.where(near, ax, 1.0))
    xl = xnp.where(near | xnp.isinf(ax), 5.0, ax)
    hr, hi = _e1_times_exp_imag(xl)
    cos, sin = xnp.cos(xl), xnp.sin(xl)
    # E1(ix) = exp(-ix) h = -Ci(x) + i (Si(x) - pi / 2)
    si2 = math.pi / 2 + (hi * cos - hr * sin)
    ci2 = -(hr * cos + hi * sin)
    si = xnp.where(near, si1, xnp.where(xnp.isinf(ax), math.pi / 2, si2))
    ci = xnp.where(near, xnp.where(ax == 0, -xnp.inf, ci1), xnp.where(xnp.isinf(ax), 0.0, ci2))
    ci = xnp.where(x == -xnp.inf, xnp.nan, ci)          # (JAX and SciPy: Ci(-inf) is nan)
    return xnp.where(x < 0, -si, xnp.where(x == 0, x, si)), ci


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    xs = xnp.where(x == 0, 1.0, x)
    return _sici(x), (xnp.where(x == 0, 1.0, xnp.sin(xs) / xs) * t, xnp.cos(x) / x * t)


@returns_arrays
def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)) = (int_0^x sin(t)/t dt, gamma + log|x| +
    int_0^x (cos(t) - 1)/t dt) for real x (Ci is even, as JAX and SciPy give it).

        >>> si, ci = sici(xnp.array([1.0, 10.0]))
    """
    (x,) = real_operands(x, name="sici")
    return _sici(x)


# ---- the generalised exponential integral E_n ------------------------------------------------
def _expn_series(n, x):
    """E_n(x) for n >= 1, 0 < x <= 2: (-x)^(n-1)/(n-1)! (psi(n) - log x) -
    sum_{k != n-1} (-x)^k / ((k - n + 1) k!) (terms past k = 40 are below 2^40/40!)."""
    psi = digamma(n)
    lead = psi - xnp.log(x)

    def step(k, state):
        term, total = state       # term = (-x)^k / k!
        kf = k.astype(x.dtype)
        total = total + xnp.where(kf == n - 1, term * lead, -term / xnp.where(
            kf == n - 1, 1.0, kf - n + 1.0))
        return -term * x / (kf + 1.0), total
    return lax.fori_loop(0, 45, step, (xnp.ones_like(x), xnp.zeros_like(x)))[1]


def _expn_fraction(n, x):
    """E_n(x) for x > 2 (any real n for x > 1) by its continued fraction (modified Lentz,
    60 steps)."""
    b = x + n
    tiny = np.finfo(aval(x).dtype).tiny

    def step(i, state):
        b, c, d, h = state
        fi = i.astype(x.dtype)
        an = -fi * (n - 1.0 + fi)
        b = b + 2.0
        d = 1.0 / (an * d + b)
        c = b + an / c
        return b, c, d, h * (c * d)
    d = 1.0 / xnp.where(b == 0, tiny, b)      # (Lentz's guard: x + n = 0 for a negative n)
    h = lax.fori_loop(1, 60, step, (b, xnp.full_like(b, 1.0 / tiny), d, d))[3]
    return h * xnp.exp(-x)


@custom_jvp
def _expn(n, x):
    whole = (n == xnp.floor(n)) & (n >= 1)
    # the series needs an integer n >= 1 (0 < x <= 2); the continued fraction converges for
    # any real n, and JAX uses it for every n above x = 1 (E_p(x) of a fractional or
    # negative p); between 0 and 1 a fractional n is NaN, as JAX's series gives
    near = whole & (x <= 2.0)
    frac = ((x > 2.0) | ((x > 1.0) & ~whole)) & xnp.isfinite(x) & ~xnp.isnan(n)
    ng = xnp.where(whole | frac, n, 1.0)
    series = _expn_series(ng, xnp.where(near & (x > 0), x, 1.0))
    out = xnp.where(frac, _expn_fraction(ng, xnp.where(frac, x, 3.0)), xnp.where(
        near & (x > 0), series, xnp.nan))
    with np.errstate(divide="ignore"):
        at_zero = xnp.where(n < 2, xnp.inf, 1.0 / xnp.where(n < 2, 1.0, n - 1.0))
        n0 = xnp.exp(-x) / x
    out = xnp.where(x == 0, at_zero, xnp.where(x == xnp.inf, 0.0, out))
    out = xnp.where((n == 0) & (x >= 0), n0, out)
    return xnp.where((x < 0) | xnp.isnan(x) | xnp.isnan(n), xnp.nan,
                     xnp.where(xnp.isinf(n), _expn_inf_order(n, x), out))


def _expn_inf_order(n, x):
    """E_{+-inf}(x) as jax 0.10.2 gives it (its fraction's limit): a zero of n's sign for
    1 < x < inf, inf at x = 0 for n = -inf (n < 2), NaN elsewhere (x <= 1 is a fractional
    order's NaN; x = inf NaN).  (Both series and fraction give NaN from inf - inf here.)"""
    zero = xnp.zeros_like(x)
    signed = xnp.where(n > 0, zero, -zero)
    return xnp.where((x > 1.0) & (x < xnp.inf), signed,
                     xnp.where((x == 0) & (n < 0), xnp.inf, xnp.nan))


@_expn.defjvp
def _expn_jvp(primals, tangents):
    (n, x), (_, t) = primals, tangents
    # dE_n/dx = -E_{n-1}; E_{-1}(x) = exp(-x) (1 + x) / x^2 (the integral's definition)
    closed = (n == 0) & (x >= 0)
    # (the other branch at n = 1 where closed: E_{-1}'s NaN at x <= 1 would leak 0 * NaN)
    lower = xnp.where(closed, xnp.exp(-x) * (1.0 + x) / (x * x),
                      _expn(xnp.where(closed, 1.0, n - 1.0), x))
    return _expn(n, x), -lower * t


@returns_arrays
def expn(n, x):
    """The generalised exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt for x >= 0:
    any integer n >= 0, and as JAX any real n where x > 1 (its continued fraction; NaN for a
    fractional or negative n at 0 < x <= 1, where JAX's series is NaN); NaN for x < 0; at
    x = 0 inf for n < 2 and 1/(n - 1) above (SciPy's, the integral's; jax 0.10.2 gives 1/n).

        >>> expn(2, xnp.array([0.5, 3.0]))
    """
    n, x = real_operands(n, x, name="expn")
    return _expn(n, x)
