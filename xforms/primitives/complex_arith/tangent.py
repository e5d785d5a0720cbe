"""Complex tanh and tan as XLA computes them (jax 0.10.2's CPU IR: `XLA_FLAGS=--xla_dump_to=DIR`
on `jax.jit(jnp.tanh)`), as scalar functions every tier runs (see elementary.py) and as NumPy
arrays for the eager tier.  In the parts' type (float32 for complex64, as XLA):

    tanh(x + iy) = (em - ep) / d + i (4 cos y sin y) / d,   d = em + ep + 4 cos^2 y
        em = expm1(2x), ep = expm1(-2x), with XLA's expm1: e^v - 1 where |v| > 1/2, else
        tanh(v/2) (e^v + 1), and v itself where v/2 == 0
    Re = sign(x) where em + ep is +inf; Re = NaN where 4 cos y sin y is NaN and x finite;
    Im = +0 where y == 0 (-0 too), or where x is infinite and 4 cos y sin y NaN
    tan z = -i tanh(iz): tanh of (-y, x), then (Im, -Re)

C99's (NumPy's, Numba's cmath) differ at special values: tanh(1-0j) has Im +0 here (C99:
-0), tanh(infj) and tanh(nanj) are nan+nanj (C99: nanj), tanh(nan+0j) nan+0j as C99's.

    >>> tanh_scalar(complex(1.0, -0.0)), tan_scalar(complex(0.0, math.inf))
    ((0.761594155955765+0j), 1j)
"""
import math

import numpy as np

from .elementary import cos_typed, own_parts, sin_typed

_EXP_LIMIT = 709.782712893384            # log of the largest float64: e^v is finite up to here


def _exp(v):
    """e^v in v's type, inf beyond float64's range (Python's math would raise)."""
    t = type(v)
    return t(math.exp(v)) if v <= _EXP_LIMIT or v != v else t(math.inf)


def _expm1(v):
    """e^v - 1 as XLA's tanh spells it (the module docstring), in v's type."""
    t = type(v)
    e, h = _exp(v), v * t(0.5)
    if h == 0:
        return v
    if abs(v) > t(0.5):
        return e - t(1.0)
    return t(math.tanh(h)) * (e + t(1.0))


def tanh_parts(x, y):
    """tanh(x + iy) (the module docstring) as its parts, in x's and y's type."""
    t = type(x)
    four = t(4.0)
    a = x + x
    em, ep = _expm1(a), _expm1(a * t(-1.0))
    c, s = cos_typed(y), sin_typed(y)
    cs = c * s * four
    total = em + ep
    d = total + c * c * four
    re = t(math.copysign(1.0, x)) if total == math.inf else (em - ep) / d
    im = cs / d
    infinite = abs(x) == math.inf
    if cs != cs and not infinite:
        re = t(math.nan)
    if y == 0 or (infinite and cs != cs):
        im = t(0.0)
    return re, im


def tanh_scalar(z):
    """tanh z (the module docstring), in the parts' type: a Python complex.

        >>> tanh_scalar(complex(math.inf, math.inf))     # (1+0j)
    """
    x, y = own_parts(z)
    re, im = tanh_parts(x, y)
    return complex(re, im)


def tan_scalar(z):
    """tan z = -i tanh(iz) (the module docstring), in the parts' type: a Python complex.

        >>> tan_scalar(complex(0.0, math.inf))           # 1j
    """
    x, y = own_parts(z)
    re, im = tanh_parts(y * type(y)(-1.0), x)
    return complex(im, re * type(re)(-1.0))


def _rounded(fn, v):
    """fn (a NumPy float64 ufunc) of v in v's type: float32 through float64, rounded once, as
    the scalar functions compute it in Python."""
    return fn(v.astype(np.float64)).astype(v.dtype) if v.dtype == np.float32 else fn(v)


def _expm1_array(v):
    t = v.dtype.type
    e = _rounded(np.exp, v)
    h = v * t(0.5)
    near = _rounded(np.tanh, h) * (e + t(1.0))
    return np.where(h == 0, v, np.where(np.abs(v) > t(0.5), e - t(1.0), near))


def tanh_array(x, y):
    """tanh_parts of arrays x, y (the eager tier), elementwise: (re, im)."""
    t = x.dtype.type
    four = t(4.0)
    with np.errstate(all="ignore"):
        a = x + x
        em, ep = _expm1_array(a), _expm1_array(a * t(-1.0))
        c, s = _rounded(np.cos, y), _rounded(np.sin, y)
        cs = c * s * four
        total = em + ep
        d = total + c * c * four
        re = np.where(total == np.inf, np.copysign(t(1.0), x), (em - ep) / d)
        im = cs / d
    infinite = np.abs(x) == np.inf
    re = np.where(np.isnan(cs) & ~infinite, t(np.nan), re)
    im = np.where((y == 0) | (infinite & np.isnan(cs)), t(0.0), im)
    return re, im
