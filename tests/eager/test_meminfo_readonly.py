"""The memory of an xforms result is read-only through every route (issue #31): a Numba
kernel's output has a `_MemInfo` as its `.base`, whose buffer protocol exported the memory
writable (`np.frombuffer(result.base, ...)[0] = 7` wrote into the immutable result:
xforms/kernels/numba_fixes/meminfo_buffer.py); an eager operator's result's `.base` was a
writable ndarray (numpy/arrays/methods.py and mask_select.py make the owner read-only first)."""
import ctypes

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp


@pytest.fixture(scope="module")
def numba_result():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XFORMS_LLVM_KERNELS", "0")         # (Numba's path: read per compile)
        out = xf.jit(lambda t: t * 3 + 1, tiered=False)(np.arange(4, dtype=np.int64))
    assert type(out.base).__name__ == "_MemInfo"       # (else this tests nothing)
    return out


def test_a_numba_results_meminfo_exports_read_only_memory(numba_result):
    r = numba_result
    assert memoryview(r.base).readonly
    view = np.frombuffer(r.base, r.dtype)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 7
    with pytest.raises(TypeError):
        memoryview(r.base)[0] = 7
    with pytest.raises(TypeError):           # (ctypes asks for a writable buffer: refused)
        (ctypes.c_char * 8).from_buffer(r.base)
    assert r.tolist() == [1, 4, 7, 10]
    np.testing.assert_array_equal(view, r)   # (the same memory, read-only, no copy)
    assert view.ctypes.data == r.ctypes.data


def test_numba_results_still_feed_compiled_functions(numba_result):
    g = xf.jit(lambda t: t - 1, tiered=False)
    assert g(numba_result).tolist() == [0, 3, 6, 9]
    assert xnp.sum(numba_result).item() == 22


@pytest.mark.parametrize("op", [lambda a: a * 2.0, lambda a: a + a, lambda a: a ** 0.5,
                                lambda a: a * xnp.asarray(np.array([True, False, True])),
                                lambda a: xnp.asarray(np.array([True, False, True])) / 2.0])
def test_an_eager_operators_result_has_a_read_only_base(op):
    out = op(xnp.asarray(np.array([1.0, 4.0, 9.0])))
    assert not out.flags.writeable
    assert out.base is None or not out.base.flags.writeable
    if out.base is not None:
        with pytest.raises(ValueError):
            out.base[0] = 5
