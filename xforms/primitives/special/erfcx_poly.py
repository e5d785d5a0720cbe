"""erfcx(x) = exp(x^2) erfc(x) as one pass of elementwise operations: what the compiled paths
inline for the erfcx primitive (functions.py, its `inline` fact), whose un-jitted form is
scipy.special.erfcx, one C call (issue #37: the composite ran un-jitted as ~35 NumPy passes,
1.2-3x JAX's time).  The operations are the ones xforms.scipy.special.erfcx composed before
session 34, in the same order (jit's bits did not move).

For x >= 0 the product below the point where erfc underflows (exp(x^2) from an exact square
xh^2 and a small correction), Laplace's continued fraction 1/sqrt(pi) / (x + (1/2)/(x + 1/(x
+ (3/2)/(x + ...)))) above it: five levels (float64, x >= 26) or three (float32, x >= 9);
for x < 0, 2 exp(x^2) - erfcx(-x) (inf where exp(x^2) overflows).

    >>> erfcx_composite(np.array([0.0, 30.0]))      # [1, 0.018795888861416751]
"""
import math

import numpy as np

from .. import elementwise as ew
from ..elementwise.base import full_like_scalar

_SQRT_PI = math.sqrt(math.pi)


def _aval(x):
    return getattr(x, "aval", None) or x


def _k(x, c):
    """The constant c in x's dtype (a strong scalar: float32 stays float32)."""
    return np.asarray(c, _aval(x).dtype)[()]


def _positive(x, erfc):
    """erfcx of x >= 0 (`erfc`: the erfc primitive's function)."""
    f64 = np.dtype(_aval(x).dtype) == np.float64
    big, grid, levels = (26.0, 4096.0, 5) if f64 else (9.0, 64.0, 3)
    below = ew.lt(x, _k(x, big))
    small = ew.select_n(below, full_like_scalar(0.0, x), x)
    xh = ew.div(ew.floor(ew.mul(small, _k(x, grid))), _k(x, grid))   # xh^2 exact
    e = ew.mul(ew.exp(ew.mul(xh, xh)),
               ew.exp(ew.mul(ew.sub(small, xh), ew.add(small, xh))))
    near = ew.mul(e, erfc(small))
    large = ew.select_n(below, x, full_like_scalar(big, x))
    t = large
    for k in range(levels, 0, -1):
        t = ew.add(large, ew.div(_k(x, 0.5 * k), t))
    return ew.select_n(below, ew.div(_k(x, 1.0), ew.mul(t, _k(x, _SQRT_PI))), near)


def erfcx_composite(x, erfc):
    """erfcx of real x, one pass (the erfc primitive's function passed in: `erfc`)."""
    neg = ew.lt(x, _k(x, 0.0))
    pos = _positive(ew.abs(x), erfc)
    return ew.select_n(neg, pos,
                       ew.sub(ew.mul(_k(x, 2.0), ew.exp(ew.mul(x, x))), pos))
