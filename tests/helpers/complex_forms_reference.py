"""Session 29's vectorised complex forms, verbatim (xforms/primitives/complex_arith at
96e63e4): the oracle of tests/eager/test_complex_eager_forms.py.  Session 30 made the eager
tier's forms cheaper (bitwise selects for data-dependent branches, one cheap candidate test
before the exact special-value masks, fma32's cheaper doubt test, in-place TwoSum and a
bitwise round-to-odd in power.py's fused products); every value must stay these functions'
bit for bit.  Only the names they share with the unchanged code are taken from xforms.
"""
import math

import numpy as np

from xforms.primitives.complex_arith import power as _power_mod
from xforms.primitives.complex_arith.multiply import float32_fma
from xforms.primitives.complex_arith.power import power_scalar

_F32 = np.float32
_XLA_EXP_LO = _power_mod._XLA_EXP_LO
_SPLIT64, _SPLIT32 = 134217729.0, 4097.0


def _libm32(fn, *args):
    """single.py's _libm: fn (a NumPy float64 ufunc) of float32 arrays, rounded to float32."""
    return fn(*(a.astype(np.float64) for a in args)).astype(_F32)


def _libm(fn, *args):
    """power.py's _libm."""
    if args[0].dtype != np.float32:
        return fn(*args)
    return fn(*[a.astype(np.float64) for a in args]).astype(np.float32)


def _complex(re, im):
    out = np.empty(np.shape(re), np.complex64)
    out.real, out.imag = re, im
    return out


# session 29's division.py: _smith
def _smith(ar, ai, br, bi):
    """Smith's quotient parts (see the module docstring), elementwise; float32 parts with
    XLA's FMAs (`fma32`), float64 ones plain (NumPy's quotient stands for those).  Each
    branch's operands are selected first, so each product is computed once."""
    f = fma32 if ar.dtype == np.float32 else (lambda x, y, z: x * y + z)
    lt = np.abs(br) < np.abs(bi)
    small, big = np.where(lt, br, bi), np.where(lt, bi, br)
    ratio = small / big
    denom = f(ratio, small, big)
    re = f(np.where(lt, ar, ai), ratio, np.where(lt, ai, ar)) / denom
    im = f(np.where(lt, ai, -ar), ratio, np.where(lt, -ar, ai)) / denom
    return re, im


# session 29's division.py: fma32
def fma32(a, b, c):
    """a * b + c of float32 arrays rounded once (XLA's CPU fuses these products): the float64
    product is exact and the float64 sum rounds to float32 as the exact sum does, except
    where it landed on a float32 midpoint (or is tiny: float32 denormals round coarser);
    those few elements are redone exactly (multiply.float32_fma).

        >>> fma32(np.float32([3]), np.float32([1 / 3]), np.float32([-1]))    # [2.9802322e-08]
    """
    a, b, c = np.broadcast_arrays(a, b, c)
    s = np.multiply(a, b, dtype=np.float64) + c
    bits = s.view(np.int64)
    size = np.abs(s)
    doubt = ((bits & 0x1FFFFFFF) == 0x10000000) | ((size < 2.0 ** -125) & (size > 0))
    out = s.astype(np.float32)
    for i in np.flatnonzero(doubt):
        out.flat[i] = float32_fma(a.flat[i], b.flat[i], c.flat[i])
    return out


# session 29's single.py: log
def log(z):
    """log of complex64 z (elementary.log_scalar) on its ordinary elements."""
    x, y = z.real, z.imag
    half = _F32(0.5)
    with np.errstate(all="ignore"):
        xx, yy = x * x, y * y
        big, small = np.maximum(xx, yy), np.minimum(xx, yy)
        s1 = big + _F32(-1.0)
        s2 = s1 + small
        ey, ex = _square_error(y), _square_error(x)
        s3 = s2 + ey
        s4 = s3 + ex
        err = (big - big) + (small - (s2 - s1)) + (ey - (s3 - s2)) + (ex - (s4 - s3))
        d = s4 + err
        ax, ay = np.abs(x), np.abs(y)
        hi, lo = np.maximum(ax, ay), np.minimum(ax, ay)
        r = np.where(lo == hi, _F32(1.0), lo / hi)
        far = _libm32(np.log, hi) + half * _libm32(np.log1p, r * r)
        re = np.where(np.abs(d) < half, half * _libm32(np.log1p, d), far)
        return _complex(re, _libm32(np.arctan2, y, x))


