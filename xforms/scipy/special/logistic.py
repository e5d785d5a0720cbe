"""Logistic functions, logs and entropies: expit, logit, xlogy, xlog1py, entr, rel_entr,
kl_div, softmax, log_softmax, boxcox, boxcox1p.
"""


from ... import numpy as xnp
from ... import nn as _nn
from ...custom import custom_jvp
from ...primitives.operands import returns_arrays
from ...primitives import elementwise as ew
from ._util import float_operands, real_operands


# ---- logistic, logs and entropies --------------------------------------------------------------
@returns_arrays
def expit(x):
    """1 / (1 + exp(-x))."""
    (x,) = float_operands(x, name="expit")
    return ew.logistic(x)


@returns_arrays
def logit(x):
    """log(x / (1 - x))."""
    (x,) = float_operands(x, name="logit")
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
    return _xlogy(*float_operands(x, y, name="xlogy"))


@returns_arrays
def xlog1py(x, y):
    """x log1p(y), 0 where x == 0.  >>> xlog1py(0.0, -1.0) -> 0.0"""
    return _xlog1py(*float_operands(x, y, name="xlog1py"))


@returns_arrays
def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0, NaN at NaN."""
    (x,) = real_operands(x, name="entr")
    v = -x * xnp.log(xnp.where(x > 0, x, 1.0))
    return xnp.where(x < 0, -xnp.inf, v)


@returns_arrays
def rel_entr(x, y):
    """x log(x / y) for x, y > 0 (NaN at x = inf: JAX computes x log x - x log y, inf - inf
    there; the quotient's form is kept for its accuracy); 0 at x == 0, y >= 0; inf
    otherwise."""
    x, y = real_operands(x, y, name="rel_entr")
    both = (x > 0) & (y > 0)
    v = x * xnp.log(xnp.where(both, x, 1.0) / xnp.where(both, y, 1.0))
    v = xnp.where(x == xnp.inf, xnp.nan, v)
    return xnp.where(both, v, xnp.where((x == 0) & (y >= 0), 0.0, xnp.inf))


@returns_arrays
def kl_div(x, y):
    """rel_entr(x, y) - x + y, as JAX's (NaN stays NaN: kl_div(nan, 0) was inf)."""
    x, y = real_operands(x, y, name="kl_div")
    return rel_entr(x, y) - x + y


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
    x, lmbda = float_operands(x, lmbda, name="boxcox")
    return _boxcox(xnp.log(x), lmbda)


@returns_arrays
def boxcox1p(x, lmbda):
    """boxcox(1 + x, lmbda), accurate for small x; nan for x <= -1.

        >>> boxcox1p(xnp.array([0.0, 3.0]), 0.5)  # [0, 2]
    """
    x, lmbda = float_operands(x, lmbda, name="boxcox1p")
    return _boxcox(xnp.log1p(x), lmbda)
