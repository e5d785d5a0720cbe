"""The confluent and Gauss hypergeometric functions hyp1f1 and hyp2f1.

Both sum their power series sum_k t_k, t_{k+1} = t_k prod(p + k) / prod(q + k) x / (k + 1),
in a while_loop that stops once the terms are below the rounding of the sum and shrinking
(at most 4000 terms: nan where that is not enough), after a transformation that makes the
terms positive or the argument small: Kummer's e^x 1F1(b - a; b; -x) for x < 0, and
2F1's linear transformations to |w| <= 1/2.  The same loop sums the series' derivatives
in the parameters (d t_k / dp = t_k sum_{j<k} 1 / (p + j)), which their custom_jvp rules
use.
"""
import numpy as np

from ... import lax
from ... import numpy as xnp
from ...custom import custom_jvp
from ...primitives.operands import aval, returns_arrays
from ._util import float_operands, real_operands
from .gamma import gammaln, gammasgn

_MAX_TERMS = 4000


def _series(upper, lower, x):
    """(sum, [d sum / d p for p in upper], [d sum / d q for q in lower]) of the
    hypergeometric series; a term with p + k = 0 ends it (a polynomial)."""
    eps = float(np.finfo(aval(x).dtype).eps)
    zero, one = xnp.zeros_like(x), xnp.ones_like(x)
    n_par = len(upper) + len(lower)

    def ratio(k):
        r, ends = x / (k + 1.0), False
        for p in upper:
            r, ends = r * (p + k), ends | (p + k == 0)
        for q in lower:
            r = r / xnp.where(ends, 1.0, q + k)     # (a polynomial may end at a pole of q)
        return r

    def cond(state):
        k, term, total = state[:3]
        busy = (xnp.abs(term) > eps * xnp.abs(total)) | (xnp.abs(ratio(k)) > 0.5)
        return (k < _MAX_TERMS) & xnp.any(busy & (term != 0))

    def body(state):
        k, term, total = state[:3]
        harm, dsum = state[3:3 + n_par], state[3 + n_par:]
        new_harm = tuple(h + 1.0 / (p + k) for h, p in zip(harm, upper + lower))
        term = xnp.where(term == 0, 0.0, term * ratio(k))      # an ended series stays ended
        dsum = tuple(d + term * h for d, h in zip(dsum, new_harm))
        return (k + 1.0, term, total + term) + new_harm + dsum
    init = (xnp.zeros((), aval(x).dtype), one, one) + (zero,) * (2 * n_par)
    out = lax.while_loop(cond, body, init)
    term, total, dsum = out[1], out[2], out[3 + n_par:]
    # a series cut off at _MAX_TERMS is no value: nan, never a wrong number
    total = xnp.where(xnp.abs(term) <= eps * xnp.abs(total), total, xnp.nan)
    return total, list(dsum[:len(upper)]), [-d for d in dsum[len(upper):]]


def _nonpos_int(v):
    """v is 0, -1, -2, ... (not -inf, which no series reaches)."""
    return (v <= 0) & (v == xnp.floor(v)) & xnp.isfinite(v)


# ---- 1F1 ---------------------------------------------------------------------------------------
def _hyp1f1_parts(a, b, x):
    """(M(a, b, x), dM/da, dM/db)."""
    # b a pole: 0, -1, ... unless a polynomial ends first (a = -n with -n >= b), as SciPy
    pole = _nonpos_int(b) & ~(_nonpos_int(a) & (a >= b))
    bad = xnp.isnan(a) | xnp.isnan(b) | xnp.isnan(x)
    skip = pole | bad
    a0, b0, x0 = a, b, x
    a, b, x = xnp.where(skip, 0.0, a), xnp.where(skip, 1.0, b), xnp.where(skip, 0.0, x)
    kummer = (x < 0) & ~_nonpos_int(a)      # a polynomial stays one (its terms are positive)
    p = xnp.where(kummer, b - a, a)
    m, (dp,), (dq,) = _series([p], [b], xnp.where(kummer, -x, x))
    scale = xnp.where(kummer, xnp.exp(x), 1.0)
    da = xnp.where(kummer, -dp, dp) * scale
    db = xnp.where(kummer, dp + dq, dq) * scale
    m = xnp.where(pole, _pole_value(a0, b0, x0), m * scale)
    return xnp.where(bad, xnp.nan, m), da, db


