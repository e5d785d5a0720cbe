"""Complex arcsin, arccos, arcsinh, arccosh, arctan and arctanh as jax computes them (jax
0.10.2 lowers them through StableHLO's CHLO decompositions; their HLO: `jax.jit(jnp.arcsin)
.lower(z).compile()`, `XLA_FLAGS=--xla_dump_to=DIR`), as scalar functions every tier runs
(see elementary.py), in the parts' type (float32 for complex64, as XLA).

asin and acos share one kernel of a = |x|, b = |y| (Hull, Fairgrieve and Tang's algorithm):

    r = |a + 1 + ib|, s = |a - 1 + ib| (XLA's hypot), m = (r + s) / 2
    re-argument  w = b (huge parts), sqrt(h (b^2 / (r + a + 1) + s - (a - 1))) (a <= 1),
                 else b sqrt(h / (r + a + 1) + h / (s + a - 1)), with h = (m + a) / 2
    im-magnitude v = log(M) + log 2 + log1p((a/b)^2) / 2 (huge parts, M the larger),
                 b / sqrt(t (m + 1)) (b tiny and a < 1), else log1p(t + sqrt(t (m + 1))),
                 t = m - 1 spelled without cancellation
    asin z = atan2(x, w) + i sign(y) v      acos z = atan2(w, x) - i sign(y) v
    asinh z = i asin(-iz) (the kernel of |y|, |x|)   acosh: acos's parts swapped, as
    jnp.arccosh (negated where its real part is negative)

atanh z = log1p(4 x / ((1 - |x|)^2 + y^2)) sign(x) / 4 + i atan2(2y, (1 - |x|)(1 + |x|) - y^2) / 2
(far out: 1/|x| or 1 / (|x|/y + y/|x|) / y in the log1p, +-pi/2 in Im); atan z = -i atanh(iz).

C99's values (NumPy's, Numba's cmath) differ at signed zeros, infinities and NaNs: jax's
asin(inf-0j) is pi/2+infj (C99: pi/2-infj), acos(inf-0j) -infj (C99: +infj), acosh(0-0j)
1.5707963267948966j (C99: -1.57...j), atanh(inf-0j) +1.5707963267948966j (C99: -),
asin(nanj) nan+nanj (C99: nanj), atan(nan+infj) -pi/2+0j (C99: nan+0j).  None raises in
Python (the CUDA simulator runs them there).  `inverse_array` is the same on NumPy arrays of
parts (the eager tier: patching.py), every branch a `np.where`.

    >>> asin_scalar(complex(2.0, 0.0)), atanh_scalar(complex(1.0, 0.0))
    ((1.5707963267948966+1.3169578969248166j), (inf+0j))
"""
import math

import numpy as np

from .elementary import own_parts
from .power import nan_max, nan_min

_LN2 = math.log(2.0)


def _arc_single(t):
    """Whether the float type t is float32 (2^24 + 1 rounds to 2^24 there, not in float64)."""
    return t(16777217.0) == t(16777216.0)


def _arc_hypot(p, q):
    """|p + iq| for p, q >= 0 as XLA spells it in this kernel, in p's type."""
    t = type(p)
    big, small = nan_max(p, q), nan_min(p, q)
    if big == small:
        return big * t(1.4142135623730951)
    r = small / big
    rr = r * r
    root = t(math.sqrt(rr + t(1.0)))
    if root == 1 and rr > 0:
        return big + big * rr / t(2.0)
    return big * root


def _re_argument(a, b, r, s, h):
    """w (the module docstring): atan2's other operand of the real part."""
    t = type(a)
    big = nan_max(a, b) >= (t(2.30584287e+18) if _arc_single(t) else t(1.6759759912428245e+153))
    if big:
        return b
    xp1, xm1 = a + t(1.0), a - t(1.0)
    if a <= 1:
        return t(math.sqrt(h * (b * b / (r + xp1) + (s - xm1))))
    return b * t(math.sqrt(h / (r + xp1) + h / (s + xm1)))


def _arc_far(a, b, t):
    """(whether a part is huge, v there): log of the larger part + log 2 + log1p((a/b)^2) / 2
    (the scaled form, with XLA's thresholds)."""
    single = _arc_single(t)
    low = a < (t(2.30584285e+30) if single else t(1.6759759912428244e+165))
    c = (t(2.30584274e+12) if single else t(1.6759759912428242e+147)) if low else \
        (t(2.30584283e+20) if single else t(1.6759759912428244e+155))
    by_b = b >= c
    top = b if by_b else a
    huge = top >= (c if by_b else (t(2.30584287e+18) if single else t(1.6759759912428245e+153)))
    if not huge:
        return False, t(0.0)
    ratio = a / b if by_b and b != math.inf else t(0.0)
    return True, t(math.log(top)) + t(_LN2) + t(math.log1p(ratio * ratio)) * t(0.5)


