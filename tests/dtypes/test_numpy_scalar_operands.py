"""A NumPy scalar on the left of an operator with an eager xforms Array (session 21).

`np.int32(2) + f32_array`: NumPy's scalar operator runs first and, for an ndarray subclass,
calls the ufunc, which promoted as NumPy does (float64).  A jax.Array makes NumPy defer and
JAX promotes (float32); xforms' Array now sends a NumPy scalar and an Array of another dtype
to the xnp function (xforms/numpy/arrays/numpy_ufuncs.py, `_eager_array_ufunc`).
"""
import operator

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.core.trace import Array

# jax 0.10.2 with jax_enable_x64 (computed here; JAX is not installed in CI):
# `scalar OP f32 array` and `f32 array OP scalar` for each NumPy scalar type, and the
# same against an int32 array (dtype, weak_type of `scalar + i32`)
_F32_RESULT = {np.int32: "float32", np.int8: "float32", np.bool_: "float32",
               np.float16: "float32", np.uint64: "float32", np.int64: "float32",
               np.float32: "float32", np.float64: "float64"}
_I32_ADD = {np.uint64: ("float64", True), np.int64: ("int64", False),
            np.float64: ("float64", False), np.uint8: ("int32", False),
            np.float32: ("float32", False), np.bool_: ("int32", False)}
_ARITH = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
          operator.floordiv, operator.mod]


@pytest.mark.parametrize("scalar_type", list(_F32_RESULT))
@pytest.mark.parametrize("op", _ARITH, ids=lambda o: o.__name__)
def test_numpy_scalar_operators_with_float32_arrays_as_jax(scalar_type, op):
    x = xnp.asarray(np.array([1.5, 2.0], np.float32))
    s = scalar_type(2)
    want = _F32_RESULT[scalar_type]
    left, right = op(s, x), op(x, s)
    assert type(left) is Array and left.dtype == want, (left, want)
    assert right.dtype == want
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(left, op(np.float64(s), np.float64(x)).astype(want))


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge,
                                operator.eq, operator.ne], ids=lambda o: o.__name__)
def test_numpy_scalar_comparisons_with_arrays_are_bool(op):
    x = xnp.asarray(np.array([1.5, 2.0], np.float32))
    out = op(np.int32(2), x)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, op(2, np.array([1.5, 2.0])))


@pytest.mark.parametrize("scalar_type", list(_I32_ADD))
def test_numpy_scalar_plus_int32_array_as_jax(scalar_type):
    xi = xnp.ones(3, xnp.int32)
    dtype, weak = _I32_ADD[scalar_type]
    for out in (scalar_type(3) + xi, xi + scalar_type(3)):
        assert out.dtype == dtype
    assert (scalar_type(3) + xi).weak_type == weak


def test_numpy_scalar_bitwise_operators_as_jax():
    xi = xnp.ones(3, xnp.int32)
    # jax 0.10.2: int32, int64, int32, int64
    assert (np.int32(3) << xi).dtype == np.int32
    assert (np.int64(3) & xi).dtype == np.int64
    assert (np.uint8(3) | xi).dtype == np.int32
    assert (xi >> np.int64(1)).dtype == np.int64


def test_numpy_scalar_and_a_jitted_output():
    out = xf.jit(lambda t: t * 2, tiered=False)(np.float32(1.5))
    assert (np.int32(2) + out).dtype == np.float32


def test_numpy_functions_on_arrays_keep_numpy_behaviour():
    """Everything else stays NumPy's ufunc (on plain views), the results Arrays as before."""
    x = xnp.asarray(np.array([1.0, -2.0]))
    assert type(np.sin(x)) is Array and type(x + x) is Array
    assert type(np.add.reduce(x)) is Array and float(x.sum()) == -1.0
    out = np.empty(2)
    assert np.add(x, x, out=out) is out
    q, r = np.divmod(x, 2.0)
    assert type(q) is Array and q.tolist() == [0.0, -1.0]


def test_array_reductions_skip_the_python_ufunc_override():
    """x.sum() and its kin run ndarray's method on the plain view (session 22: the
    __array_ufunc__ round trip cost x.sum() 1.5 -> 3.8 us, now 2.0 us at load ~20): the
    override is not called, NumPy's values and Array results kept, out= honoured."""
    x = xnp.asarray(np.array([[1.0, -2.0], [3.0, 4.0]]))
    calls = []
    override = Array.__array_ufunc__

    def spy(self, *args, **kwargs):
        calls.append(args[0].__name__)
        return override(self, *args, **kwargs)
    Array.__array_ufunc__ = spy
    try:
        got = [x.sum(), x.sum(axis=0), x.prod(1), x.max(), x.min(0), x.mean(), x.std(),
               x.var(), x.any(), x.all(), x.cumsum(), x.cumprod(0)]
        assert calls == []
        s = np.sin(x)                                        # ufuncs: the override
        assert calls == ["sin"]
    finally:
        Array.__array_ufunc__ = override
    np.testing.assert_array_equal(s, np.sin(np.asarray(x)))
    p = np.asarray(x)
    want = [p.sum(), p.sum(axis=0), p.prod(1), p.max(), p.min(0), p.mean(), p.std(), p.var(),
            p.any(), p.all(), p.cumsum(), p.cumprod(0)]
    for g, w in zip(got, want):
        assert type(g) is Array
        np.testing.assert_array_equal(g, w)
    out = np.empty(2)
    assert x.sum(0, None, out) is out and out.tolist() == [4.0, 2.0]
    assert x.max(1, out) is out and out.tolist() == [1.0, 4.0]
    assert x.min(axis=1, out=out) is out and out.tolist() == [-2.0, 3.0]


def test_a_ufunc_of_a_numpy_name_is_not_numpys():
    """Issue #31's audit: NumPy's ufuncs on traced values and on a NumPy scalar beside an
    Array were looked up by the ufunc's name (`xnp.sin` for any ufunc called `sin`), so a
    user's `numba.vectorize` function named `sin` computed np.sin under jit (a silent wrong
    number) and one named `add` added beside a NumPy scalar.  Only NumPy's own ufuncs are
    looked up by name now; another one runs itself, or says it needs concrete data."""
    import numba

    @numba.vectorize(["float64(float64)"])
    def sin(x):
        return x + 100.0

    @numba.vectorize(["float64(float64, float64)"])
    def add(x, y):
        return x * y
    with pytest.raises(TypeError, match="not NumPy's"):
        xf.jit(lambda x: sin(x))(np.ones(2))
    np.testing.assert_array_equal(add(np.float64(3.0), xnp.ones(2) * 2), [6.0, 6.0])
    # (NumPy's own: xnp's, under jit and beside a NumPy scalar, as before)
    np.testing.assert_allclose(xf.jit(lambda x: np.sin(x))(np.ones(2)), np.sin(np.ones(2)))
    assert (np.int32(2) + xnp.ones(2, xnp.float32)).dtype == np.float32