def _pole_value(a, b, x):
    """M at a pole b = -k as JAX sums it: 1 at x = 0, else the first term that divides by
    b + k = +0, t_{k+1} = (a)_{k+1} x^{k+1} / ((k+1)! (-1)^k k! (+0)): the one-sided limit
    b -> -k+ of that term (SciPy: +inf whatever the sign).  (a)_{k+1}'s sign from the gamma
    signs, or (-1)^(k+1) for an integer a < b."""
    k, one = -b, xnp.ones_like(x)

    def flip(c):      # -1 where c (at x's dtype)
        return xnp.where(c, -one, one)

    def odd(n):
        return xnp.remainder(n, 2.0) == 1.0
    int_a = _nonpos_int(a)
    poch = xnp.where(int_a, flip(odd(k + 1.0)), gammasgn(xnp.where(int_a, 0.5, a + k + 1.0)) *
                     gammasgn(xnp.where(int_a, 0.5, a)))
    sign = poch * flip(odd(k)) * flip((x < 0) & odd(k + 1.0))
    return xnp.where(x == 0, 1.0, sign * xnp.inf)


@custom_jvp
def _hyp1f1(a, b, x):
    return _hyp1f1_parts(a, b, x)[0]


@_hyp1f1.defjvp
def _hyp1f1_jvp(primals, tangents):
    (a, b, x), (ta, tb, tx) = primals, tangents
    m, da, db = _hyp1f1_parts(a, b, x)
    dx = a / b * _hyp1f1(a + 1.0, b + 1.0, x)
    return m, da * ta + db * tb + dx * tx


