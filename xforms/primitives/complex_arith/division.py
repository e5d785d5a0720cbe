"""Complex division as XLA computes it (jax on the CPU), written once for every tier: the
eager impl of `div` (`divide`, NumPy arrays) and the compiled kernels' scalar helper
(`divide_scalar`, plain Python on the parts, which Numba compiles: xforms/kernels/runtime/
cpu_runtime.complex_div).

XLA (ElementalIrEmitter::EmitComplexDivide) divides by Smith's algorithm, scaling by the
divisor's larger part,

    |b.re| < |b.im|:  r = b.re / b.im,  d = b.im + b.re r,
                      ((a.re r + a.im) + (a.im r - a.re) i) / d
    otherwise:        r = b.im / b.re,  d = b.re + b.im r,
                      ((a.re + a.im r) + (a.im - a.re r) i) / d

complex64's in float32 with each product fused into its sum (XLA's HLO shows none, its CPU
object code does: vfmadd; so 2,000 ordinary complex64 quotients are jax 0.10.2's bit for bit,
419 differed without; complex128 stays unfused here, though XLA fuses it too: 425 of 2,000
ordinary complex128 quotients differ from jax's by an ulp),

and only where that gives nan+nanj takes C99's corner cases (Annex G's _Cdivd recovery):

    b == 0:                          copysign(inf, b.re) * a        (both parts)
    a infinite, b finite:            inf * (s.re b.re + s.im b.im) + inf * (s.im b.re - s.re b.im) i
    a finite, b infinite:            0 * (a.re t.re + a.im t.im) + 0 * (a.im t.re - a.re t.im) i

where s (t) is a's (b's) parts as copysign(1, part) for an infinite part, copysign(0,
part) otherwise.  NumPy's division differs at infinities and zero divisors
((inf+infj) / 1j: XLA inf-infj, NumPy nan+nanj; (inf+infj) / -0j: -inf-infj, inf+infj);
finite quotients agree to rounding (NumPy does not fuse): the eager tier divides complex64 by
Smith's with fused products (`fma32`), complex128 by NumPy's where the quotient is finite.

Denormals are kept (IEEE's, NumPy's), where XLA's CPU flushes them: a choice made here, on
this evidence (jax 0.10.2, 2026-11-30).  The flush is XLA's CPU execution mode (FTZ/DAZ),
not part of its division: every op of every float dtype flushes, float64 too
(jax.jit(lambda x, y: x * y)(1e-308, 0.5) is 0.0, 1e-310 / 1.0 is 0.0), while eager NumPy
and Numba kernels keep them.  Of the complex64 quotients of a 100 x 100 grid (parts +-inf,
nan, +-0, 1, 2, -7.5, 3e38) 396 differ from jax's, 392 through a float32 denormal (an
operand, Smith's ratio 1/3e38, a product of it or the quotient: (inf+infj) / (1+3e38j) is
inf+nanj here, inf-infj in jax), the other 4 by XLA's FMA rounding.  Flushing in division
alone would make it the one op that does; flushing everywhere would need the eager tier's
NumPy to (it cannot), and would tie xforms to one XLA backend's mode (its GPU backend's
was not checked: no GPU here).

    >>> divide(np.array([complex(np.inf, np.inf)]), np.array([1j]))    # [inf-infj]
"""
import math

import numpy as np

from . import select
from .multiply import float32_fma, fma
from .pieces import in_pieces


def _smith(ar, ai, br, bi):
    """Smith's quotient parts (see the module docstring), elementwise; float32 parts with
    XLA's FMAs (`fma32`), float64 ones plain (NumPy's quotient stands for those).  Each
    branch's operands are selected first (select.py, bitwise: the branch is data's), so
    each product is computed once."""
    f = fma32 if ar.dtype == np.float32 else (lambda x, y, z: x * y + z)
    lt = select.lanes(np.abs(br) < np.abs(bi), ar.dtype)
    small, big = select.swap(lt, br, bi)
    ratio = small / big
    denom = f(ratio, small, big)
    a1, a2 = select.swap(lt, ar, ai)
    re = f(a1, ratio, a2)
    re /= denom
    b1, b2 = select.swap(lt, ai, -ar)
    im = f(b1, ratio, b2)
    im /= denom
    return re, im


