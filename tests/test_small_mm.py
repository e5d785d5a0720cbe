"""Products taken by the register-tiled loop nest instead of BLAS
(xforms/kernels/runtime/products/small_mm.py): the same values as NumPy's product for every tile and
tail shape, the path actually taken where it applies, BLAS kept where it does not."""
import numba
import numpy as np
import pytest

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from xforms.kernels.runtime import cpu_runtime
from xforms.kernels.runtime.products import small_mm

needs_avx512 = pytest.mark.skipif(not small_mm.available(),
                                  reason="the loop nest is used on AVX-512 hosts only")


@numba.njit
def _nn(a, b, o):
    cpu_runtime.mm_nn(a, b, o)


@numba.njit
def _tn(a, b, o):
    cpu_runtime.mm_tn(a, b, o)


# rows: 8-row blocks, a 4-row block and single rows; columns: 2-vector slabs and a 1-vector
# tail (16 float32 / 8 float64 per vector); k = 1 and an odd depth
SHAPES = [(1, 1, 16), (3, 7, 48), (5, 33, 16), (12, 128, 80), (13, 64, 512), (32, 128, 512),
          (64, 512, 128)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_values_match_numpy(m, k, n, dtype):
    rng = np.random.default_rng(m * 1000 + k + n)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    o = np.full((m, n), np.nan, dtype)
    _nn(a, b, o)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(o, ref, rtol=tol, atol=tol * np.sqrt(k))


@needs_avx512
def test_loop_nest_taken_for_untransposed_float_operands():
    a, b, o = np.ones((32, 128), np.float32), np.ones((128, 512), np.float32), \
        np.empty((32, 512), np.float32)
    _nn(a, b, o)
    ir = {sig[0].dtype.name: text for sig, text in _nn.inspect_llvm().items()}
    assert "small_mm__nest_f32_" in ir["float32"]     # (other tests may type _nn first)
    _tn(a.T.copy(), b, o)           # a transposed operand: BLAS's flag, no loop nest
    assert "small_mm__nest" not in next(iter(_tn.inspect_llvm().values()))
    np.testing.assert_array_equal(o, np.full((32, 512), 128.0, np.float32))


@needs_avx512
def test_large_and_ragged_products_keep_blas():
    """n not a multiple of the vector width, k deeper than the limit, and m * n * k above
    it take gemm: same values as NumPy's."""
    rng = np.random.default_rng(0)
    for m, k, n in ((32, 128, 10), (8, small_mm.MAX_DEPTH + 1, 16), (1024, 256, 512)):
        a = rng.standard_normal((m, k))
        b = rng.standard_normal((k, n))
        o = np.empty((m, n))
        _nn(a, b, o)
        np.testing.assert_allclose(o, a @ b, rtol=1e-12, atol=1e-12)


def _lstm(params, xs):
    wx, wh, bias = params

    def step(carry, x):
        h, c = carry
        i, f, g, o = xnp.split(x @ wx + h @ wh + bias, 4, axis=1)
        c = xf.nn.sigmoid(f) * c + xf.nn.sigmoid(i) * xnp.tanh(g)
        h = xf.nn.sigmoid(o) * xnp.tanh(c)
        return (h, c), h
    h0 = xnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
    return xnp.mean(lax.scan(step, (h0, h0), xs)[1] ** 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scan_of_products_compiled_matches_fast_tier(dtype):
    """An LSTM by scan (the recurrent product one loop-nest call per step), compiled,
    against the NumPy-rule evaluation: forward and gradient."""
    rng = np.random.default_rng(3)
    hidden, inputs, batch, steps = 32, 16, 8, 6
    params = tuple(a.astype(dtype) for a in (
        rng.standard_normal((inputs, 4 * hidden)) / 4, rng.standard_normal((hidden, 4 * hidden)) / 6,
        0.1 * rng.standard_normal(4 * hidden)))
    xs = rng.standard_normal((steps, batch, inputs)).astype(dtype)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for f in (_lstm, xf.grad(_lstm)):
        with xf.disable_jit():
            ref = f(params, xs)
        got = xf.jit(f, tiered=False)(params, xs)
        for r, g in zip(np.atleast_1d(ref) if not isinstance(ref, tuple) else ref,
                        np.atleast_1d(got) if not isinstance(got, tuple) else got):
            np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=tol, atol=tol)
