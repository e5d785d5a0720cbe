"""Elementwise functions of `xforms.numpy` (NumPy names, JAX dtype rules)."""
import math

import numpy as np

from ...core import trace as core
from ...primitives import elementwise as ew
from ...primitives.special import functions as special
from .complex_atan2 import xla_atan2
from ...primitives.operands import (aval, asarray, asarray_operand, broadcast_to, convert, float_of,
                                    is_python_scalar, promote, with_weak)


def _numeric(x):
    """bool operands of arithmetic-only functions become int32 (JAX's promote_dtypes_numeric)."""
    return convert(x, np.int32) if aval(x).dtype == np.bool_ else x


def _unary_float(prim_fn, name):
    def f(x):
        return prim_fn(float_of(x))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name}; integer inputs promote to float64.\n\n    >>> xnp.{name}(1.0)"
    return f


def _binary(prim_fn, name):
    def f(x, y):
        x, y = promote(x, y, name=name)
        return prim_fn(x, y)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} with broadcasting.\n\n    >>> xnp.{name}(xnp.ones(3), 2.0)"
    return f


def _binary_float(prim_fn, name):
    def f(x, y):
        x, y = promote(x, y, name=name, inexact=True)
        return prim_fn(x, y)
    f.__name__ = f.__qualname__ = name
    return f


sin, cos, tan = (_unary_float(ew.sin, "sin"), _unary_float(ew.cos, "cos"),
                 _unary_float(ew.tan, "tan"))
arcsin, arccos, arctan = (_unary_float(ew.asin, "arcsin"), _unary_float(ew.acos, "arccos"),
                          _unary_float(ew.atan, "arctan"))
sinh, cosh, tanh = (_unary_float(ew.sinh, "sinh"), _unary_float(ew.cosh, "cosh"),
                    _unary_float(ew.tanh, "tanh"))
arcsinh, arccosh, arctanh = (_unary_float(ew.asinh, "arcsinh"),
                             _unary_float(ew.acosh, "arccosh"), _unary_float(ew.atanh, "arctanh"))
exp, exp2, expm1 = (_unary_float(ew.exp, "exp"), _unary_float(ew.exp2, "exp2"),
                    _unary_float(ew.expm1, "expm1"))
log, log1p = _unary_float(ew.log, "log"), _unary_float(ew.log1p, "log1p")
sqrt, cbrt = _unary_float(ew.sqrt, "sqrt"), _unary_float(ew.cbrt, "cbrt")


def _rounding(prim_fn, name):
    def f(x):
        x = asarray_operand(x)
        return x if aval(x).dtype.kind in "biu" else prim_fn(x)   # integers are already whole
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Elementwise {name}; integer inputs are returned unchanged.\n\n"
                 f"    >>> xnp.{name}(1.5)")
    return f


floor, ceil = _rounding(ew.floor, "floor"), _rounding(ew.ceil, "ceil")


def log2(x):
    x = float_of(x)
    if aval(x).dtype.kind == "c":      # (XLA folds jax's / log(2) into * (1 / log(2)))
        return _complex_parts_scaled(ew.log(x), 1 / np.log(2.0))
    return ew.div(ew.log(x), ew.like(np.log(2.0), x))


def log10(x):
    x = float_of(x)
    if aval(x).dtype.kind == "c":
        return _complex_parts_scaled(ew.log(x), 0.4342944819032518)   # 1 / log(10), as jax
    return ew.div(ew.log(x), ew.like(np.log(10.0), x))


def _complex_parts_scaled(r, c):
    """jax.numpy's complex log2/log10: each part of log(x) times a real constant, not a
    complex division (which makes log(0j) / log(2) -inf+nanj).

        >>> _complex_parts_scaled(ew.log(np.complex128(0j)), 1 / np.log(2.0))   # -inf+0j
    """
    re, im = ew.real(r), ew.imag(r)
    return ew.complex(ew.mul(re, ew.like(c, re)), ew.mul(im, ew.like(c, im)))


def round(x, decimals=0):
    """x rounded to `decimals` places, halves to even; integers unchanged (JAX refuses
    decimals < 0 for them, and bools).  >>> xnp.round(np.array([0.5, 1.25]), 1)  # [0.5, 1.2]"""
    x = asarray_operand(x)
    kind = aval(x).dtype.kind
    if kind == "b":                 # jax.numpy's error (NumPy would round to float16)
        raise ValueError("data type <class 'numpy.bool'> not inexact")
    if kind in "iu":
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return x
    if decimals == 0:
        return ew.round(x)
    scale = ew.like(10.0 ** decimals, x)
    return ew.div(ew.round(ew.mul(x, scale)), scale)


