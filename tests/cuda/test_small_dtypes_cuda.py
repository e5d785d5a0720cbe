"""int8/uint8/int16/uint16 on the CUDA backend (simulator): computed at their width and
wrapped as in XLA (the values are jax 0.10.2's, as in tests/dtypes/test_small_dtypes.py); float16 is
refused with an error naming the dtype (the CPU backend computes it in float32); int64 wraps
as XLA's."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.errors import LoweringError

U8 = np.array([1, 200, 255], np.uint8)
I8 = np.array([-128, 100, 7], np.int8)


@pytest.mark.parametrize("f,args,want,dtype", [
    (xnp.invert, (U8,), [254, 55, 0], "uint8"),
    (lambda a: a << 1, (U8,), [2, 144, 254], "uint8"),
    (lambda a: (a * a) >> 4, (U8,), [0, 4, 0], "uint8"),
    (lambda a, b: a + b, (I8, U8), [-127, 300, 262], "int16"),
    (lambda a: a.astype(xnp.int16) * 300, (I8,), [27136, 30000, 2100], "int16"),
    (lambda a: a + 1, (np.array([65535], np.uint16),), [0], "uint16"),
    (xnp.sum, (U8,), 456, "uint64"),
], ids=["invert", "shift", "wrapping mul", "int8+uint8", "int16", "uint16", "sum"])
def test_small_integers_on_cuda(f, args, want, dtype):
    got = np.asarray(xf.jit(f, backend="cuda")(*args))
    assert str(got.dtype) == dtype
    np.testing.assert_array_equal(got, np.asarray(want, dtype))


def test_float16_is_refused_with_the_dtype_named():
    with pytest.raises(LoweringError, match="dtype float16 is not supported on CUDA"):
        xf.jit(lambda a: a * 2, backend="cuda")(np.ones(2, np.float16))


# int64 wraps as XLA's (the printer spells it on uint64: printer/scalar.wrapping_int64; that
# its NVVM IR has no `nsw` is tests/kernels/cuda/test_cuda_sim.py's check).  jax 0.10.2 with x64,
# e.g. `jax.jit(lambda x, y: x + x - y)(X64, Y64).tolist()`
_M = np.iinfo(np.int64)
X64 = np.array([_M.max, 1, _M.max, 5], np.int64)
Y64 = np.array([_M.min, -1, 2, _M.min], np.int64)
XY64 = np.array([[_M.max, _M.max, 3], [_M.min, -1, _M.min]], np.int64)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # (NumPy scalars)
@pytest.mark.parametrize("f,args,want", [
    (lambda x, y: x + x - y, (X64, Y64),
     [9223372036854775806, 3, -4, -9223372036854775798]),
    (lambda x, y: x * y + (-3), (X64, Y64),
     [9223372036854775805, -4, -5, 9223372036854775805]),
    (lambda x, y: xnp.sign(y) * x, (X64, Y64),
     [-9223372036854775807, -1, 9223372036854775807, -5]),
    (lambda x: x ** 3, (X64,), [9223372036854775807, 1, 9223372036854775807, 125]),
    (lambda x: xnp.sum(x), (X64,), 4),
    (lambda x, y: xnp.prod(x * y), (X64, Y64), 0),
    (lambda a: xnp.sum(a, axis=0), (XY64,), [-1, 9223372036854775806, -9223372036854775805]),
    (lambda a: xnp.sum(a, axis=1), (XY64,), [1, -1]),
    (lambda a: xnp.prod(a, axis=1), (XY64,), [3, 0]),
    (lambda x: xnp.sum(x + x) < 0, (X64,), False),
], ids=["add-sub", "mul-literal", "sign-times", "cube", "sum", "prod", "sum-axis0", "sum-axis1",
        "prod-axis1", "wrapped-compare"])
def test_int64_arithmetic_wraps_on_cuda(f, args, want):
    got = np.asarray(xf.jit(f, backend="cuda")(*args))     # (xforms is always 64-bit)
    np.testing.assert_array_equal(got, np.asarray(want, got.dtype))


# Signed integer powers wrap on CUDA as on both CPU paths (session 32: n > 8 printed Numba's
# own `**`, whose products are `nsw`; narrower dtypes multiplied without wrapping): by
# squaring in printer/scalar's `wrapping_ipow` device function, n <= 8 as repeated wrapping
# products, then cast.  The simulator wraps either way: ptx_check --nsw counts the flags
# (x ** 41 there).  jax 0.10.2 (x64): `jax.jit(lambda v: v ** n)(a).tolist()`
_P64 = np.array([3037000500, 3, -3037000500, 1 << 32], np.int64)
_P16 = np.array([32767, -300, -1, 3], np.int16)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # (NumPy scalars)
@pytest.mark.parametrize("a,n,want", [
    (_P64, 41, [0, -420491770248316829, 0, 0]),
    (np.array([2 ** 31 - 1, -2 ** 31, -1, 7], np.int32), 9, [2147483647, 0, -1, 40353607]),
    (np.array([127, -128, -1, 3], np.int8), 11, [127, 0, -1, -5]),
    (_P16, 4, [1, 12544, 1, 81]), (_P16, 3, [32767, 832, -1, 27]),
], ids=["int64-41", "int32-9", "int8-11", "int16-4", "int16-3"])
def test_signed_integer_powers_wrap_on_cuda(a, n, want):
    got = np.asarray(xf.jit(lambda v: v ** n, backend="cuda")(a))
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got, np.asarray(want, a.dtype))
    wrapped = np.asarray(xf.jit(lambda v: v ** 40 < 0, backend="cuda")(_P64))   # (3 ** 40 wraps)
    assert wrapped.tolist() == [False, True, False, False]
