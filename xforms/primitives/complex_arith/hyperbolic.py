"""Complex acosh as a scalar function for the CUDA kernels (compiled there as a device
function: xforms/kernels/cuda/printer/complexes.py).  numba-cuda's own `cmath.acosh` is
compiled for the current device (no PTX without a GPU), and the closed form printed before
lost the special values: acosh(inf+1j) inf+nanj (jax inf+0j), acosh(1+1e-30j)
1.1e-15+1e-15j (jax 1e-15+1e-15j).  (tanh and tan: tangent.py, XLA's.)

The algorithm is the CPU compiled tier's (Numba's cmath, which follows CPython's cmath):

    acosh:  s1 = sqrt(z - 1), s2 = sqrt(z + 1),
            asinh(Re s1 Re s2 + Im s1 Im s2) + 2i atan2(Im s1, Re s2)
            (|z| near overflow: log|z/2| + log 4 + i atan2(y, x))

Written so that a Python run (the CUDA simulator) raises nowhere.  It computes in float64,
complex64 operands too (the caller rounds): a float32 part would be float64 in Python's math
functions (the simulator) and float32 in Numba's, so the simulator would test other numbers.

    >>> acosh_scalar(complex(-math.inf, 1.0))
    (inf+3.141592653589793j)
"""
import cmath
import math

from .elementary import parts

_LN4 = math.log(4.0)
_HUGE = 1.7976931348623157e308 / 4        # beyond: z + 1 may overflow (CPython's threshold)


def acosh_scalar(z):
    """acosh of a complex number, principal branch (the module docstring); a Python complex."""
    x, y = parts(z)
    if abs(x) > _HUGE or abs(y) > _HUGE:       # (infinities too)
        return complex(math.log(math.hypot(x * 0.5, y * 0.5)) + _LN4, math.atan2(y, x))
    s1 = cmath.sqrt(complex(x - 1.0, y))
    s2 = cmath.sqrt(complex(x + 1.0, y))
    return complex(math.asinh(s1.real * s2.real + s1.imag * s2.imag),
                   2.0 * math.atan2(s1.imag, s2.real))

