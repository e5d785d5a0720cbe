"""Bessel functions: i0, i0e, i1, i1e, and J_n, Y_n of integer order and I_v of real order
(scipy's names j0, j1, jn, y0, y1, yn, iv, ive; JAX's bessel_jn).
"""

import numpy as np

from ... import numpy as xnp
from ...primitives.operands import returns_arrays
from ...primitives.special import functions as ps
from ._util import const_like, float_operands


# ---- modified Bessel functions of order 0 and 1 ------------------------------------------------
@returns_arrays
def i0e(x):
    (x,) = float_operands(x, name="i0e")
    return ps.bessel_i0e(x)


@returns_arrays
def i1e(x):
    (x,) = float_operands(x, name="i1e")
    return ps.bessel_i1e(x)


@returns_arrays
def i0(x):
    """I_0(x) = exp(|x|) i0e(x)."""
    (x,) = float_operands(x, name="i0")
    return xnp.exp(xnp.abs(x)) * ps.bessel_i0e(x)


@returns_arrays
def i1(x):
    """I_1(x) = exp(|x|) i1e(x)."""
    (x,) = float_operands(x, name="i1")
    return xnp.exp(xnp.abs(x)) * ps.bessel_i1e(x)


# ---- Bessel functions: J_n, Y_n of integer order, I_v of real order (scipy's names) -----------
def _order(n, x, name):
    return float_operands(n, x, name=name)


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
    (z,) = float_operands(z, name="bessel_jn")
    return xnp.stack([ps.bessel_jn(const_like(k, z), z) for k in range(int(v) + 1)])
