"""max and min: -0.0 < +0.0 as XLA orders them, complex operands by real then imaginary
part, and ties splitting the tangent evenly (JAX's rule).

>>> max(np.float64(-0.0), np.float64(0.0))       # 0.0 (NumPy: either operand)
"""
import numpy as np

from ...core import trace as core
from ...core.engine_prims import convert_element_type, like as scalar_like
from ...transforms.jvp import defjvp
from .arithmetic import add, mul
from .base import bcast_to, bind2, define
from .logic import eq, gt, lt


# --- max and min: ties split the tangent evenly, as in JAX --------------------------------------
def _ordered_zeros(ufunc, tie):
    """`ufunc` (np.maximum, np.minimum) with -0.0 < +0.0, as lax.max/min (XLA) order them:
    `max(-0.0, 0.0)` and `max(0.0, -0.0)` are 0.0, where NumPy returns either operand of a
    tie.  `tie(x, y)`: the result where both operands are zeros (their sum for max; for min
    the negated sum of their negations), taken only where a result is zero.

        >>> _ordered_zeros(np.maximum, np.add)(np.float64(0.0), np.float64(-0.0))
        array(0.)

    (No `into` rule computing into a dying operand: the tie needs both operands as they
    were.)"""
    negative = ufunc is np.maximum        # the sign of the zeros that may be wrong
    pick = np.greater if negative else np.less

    def impl(x, y):
        r = np.asarray(ufunc(x, y))
        if r.dtype.kind == "c":   # XLA's pick: x where it wins by real part, then imaginary
            x, y = np.asarray(x), np.asarray(y)   # part, else y (a NaN loses; np.maximum's wins)
            wins = pick(x.real, y.real) | ((x.real == y.real) & pick(x.imag, y.imag))
            return np.asarray(np.where(wins, x, y))
        if r.dtype.kind == "f":
            odd = r == 0                  # (relu's zeros are +0.0: two cheap passes)
            if _count(odd):
                odd &= np.signbit(r) == negative
                if _count(odd):
                    np.copyto(r, tie(x, y), where=odd & (x == 0) & (y == 0))
        return r
    return impl


_count = np.count_nonzero     # (C: odd.any() is ndarray's Python-level method, ~1.5 us)


def fix_zero_ties(r, maximum, took_part):
    """A max (`maximum`) or min of many values by NumPy's reduce, accumulate or `.at` (a tie
    of zeros keeps either) with -0.0 < +0.0, as XLA orders them: a zero result of the sign
    that may have lost a tie (-0.0 for max, +0.0 for min) takes the other sign where a
    winning zero took part.  `took_part(winning)`: the operands' mask `winning(x)` (their
    zeros of the winning sign) combined as the result was (any over the reduced axes), or
    False where no winning zero took part.
    Two cheap passes over `r` when no result is zero.

        >>> fix_zero_ties(np.maximum.reduce(x), True,
        ...               lambda winning: np.logical_or.reduce(winning(x)))
    """
    r = np.asarray(r)
    if r.dtype.kind != "f":
        return r
    odd = r == 0
    if _count(odd):
        odd &= np.signbit(r) == maximum
        if _count(odd):
            part = took_part(lambda x: (x == 0) & (np.signbit(x) != maximum))
            if part is not False:             # (False: no winning zero took part)
                r = np.where(odd & part, -r, r)
    return r


max_p = define("max", _ordered_zeros(np.maximum, np.add), 2, commutative=True, cheap=True,
             fresh=True)
max = bind2(max_p)
min_p = define("min", _ordered_zeros(np.minimum, lambda x, y: -(-x - y)), 2, commutative=True,
             cheap=True, fresh=True)
min = bind2(min_p)


def minmax_weight(x, y, pick, like):
    """max's (min's) derivative's weight of `x` against `y`: 1 where `pick(x, y)`, 1/2 at
    ties (lax.cummax's rule shares it too).  Converts (not select_n of scalars), so a
    rank-0 operand next to an array operand works."""
    dt = core.get_aval(like).dtype
    return add(convert_element_type(pick(x, y), dt),
               mul(scalar_like(0.5, like), convert_element_type(eq(x, y), dt)))


defjvp(max_p, lambda t, ans, x, y: bcast_to(mul(t, minmax_weight(x, y, gt, ans)), ans),
       lambda t, ans, x, y: bcast_to(mul(t, minmax_weight(y, x, gt, ans)), ans))
defjvp(min_p, lambda t, ans, x, y: bcast_to(mul(t, minmax_weight(x, y, lt, ans)), ans),
       lambda t, ans, x, y: bcast_to(mul(t, minmax_weight(y, x, lt, ans)), ans))