def fma32(a, b, c):
    """a * b + c of float32 arrays rounded once (XLA's CPU fuses these products): the float64
    product is exact and the float64 sum rounds to float32 as the exact sum does, except
    where it landed on a float32 midpoint (or is tiny: float32 denormals round coarser);
    those few elements are redone exactly (multiply.float32_fma).  Three passes for the
    value, four cheap ones (the low bits; the float32 result's size, a superset of the tiny
    ones) to find the few to redo.

        >>> fma32(np.float32([3]), np.float32([1 / 3]), np.float32([-1]))    # [2.9802322e-08]
    """
    if not np.shape(a) == np.shape(b) == np.shape(c):
        a, b, c = np.broadcast_arrays(a, b, c)
    s = np.asarray(np.multiply(a, b, dtype=np.float64))
    np.add(s, c, out=s)
    out = s.astype(np.float32)
    low = np.bitwise_and(s.view(np.uint64), np.uint64(0x1FFFFFFF))
    doubt = np.equal(low, np.uint64(0x10000000))
    doubt |= np.abs(out) <= _F32_TINY
    if doubt.any():
        idx = np.flatnonzero(doubt)
        size = np.abs(s.ravel()[idx])           # (the float64 sum's test: tiny, not 0)
        idx = idx[(low.ravel()[idx] == 0x10000000) | ((size < 2.0 ** -125) & (size > 0))]
        flat, a, b, c = out.reshape(-1), np.ravel(a), np.ravel(b), np.ravel(c)
        for i in idx:                           # (flat: a view, out is fresh and contiguous)
            flat[i] = float32_fma(a[i], b[i], c[i])
    return out


_F32_TINY = np.float32(2.0 ** -125)


def _unit_signs(re, im):
    """copysign(1 if infinite else 0, part) of each part."""
    one, zero = np.ones((), re.dtype), np.zeros((), re.dtype)
    return (np.copysign(np.where(np.isinf(re), one, zero), re),
            np.copysign(np.where(np.isinf(im), one, zero), im))


def divide(x, y):
    """x / y of complex arrays of one dtype (broadcasting), with XLA's values (complex64 in
    pieces: pieces.py; complex128 whole, NumPy's quotient standing where all of it is
    finite).

        >>> divide(np.array([1 + 2j]), np.array([0j]))    # [inf+infj]
    """
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype == np.complex64:
        return in_pieces(_divide, x, y)
    return _divide(x, y)


def _divide(x, y):
    with np.errstate(all="ignore"):
        if x.dtype != np.complex64:
            q = np.true_divide(x, y)
            if np.isfinite(q).all():    # NumPy's Smith division: XLA's to rounding where
                return q                # finite (a zero divisor or an infinite numerator never is)
        ar, ai, br, bi = x.real, x.imag, y.real, y.imag
        re, im = _smith(ar, ai, br, bi)
        lost = np.isnan(re) & np.isnan(im)
        if not lost.any():                  # (no corner to recover)
            return _complex(re, im, x.dtype)
        inf = np.array(np.inf, re.dtype)
        zero_b = (br == 0) & (bi == 0)
        scale = np.copysign(inf, br)
        sr, si = _unit_signs(ar, ai)
        tr, ti = _unit_signs(br, bi)
        inf_a = np.isinf(ar) | np.isinf(ai)
        inf_b = np.isinf(br) | np.isinf(bi)
        # (np.isfinite is False for NaN, as XLA's ordered "!= inf")
        inf_over_finite = inf_a & np.isfinite(br) & np.isfinite(bi)
        finite_over_inf = inf_b & np.isfinite(ar) & np.isfinite(ai)
        cases = [lost & zero_b, lost & inf_over_finite, lost & finite_over_inf]
        re = np.select(cases, [scale * ar, inf * (sr * br + si * bi),
                               0 * (ar * tr + ai * ti)], re)
        im = np.select(cases, [scale * ai, inf * (si * br - sr * bi),
                               0 * (ai * tr - ar * ti)], im)
    return _complex(re, im, x.dtype)


