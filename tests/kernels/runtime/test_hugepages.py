"""Large arrays a compiled kernel allocates itself are advised onto transparent huge pages
(xforms/kernels/runtime/hugepages.py), as NumPy's own large arrays are; the values never change."""
import sys

import numba
import numpy as np
import pytest

import xforms as xf
from xforms.kernels.runtime import hugepages
from xforms import lax

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="MADV_HUGEPAGE is Linux's")


def test_helpers_in_python_and_in_compiled_code():
    a = np.arange(3 << 19, dtype=np.float64).reshape(3, -1)
    assert hugepages.advise_huge(a) is a
    c = hugepages.huge_copy(a)
    assert c is not a and c.flags.c_contiguous and np.array_equal(c, a)

    @numba.njit
    def both(x):
        y = hugepages.huge_copy(x)
        return hugepages.advise_huge(y) is y, y

    same, y = both(a[:, ::2])           # a strided input: the copy is C-contiguous
    assert same and np.array_equal(y, a[:, ::2])


@linux
def test_large_loop_carry_is_copied_onto_huge_pages():
    n = hugepages.HUGE_MIN_BYTES // 8          # float64: exactly the threshold
    f = xf.jit(lambda v: lax.fori_loop(0, 3, lambda i, c: c * 0.5 + 1.0, v))
    x = np.linspace(0.0, 1.0, n)
    assert "huge_copy(" in f.lower(x).as_text()
    np.testing.assert_allclose(f(x), ((x * 0.5 + 1.0) * 0.5 + 1.0) * 0.5 + 1.0, rtol=1e-15)
    small = np.ones(16)
    assert "huge_copy(" not in f.lower(small).as_text()
