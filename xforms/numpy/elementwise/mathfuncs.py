"""More elementwise functions of `xforms.numpy`, composed from the primitives with JAX's
dtype rules: hypot angle sinc fmax fmin fabs nan_to_num logaddexp2 deg2rad rad2deg
copysign signbit heaviside float_power fmod modf divmod trunc ldexp gcd lcm i0 and the
predicates isposinf isneginf iscomplex isreal iscomplexobj isrealobj isclose allclose
array_equal array_equiv.

    >>> xnp.hypot(3.0, 4.0)        # 5.0
"""
import numpy as np

from ...primitives import elementwise as ew
from ...primitives.special import functions as special
from ..reductions import aggregates as red
from . import ufuncs as uf
from ...primitives.operands import (aval, asarray, asarray_operand, const_weak, convert, float_of,
                                    promote, with_weak)


def _zeros_like_bool(x):
    from ..creation.constructors import full_like
    return full_like(x, False, dtype=np.bool_)


def hypot(x1, x2):
    """sqrt(x1**2 + x2**2) without overflow: max * sqrt(1 + (min/max)**2)."""
    x, y = promote(x1, x2, name="hypot", inexact=True)
    if aval(x).dtype.kind == "c":
        raise ValueError("hypot: complex inputs are not supported (jax's ValueError: not "
                         "well defined; convert to real values)")
    x, y = uf.abs(x), uf.abs(y)
    big, small = uf.maximum(x, y), uf.minimum(x, y)
    safe = uf.where(ew.eq(big, ew.like(0, big)), ew.like(1, big), big)
    r = ew.div(small, safe)
    out = ew.mul(big, ew.sqrt(ew.add(ew.like(1, r), ew.mul(r, r))))
    out = uf.where(ew.eq(big, ew.like(0, big)), ew.like(0, big), out)
    out = uf.where(uf.logical_or(uf.isinf(x), uf.isinf(y)), ew.like(np.inf, big), out)
    return with_weak(out, const_weak((x, y), out))       # jnp.hypot's inf is lax._const


def angle(z, deg=False):
    """Argument of complex numbers (0 or pi for reals).  >>> xnp.angle(1j)"""
    z = asarray_operand(z)
    if aval(z).dtype.kind == "c":
        re, im = ew.real(z), ew.imag(z)
    else:      # integers, and floats of rank 0, become the default float, float64 (as
        # jnp.angle does: its rank-0 float32 answer is float64), not float_of's
        to_default = aval(z).dtype.kind in "biu" or aval(z).ndim == 0
        re = convert(z, np.float64) if to_default else z
        from ..creation.constructors import zeros_like
        im = zeros_like(re)
    out = ew.atan2(im, re)
    return rad2deg(out) if deg else out


def sinc(x):
    """sin(pi x) / (pi x) with sinc(0) = 1; near 0 a Taylor series keeps every derivative
    (up to fourth order) exact, as JAX's custom rule does."""
    x = float_of(x)
    pix = ew.mul(x, ew.like(np.pi, x))
    small = ew.lt(uf.abs(pix), ew.like(1e-3, uf.abs(pix)))
    safe = uf.where(small, ew.like(1, pix), pix)
    far = ew.div(ew.sin(safe), safe)
    p2 = ew.mul(pix, pix)
    near = ew.add(ew.like(1, p2), ew.mul(p2, ew.add(ew.like(-1 / 6, p2),
                                                     ew.mul(p2, ew.like(1 / 120, p2)))))
    return uf.where(small, near, far)


def fmax(x1, x2):
    """Elementwise maximum ignoring NaN (NaN only where both are NaN): JAX's
    where((x1 > x2) | isnan(x2), x1, x2), which tests only x2 for NaN: a complex x1 with a
    NaN imaginary part and the larger real part wins (jax 0.10.2: fmax(2+nanj, -2-infj) is
    2+nanj; NumPy's -2-infj; session 36's complex vmap sweep)."""
    x, y = promote(x1, x2, name="fmax")
    return uf.where(uf.greater(x, y) | uf.isnan(y), x, y)


def fmin(x1, x2):
    """fmax's mirror: JAX's where((x1 < x2) | isnan(x2), x1, x2)."""
    x, y = promote(x1, x2, name="fmin")
    return uf.where(uf.less(x, y) | uf.isnan(y), x, y)


