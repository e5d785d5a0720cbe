"""Complex sin, cos, sinh and cosh as jax computes them (jax 0.10.2's HLO on the CPU), as
scalar functions every tier runs (see elementary.py).  Where they differ from C99's (NumPy's,
Numba's cmath, the closed forms CUDA printed before): sin(+-0 + iy) has Re +0, and cos Im +0;
sinh and cosh are exp(z - log 2) -+ exp(-log 2 - z), each term jax's exp (elementary.py), so
cosh(inf+0j) = inf+nanj... as jax gives it:

    sin(x + iy) = sin x ch + i cos x sh,  cos(x + iy) = cos x ch - i sin x sh,
        sh = (expm1(y) - expm1(-y)) / 2,  ch = (expm1(y) + expm1(-y) + 2) / 2
    sinh z = e(z - log 2) - e(-log 2 - z),  cosh z = e(z - log 2) + e(-log 2 - z)

    >>> sin_scalar(complex(-0.0, math.inf))      # (0+infj): Re +0 (C99: -0)
"""
import math

from .elementary import cos_typed, exp_parts, expm1_typed, own_parts, sin_typed

_LN2 = math.log(2.0)


def _sh_ch(y):
    """sinh y and cosh y from expm1, as jax's sin and cos spell them, in y's type."""
    t = type(y)
    a, b = expm1_typed(y), expm1_typed(-y)
    return (a - b) * t(0.5), (a + b + t(2.0)) * t(0.5)


def sin_scalar(z):
    """sin z (the module docstring), in the parts' type: a Python complex."""
    x, y = own_parts(z)
    sh, ch = _sh_ch(y)
    im = cos_typed(x) * sh
    return complex(type(x)(0.0) if x == 0 else sin_typed(x) * ch, im)


def cos_scalar(z):
    """cos z (the module docstring), in the parts' type: a Python complex."""
    x, y = own_parts(z)
    sh, ch = _sh_ch(y)
    return complex(cos_typed(x) * ch, type(x)(0.0) if x == 0 else -sin_typed(x) * sh)


def _halves(z):
    """e(z - log 2) and e(-log 2 - z) as parts: jax's complex sums, then jax's exp, in the
    parts' type (a complex64's halves are complex64s, as XLA's)."""
    x, y = own_parts(z)
    t = type(x)
    ln2, zero = t(_LN2), t(0.0)
    p = exp_parts(x - ln2, y + zero)
    q = exp_parts(-ln2 - x, zero - y)
    return p, q


def sinh_scalar(z):
    """sinh z (the module docstring): a Python complex."""
    p, q = _halves(z)
    return complex(p[0] - q[0], p[1] - q[1])


def cosh_scalar(z):
    """cosh z (the module docstring): a Python complex."""
    p, q = _halves(z)
    return complex(p[0] + q[0], p[1] + q[1])