@returns_arrays
def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!
    (at a pole b = 0, -1, ... where the series does not end before it: JAX's signed inf,
    the limit b -> -k+ of the first divergent term; 1 for a = 0 and exp(x) for a = b
    whatever x, inf for b = 0, and JAX's first-term value for an infinite a or b).

        >>> hyp1f1(1.5, 2.5, xnp.array([-3.0, 0.7]))
    """
    a, b, x = real_operands(a, b, x, name="hyp1f1")
    if aval(x).dtype == np.float16:
        # summed in float16 the series' roundings pile up: 189 of 300 random points were
        # off SciPy's rounded value (jax 0.10.2's float16 series, its own order: 230);
        # float32 rounded once gives SciPy's float16 (1F1(2; -0.5; 1.5) = -116.5, jax's
        # -116.375: its term *= (a + k) / (b + k) * x / (k + 1) rounded at each step)
        wide = [v.astype(np.float32) for v in (a, b, x)]
        return hyp1f1(*wide).astype(np.float16)
    # JAX's closed forms decide first, whatever the other operands (NaN included):
    # M(0, b, x) = 1, M(a, a, x) = exp(x), and b = 0 a pole (inf) for any other a; but
    # a = b = -n stays SciPy's polynomial (its series ends at k = n; JAX's exp(x))
    same = (a == b) & ~(_nonpos_int(b) & xnp.isfinite(b))
    infinite = xnp.isinf(a) | xnp.isinf(b)
    return xnp.where(a == 0, 1.0, xnp.where(same, xnp.exp(x), xnp.where(
        b == 0, xnp.inf, xnp.where(infinite, _infinite_parameter(a, b, x), _hyp1f1(a, b, x)))))


def _infinite_parameter(a, b, x):
    """JAX's value where a or b is infinite (no limit exists): its series loop adds the
    first term a x / b, then stops at an inf / inf (or NaN) ratio, so 1 + that term where it
    is infinite, else 1, for |x| < 100; its asymptotic sum (|x| >= 100, NaN x) gives NaN."""
    t = a / b * x
    return xnp.where(xnp.abs(x) < 100.0, 1.0 + xnp.where(xnp.isinf(t), t, 0.0), xnp.nan)


# ---- 2F1 ---------------------------------------------------------------------------------------
@custom_jvp
def _f21(a, b, c, z):
    """The series of 2F1 (its transformations below are composed from it, so they
    differentiate like user code)."""
    return _series([a, b], [c], z)[0]


@_f21.defjvp
def _f21_jvp(primals, tangents):
    (a, b, c, z), (ta, tb, tc, tz) = primals, tangents
    f, (da, db), (dc,) = _series([a, b], [c], z)
    dz = a * b / c * _f21(a + 1.0, b + 1.0, c + 1.0, z)
    return f, da * ta + db * tb + dc * tc + dz * tz


def _gamma_ratio(nums, dens):
    """prod Gamma(nums) / prod Gamma(dens); 0 where a denominator is at a pole."""
    logs = sum(gammaln(v) for v in nums) - sum(gammaln(v) for v in dens)
    sign = 1.0
    for v in nums + dens:
        sign = sign * gammasgn(xnp.where(_nonpos_int(v), 1.0, v))
    zero = False
    for v in dens:
        zero = zero | _nonpos_int(v)
    return xnp.where(zero, 0.0, sign * xnp.exp(xnp.where(zero, 0.0, logs)))


def _near_int(v):
    """Where the two-term transformations cancel (their gamma factors have poles at the
    integers): within 0.05 of one, the series is summed directly instead."""
    return xnp.abs(v - xnp.round(v)) < 0.05


def _term(nums, dens, w, power, a, b, c):
    """One term of a connection formula: G(nums) / G(dens) w^power F(a, b; c; w)."""
    return _gamma_ratio(nums, dens) * w ** power * _f21(a, b, c, w)


def _branch(mask, a, b, c, x, x_safe):
    """The arguments a branch of 2F1 reads: the caller's where it is taken, values that keep
    its formula and its gradient finite elsewhere (c - a - b = 1.25, a - b = 0.25)."""
    return (xnp.where(mask, a, 0.5), xnp.where(mask, b, 0.25), xnp.where(mask, c, 2.0),
            xnp.where(mask, x, x_safe))


def _pfaff(a, b, c, x):
    """x in [-1, -1/2] (and x < -1 where 1/(1 - x) cancels):
    (1 - x)^-a F(a, c - b; c; x/(x - 1))."""
    return (1.0 - x) ** (-a) * _f21(a, c - b, c, x / (x - 1.0))


def _reciprocal(a, b, c, x):
    """x < -1: w = 1/(1 - x) (DLMF 15.8.2)."""
    w = 1.0 / (1.0 - x)
    return _term([c, b - a], [b, c - a], w, a, a, c - b, a - b + 1.0) + \
        _term([c, a - b], [a, c - b], w, b, b, c - a, b - a + 1.0)


def _one_minus(a, b, c, x):
    """1/2 < x < 1: w = 1 - x (DLMF 15.8.4)."""
    w, d = 1.0 - x, c - a - b
    return _term([c, d], [c - a, c - b], w, 0.0, a, b, 1.0 - d) + \
        _term([c, -d], [a, b], w, d, c - a, c - b, 1.0 + d)


def _hyp2f1_real(a, b, c, x):
    """2F1 for x < 1, not a polynomial, c not a pole: by region of x."""
    left, right = x < -1.0, x > 0.5
    deg_left, deg_right = _near_int(a - b), _near_int(c - a - b)
    direct = (xnp.abs(x) <= 0.5) | (right & deg_right)
    pfaff = ((x < -0.5) & ~left) | (left & deg_left)
    recip, one_minus = left & ~deg_left, right & ~deg_right
    out = _f21(*_branch(direct, a, b, c, x, 0.0))
    out = xnp.where(pfaff, _pfaff(*_branch(pfaff, a, b, c, x, -1.0)), out)
    out = xnp.where(recip, _reciprocal(*_branch(recip, a, b, c, x, -2.0)), out)
    return xnp.where(one_minus, _one_minus(*_branch(one_minus, a, b, c, x, 0.75)), out)


@returns_arrays
def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k!
    for real x <= 1 (inf beyond, as JAX and SciPy, unless a or b is a non-positive
    integer: a polynomial, summed for any x).  Where c - a - b (for 1/2 < x < 1) or
    a - b (for x < -1) is within 0.05 of an integer the series is summed directly, and
    gives nan where 4000 terms do not converge (x within about 0.01 of 1, or below -99).

        >>> hyp2f1(1.0, 2.0, 3.0, xnp.array([-2.0, 0.5]))
    """
    a, b, c, x = float_operands(a, b, c, x, name="hyp2f1")
    poly = _nonpos_int(a) | _nonpos_int(b)
    ends_first = (_nonpos_int(a) & (a > c)) | (_nonpos_int(b) & (b > c))
    pole = _nonpos_int(c) & ~ends_first
    bad = xnp.isnan(a) | xnp.isnan(b) | xnp.isnan(c) | xnp.isnan(x)
    general = ~poly & ~pole & ~bad & (x < 1.0)
    safe = [xnp.where(general, v, s) for v, s in ((a, 0.5), (b, 0.5), (c, 2.0), (x, 0.0))]
    out = _hyp2f1_real(*safe)
    xp = xnp.where(poly & ~pole & ~bad, x, 0.0)
    out = xnp.where(poly, _f21(xnp.where(poly, a, 0.5), xnp.where(poly, b, 0.5),
                               xnp.where(poly & ~pole, c, 2.0), xp), out)
    one = ~poly & ~pole & ~bad & (x == 1.0) & (c - a - b > 0)
    a1, b1, c1, _ = _branch(one, a, b, c, x, 0.0)
    at_one = _gamma_ratio([c1, c1 - a1 - b1], [c1 - a1, c1 - b1])      # Gauss's sum
    out = xnp.where(~poly & (x == 1.0), xnp.where(c - a - b > 0, at_one, xnp.inf), out)
    out = xnp.where(~poly & (x > 1.0), xnp.inf, out)
    return xnp.where(bad, xnp.nan, xnp.where(pole, xnp.inf, out))