def _im_magnitude(a, b, r, s, m):
    """v (the module docstring): the imaginary part's magnitude."""
    t = type(a)
    huge, far = _arc_far(a, b, t)
    if huge:
        return far
    one, half = t(1.0), t(0.5)
    xp1, xm1 = a + one, a - one
    tiny = b < (t(4.33680869e-19) if _arc_single(t) else t(5.9666725849601654e-154)) and a < 1
    yy = b * b
    if tiny:
        am1 = -(xp1 * xm1 / (m + one))
    elif a >= 1:
        am1 = yy * half / (r + xp1) + (s + xm1) * half
    elif m <= t(1.5):
        am1 = yy * half / (r + xp1) + yy * half / (s - xm1)
    else:
        am1 = m - one
    root = t(math.sqrt(am1 * (m + one)))
    if tiny:
        return b / root
    return t(math.log1p(am1 + root))


def asin_kernel(a, b):
    """(w, v) of a = |x|, b = |y| (the module docstring), in a's type."""
    t = type(a)
    r, s = _arc_hypot(abs(a + t(1.0)), b), _arc_hypot(abs(a - t(1.0)), b)
    m = (r + s) * t(0.5)
    h = (m + a) * t(0.5)
    return _re_argument(a, b, r, s, h), _im_magnitude(a, b, r, s, m)


def asin_scalar(z):
    """arcsin z (the module docstring), in the parts' type: a Python complex."""
    x, y = own_parts(z)
    w, v = asin_kernel(abs(x), abs(y))
    return complex(type(x)(math.atan2(x, w)), -v if y < 0 else v)


def acos_scalar(z):
    """arccos z (the module docstring), in the parts' type: a Python complex."""
    x, y = own_parts(z)
    w, v = asin_kernel(abs(x), abs(y))
    return complex(type(x)(math.atan2(w, x)), v if y < 0 else -v)


def asinh_scalar(z):
    """arcsinh z = i asin(-iz) (the module docstring), in the parts' type: a Python complex."""
    x, y = own_parts(z)
    w, v = asin_kernel(abs(y), abs(x))
    return complex(-v if x < 0 else v, type(x)(math.atan2(y, w)))


def acosh_scalar(z):
    """arccosh z as jnp.arccosh (the module docstring), in the parts' type: a Python complex."""
    x, y = own_parts(z)
    w, v = asin_kernel(abs(x), abs(y))
    im = type(x)(math.atan2(w, x))
    im = -im if y < 0 else im
    if v < 0:                       # (jnp.arccosh's where: never, for a non-negative v)
        return complex(-v, -im)
    return complex(v, im)


def atanh_parts(x, y):
    """atanh(x + iy) (the module docstring) as its parts, in x's type."""
    t = type(x)
    one, single = t(1.0), _arc_single(t)
    ax, ay = abs(x), abs(y)
    limit = t(2.81475044e+14) if single else t(8.1129638414606718e+31)
    safe = ax < limit and ay < limit
    om = one - ax
    yy = y * y
    if safe:
        d = om * om + yy
        arg = ax / d if d != 0 else t(math.inf)
    elif ay * (t(16777218.0) if single else t(9007199254740994.0)) < ax:
        arg = one / ax
    elif math.isinf(x) or math.isinf(y):
        arg = t(0.0)
    elif x != x or y != y:
        arg = t(math.nan)
    elif ax == 0:                   # (XLA's 1 / (0 + y/0) / y: +0; Python's y/0 raises)
        arg = t(0.0)
    else:
        arg = one / (ax / y + y / ax) / y
    re = t(math.log1p(arg * t(4.0))) * (one if x >= 0 else -one) * t(0.25)
    if safe:
        im = t(math.atan2(y + y, om * (ax + one) - yy))
    else:
        im = (one if y >= 0 else -one) * t(math.pi)
    return re, im * t(0.5)


def atanh_scalar(z):
    """arctanh z (the module docstring), in the parts' type: a Python complex."""
    x, y = own_parts(z)
    re, im = atanh_parts(x, y)
    return complex(re, im)


def atan_scalar(z):
    """arctan z = -i atanh(iz) (the module docstring), in the parts' type: a Python complex."""
    x, y = own_parts(z)
    re, im = atanh_parts(-y, x)
    return complex(im, -re)


# --- the same on NumPy arrays of parts (the eager tier), elementwise, every branch a where ---

