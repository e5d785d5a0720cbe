"""int8/uint8/int16/uint16 on the CUDA backend (simulator): computed at their width and
wrapped as in XLA (the values are jax 0.10.2's, as in tests/test_small_dtypes.py); float16 is
refused with an error naming the dtype (the CPU backend computes it in float32)."""
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