def _complex(re, im, dtype):
    out = np.empty(np.shape(re), dtype)
    out.real, out.imag = re, im
    return out


def _mul_add(a, b, c):
    """a * b + c as XLA's CPU divides: fused for float32 parts (complex64, checked against
    jax 0.10.2), plain for float64 (complex128 keeps NumPy's and its earlier bits: its eager
    tier has no exact vectorised float64 fma)."""
    t = type(a)
    if t(16777217.0) == t(16777216.0):          # float32
        return fma(a, b, c)
    return a * b + c


def divide_fast(a, b):
    """Smith's quotient of `divide_scalar` without C99's corner cases: its value wherever
    that is not nan+nanj (there, `divide_scalar` recovers the corner).  Branch-free: each
    branch's operands are selected first (as `_smith`), so a loop of it vectorises to
    three divisions per element, where the two branches took six (the eager tier's kernel:
    this over the array, `divide_scalar` again on the elements where a part is NaN,
    xforms/kernels/cpu/llvm/eager.py).

        >>> divide_fast(1 + 2j, 0j)       # (nan+nanj): divide_scalar gives (inf+infj)
    """
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    lt = abs(br) < abs(bi)
    small = br if lt else bi
    big = bi if lt else br
    p1 = ar if lt else ai
    p2 = ai if lt else ar
    q1 = ai if lt else -ar
    q2 = -ar if lt else ai
    ratio = small / big
    denom = _mul_add(ratio, small, big)
    return complex(_mul_add(p1, ratio, p2) / denom, _mul_add(q1, ratio, q2) / denom)


def divide_scalar(a, b):
    """a / b of two complex numbers of one type, with XLA's values (the scalar form of
    `divide`, for Numba: compiled with error_model="numpy", so a zero part divides as IEEE
    says).  Float32 parts of complex64 operands compute in float32, as XLA; the result is a
    Python complex (the caller rounds it to complex64).

        >>> divide_scalar(complex(math.inf, math.inf), 1j)     # (inf-infj)

    (Float32 denormals are kept, where XLA's CPU flushes them: the module docstring.)
    """
    q = divide_fast(a, b)
    if q.real == q.real or q.imag == q.imag:
        return q
    # the corner cases (the module docstring); one function, so Numba compiles it whole.
    # The unit signs have the parts' type: Numba would compute float32 parts times a float64
    # 1.0 in float64, where XLA's sum overflows ((3e38+3e38j) / (inf+infj): nan+0j, not 0j)
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    inf, one, zero = math.inf, type(ar)(1.0), type(ar)(0.0)
    if br == 0 and bi == 0:
        scale = math.copysign(inf, br)
        return complex(scale * ar, scale * ai)
    if (math.isinf(ar) or math.isinf(ai)) and math.isfinite(br) and math.isfinite(bi):
        sr = math.copysign(one if math.isinf(ar) else zero, ar)
        si = math.copysign(one if math.isinf(ai) else zero, ai)
        return complex(inf * (sr * br + si * bi), inf * (si * br - sr * bi))
    if (math.isinf(br) or math.isinf(bi)) and math.isfinite(ar) and math.isfinite(ai):
        tr = math.copysign(one if math.isinf(br) else zero, br)
        ti = math.copysign(one if math.isinf(bi) else zero, bi)
        return complex(0.0 * (ar * tr + ai * ti), 0.0 * (ai * tr - ar * ti))
    return q