def fabs(x):
    x = float_of(x)
    if aval(x).dtype.kind == "c":
        raise TypeError("fabs: complex inputs are not supported; use xnp.abs")
    return uf.abs(x)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, +inf -> posinf (default: the dtype's max), -inf -> neginf (its min)."""
    x = asarray_operand(x)
    dt = aval(x).dtype
    if dt.kind in "biu":
        return x
    if dt.kind == "c":
        return ew.complex(nan_to_num(ew.real(x), nan=nan, posinf=posinf, neginf=neginf),
                          nan_to_num(ew.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = np.finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = uf.where(uf.isnan(x), convert(nan, dt), x)
    out = uf.where(isposinf(x), convert(posinf, dt), out)
    return uf.where(isneginf(x), convert(neginf, dt), out)


def logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2), computed stably."""
    x, y = promote(x1, x2, name="logaddexp2", inexact=True)
    ln2 = np.log(2)
    out = ew.div(uf.logaddexp(ew.mul(x, ew.like(ln2, x)), ew.mul(y, ew.like(ln2, y))),
                 ew.like(ln2, x))
    return with_weak(out, const_weak((x, y), out))       # its 1/log(2) is lax._const


def deg2rad(x):
    x = float_of(x)
    return ew.mul(x, ew.like(np.pi / 180, x))


def rad2deg(x):
    x = float_of(x)
    return ew.mul(x, ew.like(180 / np.pi, x))


radians, degrees = deg2rad, rad2deg


def signbit(x):
    """True where the sign bit is set (including -0.0; the sign of a NaN is not seen)."""
    x = asarray_operand(x)
    dt = aval(x).dtype
    if dt.kind == "b":
        return _zeros_like_bool(x)
    if dt.kind in "iu":
        return ew.lt(x, ew.like(0, x))
    if dt.kind == "c":
        raise ValueError("signbit: complex inputs are not supported (jax's ValueError: not "
                         "well defined for complex values)")
    zero = ew.eq(x, ew.like(0, x))
    safe = uf.where(zero, x, ew.like(1, x))
    neg_zero = uf.logical_and(zero, ew.lt(ew.div(ew.like(1, x), safe), ew.like(0, x)))
    return uf.logical_or(ew.lt(x, ew.like(0, x)), neg_zero)


def copysign(x1, x2):
    x, y = promote(x1, x2, name="copysign", inexact=True)
    if aval(x).dtype.kind == "c":
        raise TypeError("copysign: complex inputs are not supported")
    a = uf.abs(x)
    return uf.where(signbit(y), ew.neg(a), a)


def heaviside(x1, x2):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0, NaN where x1 is NaN (as JAX)."""
    x, h0 = promote(x1, x2, name="heaviside", inexact=True)
    dt = aval(x).dtype
    if dt.kind == "c":          # (jax 0.10.2: its lt refuses complex, TypeError)
        raise TypeError(f"heaviside: complex operands ({dt}) are not accepted (as in JAX): "
                        "complex numbers have no order")
    zero, one = convert(0, dt), convert(1, dt)
    out = uf.where(ew.lt(x, zero), zero,
                   uf.where(ew.gt(x, zero), one, uf.where(ew.eq(x, zero), h0, x)))
    return with_weak(out, const_weak((x, h0), x))     # jnp's 0 and 1 are lax._const(x1, .)


def float_power(x1, x2):
    """x1 ** x2 in the operands' inexact dtype: jax.numpy keeps float32 (NumPy widens)."""
    x, y = promote(x1, x2, name="float_power", inexact=True)
    return uf.power(x, y)


def trunc(x):
    """Round toward zero.  >>> xnp.trunc(-1.5)  # -1.0"""
    x = asarray_operand(x)
    if aval(x).dtype.kind in "biu":
        return x
    return uf.where(ew.lt(x, ew.like(0, x)), ew.ceil(x), ew.floor(x))



def fmod(x1, x2):
    """C-style remainder: the sign of the dividend (lax.rem; fmod(x, 0) of integers is 0,
    as in NumPy and jax.numpy; bool operands compute in int32, as jnp.fmod's: there a zero
    divisor gives lax.rem's x)."""
    x, y = promote(x1, x2, name="fmod")
    if aval(x).dtype.kind == "b":
        return ew.rem(convert(x, np.int32), convert(y, np.int32))
    return ew.rem(x, uf.nonzero_divisor(y))


def modf(x):
    """(fractional part, integral part), both with x's sign."""
    x = float_of(x)
    t = trunc(x)
    return ew.sub(x, t), t


def divmod(x1, x2):
    return uf.floor_divide(x1, x2), uf.remainder(x1, x2)


def ldexp(x1, x2):
    """x1 * 2**x2 (x2 integer)."""
    x1 = float_of(x1)
    x2 = asarray_operand(x2)
    if aval(x2).dtype.kind not in "biu":
        raise ValueError("ldexp: the exponent must be an integer array (jax's ValueError)")
    return uf.multiply(x1, uf.exp2(convert(x2, aval(x1).dtype)))


def _euclid(x1, x2, name):
    from ...lax.control_flow import while_loop
    a, b = promote(x1, x2, name=name)
    if aval(a).dtype.kind not in "iu":
        raise ValueError(f"{name}: needs integer inputs, got {aval(a).dtype} (as jax's "
                         "ValueError)")
    a, b = uf.abs(a), uf.abs(b)
    if aval(a).shape != aval(b).shape:
        from ..manipulation.shapes import broadcast_arrays
        a, b = broadcast_arrays(a, b)

    def body(ab):
        a, b = ab
        nz = ew.ne(b, ew.like(0, b))
        safe = uf.where(nz, b, ew.like(1, b))
        return uf.where(nz, b, a), uf.where(nz, uf.remainder(a, safe), b)
    out = while_loop(lambda ab: red.any(ew.ne(ab[1], ew.like(0, ab[1]))), body, (a, b))[0]
    return with_weak(out, const_weak((a, b), out))     # jnp's loop body holds lax._const(x2, 0)


def gcd(x1, x2):
    """Greatest common divisor (Euclid's algorithm, elementwise, in a while_loop)."""
    return _euclid(x1, x2, "gcd")


def lcm(x1, x2):
    a, b = promote(x1, x2, name="lcm")
    g = _euclid(a, b, "lcm")
    safe = uf.where(ew.eq(g, ew.like(0, g)), ew.like(1, g), g)
    out = uf.where(ew.eq(g, ew.like(0, g)), ew.like(0, g),
                   uf.abs(ew.mul(uf.floor_divide(a, safe), b)))
    return with_weak(out, const_weak((g,), out))


# ---- predicates ---------------------------------------------------------------------------
def isposinf(x):
    """x == inf elementwise (False for integers); complex x refused, as jax and NumPy do
    (which of inf+2j, inf+infj is "positive infinity" is not defined).

        >>> xnp.isposinf(xnp.array([xnp.inf, 1.0]))    # [True, False]
    """
    x = asarray_operand(x)
    if aval(x).dtype.kind == "c":
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if aval(x).dtype.kind in "biu":
        return _zeros_like_bool(x)
    return ew.eq(x, ew.like(np.inf, x))


def isneginf(x):
    """x == -inf elementwise (False for integers); complex x refused, as jax and NumPy do
    (which of -inf+2j, -inf-infj is "negative infinity" is not defined).

        >>> xnp.isneginf(xnp.array([-xnp.inf, 1.0]))   # [True, False]
    """
    x = asarray_operand(x)
    if aval(x).dtype.kind == "c":
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if aval(x).dtype.kind in "biu":
        return _zeros_like_bool(x)
    return ew.eq(x, ew.like(-np.inf, x))


def iscomplexobj(x):
    return aval(asarray_operand(x)).dtype.kind == "c"


def isrealobj(x):
    return not iscomplexobj(x)


def iscomplex(x):
    x = asarray_operand(x)
    if aval(x).dtype.kind != "c":
        return _zeros_like_bool(x)
    return ew.ne(ew.imag(x), ew.like(0, ew.imag(x)))


def isreal(x):
    x = asarray_operand(x)
    if aval(x).dtype.kind != "c":
        return uf.logical_not(_zeros_like_bool(x))
    return ew.eq(ew.imag(x), ew.like(0, ew.imag(x)))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| <= atol + rtol * |b|, elementwise; infinities are close only to themselves."""
    a, b = promote(a, b, name="isclose")
    dt = aval(a).dtype
    if dt.kind in "biu":
        return ew.eq(a, b)
    real = np.float32 if dt in (np.float32, np.complex64) else (
        np.float16 if dt == np.float16 else np.float64)
    tol = uf.add(convert(atol, real), uf.multiply(convert(rtol, real), uf.abs(b)))
    close = uf.less_equal(uf.abs(ew.sub(a, b)), tol)
    finite = uf.logical_and(uf.isfinite(a), uf.isfinite(b))
    out = uf.where(finite, close, ew.eq(a, b))
    if equal_nan:
        out = uf.logical_or(out, uf.logical_and(uf.isnan(a), uf.isnan(b)))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """All elements close (see isclose).  >>> xnp.allclose(xnp.ones(2), 1.0)"""
    return red.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Same shape and elements (a Python-level False when the shapes differ, as an array);
    lists are taken, as JAX takes them here."""
    a1, a2 = asarray(a1), asarray(a2)
    if aval(a1).shape != aval(a2).shape:
        return np.bool_(False)
    eq = uf.equal(a1, a2)
    if equal_nan:
        eq = uf.logical_or(eq, uf.logical_and(uf.isnan(a1), uf.isnan(a2)))
    return red.all(eq)


def array_equiv(a1, a2):
    """Shape-consistent (broadcastable) and equal (lists taken, as array_equal)."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(aval(a1).shape, aval(a2).shape)
    except ValueError:
        return np.bool_(False)
    return red.all(uf.equal(a1, a2))



def i0(x):
    """The modified Bessel function I_0 (jnp.i0): exp(|x|) i0e(x), i0e a primitive
    (xforms/primitives/special/functions.py) with derivative I_1.

        >>> xnp.i0(0.0)        # 1.0
    """
    x = float_of(x)
    if aval(x).dtype.kind == "c":           # (jax's ValueError "Unsupported input type")
        raise ValueError(f"i0: unsupported input type {aval(x).dtype}")
    return ew.mul(ew.exp(ew.abs(x)), special.bessel_i0e(x))