around = round


def negative(x):
    return ew.neg(asarray_operand(x))


def positive(x):
    return asarray_operand(x)


def square(x):
    x = _numeric(asarray_operand(x))
    if aval(x).dtype.kind == "c":      # jax: (|a| - |b|)(|a| + |b|) + 2ab i, not x * x
        a, b = ew.real(x), ew.imag(x)  # (inf+1e300j: inf+infj, where x * x is nan+infj)
        aa, ab = ew.abs(a), ew.abs(b)
        return ew.complex(ew.mul(ew.sub(aa, ab), ew.add(aa, ab)),
                          ew.mul(ew.like(2, a), ew.mul(a, b)))
    return ew.integer_pow(x, 2)


def reciprocal(x):
    x = float_of(x)
    return ew.div(ew.like(1, x), x)


def abs(x):
    return ew.abs(asarray_operand(x))


absolute = abs


def sign(x):
    return ew.sign(asarray_operand(x))


add = _binary(ew.add, "add")
subtract = _binary(ew.sub, "subtract")
def multiply(x, y):
    """Elementwise x * y.  A bool array of the result's size beside a non-bool operand
    selects, as jax's product does: XLA rewrites A * convert(pred) as select(pred, A, 0), so
    a NaN or inf that False masks gives +0 (IEEE: NaN, or -0 for a negative) and a complex A
    that True keeps keeps its parts ((inf+0j) * (1+0j) is inf+nanj).  A bool array broadcast
    to more elements or a Python bool (jax: a constant, not a convert) stays a product; one
    given only leading axes of 1 selects (jax 0.10.2: bool[2] * nan[1, 1] is [[0., 0.]]).

        >>> multiply(np.array([np.nan, -2.0]), np.array([False, True]))     # [0., -2.]
    """
    px, py = promote(x, y, name="multiply")
    if aval(px).dtype != np.bool_:
        shape = aval(px).shape or aval(py).shape     # (promote broadcast all but scalars)
        for mask, other in ((x, py), (y, px)):
            if _is_full_mask(mask, shape):
                other = broadcast_to(other, shape) if aval(other).shape != shape else other
                out = ew.select_n(_at(mask, shape), ew.like(0, other), other)
                return with_weak(out, aval(px).weak_type and aval(py).weak_type)  # (as mul's)
    return ew.mul(px, py)


def _is_full_mask(v, shape):
    """Is v a bool array (not a Python bool) of the result's size: what jax converts and
    XLA's simplifier turns into a select (a broadcast that adds no element is a reshape)?"""
    return (not isinstance(v, bool) and not is_python_scalar(v)
            and aval(asarray_operand(v)).dtype == np.bool_
            and math.prod(aval(asarray_operand(v)).shape) == math.prod(shape))


def _at(v, shape):
    """Array v (of the result's size) at the result's shape."""
    v = asarray_operand(v)
    return v if aval(v).shape == shape else broadcast_to(v, shape)
maximum = _binary(ew.max, "maximum")
minimum = _binary(ew.min, "minimum")
def true_divide(x, y):
    """Elementwise x / y in floating point.  A bool array x over a divisor of one element,
    the result of more than one, is jax's select(x, 1 / y, 0): XLA divides by a divisor
    broadcast to more elements as a product with its reciprocal, and that product with a
    converted bool is a select (multiply's docstring), so False / 0.0 is 0 where IEEE's
    0 / 0 is NaN (jax 0.10.2: bool[1] / 0.0 and bool[] / 0.0 divide: NaN).

        >>> true_divide(np.array([True, False]), 0.0)      # [inf, 0.]
    """
    px, py = promote(x, y, name="true_divide", inexact=True)
    shape = aval(px).shape or aval(py).shape
    if (_is_full_mask(x, shape) and math.prod(shape) > 1
            and math.prod(aval(asarray_operand(y)).shape) == 1):
        recip = ew.div(ew.like(1, py), py)
        recip = broadcast_to(recip, shape) if aval(recip).shape != shape else recip
        out = ew.select_n(_at(x, shape), ew.like(0, recip), recip)
        return with_weak(out, aval(px).weak_type and aval(py).weak_type)    # (as div's)
    return ew.div(px, py)


