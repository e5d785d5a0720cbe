"""The cube root of the float64 family (vm_cbrt), branch-free so that a loop calling it
vectorises: libm's cbrt is a call per element, and np.cbrt's lowering called it twice
(`-cbrt(-x)` or `cbrt(x)`, both computed by a select: issue #37, the jit cliff of cbrt).

Method (our own): |x| = v * 2**(3q), v in [1, 8) (exponent split in the bits, q by a float
floor); a degree-5 polynomial in m (v = m * 2**r, r in {0, 1, 2}) times 2**(r/3) estimates
cbrt(v) to ~2e-6; the estimate rounded to 17 significant bits, t, has an exact cube (51
bits), so rho = (v - t^3)/t^3 is exact to rounding; cbrt(v) = t (1 + rho)^(1/3), the series
to rho^4 (rho < 5e-5: the rest < 1e-22), one rounding at the end.  No step relies on an
FMA for exactness.  Max error 0.50 ulp over 1.2e6 points (libm's 0.55; numbers:
ERROR_BOUNDS_ULP in __init__.py).

    vm_cbrt(-27.0) == -3.0;  vm_cbrt(-0.0) is -0.0;  inf, nan pass through
"""
import math

from .base import as_bits, div, finite_nonneg, from_bits, like, mad, vm

_CBRT_TINY = 2.2250738585072014e-308
_CBRT_TWO54 = 18014398509481984.0
_CBRT_MANT = 0x000FFFFFFFFFFFFF
_CBRT_ONE = 0x3FF0000000000000
_KEEP17 = -(1 << 36)                 # clears the low 36 of 52 mantissa bits
_HALF17 = 1 << 35
_CBRT2 = 1.2599210498948732          # 2**(1/3)
_CBRT4 = 1.5874010519681994          # 4**(1/3)
# cbrt(m) on m in [1, 2) as a polynomial in u = 2m - 3 (Chebyshev fit, rel. error 1.6e-6)
_CBRT_C0 = 1.1447129216552394
_CBRT_C1 = 0.1271917464899692
_CBRT_C2 = -0.01410885685654718
_CBRT_C3 = 0.002607064356752406
_CBRT_C4 = -0.0006421675201041466
_CBRT_C5 = 0.0001615233863081267


@vm
def _cbrt_finite(a):
    """cbrt(a) for finite a > 0 (subnormals too)."""
    sub = a < _CBRT_TINY
    ix = as_bits(a * _CBRT_TWO54 if sub else a)
    e = (ix >> 52) - (1077 if sub else 1023)
    q = math.floor(float(e) * 0.3333333333333333 + 0.16666666666666666)   # floor(e / 3)
    r = e - 3 * q
    bits = ix & _CBRT_MANT
    u = 2.0 * from_bits(bits | _CBRT_ONE) - 3.0
    t = mad(u, mad(u, mad(u, mad(u, mad(u, _CBRT_C5, _CBRT_C4), _CBRT_C3), _CBRT_C2), _CBRT_C1), _CBRT_C0)
    t = t * (1.0 if r == 0 else (_CBRT2 if r == 1 else _CBRT4))
    t = from_bits((as_bits(t) + _HALF17) & _KEEP17)          # 17 bits: t^3 is exact
    t3 = t * t * t
    rho = div(from_bits(bits | ((r + 1023) << 52)) - t3, t3)  # (v - t^3) exact
    d = rho * mad(rho, mad(rho, mad(rho, -0.0411522633744856, 0.06172839506172839),
                           -0.1111111111111111), 0.3333333333333333)
    return mad(t, d, t) * from_bits((q + 1023) << 52)


@vm
def vm_cbrt(x):
    """Cube root, odd: the sign of x (of -0.0 too) on cbrt(|x|); 0, inf and nan as they are."""
    xd = x * 1.0
    a = math.fabs(xd)
    ok = finite_nonneg(a) & (a > 0.0)     # (not `a < inf`: base.py `finite_nonneg`)
    y = _cbrt_finite(a if ok else 1.0)
    return like(math.copysign(y if ok else a, xd), x)
