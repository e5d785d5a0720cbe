"""lax's n-ary ops do not promote (session 22, #31): operands of different dtypes raise
JAX's TypeError, a Python scalar counting at its own dtype (int64, float64, complex128, bool;
xforms is always jax_enable_x64), weakly typed or not; xforms.numpy's functions promote.
A Python bool is a strong bool, so lax.max(weak bool, True) is strong.

JAX's messages and values below: jax 0.10.2, jax_enable_x64, CPU (computed here; JAX is not
installed in CI).
"""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax

F32, F64 = np.ones(2, np.float32), np.ones(2)
I32, I64, B = np.ones(2, np.int32), np.ones(2, np.int64), np.ones(2, bool)
TIP = " (Tip: jnp.{} is a similar function that does automatic type promotion on inputs)."

# (op, x, y, jax 0.10.2's message)
_RAISES = [
    (lax.add, F32, 2.0, "lax.add requires arguments to have the same dtypes, got float32, "
     "float64." + TIP.format("add")),
    (lax.add, I32, 2, "lax.add requires arguments to have the same dtypes, got int32, int64."
     + TIP.format("add")),
    (lax.add, F64, 2, "lax.add requires arguments to have the same dtypes, got float64, "
     "int64." + TIP.format("add")),
    (lax.add, np.ones(2, np.complex64), 2j, "lax.add requires arguments to have the same "
     "dtypes, got complex64, complex128." + TIP.format("add")),
    (lax.add, I64, True, "add does not accept dtype bool at position 1. Accepted dtypes at "
     "position 1 are subtypes of integer, floating, complexfloating."),
    (lax.sub, F32, F64, "lax.sub requires arguments to have the same dtypes, got float32, "
     "float64." + TIP.format("subtract")),
    (lax.mul, I32, I64, "lax.mul requires arguments to have the same dtypes, got int32, "
     "int64." + TIP.format("multiply")),
    (lax.div, I64, 2.0, "lax.div requires arguments to have the same dtypes, got int64, "
     "float64." + TIP.format("divide")),
    (lax.rem, F32, 2, "lax.rem requires arguments to have the same dtypes, got float32, "
     "int64."),
    (lax.rem, B, 1, "rem does not accept dtype bool at position 0. Accepted dtypes at "
     "position 0 are subtypes of integer, floating."),
    (lax.max, F32, 2.0, "lax.max requires arguments to have the same dtypes, got float32, "
     "float64." + TIP.format("maximum")),
    (lax.min, I64, True, "lax.min requires arguments to have the same dtypes, got int64, "
     "bool." + TIP.format("minimum")),
    (lax.eq, F32, 2, "lax.eq requires arguments to have the same dtypes, got float32, int64."
     + TIP.format("equal")),
    (lax.ne, B, 1, "lax.ne requires arguments to have the same dtypes, got bool, int64."
     + TIP.format("not_equal")),
    (lax.lt, F32, I32, "lax.lt requires arguments to have the same dtypes, got float32, "
     "int32."),
    (lax.ge, I64, 2.0, "lax.ge requires arguments to have the same dtypes, got int64, "
     "float64."),
    (lax.atan2, F32, 2.0, "lax.atan2 requires arguments to have the same dtypes, got float32, "
     "float64." + TIP.format("arctan2")),
    (lax.atan2, F64, 2, "atan2 does not accept dtype int64 at position 1. Accepted dtypes at "
     "position 1 are subtypes of floating, complexfloating."),
    (lax.nextafter, F32, 1.0, "lax.nextafter requires arguments to have the same dtypes, got "
     "float32, float64." + TIP.format("nextafter")),
    (lax.bitwise_and, B, 1, "lax.and requires arguments to have the same dtypes, got bool, "
     "int64."),
    (lax.bitwise_or, I32, I64, "lax.or requires arguments to have the same dtypes, got int32, "
     "int64."),
    (lax.bitwise_xor, F64, 2, "xor does not accept dtype float64 at position 0. Accepted "
     "dtypes at position 0 are subtypes of integer, bool."),
    (lax.shift_left, I32, 1, "lax.shift_left requires arguments to have the same dtypes, got "
     "int32, int64." + TIP.format("left_shift")),
    (lax.shift_right_logical, I64, True, "shift_right_logical does not accept dtype bool at "
     "position 1. Accepted dtypes at position 1 are subtypes of integer."),
    (lax.complex, F32, 2.0, "lax.complex requires arguments to have the same dtypes, got "
     "float32, float64."),
    (lax.complex, F64, 2, "complex does not accept dtype int64 at position 1. Accepted dtypes "
     "at position 1 are subtypes of float32, float64."),
    (lax.igamma, F32, F64, "lax.igamma requires arguments to have the same dtypes, got "
     "float32, float64."),
    (lax.zeta, F64, 2, "zeta does not accept dtype int64 at position 1. Accepted dtypes at "
     "position 1 are subtypes of floating."),
    (lax.polygamma, I32, I64, "polygamma does not accept dtype int32 at position 0. Accepted "
     "dtypes at position 0 are subtypes of floating."),
    (lax.pow, F32, 2.0, "the first argument to pow must have an inexact dtype (float or "
     "complex), and the second argument must have an inexact or integer dtype, and two "
     "inexact dtypes must match, but got float32 and float64 respectively."),
    (lax.pow, I64, 2, "pow does not accept dtype int64 at position 0. Accepted dtypes at "
     "position 0 are subtypes of floating, complexfloating."),
]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("op, x, y, msg", _RAISES,
                         ids=[f"{r[0].__name__}-{i}" for i, r in enumerate(_RAISES)])