divide = true_divide


def atan2(x, y):
    """lax.atan2: the primitive on real operands; on complex ones XLA's extension
    -i log((y + i x) / sqrt(y^2 + x^2)) built from primitives step by step as XLA emits it
    (complex_atan2.py: the rounding decides the side of a branch cut; jax.lax.atan2 takes
    complex operands: jnp.arctan2(1., 1+2j) is 0.2318-0.4024j), so every tier and
    derivative follows from theirs.

        >>> complex(atan2(np.complex128(1), np.complex128(1 + 2j)))   # doctest: +ELLIPSIS
        (0.2318238...-0.4023594...j)
    """
    x, y = ew.like(x, y), ew.like(y, x)
    if aval(x).dtype.kind != "c":
        return ew.atan2(x, y)
    return xla_atan2(x, y)


arctan2 = _binary_float(atan2, "arctan2")
equal, not_equal = _binary(ew.eq, "equal"), _binary(ew.ne, "not_equal")


def _ordered(compare):
    """`compare` (a lax comparison: real operands only) extended to complex operands as
    jax.numpy extends it: by the real parts, by the imaginary parts where the real parts are
    equal (NumPy's order too; a NaN part compares false).

        >>> bool(_ordered(ew.gt)(np.complex128(1 + 2j), np.complex128(1 + 1j)))
        True
    """
    def f(x, y):
        if aval(x).dtype.kind != "c":
            return compare(x, y)
        re_x, re_y = ew.real(x), ew.real(y)
        return ew.select_n(ew.eq(re_x, re_y), compare(re_x, re_y),
                           compare(ew.imag(x), ew.imag(y)))
    return f


less, less_equal = _binary(_ordered(ew.lt), "less"), _binary(_ordered(ew.le), "less_equal")
greater = _binary(_ordered(ew.gt), "greater")
greater_equal = _binary(_ordered(ew.ge), "greater_equal")


def floor_divide(x, y):
    """NumPy's floor division (`//`), built on lax's truncating `div` as jax.numpy builds
    it: an integer quotient steps down by one where the signs differ and the division is
    inexact (so x // 0 is JAX's -1, or -2 for x != 0; unsigned: the maximum)."""
    x, y = map(_numeric, promote(x, y, name="floor_divide"))
    kind = aval(x).dtype.kind
    if kind == "u":
        return ew.div(x, y)
    if kind == "i":
        q = ew.div(x, y)
        step = logical_and(ew.ne(ew.sign(x), ew.sign(y)), ew.ne(ew.rem(x, y), ew.like(0, x)))
        return where(step, ew.sub(q, ew.like(1, q)), q)
    return _float_floor_divide(x, y)


def _float_floor_divide(x, y):
    """(x - fmod(x, y)) / y, one less where the remainder's sign differs from y's, rounded
    (CPython's float_divmod, as jax.numpy and NumPy: 1.0 // 0.1 is 9, not floor(1 / 0.1))."""
    mod = ew.rem(x, y)
    zero = ew.like(0, mod)
    q = ew.div(where(ew.eq(y, ew.like(0, y)), x, ew.sub(x, mod)), y)
    step = logical_and(ew.ne(mod, zero), ew.ne(ew.sign(y), ew.sign(mod)))
    return ew.round(where(step, ew.sub(q, ew.like(1, q)), q))


def nonzero_divisor(y):
    """An integer divisor with its zeros replaced by 1, so that x % 0 and fmod(x, 0) are 0
    (NumPy's and jax.numpy's value; lax.rem(x, 0) is x)."""
    if aval(y).dtype.kind not in "iu":
        return y
    if is_python_scalar(y):              # (stays a weak Python int, as jnp's `_where` keeps it)
        return y if y != 0 else 1
    return where(ew.eq(y, ew.like(0, y)), ew.like(1, y), y)


def remainder(x, y):
    """NumPy's remainder (`%`, the divisor's sign), built on lax's C `rem` as jax.numpy
    builds it: a non-zero remainder whose sign differs from the divisor's moves up by y."""
    x, y = map(_numeric, promote(x, y, name="remainder"))
    y = nonzero_divisor(y)
    r = ew.rem(x, y)
    if aval(r).dtype.kind == "u":
        return r
    zero = ew.like(0, r)
    up = logical_and(ew.ne(ew.lt(r, zero), ew.lt(y, zero)), ew.ne(r, zero))
    return where(up, ew.add(r, y), r)


