"""xforms.dlpack (jax.dlpack): from_dlpack shares host buffers through NumPy's DLPack
support, copies when asked, and names what it cannot read."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import dlpack


def test_from_dlpack_shares_or_copies_host_memory():
    a = np.arange(6.0).reshape(2, 3)
    x = dlpack.from_dlpack(a)
    assert isinstance(x, xf.Array) and np.shares_memory(a, x)
    np.testing.assert_array_equal(x, a)
    assert not np.shares_memory(a, dlpack.from_dlpack(a, copy=True))
    y = dlpack.from_dlpack(xnp.ones(3, dtype=np.int32), device=xf.devices("cpu")[0])
    assert y.dtype == np.int32
    np.testing.assert_array_equal(xf.jit(lambda v: v * 2, tiered=False)(x), 2 * a)


def test_is_supported_dtype_as_jax():
    # jax.dlpack.is_supported_dtype: True for the numeric and bool dtypes, False for str,
    # TypeError for None
    assert all(dlpack.is_supported_dtype(d) for d in (np.bool_, np.uint8, np.int64,
                                                      np.float16, np.complex128))
    assert not dlpack.is_supported_dtype(np.str_)
    with pytest.raises(TypeError, match="dtype-like"):
        dlpack.is_supported_dtype(None)


class _OnCuda:
    def __dlpack__(self, **kw):
        raise AssertionError("not to be read")

    def __dlpack_device__(self):
        return (2, 0)


def test_from_dlpack_names_what_it_cannot_read():
    with pytest.raises(TypeError, match="__dlpack__ and __dlpack_device__"):
        dlpack.from_dlpack([1.0, 2.0])
    with pytest.raises(TypeError, match="host memory.*device type 2"):
        dlpack.from_dlpack(_OnCuda())