def test_mixed_dtypes_raise_jaxs_error(jit, op, x, y, msg):
    f = xf.jit(lambda x: op(x, y)) if jit else (lambda x: op(x, y))
    with pytest.raises(TypeError) as info:
        f(x)
    assert str(info.value).startswith(msg), str(info.value)


def test_three_operand_ops_and_select_as_jax():
    with pytest.raises(TypeError, match=r"^lax\.clamp requires arguments to have the same "
                                        r"dtypes, got int64, float64, int64\."):
        lax.clamp(0, F64, 1)
    with pytest.raises(TypeError, match=r"^lax\.regularized_incomplete_beta requires arguments "
                                        r"to have the same dtypes, got float32, float64, "
                                        r"float64\."):
        lax.betainc(F32, F64, F64)
    with pytest.raises(TypeError, match=r"lax\.select requires arguments to have the same "
                                        r"dtypes, got float64, float32\." +
                                        TIP.format("where").replace(".", r"\.")
                                        .replace("(", r"\(").replace(")", r"\)")):
        lax.select(B, F32, F64)          # (JAX names select_n's cases: on_false first)
    with pytest.raises(TypeError, match=r"select cases must have the same shapes, got "
                                        r"\[\(2,\), \(\)\]"):
        lax.select_n(True, F64, 1.0)
    # accepted: one dtype, Python scalars of the operand's own dtype, a scalar predicate
    assert lax.clamp(0.0, F64, 1.0).dtype == np.float64
    assert lax.betainc(1.0, F64, F64).dtype == np.float64
    assert lax.select_n(True, F64, F64).dtype == np.float64


def test_same_dtypes_and_python_scalars_of_that_dtype_pass():
    np.testing.assert_array_equal(lax.add(F64, 2.0), [3.0, 3.0])
    assert lax.add(I64, 2).dtype == np.int64
    assert lax.add(F32, np.float32(2)).dtype == np.float32
    assert lax.pow(F32, 2).dtype == np.float32            # an integer exponent of any width
    assert lax.pow(F32, I64).dtype == np.float32
    assert lax.max(B, True).dtype == np.bool_
    out = lax.add(2.0, 3.0)
    assert (out.dtype, out.weak_type) == (np.float64, True)
    out = lax.max(2, 3)
    assert (out.dtype, out.weak_type) == (np.int64, True)
    # xnp promotes where lax refuses
    assert xnp.add(F32, 2.0).dtype == np.float32
    assert xnp.maximum(I32, I64).dtype == np.int64


def test_the_error_names_the_users_line():
    def mix(x):
        return lax.mul(x, 2.0)
    with pytest.raises(TypeError, match=r"test_lax_strict_dtypes\.py:\d+ \(mix\)"):
        xf.make_jaxpr(mix)(F32)


def test_reduce_window_and_reduce_know_lax_monoids():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(
        lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 1), "VALID"), [[1, 2], [4, 5]])
    np.testing.assert_array_equal(lax.reduce(x, 0.0, lax.add, (1,)), [3.0, 12.0])


# jax 0.10.2, with wb = (a == a) of a jitted Python int a (a weak bool): lax.max(wb, True),
# lax.min(wb, True), lax.bitwise_and/or(wb, True), lax.eq(wb, True) are strong bools (a Python
# bool is strong); lax.max(wb, wb), bitwise_and(wb, wb), select(wb, wb, wb) stay weak.
@pytest.mark.parametrize("f, weak", [
    (lambda b: lax.max(b, True), False), (lambda b: lax.min(b, True), False),
    (lambda b: lax.bitwise_and(b, True), False), (lambda b: lax.bitwise_or(b, True), False),
    (lambda b: lax.eq(b, True), False), (lambda b: lax.max(b, b), True),
    (lambda b: lax.bitwise_and(b, b), True), (lambda b: lax.select(b, b, b), True)],
    ids=["max", "min", "and", "or", "eq", "max-bb", "and-bb", "select-bbb"])
def test_python_bools_are_strong_as_jax(f, weak):
    seen = []

    def g(a):
        out = f(a == a)
        seen.append(bool(xf.core.trace.get_aval(out).weak_type))
        return out
    out = xf.jit(g)(1)
    assert out.dtype == np.bool_ and seen == [weak]


# jax 0.10.2: jnp.round/around of a bool array raise ValueError("data type <class
# 'numpy.bool'> not inexact") eagerly and under jit; jnp.round(int array, -1) raises
# NotImplementedError("integer np.round not implemented for decimals < 0"); ints are
# returned unchanged for decimals >= 0.
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_round_of_bools_and_negative_decimals_of_ints_as_jax(jit):
    wrap = xf.jit if jit else (lambda f: f)
    for f in (xnp.round, xnp.around, lambda b: xnp.round(b, 1)):
        with pytest.raises(ValueError, match=r"data type <class 'numpy.bool'> not inexact"):
            wrap(f)(np.array([True, False]))
    with pytest.raises(NotImplementedError, match="integer np.round not implemented for "
                                                  "decimals < 0"):
        wrap(lambda x: xnp.round(x, -1))(np.array([15, 25]))
    out = wrap(lambda x: xnp.round(x, 2))(np.array([15, 25]))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [15, 25])
