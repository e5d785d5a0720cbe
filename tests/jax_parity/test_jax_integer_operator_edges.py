"""Differences from JAX found in session 23 (issue #31): NumPy scalars as operands, integer
`//` and `**` of eager Arrays at their edges, `Array.round()` of bools, `lax.select_n`'s
error order and `lax.random_gamma_grad`'s dtype checks.

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import operator

import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from jax_tiers import same, tiers  # noqa: F401 (a fixture)


def _arr(values, dtype):
    return xnp.asarray(np.array(values, dtype))


@pytest.mark.parametrize("dtype, want", [("int8", [2, 0, -2]), ("int64", [2, 0, -2]),
                                         ("uint8", [2, 0, 255]),
                                         ("uint64", [2, 0, 2 ** 64 - 1])])
def test_numpy_scalar_floor_divided_by_an_array_with_a_zero(dtype, want):
    # np.int8(2) // jnp.array([1, 3, 0], int8) -> [2, 0, -2] (NumPy's ufunc: [2, 0, 0])
    s = np.dtype(dtype).type(2)
    with np.errstate(all="ignore"):
        out = s // _arr([1, 3, 0], dtype)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, np.array(want, dtype))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "uint32"])
def test_numpy_scalar_true_divided_by_an_array_of_its_dtype(dtype):
    # np.int32(2) / jnp.array([1, 3], int32) -> float32 (NumPy's ufunc: float64)
    out = np.dtype(dtype).type(2) / _arr([1, 3], dtype)
    assert out.dtype == np.float32, out.dtype
    np.testing.assert_allclose(out, np.array([2, 2 / 3] if dtype != "bool" else [1, 1 / 1.],
                                             np.float32) if dtype != "bool" else [1, 1])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "uint64"])
def test_eager_integer_floor_division_by_zero_as_jit_and_jax(dtype, tiers):
    # jnp: [2, -3, 0] // 0 -> [-2, -2, -1] (signed), [2, 253, 0] // 0 -> max (unsigned)
    signed = np.dtype(dtype).kind == "i"
    a = np.array([2, -3, 0] if signed else [2, 253, 0], dtype)
    z = np.zeros(3, dtype)
    want = [-2, -2, -1] if signed else [np.iinfo(dtype).max] * 3
    with np.errstate(all="ignore"):
        same(tiers(xnp.floor_divide, a, z) + [xnp.asarray(a) // z, xnp.asarray(a) // z[0]],
             np.array(want, dtype), dtype)


def test_eager_integer_power_with_negative_exponents_as_jax(tiers):
    # jnp.array([-100, 3, 5, 1, -1, 2, 0], int8) ** [8, 9, -1, 70, 3, -2, -1]
    a = np.array([-100, 3, 5, 1, -1, 2, 0], np.int8)
    e = np.array([8, 9, -1, 70, 3, -2, -1], np.int8)
    same(tiers(xnp.power, a, e) + [xnp.asarray(a) ** e],
         np.array([0, -29, -51, 1, -1, 0, 0], np.int8), np.int8)


@pytest.mark.parametrize("exponent", [np.int64(2), np.uint8(2), np.array(2), np.int32(2)])
def test_power_by_a_concrete_numpy_integer_keeps_the_base_dtype(exponent):
    # jnp.power(int8_array, np.int64(2)) is integer_pow: int8 (lax.pow would give int64)
    a = np.array([1, 2, -3], np.int8)
    for out in (xnp.power(a, exponent), xnp.asarray(a) ** exponent,
                xf.jit(lambda a: a ** exponent)(a)):
        assert out.dtype == np.int8, out.dtype
        np.testing.assert_array_equal(out, [1, 4, 9])
    # a Python int base: a weak int64 (jnp.power(2, np.int32(3)) -> 8, int64, weak)
    out = xnp.power(2, np.int32(3))
    assert out.dtype == np.int64 and out.weak_type and out == 8


@pytest.mark.parametrize("left, right", [(np.int64(2), np.array([1, 3], np.uint64)),
                                         (np.array([1, 3], np.int8), np.uint64(2))])
def test_signed_and_uint64_numpy_operands_give_a_weak_float(left, right):
    # jnp.floor_divide(np.int64(2), uint64 array): float64, weak (the lattice's f*)
    for fn in (xnp.floor_divide, xnp.add, xnp.remainder):
        out = fn(left, right)
        assert out.dtype == np.float64 and out.weak_type, (fn, out.dtype, out.weak_type)
    out = xnp.add(np.int64(2), np.uint64(1))           # two NumPy scalars: the same
    assert out.dtype == np.float64 and out.weak_type


def test_vecdot_of_signed_and_uint64_is_weak():
    # jnp.vecdot(int8 array, uint64 array): float64, weak (as the promoted operands)
    a, b = np.array([1, 2], np.int8), np.array([3, 4], np.uint64)
    for fn in (xnp.vecdot, xnp.linalg.vecdot, xf.jit(xnp.vecdot)):
        out = fn(a, b)
        assert out.dtype == np.float64 and out.weak_type and out == 11.0


def test_round_method_of_a_bool_array_raises_as_jax():
    # jnp.array([True, False]).round() -> ValueError (NumPy's method: float16)
    b = xnp.asarray(np.array([True, False]))
    with pytest.raises(ValueError, match="not inexact"):
        b.round()
    with pytest.raises(NotImplementedError, match="decimals < 0"):
        xnp.asarray(np.array([15, 25])).round(-1)
    np.testing.assert_array_equal(xnp.asarray(np.array([0.5, 1.5, 2.25])).round(1),
                                  [0.5, 1.5, 2.2])


_B2, _F3 = np.array([True, False]), np.ones(3, np.float32)


@pytest.mark.parametrize("args, error, match", [
    # jax 0.10.2's errors: shapes before dtypes, then which's dtype
    ((_B2, _F3, np.ones(3)), TypeError, "`which` must be scalar or have the same shape"),
    ((_B2, _F3, np.ones(2)), TypeError, "cases must have the same shapes"),
    ((np.ones(3, np.float32), _F3, np.ones(3)), TypeError, "same dtypes"),
    ((np.ones(3, np.float32), _F3, _F3), TypeError, "must be boolean or integer type"),
    ((np.ones(3, bool), _F3, _F3, _F3), TypeError, "boolean `which` cannot have > 2 cases"),
    ((_B2,), ValueError, "at least one case"),
])
def test_select_n_errors_in_jax_order(args, error, match):
    for fn in (lax.select_n, xf.jit(lambda *a: lax.select_n(*a))):
        with pytest.raises(error, match=match):
            fn(*args)


def test_select_n_takes_an_unsigned_which(tiers):
    # jax.lax.select_n(uint8 [0, 1, 0], x, y) -> [x0, y1, x2]
    w = np.array([0, 1, 0], np.uint8)
    same(tiers(lax.select_n, w, np.arange(3.0), -np.arange(3.0)), [0.0, -1.0, 2.0])
    same(tiers(lax.select, w.astype(np.uint32), np.arange(3.0), -np.arange(3.0)),
         [-0.0, 1.0, -2.0])


@pytest.mark.parametrize("a, x", [(np.ones(2, np.float32), np.ones(2)),
                                  (np.ones(2, np.int32), np.ones(2, np.int32)),
                                  (np.ones(1, np.complex128), np.ones(1, np.complex128))])
def test_random_gamma_grad_refuses_non_float_or_mixed_dtypes(a, x):
    # jax raises TypeError for each (its own, from inside its formula)
    with pytest.raises(TypeError, match="random_gamma_grad"):
        lax.random_gamma_grad(a, x)

