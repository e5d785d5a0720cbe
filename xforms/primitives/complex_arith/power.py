"""Complex x ** y as XLA computes it (jax 0.10.2 on the CPU: ElementalIrEmitter's complex
power, read from the LLVM IR jax compiles), written once for every tier: the eager impl of
`pow` (`power`, NumPy arrays) and the compiled kernels' scalar function (`power_scalar`:
Numba on the CPU, a device function on CUDA, the simulator's Python).

With x = a + ib, y = c + id, r = |x| (XLA's: M sqrt(1 + (m/M)^2) with the NaN-propagating
max M and min m of |a|, |b|, the sum fused; m where that is NaN) and t = atan2(b, a):

    x ** y = r^c e^(-d t) (cos q + i sin q),    q = c t + d log r    (c t fused)

then, the later rule winning (XLA's selects; every comparison ordered, so -0 == 0):

    r == 0, d == 0, c >= 0             1 if c == 0 else 0         (0 ** 0 = 1: Kahan)
    c == 0, d == 0  or  a == 1, b == 0  1
    a == +inf, b == 0, d == 0          inf for c > 0, 0 for c < 0

each with Im +0.  So 0 ** (1+1j) is nan+nanj (log 0 = -inf in q), and (inf+1j) ** 2 is
nan+nanj (r^c = inf, t = 0: Re inf * cos 0 = inf, but r = inf gives log r = inf and
q = 2 * 0 + 0 * inf = NaN), where NumPy's C99 power gives other values at 7,800 of the
20,736 pairs of tools/cuda_complex_audit.py.
An integer exponent of lax.pow is converted to x's dtype first (jax: the same rule; jnp's
`x ** 2` is integer_pow, jax's repeated products: complex_arith/patching.integer_power).

XLA's exp flushes below -708.396 (float64) to 0, as `_xla_exp` does.  Complex64 computes in
float32 (the parts' type), as XLA does; XLA's float32 exp and log are its own polynomials
(with float32 denormals flushed), libm's here: complex64 results may differ in the last bits.

    >>> power_scalar(complex(2.0, 3.0), complex(0.5, 0.0))    # (1.6741492280355401+0.895977476129838j)
"""
import math

import numpy as np

from .elementary import cos_typed, own_parts, sin_typed
from .multiply import fma
from .pieces import in_pieces

_LOG_MAX = 709.782712893384             # log of the largest float64 (XLA's exp bound too)
_XLA_EXP_LO = -708.3964185322641        # XLA's float64 exp is 0 below
_SPLIT64, _SPLIT32 = 134217729.0, 4097.0    # Veltkamp's splits (2^27 + 1, 2^12 + 1)
# complex128 power_fast's range (its docstring): |c log r| beyond FAST_EXPONENT, |d t|
# beyond FAST_EXPONENT_D go to power_scalar (standard normal parts: none of 10^6)
FAST_EXPONENT = 32.0
FAST_EXPONENT_D = 700.0


def nan_max(u, v):
    """XLA's maximum: NaN if either is (power's and inverse.py's |z|)."""
    return u + v if u != u or v != v else (u if u >= v else v)


def nan_min(u, v):
    return u + v if u != u or v != v else (u if u <= v else v)


def _modulus(a, b):
    """|a + ib| as XLA's complex power takes it, in a's type (no division by 0 in Python)."""
    t = type(a)
    ax, ay = abs(a), abs(b)
    big, small = nan_max(ax, ay), nan_min(ax, ay)
    if big == 0 or big != big or math.isinf(small):
        return small                    # (0/0, inf/inf, NaN: XLA selects the min)
    q = small / big
    return big * t(math.sqrt(fma(q, q, t(1.0))))


def _log_of(r):
    """log r of r >= 0 (or NaN), in r's type: -inf at 0 (Python's math raises)."""
    t = type(r)
    return t(math.log(r)) if r > 0 else t(-math.inf if r == 0 else math.nan)


def _real_power(r, c, lr):
    """r ** c of r >= 0 (or NaN) as C's pow, in r's type, lr = log r: no exception where
    Python's math.pow raises (0 ** -1, an overflow)."""
    t = type(r)
    if r == 1 or c == 0:
        return t(1.0)                   # (C: 1 ** nan = nan ** 0 = 1)
    if r != r or c != c:
        return t(math.nan)
    if r == 0 or math.isinf(r):
        return t(0.0) if (c > 0) == (r == 0) else t(math.inf)
    if math.isinf(c):
        return t(math.inf) if (c > 0) == (r > 1) else t(0.0)
    e = c * lr                          # log of the result, to 1e-12 near the bound
    if e > _LOG_MAX + 1e-9:
        return t(math.inf)
    if e > _LOG_MAX - 1e-9:             # (a result within 1e-9 of the largest float)
        h = t(math.pow(r, c * t(0.5)))
        return h * h
    return t(math.pow(r, c))


def _xla_exp(v):
    """e^v in v's type as XLA's float64 exp bounds it: 0 below -708.396, inf above 709.78."""
    t = type(v)
    if v > _LOG_MAX:
        return t(math.inf)
    if v < _XLA_EXP_LO and not _is_single(v):
        return t(0.0)
    return t(math.exp(v))


