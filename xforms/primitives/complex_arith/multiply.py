"""Complex multiplication as XLA computes it (jax on the CPU), written once for every tier.

XLA (ElementalIrEmitter::EmitComplexMultiply) multiplies by the plain formula, with no C99
Annex G recovery, and its CPU backend fuses each part into one FMA:

    re = fma(a.re, b.re, -(a.im b.im))        im = fma(a.im, b.re, a.re b.im)

That FMA is what makes it differ from NumPy's and Numba's plain products at infinities: the
fused product never overflows, so (inf+1e300j)(1e300-7.5j) has im = fma(1e300, 1e300, -inf)
= -inf (jax inf-infj), where the rounded 1e300 * 1e300 = inf gives inf - inf = nan.  On the
grid of tools/cuda_complex_audit.py (20,736 pairs, complex128) this formula gives jax's
values bit for bit; the plain product differs on 162.

The compiled tiers (Numba CPU, CUDA) use LLVM's fma (complex_arith/compiled.py replaces
`fma`).  Python has none (the eager tier's special elements, the CUDA simulator), so `fma`
computes one exactly there (float32 by a float64 sum rounded to odd, float64 as fractions).
The eager tier redoes only products that are not finite, and NumPy's own complex multiply
fuses as XLA on this machine's AVX-512 build (on the grid, finite products differ from jax's
in 0 bits).

    >>> multiply_scalar(complex(math.inf, 1e300), complex(1e300, -7.5))    # (inf-infj)
"""
import math
from fractions import Fraction


def fma(a, b, c):
    """a * b + c rounded once, in the parts' type (Python: the eager tier's special elements
    and the CUDA simulator; compiled.py puts LLVM's fma here for Numba).  Exact: an infinite
    or NaN operand gives what the plain sum gives (the product is then exact), an infinite or
    NaN c after a finite product gives c, and finite operands are summed exactly
    (`float32_fma`; a float64 one as fractions, correctly rounded by int / int).

        >>> h = np.float32(1 + 2 ** -12); fma(h, h, np.float32(-1 - 2 ** -11))    # 2**-24
    """
    t = type(a)
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b + c
    if not math.isfinite(c):
        return c
    if t(16777217.0) == t(16777216.0):          # float32 (elementary._single)
        return float32_fma(a, b, c)
    q = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if q == 0:                                  # (the zero's sign: IEEE's sum of the parts)
        return a * b + c
    try:
        return t(q.numerator / q.denominator)
    except OverflowError:
        return t(math.inf if q > 0 else -math.inf)


def float32_fma(a, b, c):
    """fma of float32 a, b, c, exact (Python; Numba takes LLVM's): the float64 product is
    exact, the float64 sum rounded to odd (its last bit set where it was inexact), so that
    rounding it to float32 rounds once (Boldo and Melquiond's round-to-odd).

        >>> float32_fma(np.float32(3), np.float32(1 / 3), np.float32(-1))   # 2.9802322e-08
    """
    t = type(a)
    p = float(a) * float(b)
    s = p + float(c)
    if math.isfinite(s):
        d = s - p
        err = (p - (s - d)) + (float(c) - d)        # TwoSum: s + err == p + c exactly
        m, e = math.frexp(s)
        if err != 0 and int(math.ldexp(m, 53)) % 2 == 0:
            s = math.nextafter(s, math.inf if err > 0 else -math.inf)
    return t(s)


def multiply_scalar(x, y):
    """x * y of two complex numbers of one type, as XLA (the module docstring): a Python
    complex the caller rounds to its dtype.

        >>> multiply_scalar(2 + 3j, 4 - 1j)     # (11+10j)
    """
    ar, ai, br, bi = x.real, x.imag, y.real, y.imag
    return complex(fma(ar, br, -(ai * bi)), fma(ai, br, ar * bi))
