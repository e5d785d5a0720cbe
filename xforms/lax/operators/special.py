"""The special functions under their `jax.lax` names (lgamma, digamma, erf, igamma,
betainc, bessel_i0e, zeta, polygamma, nextafter, random_gamma_grad, ...): float operands
checked by name, then the primitives of xforms/primitives/special/functions.py.

    >>> lax.erf(xnp.array([0.0, 1.0]))        # [0., 0.8427...]
"""

import numpy as np

from ...primitives import elementwise as ew
from ...primitives.bits import float_bits as fb
from ...primitives.reductions import reduce_or
from ...primitives.special import functions as ps
from ...primitives.structural import broadcast_in_dim_p

from ..control_flow import while_loop
from ...core.trace import get_aval as aval_of


# ---- special functions under their lax names ------------------------------------------------
def _floats(name, *xs):
    """Python scalars take the array operand's dtype; operands must be float and of one
    dtype (lax does not promote)."""
    arrays = [x for x in xs if not isinstance(x, (int, float))]
    like = arrays[0] if arrays else np.float64(0.0)
    xs = [ew.like(float(x), like) if isinstance(x, (int, float)) else x for x in xs]
    dts = {aval_of(x).dtype for x in xs}
    if len(dts) != 1 or next(iter(dts)).kind != "f":
        raise TypeError(f"{name}: expected float operands of one dtype, got "
                        f"{[aval_of(x).str_short() for x in xs]}")
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
    one = ew.like(1.0, x)
    m1 = ew.add(m, one)
    odd = ew.convert_element_type(ew.ne(ew.rem(m, ew.like(2.0, x)), ew.like(0.0, x)),
                                  aval_of(x).dtype)
    sign = ew.sub(ew.mul(ew.like(2.0, x), odd), one)        # (-1)^(m + 1)
    higher = ew.mul(ew.mul(sign, ew.exp(ps.lgamma(m1))), ps.zeta(m1, x))
    out = ew.select_n(ew.eq(m, ew.like(0.0, x)), higher, ps.digamma(x))
    bad = ew.or_(ew.lt(m, ew.like(0.0, x)), ew.ne(m, ew.floor(m)))
    return ew.select_n(bad, out, ew.like(float("nan"), x))


def nextafter(x1, x2):
    """The float next to x1 in the direction of x2, elementwise (operands of one float
    dtype; Python scalars take the other operand's).  Not differentiable, as in JAX.

    >>> lax.nextafter(xnp.array([1.0, 0.0]), xnp.array([2.0, -1.0]))   # [1 + 2^-52, -5e-324]
    """
    return fb.nextafter(*_floats("nextafter", x1, x2))


def random_gamma_grad(a, x):
    """d x / d a for a Gamma(a, 1) sample x held at a fixed CDF value (implicit
    reparameterisation): -(dP/da) / (dP/dx), by JAX's method (loops differentiated forward,
    to any order: the section below).

    >>> lax.random_gamma_grad(1.7, 0.9)           # 0.78574...
    """
    return _gamma_sample_grad(*_floats("random_gamma_grad", a, x))


# ---- random_gamma_grad's loops ---------------------------------------------------------------
# lax.random_gamma_grad: d x / d a for a Gamma(a, 1) sample x held at a fixed CDF value
# (implicit reparameterisation), -(dP/da) / (dP/dx) with P(a, x) the regularized lower
# incomplete gamma function.
#
# As in JAX, a composition of elementwise ops and two while loops (a power series and a
# continued fraction, each carrying its own a-derivative), not a primitive: its derivatives,
# of any order and in both operands, are those of the loops (JAX differentiates its loops
# forward; it has no rule for igamma_grad_a's a-derivative, nor does xforms).  The series and
# the fraction are those of xforms/primitives/special/igamma_grad.py, the split between them
# JAX's (the fraction where x > 1 and x > a).  With front = x^a e^-x / Gamma(a),
# dP/dx = front / x, so front cancels:
#
#     series   P = front S,  S = sum_n x^n / (a (a+1) ... (a+n)),  T = sum_n term_n H_n:
#              d x / d a = -x (S (log x - psi(a)) - T)
#     fraction Q = front h (Lentz), h' its a-derivative:  d x / d a = x (h (log x - psi(a)) + h')
_TINY = 1e-300       # Lentz's floor for a vanishing denominator (float32: its smallest normal)
_ITERATIONS = 2000   # JAX's cap on the continued fraction (the series stops by itself)


def _broadcast(v, shape):
    nd = len(aval_of(v).shape)
    return broadcast_in_dim_p.bind(v, shape=tuple(shape),
                                   broadcast_dimensions=tuple(range(len(shape) - nd,
                                                                    len(shape))))


def _any(active):
    return reduce_or(active, tuple(range(len(aval_of(active).shape))))


def _step(active, new, old):
    """The carry advances only where the element has not converged."""
    return tuple(ew.select_n(active, o, n) for n, o in zip(new, old))