# session 29's single.py: sqrt
def sqrt(z):
    """sqrt of complex64 z (elementary.sqrt_scalar) on its ordinary elements; NaN where it
    takes the scaled branch (the caller redoes those)."""
    x, y = z.real, z.imag
    half = _F32(0.5)
    with np.errstate(all="ignore"):
        ax, ay = np.abs(x), np.abs(y)
        same = ax == ay
        w = np.sqrt(_hypot(np.maximum(ax, ay), np.minimum(ax, ay)) * half + ax * half)
        u = np.where(same, np.sqrt(ax) * _F32(1.0986841134678098), w)
        v = np.where(same, np.sqrt(ay) * _F32(0.45508986056222733), ay / (w * _F32(2.0)))
        scaled = ~same & ((w == 0) | (w == np.inf))
        u, v = np.where(scaled, _F32(np.nan), u), np.where(scaled, _F32(np.nan), v)
        re = np.where(x >= 0, u, v)
        im = np.where(x >= 0, v, u)
        return _complex(re, np.where(y < 0, -im, im))


# session 29's single.py: expm1
def expm1(z):
    """e^z - 1 of complex64 z (elementary.expm1_scalar, its cosm1 and fma) on its ordinary
    elements."""
    x, y = z.real, z.imag
    one = _F32(1.0)
    with np.errstate(all="ignore"):
        half_sin = _libm32(np.sin, _F32(0.5) * y)
        cm = np.where(np.abs(y) > _F32(math.pi / 4), _libm32(np.cos, y) - one,
                      _F32(-2.0) * half_sin * half_sin)
        em = _libm32(np.expm1, x)
        im = np.where(y == 0, _F32(0.0), (em + one) * _libm32(np.sin, y))
        return _complex(fma32(em, cm + one, cm), im)


# session 29's single.py: _square_error
def _square_error(v):
    """v*v's rounding error (elementary._square_error, with its fma), elementwise."""
    t = v * _F32(4097.0)
    hi = t + (v - t)
    lo = v - hi
    hl = hi * lo
    return fma32(lo, lo, (fma32(hi, hi, -(v * v)) + hl) + hl)


# session 29's single.py: _hypot
def _hypot(big, small):
    """elementary._hypot, elementwise."""
    r = small / big
    rr = r * r
    s = np.sqrt(rr + _F32(1.0))
    h = np.where((s == 1) & (rr > 0), big + big * rr * _F32(0.5), big * s)
    return np.where(big == small, big * _F32(math.sqrt(2.0)), h)


# session 29's patching.py: _special
def _special(z, out):
    """Where a part of z is infinite, NaN or zero, or the result is not finite."""
    re, im = z.real, z.imag
    with np.errstate(all="ignore"):
        return (~(np.isfinite(re) & np.isfinite(im) & np.isfinite(out.real)
                  & np.isfinite(out.imag)) | (re == 0) | (im == 0))


# session 29's patching.py: _redo
def _redo(out, where, fn, *args):
    """out[i] = fn(*args[i]) where `where`, elementwise in C order (args broadcast to out)."""
    idx = np.flatnonzero(where)
    if idx.size == 0:
        return out
    flat = [np.broadcast_to(a, out.shape) for a in args]
    with np.errstate(all="ignore"):             # (complex64's float32 parts overflow as IEEE)
        for i in idx:
            out.flat[i] = fn(*(a.flat[i] for a in flat))
    return out


# session 29's patching.py: unary
def unary(ufunc, scalar, single=None):
    """(impl, into) of a complex-aware unary primitive: `ufunc` for real operands, for complex
    ones `ufunc` (`single` for complex64: float32 as XLA, single.py) patched by `scalar` on
    the special elements (the module docstring)."""
    def into(out, x):
        x = np.asarray(x)
        if single is not None and x.dtype == np.complex64:
            out[...] = single(x)
        else:
            with np.errstate(all="ignore"):
                ufunc(x, out=out)
        if x.dtype.kind == "c":
            _redo(out, _special(x, out), scalar, x)
        return [out]

    def impl(x):
        x = np.asarray(x)
        if x.dtype.kind != "c":
            return ufunc(x)
        if single is not None and x.dtype == np.complex64:
            out = single(x)
        else:
            with np.errstate(all="ignore"):
                out = np.asarray(ufunc(x))
        out = out if out.flags.writeable else out.copy()
        return _redo(out, _special(x, out), scalar, x)
    return impl, into


