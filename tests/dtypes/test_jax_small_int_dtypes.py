"""Result dtypes jax 0.10.2 gives for 8-, 16- and 32-bit operands and Python scalar types
(issue #31; found by tools/jax_sweep.py with empty operands, s31, then checked non-empty).
JAX is absent in CI: the expected dtypes are jax 0.10.2's (`jax_enable_x64` on).
"""
import numpy as np
import pytest

import xforms as xf
import xforms.dtypes as xdt
import xforms.numpy as xnp
from jax_tiers import tiers, same  # noqa: F401 (a fixture)


def test_python_scalar_types_are_weak_in_result_type():
    # jnp.result_type(int, int8 array) = int8 (xforms: int64), (float, float32) = float32,
    # (complex, float32) = complex64, (int, uint8) = uint8, (int, int8, uint8) = int16
    i8, u8, f32 = np.zeros(1, np.int8), np.zeros(1, np.uint8), np.zeros(1, np.float32)
    assert xnp.result_type(int, i8) == np.int8
    assert xnp.result_type(float, f32) == np.float32
    assert xnp.result_type(complex, f32) == np.complex64
    assert xnp.result_type(int, u8) == np.uint8
    assert xnp.result_type(int, i8, u8) == np.int16
    assert xnp.result_type(float, np.int8(1)) == np.float64
    assert xnp.result_type(int, 3) == np.int64
    # jax.dtypes.result_type(int, return_weak_type_flag=True) = (int64, True); bool is strong
    assert xdt.result_type(int, return_weak_type_flag=True) == (np.dtype(np.int64), True)
    assert xdt.result_type(bool, return_weak_type_flag=True) == (np.dtype(np.bool_), False)


@pytest.mark.parametrize("dt, want", [(np.int8, np.complex64), (np.uint8, np.complex64),
                                      (np.int16, np.complex64), (np.uint16, np.complex64),
                                      (np.uint32, np.complex64), (np.float16, np.complex64),
                                      (np.int64, np.complex128), (np.int32, np.complex64)])
def test_sort_complex_dtype(tiers, dt, want):
    # jnp.sort_complex(int8 [3, 1]) = complex64 [1, 3] (xforms: complex128)
    same(tiers(xnp.sort_complex, np.array([3, 1], dt)), [1, 3], want)


def test_ix_of_an_empty_index_is_int64():
    # jnp.ix_(float32 []) -> int64 (0,); ix_(int8 [], int8 [1, 2]) -> int64 (0, 1), int8 (1, 2)
    (a,) = xnp.ix_(np.zeros(0, np.float32))
    assert a.dtype == np.int64 and a.shape == (0,)
    a, b = xnp.ix_(np.zeros(0, np.int8), np.array([1, 2], np.int8))
    assert (a.dtype, a.shape, b.dtype, b.shape) == (np.int64, (0, 1), np.int8, (1, 2))


def test_ravel_multi_index_keeps_the_index_dtype():
    # jnp.ravel_multi_index((int8 [1], int8 [2]), (3, 4)) = int8 [6]; empty int8 -> int8;
    # float32 indices: ValueError; int8 indices into (100, 100): ValueError (9999 > 127)
    for f in (xnp.ravel_multi_index, xf.jit(xnp.ravel_multi_index, static_argnums=(1, 2))):
        r = f((np.array([1], np.int8), np.array([2], np.int8)), (3, 4), "clip")
        assert r.dtype == np.int8 and r.tolist() == [6]
    # no dimensions: jnp.ravel_multi_index((), ()) = int64 0 (xforms: None as an object array)
    r = xnp.ravel_multi_index((), ())
    assert r.dtype == np.int64 and r.shape == () and int(r) == 0
    r = xnp.ravel_multi_index((np.zeros(0, np.int8), np.zeros(0, np.int8)), (3, 4))
    assert r.dtype == np.int8 and r.shape == (0,)
    with pytest.raises(ValueError, match="not an integer"):
        xnp.ravel_multi_index((np.zeros(1, np.float32),), (3,))
    with pytest.raises(ValueError, match="cannot hold"):
        xnp.ravel_multi_index((np.array([99], np.int8), np.array([99], np.int8)), (100, 100))
    r = xnp.ravel_multi_index((np.array([99], np.int8), np.array([99], np.int8)), (100, 100),
                              dtype=np.int32)
    assert r.dtype == np.int32 and r.tolist() == [9999]