def _series(a, x, active, eps):
    """The sums S and T (the comment above), where `active`."""
    k = lambda c: ew.like(c, x)

    def body(c):
        on, ap, term, harm, total, dtotal = c
        ap1 = ew.add(ap, k(1.0))
        term1 = ew.mul(term, ew.div(x, ap1))
        harm1 = ew.add(harm, ew.div(k(1.0), ap1))
        total1 = ew.add(total, term1)
        dtotal1 = ew.add(dtotal, ew.mul(term1, harm1))
        # converged once both sums' next terms fall below eps of the sums
        more = ew.or_(ew.gt(term1, ew.mul(total1, eps)),
                      ew.gt(ew.mul(term1, harm1), ew.mul(dtotal1, eps)))
        return (ew.and_(on, more),) + _step(on, (ap1, term1, harm1, total1, dtotal1),
                                            c[1:])
    inv = ew.div(k(1.0), a)
    out = while_loop(lambda c: _any(c[0]), body, (active, a, inv, inv, inv, ew.mul(inv, inv)))
    return out[4], out[5]


def _fraction(a, x, active, eps):
    """h and h' (the comment above), where `active`: Lentz's method on
    Q / front = 1/(x + 1 - a -) 1 (1 - a)/(x + 3 - a -) 2 (2 - a)/(x + 5 - a -) ..., each
    quantity carried with its a-derivative (d*)."""
    k = lambda c: ew.like(c, x)
    tiny = max(_TINY, float(np.finfo(aval_of(x).dtype).tiny))
    floor = lambda v, dv: (ew.select_n(ew.lt(ew.abs(v), k(tiny)), v, k(tiny)),
                           ew.select_n(ew.lt(ew.abs(v), k(tiny)), dv, k(0.0)))

    def body(c):
        on, i, b, db, cc, dc, d, dd, h, dh = c
        i1 = ew.add(i, k(1.0))
        an, dan = ew.neg(ew.mul(i1, ew.sub(i1, a))), i1
        b1 = ew.add(b, k(2.0))
        den, dden = floor(ew.add(ew.mul(an, d), b1),
                          ew.add(ew.add(ew.mul(dan, d), ew.mul(an, dd)), db))
        # (dan c - an dc) / c^2 without c^2: c starts at 1 / tiny, whose square overflows
        cn, dcn = floor(ew.add(b1, ew.div(an, cc)),
                        ew.add(db, ew.div(ew.sub(dan, ew.div(ew.mul(an, dc), cc)), cc)))
        d1 = ew.div(k(1.0), den)
        dd1 = ew.neg(ew.mul(dden, ew.mul(d1, d1)))
        delta = ew.mul(d1, cn)
        ddelta = ew.add(ew.mul(dd1, cn), ew.mul(d1, dcn))
        dh1 = ew.add(ew.mul(dh, delta), ew.mul(h, ddelta))
        h1 = ew.mul(h, delta)
        more = ew.or_(ew.ge(ew.abs(ew.sub(delta, k(1.0))), eps),
                      ew.gt(ew.abs(ew.mul(h1, ddelta)), ew.add(ew.mul(eps, ew.abs(dh1)),
                                                                 k(tiny))))
        more = ew.and_(more, ew.lt(i1, k(float(_ITERATIONS))))
        return (ew.and_(on, more),) + _step(on, (i1, b1, db, cn, dcn, d1, dd1, h1, dh1), c[1:])
    b = ew.sub(ew.add(x, k(1.0)), a)
    d = ew.div(k(1.0), b)
    # (b' = -1, so d' = -b' d^2 = d^2; c starts at 1 / tiny, a constant)
    init = (active, k(0.0), b, k(-1.0), k(1.0 / tiny), k(0.0), d, ew.mul(d, d), d,
            ew.mul(d, d))
    init = tuple(_broadcast(v, aval_of(x).shape) for v in init)
    out = while_loop(lambda c: _any(c[0]), body, init)
    return out[8], out[9]


def _gamma_sample_grad(a, x):
    """d x / d a of a Gamma(a, 1) sample x (a, x float arrays of one dtype): 0 at x = 0, NaN
    where x < 0, x = inf, a <= 0 or either is NaN (JAX's values)."""
    shape = np.broadcast_shapes(aval_of(a).shape, aval_of(x).shape)
    a, x = _broadcast(a, shape), _broadcast(x, shape)
    k = lambda c: ew.like(c, x)
    eps = k(float(np.finfo(aval_of(x).dtype).eps))
    bad = ew.or_(ew.or_(ew.lt(x, k(0.0)), ew.le(a, k(0.0))),
                 ew.or_(ew.ne(a, a), ew.not_(ew.is_finite(x))))
    zero = ew.eq(x, k(0.0))
    ok = ew.not_(ew.or_(bad, zero))
    use_fraction = ew.and_(ew.gt(x, k(1.0)), ew.gt(x, a))
    # the loops run on safe operands (1, 1) where the element is not computed
    a = ew.select_n(ok, k(1.0), a)
    x = ew.select_n(ok, k(1.0), x)
    dlog = ew.sub(ew.log(x), ps.digamma(a))
    s, t = _series(a, x, ew.and_(ok, ew.not_(use_fraction)), eps)
    h, dh = _fraction(a, x, ew.and_(ok, use_fraction), eps)
    low = ew.neg(ew.mul(x, ew.sub(ew.mul(s, dlog), t)))
    high = ew.mul(x, ew.add(ew.mul(h, dlog), dh))
    out = ew.select_n(use_fraction, low, high)
    out = ew.select_n(zero, out, k(0.0))
    return ew.select_n(bad, out, k(float("nan")))