mod = remainder


def _concrete_int(y):
    """The int of a concrete integer scalar exponent -- a Python int or bool, a NumPy integer
    scalar or 0-d array, an eager 0-d Array -- or None (NumPy bools, traced values, floats,
    arrays): JAX's power takes integer_pow for these (operator.index of a concrete value, and
    Python's True indexes as 1, NumPy's np.True_ not), so that int8_array ** np.int64(2)
    stays int8 and (inf+1j) ** True is inf+1j (lax.pow's would be nan+nanj).

        >>> _concrete_int(np.int64(2)), _concrete_int(True), _concrete_int(np.True_)
        (2, 1, None)
    """
    if isinstance(y, int):
        return int(y)
    if isinstance(y, (np.integer, np.ndarray)) and y.dtype.kind in "iu" and y.ndim == 0:
        return int(y)
    return None


def power(x, y):
    """x ** y; an integer Python exponent becomes repeated multiplication (exact, any sign x)."""
    if _concrete_int(y) is not None:
        y = _concrete_int(y)
        x = _numeric(asarray_operand(x))
        if aval(x).dtype.kind in "iu" and y < 0:
            raise ValueError("integers to negative integer powers are not allowed")
        return ew.integer_pow(x, y)
    x, y = asarray_operand(x), asarray_operand(y)
    inexact_int = aval(x).dtype.kind in "fc" and aval(y).dtype.kind in "iu"
    px, py = map(_numeric, promote(x, y, name="power"))
    if aval(px).dtype.kind in "biu":
        return _int_power(px, py)
    if inexact_int:          # lax.pow(x, y) as jnp's: x's dtype, weak only if both are
        return ew.pow(*_broadcast_pair(asarray(x), y, px, py))
    return ew.pow(px, py)


def _broadcast_pair(x, y, px, py):
    """x and y (unpromoted) at the shapes promote gave them (px, py)."""
    return [v if aval(v).shape == aval(p).shape else broadcast_to(v, aval(p).shape)
            for v, p in ((x, px), (y, py))]


def _int_power(x, y):
    """Integer ** traced integer as JAX: binary exponentiation over the exponent's low 6 bits
    (read unsigned), in the dtype's wrapping arithmetic.  So overflow wraps as in a loop of
    multiplications (5 ** 15 in int32), and a negative exponent gives JAX's numbers
    (3 ** -4 in int32: -1830685263); |x| <= 1 and exponents below 64 are exact."""
    from ...primitives.bits.shifts import shift_right_logical
    one, zero = ew.like(1, y), ew.like(0, y)
    dt = aval(x).dtype           # (a strong accumulator, as jnp's: the result is strong)
    acc = where(ew.and_(ew.eq(x, ew.like(0, x)), ew.ne(y, zero)), convert(0, dt),
                convert(1, dt))
    for _ in range(6):                  # a larger exponent overflows for any |x| > 1
        acc = where(ew.ne(ew.and_(y, one), zero), ew.mul(acc, x), acc)
        x = ew.mul(x, x)
        y = shift_right_logical(y, one)
    return acc


def _to_bool(x):
    """x != 0, as JAX's logical functions read an operand (a weak one gives a weak bool)."""
    if type(x) is bool or isinstance(x, np.generic):    # (a Python bool is strong in JAX)
        return np.bool_(x != 0)
    if is_python_scalar(x):
        return core.as_weak(np.asarray(x != 0))
    a = aval(x)
    if a.dtype == np.bool_:
        return x
    # JAX compares with lax._const(x, 0): weak only for a weak 0-d x, so a weak array (an
    # int32 array promoted with 1.5) gives a strong bool, as jnp.logical_and(i32, 1.5)
    return ew.ne(x, 0 if not a.shape else np.zeros((), a.dtype))


def _logical(fn, name):
    def f(x, y):      # (promoted first, as JAX: logical_and of weak bool and weak int is weak)
        x, y = promote(x, y, name=name)
        return fn(_to_bool(x), _to_bool(y))
    f.__name__ = f.__qualname__ = name
    return f


logical_and = _logical(ew.and_, "logical_and")
logical_or = _logical(ew.or_, "logical_or")
logical_xor = _logical(ew.xor, "logical_xor")


def logical_not(x):
    return ew.not_(_to_bool(asarray_operand(x)))


def bitwise_not(x):
    return ew.not_(asarray_operand(x))


invert = bitwise_not


