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
emulates one there, a float32 one exactly (`float32_fma`), a float64 one so: the rounded
product where it is finite (a finite result then differs from a true FMA by one rounding at
most: where ar br - ai bi cancels, XLA's is the rounding error, 0 here), and where it
overflowed from finite factors, the exact product's sign and size stand for it: c when c is
infinite or NaN, else 2 ((a/2) b + c/2).  The eager tier redoes only products that are not finite, and NumPy's own complex multiply fuses as XLA
on this machine's AVX-512 build (on the grid, finite products differ from jax's in 0 bits).

    >>> multiply_scalar(complex(math.inf, 1e300), complex(1e300, -7.5))    # (inf-infj)
"""
import math


def fma(a, b, c):
    """a * b + c with the product unrounded where that decides the result (the module
    docstring).  The parts' type throughout (float32 stays float32 under Numba, where
    compiled.py puts LLVM's fma here).  A float32 is exact: float32_fma's.

        >>> h = np.float32(1 + 2 ** -12); fma(h, h, np.float32(-1 - 2 ** -11))    # 2**-24
    """
    t = type(a)
    if t(16777217.0) == t(16777216.0):          # float32 (elementary._single)
        return float32_fma(a, b, c)
    p = a * b
    if math.isfinite(p) or not (math.isfinite(a) and math.isfinite(b)):
        return p + c
    if not math.isfinite(c):
        return c
    half = t(0.5)
    return (t(2.0)) * ((a * half) * b + c * half)


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