def _libm_array(fn, *vs):
    """fn (a NumPy float64 ufunc) in the arrays' type: float32 through float64, rounded once,
    as the scalar functions compute it in Python."""
    if vs[0].dtype == np.float32:
        return fn(*(v.astype(np.float64) for v in vs)).astype(np.float32)
    return fn(*vs)


def _hypot_array(p, q):
    t = p.dtype.type
    big, small = np.maximum(p, q), np.minimum(p, q)
    r = small / big
    rr = r * r
    root = np.sqrt(rr + t(1.0))
    near = np.where((root == 1) & (rr > 0), big + big * rr / t(2.0), big * root)
    return np.where(big == small, big * t(1.4142135623730951), near)


def asin_kernel_array(a, b):
    """asin_kernel of arrays a = |x|, b = |y|: (w, v)."""
    t, single = a.dtype.type, a.dtype == np.float32
    one, half = t(1.0), t(0.5)
    safe_max = t(2.30584287e+18) if single else t(1.6759759912428245e+153)
    xp1, xm1 = a + one, a - one
    r, s = _hypot_array(np.abs(xp1), b), _hypot_array(np.abs(xm1), b)
    m = (r + s) * half
    h = (m + a) * half
    yy = b * b
    w = np.where(np.maximum(a, b) >= safe_max, b, np.where(
        a <= 1, np.sqrt(h * (yy / (r + xp1) + (s - xm1))),
        b * np.sqrt(h / (r + xp1) + h / (s + xm1))))
    c = np.where(a < (t(2.30584285e+30) if single else t(1.6759759912428244e+165)),
                 t(2.30584274e+12) if single else t(1.6759759912428242e+147),
                 t(2.30584283e+20) if single else t(1.6759759912428244e+155))
    by_b = b >= c
    top = np.where(by_b, b, a)
    ratio = np.where(by_b & (b != np.inf), a / b, t(0.0))
    far = _libm_array(np.log, top) + t(_LN2) + _libm_array(np.log1p, ratio * ratio) * half
    tiny = (b < (t(4.33680869e-19) if single else t(5.9666725849601654e-154))) & (a < 1)
    am1 = np.where(tiny, -(xp1 * xm1 / (m + one)), np.where(
        a >= 1, yy * half / (r + xp1) + (s + xm1) * half, np.where(
            m <= t(1.5), yy * half / (r + xp1) + yy * half / (s - xm1), m - one)))
    root = np.sqrt(am1 * (m + one))
    v = np.where(top >= np.where(by_b, c, safe_max), far,
                 np.where(tiny, b / root, _libm_array(np.log1p, am1 + root)))
    return w, v


def inverse_array(name, x, y):
    """(re, im) of arcsin/arccos/arcsinh/arccosh/arctan/arctanh (`name`, NumPy's spelling) of
    arrays x, y of parts, as the scalar functions above."""
    with np.errstate(all="ignore"):
        if name in ("arctan", "arctanh"):
            re, im = _atanh_array(-y if name == "arctan" else x, x if name == "arctan" else y)
            return (im, -re) if name == "arctan" else (re, im)
        w, v = asin_kernel_array(np.abs(y), np.abs(x)) if name == "arcsinh" else \
            asin_kernel_array(np.abs(x), np.abs(y))
        if name == "arcsin":
            return _libm_array(np.arctan2, x, w), np.where(y < 0, -v, v)
        if name == "arccos":
            return _libm_array(np.arctan2, w, x), np.where(y < 0, v, -v)
        if name == "arcsinh":
            return np.where(x < 0, -v, v), _libm_array(np.arctan2, y, w)
        im = _libm_array(np.arctan2, w, x)
        im = np.where(y < 0, -im, im)
        return np.where(v < 0, -v, v), np.where(v < 0, -im, im)


def _atanh_array(x, y):
    """atanh_parts of arrays (IEEE's zeros and NaNs give the scalar function's branches)."""
    t, single = x.dtype.type, x.dtype == np.float32
    one = t(1.0)
    ax, ay = np.abs(x), np.abs(y)
    limit = t(2.81475044e+14) if single else t(8.1129638414606718e+31)
    safe = (ax < limit) & (ay < limit)
    om = one - ax
    yy = y * y
    arg = np.where(safe, ax / (om * om + yy), np.where(
        ay * (t(16777218.0) if single else t(9007199254740994.0)) < ax, one / ax, np.where(
            np.isinf(x) | np.isinf(y), t(0.0), one / (ax / y + y / ax) / y)))
    re = _libm_array(np.log1p, arg * t(4.0)) * np.where(x >= 0, one, -one) * t(0.25)
    im = np.where(safe, _libm_array(np.arctan2, y + y, om * (ax + one) - yy),
                  np.where(y >= 0, one, -one) * t(math.pi))
    return re, im * t(0.5)