def bitwise_and(x, y):
    return ew.and_(*promote(x, y, name="bitwise_and"))


def bitwise_or(x, y):
    return ew.or_(*promote(x, y, name="bitwise_or"))


def isfinite(x):
    x = asarray_operand(x)
    if aval(x).dtype.kind in "biu":
        from ..creation.constructors import full_like
        return full_like(x, True, dtype=np.bool_)
    return ew.is_finite(x)


def isnan(x):
    x = asarray_operand(x)
    return ew.ne(x, x)


def isinf(x):
    x = float_of(x)
    return logical_and(logical_not(isnan(x)), logical_not(ew.is_finite(x)))


def where(condition, x=None, y=None):
    """Elementwise choice; the one-argument form needs a concrete condition."""
    if x is None and y is None:
        from ..indexing.subscripts import nonzero
        return nonzero(condition)
    c = convert(asarray_operand(condition), np.bool_)
    x, y = promote(x, y, name="where")
    from ...primitives.operands import broadcast_to, check_rank_promotion
    from ...core.avals import broadcast_shapes
    shape = broadcast_shapes(aval(c).shape, aval(x).shape, aval(y).shape, op="where")
    if aval(c).shape != shape:
        check_rank_promotion([aval(v).shape for v in (c, x, y)], "where")
    c, x, y = (broadcast_to(v, shape) if aval(v).shape not in ((), shape) else v for v in (c, x, y))
    if shape != () and aval(x).shape == () and aval(y).shape == ():
        x = broadcast_to(x, shape)
    return ew.select_n(c, y, x)


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    """Limit values to [a_min, a_max] (either may be None; `min=`/`max=` as in NumPy 2)."""
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    a = asarray_operand(a)
    if any(v is not None and aval(asarray_operand(v)).dtype.kind == "c"
           for v in (a, a_min, a_max)):             # (JAX's check, bounds or none)
        raise ValueError("clip: Clip received a complex value either through the input or "
                         "the min/max keywords. Complex values have no ordering and cannot "
                         "be clipped (as in JAX): clip x.real or x.imag")
    if a_min is None and a_max is None:
        return a
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


def logaddexp(x, y):
    # jax's complex logaddexp is weak only when the promoted operands are and both are 0-d
    # (jax 0.10.2: logaddexp(bool 0-d, 1+2j) is a weak complex128, logaddexp(bool (1,), 1+2j)
    # and logaddexp(int32 array, 1+2j) strong ones)
    scalars = aval(x).ndim == 0 and aval(y).ndim == 0
    x, y = promote(x, y, name="logaddexp", inexact=True)
    if aval(x).dtype.kind == "c":
        return with_weak(complex_logaddexp(x, y), scalars and aval(x).weak_type)
    # one primitive (xforms/primitives/special/functions.py) for JAX's derivative rule: d/dx = exp(x - out)
    # (1/2, then 1/4 at a tie) and finite where an operand is +inf
    return special.logaddexp(x, y)


def complex_logaddexp(x, y):
    """jax.numpy's logaddexp of complex operands: max(x, y) + log1p(exp(x + y - 2 max))
    (lax.max orders complex numbers by real part, then imaginary), its imaginary part
    wrapped into [-pi, pi).

        >>> complex(complex_logaddexp(np.complex128(1 + 1j), np.complex128(1 - 1j)))
        (1.0775207101739...+0j)
    """
    amax = ew.max(x, y)
    out = ew.add(amax, ew.log1p(ew.exp(ew.sub(ew.add(x, y), ew.mul(amax, ew.like(2, amax))))))
    im = ew.imag(out)
    pi, two_pi = ew.like(np.pi, im), ew.like(2 * np.pi, im)
    im = ew.rem(ew.add(im, pi), two_pi)          # (rem keeps the dividend's sign: C's fmod)
    im = ew.select_n(ew.lt(im, ew.like(0, im)), im, ew.add(im, two_pi))
    return ew.complex(ew.real(out), ew.sub(im, pi))


def real(x):
    x = asarray_operand(x)
    return ew.real(x) if aval(x).dtype.kind == "c" else x


def imag(x):
    x = asarray_operand(x)
    if aval(x).dtype.kind == "c":
        return ew.imag(x)
    from ..creation.constructors import zeros_like
    return zeros_like(x)


def conj(x):
    x = asarray_operand(x)
    return ew.conj(x) if aval(x).dtype.kind == "c" else x


conjugate = conj
