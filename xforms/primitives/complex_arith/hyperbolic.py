"""Complex tanh and acosh as scalar functions for the CUDA kernels (compiled there as device
functions: xforms/kernels/cuda/printer/complexes.py; tan z = -i tanh(iz)).  numba-cuda's own
`cmath.tanh`/`cmath.acosh` are compiled for the current device (no PTX without a GPU), and the
closed forms printed before lost the special values: tanh(inf+infj) was 1+nanj (jax 1+0j),
acosh(inf+1j) inf+nanj (jax inf+0j), acosh(1+1e-30j) 1.1e-15+1e-15j (jax 1e-15+1e-15j).

The algorithms are the CPU compiled tier's (Numba's cmath, which follows CPython's cmath):

    tanh:   t = tanh x, u = tan y, c = 1 / cosh x,
            ((t (1 + u^2)) + i (u c^2)) / (1 + t^2 u^2)
    acosh:  s1 = sqrt(z - 1), s2 = sqrt(z + 1),
            asinh(Re s1 Re s2 + Im s1 Im s2) + 2i atan2(Im s1, Re s2)
            (|z| near overflow: log|z/2| + log 4 + i atan2(y, x))

with C99's values (jax's) where a part is infinite or NaN or y is zero: tanh(+-inf + iy) =
+-1 + i0 sin 2y, tanh(x + i inf) = nan+nanj, tanh(nan + i0) = nan+0j.  Written so that a
Python run (the CUDA simulator) raises nowhere: no math.tan(inf), no cosh overflow (beyond
|x| = 22, 1/cosh x is 2 exp(-|x|) to the last bit).  Both compute in float64, complex64
operands too (the caller rounds): a float32 part would be float64 in Python's math functions
(the simulator) and float32 in Numba's, so the simulator would test other numbers.

    >>> tanh_scalar(complex(math.inf, math.inf)), acosh_scalar(complex(-math.inf, 1.0))
    ((1+0j), (inf+3.141592653589793j))
"""
import cmath
import math

from .elementary import parts

_LN4 = math.log(4.0)
_HUGE = 1.7976931348623157e308 / 4        # beyond: z + 1 may overflow (CPython's threshold)


def tanh_scalar(z):
    """tanh of a complex number (the module docstring); a Python complex."""
    x, y = parts(z)
    if math.isinf(x):
        im = math.copysign(0.0, math.sin(y + y)) if math.isfinite(y) else 0.0
        return complex(math.copysign(1.0, x), im)
    if y == 0:                                  # (a NaN x too: nan+0j, C99's and jax's)
        return complex(math.tanh(x), y)
    if not math.isfinite(y):
        return complex(math.nan, math.nan)
    t, u = math.tanh(x), math.tan(y)
    c = 1.0 / math.cosh(x) if abs(x) <= 22 else 2.0 * math.exp(-abs(x))
    tu = t * u
    d = 1.0 + tu * tu
    return complex(t * (1.0 + u * u) / d, ((u / d) * c) * c)


def acosh_scalar(z):
    """acosh of a complex number, principal branch (the module docstring); a Python complex."""
    x, y = parts(z)
    if abs(x) > _HUGE or abs(y) > _HUGE:       # (infinities too)
        return complex(math.log(math.hypot(x * 0.5, y * 0.5)) + _LN4, math.atan2(y, x))
    s1 = cmath.sqrt(complex(x - 1.0, y))
    s2 = cmath.sqrt(complex(x + 1.0, y))
    return complex(math.asinh(s1.real * s2.real + s1.imag * s2.imag),
                   2.0 * math.atan2(s1.imag, s2.real))

