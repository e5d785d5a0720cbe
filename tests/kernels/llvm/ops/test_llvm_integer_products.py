"""Integer matrix products (dot_general of int8 ... uint64) on the direct LLVM path (issue
#35, session 31): `products.by_loops` at the integers' width, so a program with an integer
product no longer falls back to Numba; the sums wrap modulo 2^width as the Numba kernel's
(an int64 sum cast to the width) and XLA's do.  Checked bit for bit against the Numba kernel,
against NumPy's int64 product wrapped to the width, and against JAX 0.10.2's values
(recorded)."""
import numpy as np
import pytest

import xforms.numpy as xnp
from xforms.kernels.cpu import llvm

from test_llvm_special import _both_n, _plan

_CASES = [("bij,bjk->bik", (2, 3, 5), (2, 5, 4)), ("ij,jk->ik", (3, 5), (5, 4)),
          ("ij,j->i", (3, 5), (5,)), ("i,i->", (5,), (5,)), ("bij,bjk->ik", (2, 3, 5), (2, 5, 4)),
          ("ij,jk->ik", (3, 0), (0, 4))]


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64,
                                np.uint64])
@pytest.mark.parametrize("spec, xs, ys", _CASES)
def test_integer_products_are_the_numba_kernels_and_wrap(dt, spec, xs, ys):
    info = np.iinfo(dt)
    rng = np.random.default_rng(3)
    x = rng.integers(info.min, info.max, xs, dtype=dt, endpoint=True)
    y = rng.integers(info.min, info.max, ys, dtype=dt, endpoint=True)

    def f(x, y):
        return xnp.einsum(spec, x, y) + dt(1)
    got, want = _both_n(f, x, y)
    assert got.dtype == want.dtype == dt and got.tobytes() == want.tobytes()
    with np.errstate(over="ignore"):
        ref = (np.einsum(spec, x.astype(np.uint64), y.astype(np.uint64)) + 1).astype(dt)
    assert got.tobytes() == ref.ravel().tobytes()


def test_integer_products_are_jaxs():
    """jnp.dot (JAX 0.10.2, x64) of int32 matrices whose sums wrap, uint8 matrices and an
    int64 vector dot that wraps."""
    a = np.array([[2 ** 30, 3, -7], [5, -2 ** 31, 11]], np.int32)
    b = np.array([[4, -1], [2 ** 20, 9], [-3, 2 ** 29]], np.int32)
    u, v = np.array([[200, 3], [17, 255]], np.uint8), np.array([[2, 100], [250, 1]], np.uint8)
    c, d = np.array([2 ** 62, 3, -5], np.int64), np.array([4, 2 ** 61, 7], np.int64)

    def f(a, b, u, v, c, d):
        return xnp.dot(a, b), xnp.dot(u, v), xnp.dot(c, d)
    assert llvm.refusals(_plan(f, a, b, u, v, c, d)) == []
    from xforms import jit
    ab, uv, cd = jit(f, tiered=False)(a, b, u, v, c, d)
    assert np.asarray(ab).dtype == np.int32 and np.asarray(uv).dtype == np.uint8
    assert np.asarray(ab).tolist() == [[3145749, -536870885], [-13, -536870917]]
    assert np.asarray(uv).tolist() == [[126, 35], [40, 163]]
    assert int(cd) == 6917529027641081821