def _is_single(v):
    """Whether v is a float32 (2^24 + 1 rounds to 2^24 there)."""
    t = type(v)
    return t(16777217.0) == t(16777216.0)


def power_scalar(x, y):
    """x ** y of two complex numbers of one type, as XLA (the module docstring), in the
    parts' type: a Python complex the caller rounds to its dtype.

        >>> power_scalar(0j, complex(1.0, 1.0))      # (nan+nanj)
    """
    a, b = own_parts(x)
    c, d = own_parts(y)
    t = type(a)
    zero, one = t(0.0), t(1.0)
    if c == 0 and d == 0 or a == 1 and b == 0:
        return complex(one, zero)
    if a == math.inf and b == 0 and d == 0 and c != 0 and c == c:
        return complex(t(math.inf) if c > 0 else zero, zero)
    r = _modulus(a, b)
    if r == 0 and d == 0 and c >= 0:
        return complex(zero, zero)              # (c == 0 returned 1 above)
    angle = t(math.atan2(b, a))
    lr = _log_of(r)
    coeff = _xla_exp(-d * angle) * _real_power(r, c, lr)
    q = fma(c, angle, d * lr)
    return complex(coeff * cos_typed(q), coeff * sin_typed(q))


def power_fast(x, y):
    """`power_scalar` of two complex numbers on its general branch (r = |x| finite and
    above 0, y finite, neither y = 0 nor x = 1), NaN in a part elsewhere: the eager tier's
    kernel and `jit`'s vector loops compute it over the array, vecmath's polynomials for
    libm's functions (vecmath.vector_math), and redo the elements with a NaN part with
    power_scalar (xforms/kernels/cpu/llvm/eager.py, ops/complexes.py `fast_blocks`).
    r^c is e^(c log r) in float64 (vm_exp, vm_log), as no vector pow exists; every other
    step is power_scalar's in the same order.  Complex64: each function in float64,
    rounded to float32 once.  Complex128: e^(c log r) carries log r's rounding times c,
    so the form is NaN (power_scalar decides) where |c log r| > FAST_EXPONENT (then
    within ~FAST_EXPONENT eps of pow's r^c), where |d t| > FAST_EXPONENT_D (XLA's exp
    flushes below -708.4, vm_exp does not) and for a real base and exponent (b = d = 0:
    pow's correctly rounded value, t = q = 0).  Values: below.

        >>> power_fast(complex(2.0, 3.0), complex(0.5, 0.0))   # power_scalar's to rounding
    """
    a, b = own_parts(x)
    c, d = own_parts(y)
    t = type(a)
    r = _modulus(a, b)
    ordinary = (r > 0 and r < math.inf and abs(c) < math.inf and abs(d) < math.inf
                and not (c == 0 and d == 0) and not (a == 1 and b == 0))
    rr = r if ordinary else t(1.0)              # (log, exp of harmless values elsewhere)
    # each function in float64 (`* 1.0`), rounded to float32 once (as power_scalar in
    # Python on NumPy float32s); jit's float32 libm calls differ from that in the last bit
    # of some elements, which q = c t + d log r magnifies where cos q or sin q is near 0:
    # within 1.5e-6 |z| of power_scalar's and of jax 0.10.2's (10^6 standard normal parts)
    angle = t(math.atan2(b * 1.0, a * 1.0))
    lr64 = math.log(rr * 1.0)
    lr = t(lr64)
    ec = (c * 1.0) * lr64
    ed = (-d * angle) * 1.0
    # (complex128: the bounds above; a float32's exponents never need them)
    near = _is_single(a) or (abs(ec) <= FAST_EXPONENT and abs(ed) <= FAST_EXPONENT_D
                             and not (b == 0 and d == 0))
    rc = t(math.exp(ec))
    coeff = t(math.exp(ed)) * rc if ordinary and near else t(math.nan)
    q = fma(c, angle, d * lr)
    q64 = q * 1.0
    sin_q = q if q == 0 else t(math.sin(q64))     # (sin(+-0) = +-0, as libm's)
    return complex(coeff * t(math.cos(q64)), coeff * sin_q)


# --- the eager tier: the same formula on NumPy arrays ----------------------------------------
def _product_error(u, v, p):
    """p = u*v's rounding error, exactly (Dekker's product; u scaled by 2^-60 where its
    split would overflow), elementwise: u*v + error == u v.  In place where it can be
    (a fresh temporary of 10^5 float64 costs as much as the operation)."""
    ft = u.dtype.type
    big = np.abs(u) > ft(1e300 if u.dtype == np.float64 else 1e30)
    scaled = big.any()
    if scaled:
        u = np.where(big, u * ft(2.0 ** -60), u)
        p = u * v
    split = ft(_SPLIT64 if u.dtype == np.float64 else _SPLIT32)
    uh, ul = _split(u, split)
    vh, vl = _split(v, split)
    if np.ndim(uh) == 0 or np.shape(uh) != np.shape(vh):
        err = ((uh * vh - p) + uh * vl + ul * vh) + ul * vl
    else:
        err = uh * vh
        err -= p
        tmp = uh * vl
        err += tmp
        err += np.multiply(ul, vh, out=tmp)
        err += np.multiply(ul, vl, out=tmp)
    return np.where(big, err * ft(2.0 ** 60), err) if scaled else err


