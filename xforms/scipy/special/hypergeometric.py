"""The confluent and Gauss hypergeometric functions hyp1f1 and hyp2f1.

Both sum their power series sum_k t_k, t_{k+1} = t_k prod(p + k) / prod(q + k) x / (k + 1),
in a while_loop that stops once the terms are below the rounding of the sum and shrinking
(at most 4000 terms), after a transformation that makes the terms positive or the argument
small: Kummer's e^x 1F1(b - a; b; -x) for x < 0, and 2F1's linear transformations to
|x| <= 1/2.  The same loop sums the series' derivatives in the parameters
(d t_k / dp = t_k sum_{j<k} 1 / (p + j)), which their custom_jvp rules use.
"""
import numpy as np

from ... import lax
from ... import numpy as xnp
from ...custom import custom_jvp
from ...numpy._util import aval, returns_arrays
from ._util import _floats
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
    dsum = out[3 + n_par:]
    return out[2], list(dsum[:len(upper)]), [-d for d in dsum[len(upper):]]


def _nonpos_int(v):
    return (v <= 0) & (v == xnp.floor(v))


# ---- 1F1 ---------------------------------------------------------------------------------------
def _hyp1f1_parts(a, b, x):
    """(M(a, b, x), dM/da, dM/db)."""
    # b a pole: 0, -1, ... unless a polynomial ends first (a = -n with -n >= b), as SciPy
    pole = _nonpos_int(b) & ~(_nonpos_int(a) & (a >= b))
    bad = xnp.isnan(a) | xnp.isnan(b) | xnp.isnan(x)
    skip = pole | bad
    a, b, x = xnp.where(skip, 0.0, a), xnp.where(skip, 1.0, b), xnp.where(skip, 0.0, x)
    kummer = (x < 0) & ~_nonpos_int(a)      # a polynomial stays one (its terms are positive)
    p = xnp.where(kummer, b - a, a)
    m, (dp,), (dq,) = _series([p], [b], xnp.where(kummer, -x, x))
    scale = xnp.where(kummer, xnp.exp(x), 1.0)
    da = xnp.where(kummer, -dp, dp) * scale
    db = xnp.where(kummer, dp + dq, dq) * scale
    m = xnp.where(pole, xnp.inf, m * scale)
    return xnp.where(bad, xnp.nan, m), da, db


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
    (inf where b is a pole 0, -1, ... and the series does not end before it, as SciPy).

        >>> hyp1f1(1.5, 2.5, xnp.array([-3.0, 0.7]))
    """
    a, b, x = _floats(a, b, x, name="hyp1f1")
    return _hyp1f1(a, b, x)