# session 29's power.py: _product_error
def _product_error(u, v):
    """u*v's rounding error, exactly (Dekker's product; u scaled by 2^-60 where its split
    would overflow), elementwise: u*v + error == u v."""
    ft = u.dtype.type
    big = np.abs(u) > ft(1e300 if u.dtype == np.float64 else 1e30)
    u = np.where(big, u * ft(2.0 ** -60), u)
    split = ft(_SPLIT64 if u.dtype == np.float64 else _SPLIT32)
    su, sv = u * split, v * split
    uh, vh = su + (u - su), sv + (v - sv)
    ul, vl = u - uh, v - vh
    err = ((uh * vh - u * v) + uh * vl + ul * vh) + ul * vl
    return np.where(big, err * ft(2.0 ** 60), err)


# session 29's power.py: _two_sum
def _two_sum(u, v):
    """u + v and its rounding error (Knuth's TwoSum), elementwise."""
    s = u + v
    bv = s - u
    return s, (u - (s - bv)) + (v - bv)


# session 29's power.py: _fused
def _fused(u, v, w):
    """fma(u, v, w) elementwise (NumPy has none), as Boldo and Melquiond emulate it: the
    product's error and the sum's added rounded to odd, so that the last rounding is the
    only one; the plain u*v + w where that is not finite."""
    p = u * v
    s, e1 = _two_sum(p, w)
    t, e2 = _two_sum(e1, _product_error(u, v))
    odd = (t.view(np.int64 if t.dtype == np.float64 else np.int32) & 1) == 1
    t = np.where((e2 != 0) & ~odd, np.nextafter(t, np.copysign(np.inf, e2).astype(t.dtype)), t)
    out = s + t
    return np.where(np.isfinite(out), out, p + w)


# session 29's power.py: power
def power(x, y):
    """x ** y of complex arrays of one dtype (broadcasting), with XLA's values (`power_scalar`
    elementwise, vectorised; parts' dtype float32 for complex64).

        >>> power(np.array([0j, 1j]), np.array([1 + 1j, 2 + 0j]))    # [nan+nanj, -1+1.2e-16j]
    """
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    a, b, c, d = x.real, x.imag, y.real, y.imag
    ft = a.dtype.type
    with np.errstate(all="ignore"):
        ax, ay = np.abs(a), np.abs(b)
        big, small = np.maximum(ax, ay), np.minimum(ax, ay)
        ratio = small / big
        r = big * np.sqrt(_fused(ratio, ratio, ft(1.0)))
        r = np.where(np.isnan(r), small, r)
        angle = _libm(np.arctan2, b, a)
        v = -d * angle
        e = _libm(np.exp, v)
        if a.dtype == np.float64:
            e = np.where(v < _XLA_EXP_LO, ft(0.0), e)
        lr = _libm(np.log, r)
        coeff = e * _libm(np.power, r, c)
        q = _fused(c, angle, d * lr)
        re, im = coeff * _libm(np.cos, q), coeff * _libm(np.sin, q)
    zero_base = (r == 0) & (d == 0) & (c >= 0)
    one = ((c == 0) & (d == 0)) | ((a == 1) & (b == 0))
    inf_base = (a == np.inf) & (b == 0) & (d == 0)
    cases = [inf_base & (c < 0), inf_base & (c > 0), one, zero_base]
    re = np.select(cases, [ft(0.0), ft(np.inf), ft(1.0), ft(0.0)], re)
    im = np.select(cases, [ft(0.0)] * 4, im)
    out = np.empty(re.shape, x.dtype)
    out.real, out.imag = re, im
    # NumPy's atan2, log and pow differ from libm's (XLA's) in a last bit at times, which a
    # large exponent makes material (q = c t: c ulp(t)): libm's, by the scalar function
    with np.errstate(all="ignore"):
        for i in np.flatnonzero((np.abs(c) > 64) | (np.abs(d) > 64)):
            out.flat[i] = power_scalar(x.flat[i], y.flat[i])
    return out