def _split(u, split):
    """Veltkamp's halves of u: (su + (u - su), u - that), su = u * split."""
    su = u * split
    hi = u - su
    hi += su
    return hi, u - hi


def _two_sum(u, v):
    """u + v and its rounding error (Knuth's TwoSum), elementwise: (u - (s - bv)) + (v - bv)
    with bv = s - u."""
    s = u + v
    bv = s - u
    if np.ndim(bv) == 0 or np.shape(bv) != np.shape(s):
        return s, (u - (s - bv)) + (v - bv)
    e = s - bv
    np.subtract(u, e, out=e)
    np.subtract(v, bv, out=bv)
    e += bv
    return s, e


def _round_to_odd(t, e2):
    """t moved to its neighbour toward t + e2 where that sum is inexact (e2 != 0) and t's
    last bit is 0 (np.nextafter(t, copysign(inf, e2)) there), in place: a step of the
    integer bits for finite t (+1 away from zero, -1 toward it), np.nextafter for the
    others (np.nextafter is slow: a third of the complex power's time)."""
    it = np.int64 if t.dtype == np.float64 else np.int32
    tb, eb = t.view(it), e2.view(it)
    fix = (tb & 1) == 0
    fix &= e2 != 0
    if not fix.any():
        return t
    finite = np.isfinite(t)
    odd = fix & ~finite
    fix &= finite
    step = (tb ^ eb) >> (8 * tb.itemsize - 1)       # 0: same signs, -1: opposite
    step += step + 1                                 # +1, -1
    step &= -fix.astype(it)
    tb += step
    if odd.any():
        t[odd] = np.nextafter(t[odd], np.copysign(np.inf, e2[odd]).astype(t.dtype))
    return t


def _fused(u, v, w):
    """fma(u, v, w) elementwise (NumPy has none), as Boldo and Melquiond emulate it: the
    product's error and the sum's added rounded to odd, so that the last rounding is the
    only one; the plain u*v + w where that is not finite."""
    p = u * v
    s, e1 = _two_sum(p, w)
    t, e2 = _two_sum(e1, _product_error(u, v, p))
    out = np.asarray(s + _round_to_odd(np.asarray(t), e2))
    bad = ~np.isfinite(out)
    if bad.any():
        out[bad] = np.broadcast_to(p + w, out.shape)[bad]
    return out


def _libm(fn, *args):
    """fn elementwise in the arguments' dtype, float32 through float64 (NumPy's own float32
    sin, cos, atan2 are further from libm's, XLA's, than float64's rounded: cos of float32
    pi/2 is 7.5e-8 there, -4.37e-8 in libm)."""
    if args[0].dtype != np.float32:
        return fn(*args)
    return fn(*[a.astype(np.float64) for a in args]).astype(np.float32)


def _special_bases(out, idx, a, b, c, d, r):
    """out's elements at flat indices idx (a superset of those any rule needs: each needs
    d == 0 or b == 0) set by the module docstring's rules, on those elements only."""
    if idx.size == 0:
        return
    a, b, c, d, r = (np.asarray(v).flat[idx] for v in (a, b, c, d, r))
    ft = a.dtype.type
    zero_base = (r == 0) & (d == 0) & (c >= 0)
    one = ((c == 0) & (d == 0)) | ((a == 1) & (b == 0))
    inf_base = (a == np.inf) & (b == 0) & (d == 0)
    cases = [inf_base & (c < 0), inf_base & (c > 0), one, zero_base]
    picked = out.flat[idx]
    re = np.select(cases, [ft(0.0), ft(np.inf), ft(1.0), ft(0.0)], picked.real)
    im = np.select(cases, [ft(0.0)] * 4, picked.imag)
    picked.real, picked.imag = re, im
    out.flat[idx] = picked


def power(x, y):
    """x ** y of complex arrays of one dtype (broadcasting), with XLA's values (`power_scalar`
    elementwise, vectorised; parts' dtype float32 for complex64).

        >>> power(np.array([0j, 1j]), np.array([1 + 1j, 2 + 0j]))    # [nan+nanj, -1+1.2e-16j]
    """
    return in_pieces(_power, x, y)


def _power(x, y):
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
    out = np.empty(np.shape(re), x.dtype)
    out.real, out.imag = re, im
    _special_bases(out, np.flatnonzero((d == 0) | (b == 0)), a, b, c, d, r)
    # NumPy's atan2, log and pow differ from libm's (XLA's) in a last bit at times, which a
    # large exponent makes material (q = c t: c ulp(t)): libm's, by the scalar function
    with np.errstate(all="ignore"):
        for i in np.flatnonzero((np.abs(c) > 64) | (np.abs(d) > 64)):
            out.flat[i] = power_scalar(x.flat[i], y.flat[i])
    return out
