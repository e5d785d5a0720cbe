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

from .elementary import exp_scalar, parts

_LN2 = math.log(2.0)


def _expm1(v):
    if v > 709.0:
        return math.inf
    return math.expm1(v) if v == v else v


def _sin(v):
    return math.sin(v) if math.isfinite(v) else math.nan


def _cos(v):
    return math.cos(v) if math.isfinite(v) else math.nan


def _sh_ch(y):
    """sinh y and cosh y from expm1, as jax's sin and cos spell them."""
    a, b = _expm1(y), _expm1(-y)
    return (a - b) * 0.5, (a + b + 2.0) * 0.5


def sin_scalar(z):
    """sin z (the module docstring): a Python complex."""
    x, y = parts(z)
    sh, ch = _sh_ch(y)
    im = _cos(x) * sh
    return complex(0.0 if x == 0 else _sin(x) * ch, im)


def cos_scalar(z):
    """cos z (the module docstring): a Python complex."""
    x, y = parts(z)
    sh, ch = _sh_ch(y)
    return complex(_cos(x) * ch, 0.0 if x == 0 else -_sin(x) * sh)


def _halves(z):
    """e(z - log 2) and e(-log 2 - z): jax's complex sums, then jax's exp."""
    x, y = parts(z)
    return exp_scalar(complex(x - _LN2, y + 0.0)), exp_scalar(complex(-_LN2 - x, 0.0 - y))


def sinh_scalar(z):
    """sinh z (the module docstring): a Python complex."""
    p, q = _halves(z)
    return complex(p.real - q.real, p.imag - q.imag)


def cosh_scalar(z):
    """cosh z (the module docstring): a Python complex."""
    p, q = _halves(z)
    return complex(p.real + q.real, p.imag + q.imag)
