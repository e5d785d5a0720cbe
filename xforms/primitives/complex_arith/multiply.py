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
`_fma`).  Python has none (the eager tier's special elements, the CUDA simulator), so `_fma`
computes one there: exactly, in rationals, where the operands are finite (rounded once: so
a cancelling ar br - ai bi gives XLA's rounding error, and a product that overflows from
finite factors its exact size), else as the plain a * b + c (c where a * b overflowed and
c is infinite or NaN).  The eager tier redoes only products that are not finite, and
NumPy's own complex multiply fuses as XLA on this machine's AVX-512 build (on the grid,
finite products differ from jax's in 0 bits).

    >>> multiply_scalar(complex(math.inf, 1e300), complex(1e300, -7.5))    # (inf-infj)
"""
import math
from fractions import Fraction

_ROUNDS_TO_INFINITY = 2 ** 1024 - 2 ** 970     # the float64 overflow threshold (exact)


def _fma(a, b, c):
    """a * b + c rounded once (the module docstring), in a's type: Python's emulation of the
    compiled tiers' fma (exact rationals; a float32 rounds through float64, as at most
    the fma's float32 rounding of a float64-exact product plus c may differ there)."""
    p = a * b
    if not (math.isfinite(a) and math.isfinite(b)):
        return p + c
    if not math.isfinite(c):
        return c
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if exact == 0:
        return p + c                    # (IEEE's sign of zero; a zero a * b is exact)
    if abs(exact) >= _ROUNDS_TO_INFINITY:
        return type(a)(math.inf if exact > 0 else -math.inf)
    return type(a)(float(exact))


def fused_multiply_add(a, b, c):
    """a * b + c rounded once where compiled (`_fma`, which complex_arith/compiled.py makes
    LLVM's fma), for the other modules' formulas that XLA's CPU fuses.

        >>> fused_multiply_add(0.5, 0.5, 1.0)     # 1.25
    """
    return _fma(a, b, c)


def multiply_scalar(x, y):
    """x * y of two complex numbers of one type, as XLA (the module docstring): a Python
    complex the caller rounds to its dtype.

        >>> multiply_scalar(2 + 3j, 4 - 1j)     # (11+10j)
    """
    ar, ai, br, bi = x.real, x.imag, y.real, y.imag
    return complex(_fma(ar, br, -(ai * bi)), _fma(ai, br, ar * bi))
