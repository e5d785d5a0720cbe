"""The exponential integrals exp1 and expi, and Spence's function (the dilogarithm).
"""
import math

import numpy as np

from ... import lax
from ... import numpy as xnp
from ...custom import custom_jvp
from ...numpy._util import aval, returns_arrays
from ._util import _floats
from .gamma import bernoulli


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
