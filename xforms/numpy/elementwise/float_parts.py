"""Floating-point internals of `xforms.numpy`: frexp, spacing, nextafter -- written with
exact arithmetic (powers of two, one rounding-free addition), no bit casts.

    >>> xnp.frexp(xnp.array([8.0, -3.5]))        # ([0.5, -0.875], [4, 2])
    >>> xnp.nextafter(1.0, 2.0) - 1.0           # 2.220446049250313e-16

frexp gives NumPy's values for subnormal inputs (JAX's XLA flushes them to 0.5 * 2^-1074 on
the CPU); the exponent is int32, as JAX's.
"""
import numpy as np

from . import ufuncs as uf
from ...primitives.operands import asarray_operand, aval, float_of, promote, with_weak
from .mathfuncs import copysign, ldexp


def _bits(dt):
    """(precision p, smallest exponent of a normal number) of a float dtype."""
    fi = np.finfo(dt)
    return fi.nmant + 1, fi.minexp


def frexp(x):
    """(m, e) with x = m * 2**e and 0.5 <= |m| < 1 (m = x, e = 0 for 0, inf and NaN)."""
    x = float_of(asarray_operand(x))
    dt = aval(x).dtype
    if dt.kind == "c":
        raise TypeError("frexp does not accept complex input")
    ax = uf.abs(x)
    finite_nonzero = uf.logical_and(uf.isfinite(x), uf.greater(ax, 0))
    safe = uf.where(finite_nonzero, ax, 1.0)
    e = uf.floor(uf.log2(safe)) + 1
    half = uf.floor(e * 0.5)                  # 2**-e in two factors: each stays finite
    m = safe * uf.exp2(-half) * uf.exp2(half - e)
    # log2 rounds near powers of two: move m into [0.5, 1) exactly (scaling by 2 is exact)
    low, high = uf.less(m, 0.5), uf.greater_equal(m, 1.0)
    e = uf.where(low, e - 1, uf.where(high, e + 1, e))
    m = uf.where(low, m * 2, uf.where(high, m * 0.5, m))
    m = uf.where(finite_nonzero, copysign(m, x), x)
    e = uf.where(finite_nonzero, e, 0)
    return m, e.astype(np.int32)


def _ulp_up(ax, dt, fmt):
    """The gap above |x| (finite |x| > 0) among `fmt`'s floats: 2**(e - p), at least fmt's
    smallest subnormal; computed in dt."""
    p, minexp = _bits(fmt)
    _, e = frexp(ax)
    tiny = np.asarray(np.finfo(fmt).smallest_subnormal, dt)
    return uf.maximum(ldexp(np.asarray(1.0, dt), e - p), tiny), e


def spacing(x):
    """nextafter(x, +-inf) - x: the gap to the next float away from zero, with x's sign
    (NumPy's: +smallest subnormal at both zeros, inf at the largest float)."""
    x = float_of(asarray_operand(x))
    dt = aval(x).dtype
    if dt.kind == "c":
        raise ValueError("spacing: not defined for complex inputs (jax's ValueError)")
    out = nextafter(x, copysign(np.asarray(np.inf, dt), x)) - x
    tiny = np.asarray(np.finfo(dt).smallest_subnormal, dt)
    return uf.where(uf.equal(x, 0), tiny, out).astype(dt)


def nextafter(x1, x2):
    """The next float after x1 in the direction of x2 (x2 itself when they are equal)."""
    x1, x2 = promote(x1, x2, name="nextafter", inexact=True)    # jointly, as JAX
    out = nextafter_among(x1, x2, aval(x1).dtype)
    # jax's nextafter is one primitive: weak exactly when its promoted operands are
    return with_weak(out, aval(x1).weak_type and aval(x2).weak_type)


def nextafter_among(x1, x2, fmt):
    """nextafter of two float operands of one dtype, stepping among the floats of `fmt`
    (their dtype or a narrower one whose values they hold; the compiled tier holds float16 in
    float32, xforms/kernels/cpu/float16.py): every step is exact in the operands' dtype.

    >>> nextafter_among(np.float32(1), np.float32(2), np.float16)   # 1 + 2**-10, float32
    """
    dt = aval(x1).dtype
    fmt = np.dtype(fmt)
    ax = uf.abs(x1)
    tiny = np.asarray(np.finfo(fmt).smallest_subnormal, dt)
    up, e = _ulp_up(uf.where(uf.greater(ax, 0), ax, 1.0), dt, fmt)
    m, _ = frexp(ax)
    # toward zero from a power of two the gap below is half the gap above
    down = uf.where(uf.equal(m, 0.5), uf.maximum(up * 0.5, tiny), up)
    away = uf.equal(uf.greater(x2, x1), uf.greater(x1, 0))        # moving away from zero
    step = uf.where(away, up, down)
    moved = x1 + uf.where(uf.greater(x2, x1), step, -step)
    # past fmt's largest float is inf (in a wider dtype the sum is still finite)
    biggest = np.asarray(np.finfo(fmt).max, dt)
    moved = uf.where(uf.greater(uf.abs(moved), biggest), copysign(np.asarray(np.inf, dt), moved),
                     moved)
    from_zero = uf.where(uf.greater(x2, x1), tiny, -tiny)
    out = uf.where(uf.equal(x1, 0), from_zero, moved)
    out = uf.where(uf.isinf(x1), uf.where(uf.equal(x1, x2), x1, copysign(biggest, x1)), out)
    out = uf.where(uf.equal(x1, x2), x2, out)
    out = uf.where(uf.logical_or(uf.isnan(x1), uf.isnan(x2)), np.nan, out)
    return out.astype(dt)
