"""lax.round with JAX's RoundingMethod: halves away from zero (JAX's default) or to the even
neighbour.

    >>> lax.round(xnp.array([0.5, 2.5, -0.5]))               # [1., 3., -1.]
"""
import enum

from ...core.trace import get_aval as aval_of
from ...primitives import elementwise as ew
from .constructors import full_like


class RoundingMethod(enum.IntEnum):
    """How lax.round breaks ties: away from zero (JAX's default) or to the even neighbour."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """x rounded to an integral value; halves go away from zero (JAX's default) or, with
    RoundingMethod.TO_NEAREST_EVEN, to the even neighbour (as xnp.round).  Zero derivative.

    >>> lax.round(xnp.array([0.5, 2.5, -0.5]))               # [1., 3., -1.]
    """
    method = RoundingMethod(rounding_method)
    if aval_of(x).dtype.kind != "f":
        raise TypeError(f"round does not accept dtype {aval_of(x).dtype.name}. Accepted dtypes "
                        "are subtypes of floating.")
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return ew.round(x)
    finite = ew.is_finite(x)
    v = ew.select_n(finite, full_like(x, 0.0), x)       # inf and NaN pass through below
    t = ew.select_n(ew.lt(v, ew.like(0.0, v)), ew.floor(v), ew.ceil(v))   # toward zero
    away = ew.ge(ew.abs(ew.sub(v, t)), ew.like(0.5, v))   # (v - t: exact)
    return ew.select_n(finite, x, ew.select_n(away, t, ew.add(t, ew.sign(v))))
