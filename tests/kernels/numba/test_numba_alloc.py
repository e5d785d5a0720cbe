"""Allocation and reshape in compiled kernels without per-process Numba compiles:
xforms/kernels/numba_fixes/alloc.py (Numba's array allocation calling the NRT allocator directly) and
cpu_runtime's `empty_c` / `reshape_c` intrinsics give what NumPy and Numba's own give, and
a generated MLP gradient kernel compiles with no nested Numba compile (no @overload, no
`compile_internal` subroutine)."""
import numba
import numpy as np
import pytest
from numba.core import base, event

import xforms as xf
import xforms.numpy as xnp
from xforms.kernels.numba_fixes import alloc as numba_alloc
from xforms.kernels.runtime.cpu_runtime import empty_c, reshape_c
from xforms import nn


class _Nested:
    """Records the Numba compiles nested in a compile: dispatchers (overloads, helpers)
    and `compile_internal` subroutines."""

    def __enter__(self):
        self.names = []
        names = self.names

        class Listener(event.Listener):
            depth = 0

            def on_start(self, ev):
                self.depth += 1
                if self.depth > 1:
                    names.append(ev.data["dispatcher"].py_func.__module__ + ":"
                                 + ev.data["dispatcher"].py_func.__qualname__)

            def on_end(self, ev):
                self.depth -= 1
        self.listener = Listener()
        event.register("numba:compile", self.listener)
        self.original = base.BaseContext.compile_subroutine

        def compile_subroutine(ctx, builder, impl, *a, **k):
            names.append("internal:" + getattr(impl, "__qualname__", str(impl)))
            return self.original(ctx, builder, impl, *a, **k)
        base.BaseContext.compile_subroutine = compile_subroutine
        return self

    def __exit__(self, *exc):
        base.BaseContext.compile_subroutine = self.original
        event.unregister("numba:compile", self.listener)


def _require_patch():
    # the patch installs only where Numba's allocator source is the one it was written
    # against (xforms/kernels/numba_fixes/alloc.py `_check`); elsewhere Numba's own allocator runs
    if numba_alloc.ORIGINAL is None:
        pytest.skip("the allocation patch is not installed on this Numba")


def test_the_allocation_patch_applies_to_this_numba():
    from numba.np import arrayobj
    _require_patch()
    assert arrayobj._empty_nd_impl.__wrapped__ is numba_alloc.ORIGINAL


@pytest.mark.parametrize("dtype", [np.float32, np.complex128, np.int16, np.bool_])
def test_allocated_arrays_match_numpy(dtype):
    @numba.njit
    def make(n):
        a = np.empty((n, 3, 2), dtype)
        b = np.empty((n, 3, 2), dtype).T.copy()      # a copy of an F-ordered view
        return a, b, empty_c((n, 3), dtype)
    with _Nested() as nested:
        a, b, c = make(4)
    assert not [n for n in nested.names if "allocat" in n], nested.names
    for got, want in [(a, np.empty((4, 3, 2), dtype)), (b, np.empty((2, 3, 4), dtype)),
                      (c, np.empty((4, 3), dtype))]:
        assert (got.shape, got.dtype, got.strides) == (want.shape, want.dtype, want.strides)
        assert got.ctypes.data % min(got.itemsize, 16) == 0


def test_allocation_errors_match_numpy():
    f = numba.njit(lambda n: np.empty((n, n), np.float64))
    with pytest.raises(ValueError, match="too big"):
        f(2 ** 40)
    g = numba.njit(lambda n: empty_c((n, 2), np.float32))
    with pytest.raises(ValueError, match="negative dimensions"):
        g(-1)


def test_reshape_c_views_like_numpy_reshape():
    x = np.arange(24.0).reshape(4, 6)
    f = numba.njit(lambda a: reshape_c(a, (2, 3, 4)))
    r = f(x)
    want = x.reshape(2, 3, 4)
    np.testing.assert_array_equal(r, want)
    assert r.strides == want.strides and np.shares_memory(r, x)
    r[0, 0, 0] = -1.0          # a view, as NumPy's
    assert x[0, 0] == -1.0
    with pytest.raises(ValueError, match="total size"):
        numba.njit(lambda a: reshape_c(a, (5, 5)))(x)
    # any other layout: Numba's own reshape (here a Fortran-ordered view)
    t = numba.njit(lambda a: reshape_c(a.T, (3, 2, 4)))(x)
    u = numba.njit(lambda a: a.T.reshape((3, 2, 4)))(x)
    np.testing.assert_array_equal(t, u)
    assert t.strides == u.strides


def test_generated_mlp_gradient_compiles_no_nested_numba_function():
    rng = np.random.default_rng(1)
    w1, w2, x = rng.normal(size=(5, 7)), rng.normal(size=(7, 3)), rng.normal(size=(4, 5))

    def loss(w1, w2, x):
        return xnp.sum(nn.log_softmax(xnp.tanh(x @ w1) @ w2) * x[:, :3])
    g = xf.jit(xf.grad(loss, argnums=(0, 1)), tiered=False)
    src = g.lower(w1, w2, x).as_text()
    _require_patch()
    assert "np.empty(" not in src and ".fill(" not in src and ".reshape(" not in src
    with _Nested() as nested:
        got = g(w1.astype(np.float32), w2.astype(np.float32), x.astype(np.float32))
    # runtime helpers (kernels.*) may compile on a cold Numba cache; Numba's own must not
    assert not [n for n in nested.names if not n.startswith("xforms.kernels.")], nested.names
    want = xf.grad(loss, argnums=(0, 1))(w1.astype(np.float32), w2.astype(np.float32),
                                        x.astype(np.float32))
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)
