"""The special functions under their `jax.lax` names (lgamma, digamma, erf, igamma,
betainc, bessel_i0e, zeta, polygamma, nextafter, random_gamma_grad, ...): float operands
checked by name, then the primitives of xforms/primitives/special/functions.py.

    >>> lax.erf(xnp.array([0.0, 1.0]))        # [0., 0.8427...]
"""

import numpy as np

from ..primitives import elementwise as ew
from ..primitives.bits import float_bits as fb
from ..primitives.special import functions as ps

from .helpers import _aval


# ---- special functions under their lax names ------------------------------------------------
def _floats(name, *xs):
    """Python scalars take the array operand's dtype; operands must be float and of one
    dtype (lax does not promote)."""
    arrays = [x for x in xs if not isinstance(x, (int, float))]
    like = arrays[0] if arrays else np.float64(0.0)
    xs = [ew._like(float(x), like) if isinstance(x, (int, float)) else x for x in xs]
    dts = {_aval(x).dtype for x in xs}
    if len(dts) != 1 or next(iter(dts)).kind != "f":
        raise TypeError(f"{name}: expected float operands of one dtype, got "
                        f"{[_aval(x).str_short() for x in xs]}")
    return xs


def lgamma(x):
    """log|Gamma(x)|."""
    return ps.lgamma(*_floats("lgamma", x))


def digamma(x):
    """psi(x) = d/dx log Gamma(x)."""
    return ps.digamma(*_floats("digamma", x))


def erf(x):
    return ps.erf(*_floats("erf", x))


def erfc(x):
    return ps.erfc(*_floats("erfc", x))


def erf_inv(x):
    """The inverse of erf on (-1, 1)."""
    return ps.erf_inv(*_floats("erf_inv", x))


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return ps.igamma(*_floats("igamma", a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return ps.igammac(*_floats("igammac", a, x))


def igamma_grad_a(a, x):
    """d/da P(a, x)."""
    return ps.igamma_grad_a(*_floats("igamma_grad_a", a, x))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return ps.betainc(*_floats("betainc", a, b, x))


def bessel_i0e(x):
    """exp(-|x|) I_0(x)."""
    return ps.bessel_i0e(*_floats("bessel_i0e", x))


def bessel_i1e(x):
    """exp(-|x|) I_1(x)."""
    return ps.bessel_i1e(*_floats("bessel_i1e", x))


def zeta(x, q):
    """The Hurwitz zeta function sum_k (q + k)^-x."""
    return ps.zeta(*_floats("zeta", x, q))


def polygamma(m, x):
    """The m-th derivative of digamma: psi(x) for m = 0, else
    (-1)^(m+1) m! zeta(m + 1, x); NaN for an m that is negative or not an integer (JAX's).

        >>> lax.polygamma(np.array([1.0, -1.0, 0.5]), np.ones(3))    # [pi^2/6, nan, nan]
    """
    m, x = _floats("polygamma", m, x)
    one = ew._like(1.0, x)
    m1 = ew.add(m, one)
    odd = ew.convert_element_type(ew.ne(ew.rem(m, ew._like(2.0, x)), ew._like(0.0, x)),
                                  _aval(x).dtype)
    sign = ew.sub(ew.mul(ew._like(2.0, x), odd), one)        # (-1)^(m + 1)
    higher = ew.mul(ew.mul(sign, ew.exp(ps.lgamma(m1))), ps.zeta(m1, x))
    out = ew.select_n(ew.eq(m, ew._like(0.0, x)), higher, ps.digamma(x))
    bad = ew.or_(ew.lt(m, ew._like(0.0, x)), ew.ne(m, ew.floor(m)))
    return ew.select_n(bad, out, ew._like(float("nan"), x))


def nextafter(x1, x2):
    """The float next to x1 in the direction of x2, elementwise (operands of one float
    dtype; Python scalars take the other operand's).  Not differentiable, as in JAX.

    >>> lax.nextafter(xnp.array([1.0, 0.0]), xnp.array([2.0, -1.0]))   # [1 + 2^-52, -5e-324]
    """
    return fb.nextafter(*_floats("nextafter", x1, x2))


def random_gamma_grad(a, x):
    """d x / d a for a Gamma(a, 1) sample x held at a fixed CDF value (implicit
    reparameterisation): -(dP/da) / (dP/dx)."""
    a, x = _floats("random_gamma_grad", a, x)
    one = ew._like(1.0, x)
    log_dx = ew.sub(ew.sub(ew.mul(ew.sub(a, one), ew.log(x)), x), ps.lgamma(a))
    return ew.neg(ew.div(ps.igamma_grad_a(a, x), ew.exp(log_dx)))
