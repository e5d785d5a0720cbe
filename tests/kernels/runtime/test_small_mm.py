"""Products taken by the register-tiled loop nest instead of BLAS
(xforms/kernels/runtime/products/small_mm.py): every element summed in order (bit for bit
against an exact reference), every layout (transposed A read in place, transposed B
packed), the rule's boundaries, the split over threads (results independent of it), the
path actually taken where it applies, BLAS kept where it does not."""
import ctypes
import os
from fractions import Fraction

import numba
import numpy as np
import pytest
from numba.core import types
from numba.extending import intrinsic

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
from xforms.kernels.runtime import cpu_runtime
from xforms.kernels.runtime.products import blas_pointers, nest_ir, small_mm

needs_avx512 = pytest.mark.skipif(not small_mm.available(),
                                  reason="the loop nest is used on AVX-512 hosts only")


@numba.njit
def _nn(a, b, o):
    cpu_runtime.mm_nn(a, b, o)


@numba.njit
def _tn(a, b, o):
    cpu_runtime.mm_tn(a, b, o)


@numba.njit
def _nt(a, b, o):
    cpu_runtime.mm_nt(a, b, o)


@numba.njit
def _tt(a, b, o):
    cpu_runtime.mm_tt(a, b, o)


_MM = {"nn": _nn, "tn": _tn, "nt": _nt, "tt": _tt}


def _product(layout, A, B, mm=_MM):
    """op(a) @ op(b) through mm_<layout> (of `mm`), the stored operands transposed copies
    where the layout says so."""
    a = np.ascontiguousarray(A.T) if layout[0] == "t" else A
    b = np.ascontiguousarray(B.T) if layout[1] == "t" else B
    o = np.full((A.shape[0], B.shape[1]), np.nan, A.dtype)
    mm[layout](a, b, o)
    return o


@pytest.fixture
def narrow(monkeypatch):
    """mm_<layout> functions compiled with the rule as beside AVX2 BLAS kernels (`wide`
    False: every layout, A of any size), so that the nest itself is what a test checks
    on any host; `_MM`'s, compiled with this host's rule, are left as they are."""
    monkeypatch.setattr(nest_ir, "blas_wide", lambda: False)
    out = {}
    for layout in _MM:
        mm = getattr(cpu_runtime, f"mm_{layout}")
        out[layout] = numba.njit(lambda a, b, o, mm=mm: mm(a, b, o))
    return out


def _round(x, dtype):
    """The Fraction x rounded to the nearest `dtype` value, ties to even."""
    near = dtype(float(x))                     # within one step of the answer
    cands = [np.nextafter(near, dtype(-np.inf)), near, np.nextafter(near, dtype(np.inf))]
    return min(cands, key=lambda c: (abs(Fraction(float(c)) - x),
                                     int(np.asarray(c).view(f"u{np.dtype(dtype).itemsize}")) & 1))


def _in_order(A, B):
    """C[i, j] = fma(A[i, k-1], B[k-1, j], ... fma(A[i, 0], B[0, j], 0)): each term added in
    k's order with one rounding (the nest's order), exact arithmetic in between."""
    dtype = A.dtype.type
    out = np.empty((A.shape[0], B.shape[1]), A.dtype)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            acc = dtype(0)
            for k in range(A.shape[1]):
                acc = _round(Fraction(float(acc)) + Fraction(float(A[i, k])) * Fraction(float(B[k, j])),
                             dtype)
            out[i, j] = acc
    return out


# rows: 8-row blocks, a 4-row block and single rows; columns: 2-vector slabs and a 1-vector
# tail (16 float32 / 8 float64 per vector); k = 1 and an odd depth
SHAPES = [(1, 1, 16), (3, 7, 48), (5, 33, 16), (12, 128, 80), (13, 64, 512), (32, 128, 512),
          (64, 512, 128)]


@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", SHAPES)
def test_values_match_numpy(m, k, n, dtype, layout):
    rng = np.random.default_rng(m * 1000 + k + n)
    A = rng.standard_normal((m, k)).astype(dtype)
    B = rng.standard_normal((k, n)).astype(dtype)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(_product(layout, A, B), ref, rtol=tol, atol=tol * np.sqrt(k))


@needs_avx512
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_element_summed_in_order(dtype, layout, narrow):
    """Bit for bit the in-order sum with one rounding per term (BLAS blocks and reorders
    k; the nest does not), over tiles of 8, 4 and 1 rows and both column slabs."""
    rng = np.random.default_rng(5)
    w = small_mm.width(types.float32 if dtype == np.float32 else types.float64)
    m, k, n = 13, 21, 3 * w
    A = rng.standard_normal((m, k)).astype(dtype)
    B = rng.standard_normal((k, n)).astype(dtype)
    np.testing.assert_array_equal(_product(layout, A, B, narrow), _in_order(A, B))


@needs_avx512
def test_loop_nest_taken_for_every_layout():
    a, b, o = np.ones((32, 128), np.float32), np.ones((128, 512), np.float32), \
        np.empty((32, 512), np.float32)
    for fn, x, y in ((_nn, a, b), (_tn, a.T.copy(), b), (_nt, a, b.T.copy())):
        fn(x, y, o)
        ir = {sig[0].dtype.name: text for sig, text in fn.inspect_llvm().items()}
        assert "small_mm_product_" in ir["float32"]      # (other tests may type fn first)
        np.testing.assert_array_equal(o, np.full((32, 512), 128.0, np.float32))


def _eligible_for(tb):
    """A jitted (m, n, k, like) -> small_mm.eligible's i1 (the Numba kernels' run-time
    test) for the dtype of array `like`, B transposed where `tb`, as a bool."""
    @intrinsic
    def _eligible(typingctx, m, n, k, like):
        def codegen(context, builder, sig, args):
            return small_mm.eligible(context, builder, like.dtype, *args[:3], tb=tb)
        return types.boolean(m, n, k, like), codegen

    return numba.njit(lambda m, n, k, like: _eligible(m, n, k, like))


_ELIGIBLE = {tb: _eligible_for(tb) for tb in (False, True)}


def test_rule_boundaries():
    """The rule, at its limits: depth (at least MIN_DEPTH, at most MAX_DEPTH), work, n a
    multiple of the vector width (16 float32, 8 float64), whatever B's layout."""
    d, w, r = small_mm.MAX_DEPTH, small_mm.MAX_WORK, small_mm.rule
    assert r(16, 16, d, 4) and not r(16, 16, d + 1, 4)
    assert r(w // (256 * d), 256, d, 4) and not r(w // (256 * d) + 1, 256, d, 4)
    assert r(1024, 1024, 256, 4) and r(1024, 768, 256, 8)
    assert not r(8, 24, 16, 4) and r(8, 32, 16, 4) and r(8, 24, 16, 8)
    low = small_mm.MIN_DEPTH
    assert r(784, 512, low, 8) and not r(784, 512, low - 1, 8)      # (k = 1: an outer product)
    for m in (1, 32, 127, 128):                  # a packed B^T asks for no rows (measured)
        assert r(m, 512, 512, 4, tb=True) == r(m, 512, 512, 4)


def test_the_three_callers_follow_the_rule():
    """The Numba kernels' run-time test and the direct path's choice are `rule` itself, on
    a grid through every boundary (a copy of it in either place would drift)."""
    from xforms.kernels.cpu.llvm.ops.linalg import products
    sizes = (1, 3, 4, 24, 32, 127, 128, 512, 1024, 1025)
    for dtype, ty in ((np.float32, "float"), (np.float64, "double")):
        like = np.empty((1, 1), dtype)
        for m, n, k, tb in ((m, n, k, tb) for m in sizes for n in (24, 32, 512)
                            for k in sizes for tb in (False, True)):
            want = small_mm.rule(m, n, k, like.itemsize, tb, nest_ir.blas_wide())
            assert _ELIGIBLE[tb](m, n, k, like) == want, (m, n, k, tb, dtype)
            assert products._small(m, n, k, ty, tb) == (want and small_mm.available())


def test_rule_beside_avx512_blas():
    """Beside OpenBLAS's AVX-512 kernels (`wide`) the nest takes a product only up to
    WIDE_WORK multiply-adds (2^25 float32, 2^22 float64) and B untransposed (measured:
    nest_ir.rule); beside AVX2 kernels the same sizes all take it."""
    r = small_mm.rule
    for args in ((32, 512, 784, 4), (128, 512, 512, 4), (512, 512, 128, 4), (8, 512, 128, 8),
                 (64, 256, 256, 8), (128, 128, 128, 8), (784, 512, 4, 8)):
        assert r(*args, wide=True) and r(*args)
    for args in ((129, 512, 512, 4), (256, 512, 784, 4), (1024, 512, 512, 4),
                 (512, 512, 1024, 4), (65, 256, 256, 8), (32, 512, 512, 8), (128, 512, 128, 8)):
        assert not r(*args, wide=True) and r(*args)
    for m in (1, 8, 32):
        assert not r(m, 512, 128, 4, tb=True, wide=True) and r(m, 512, 128, 4, tb=True)
    assert not r(8, 24, 16, 4, wide=True) and not r(784, 512, 1, 4, wide=True)


def test_blas_wide_follows_openblas_core():
    """`blas_wide` asks SciPy's OpenBLAS which core it runs: OPENBLAS_CORETYPE=Haswell (AVX2
    kernels) is not wide, whatever the CPU (a fresh process: the name is read once)."""
    import subprocess
    import sys
    if blas_pointers.corename() is None:
        pytest.skip("no OpenBLAS that names its core")
    code = ("from xforms.kernels.runtime.products import blas_pointers, nest_ir; "
            "print(blas_pointers.corename(), nest_ir.blas_wide())")
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    assert out == ["haswell", "False"]
    assert nest_ir.blas_wide() == (blas_pointers.corename() in nest_ir.AVX512_CORES)


@needs_avx512
def test_large_deep_and_ragged_products_keep_blas():
    """n not a multiple of the vector width, k deeper than the limit, and m * n * k above
    it take gemm: same values as NumPy's."""
    rng = np.random.default_rng(0)
    w = small_mm.MAX_WORK
    for m, k, n in ((32, 128, 10), (8, small_mm.MAX_DEPTH + 1, 16),
                    (w // (256 * 256) + 8, 256, 256)):
        A = rng.standard_normal((m, k))
        B = rng.standard_normal((k, n))
        for layout in ("nn", "nt"):
            np.testing.assert_allclose(_product(layout, A, B), A @ B, rtol=1e-12, atol=1e-12)


@pytest.fixture
def blas_threads():
    """set(n): the BLAS thread count in force (the split's parts follow it), put back after."""
    found = blas_pointers._openblas()
    if found is None:
        pytest.skip("no OpenBLAS to steer")
    get, put = found
    put.argtypes = [ctypes.c_int]
    prev = get()
    yield put
    put(prev)


def test_rows_per_part_whole_tiles():
    assert small_mm.rows_per_part(100, 2) == 56 and small_mm.rows_per_part(16, 2) == 8
    assert small_mm.rows_per_part(1024, 1) == 1024


@needs_avx512
@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="one Numba thread")
@pytest.mark.parametrize("layout", ["nn", "tn", "nt"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_over_threads_same_bits(blas_threads, layout, dtype, narrow):
    """Above PARALLEL_MIN_WORK the rows are cut into one part per thread (as many as BLAS
    is allowed): the same bits as one part, rows not a multiple of the parts' tiles."""
    rng = np.random.default_rng(9)
    m, k, n = 203, 160, 256               # 8.3e6 multiply-adds
    assert m * n * k >= small_mm.PARALLEL_MIN_WORK
    A = rng.standard_normal((m, k)).astype(dtype)
    B = rng.standard_normal((k, n)).astype(dtype)
    blas_threads(1)
    assert small_mm.parts_for(m, n, k) == 1
    one = _product(layout, A, B, narrow)
    blas_threads(2)
    assert small_mm.parts_for(m, n, k) == 2 and small_mm.parts_for(64, 64, 64) == 1
    np.testing.assert_array_equal(_product(layout, A, B, narrow), one)
    np.testing.assert_allclose(one, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batched_transposed_products_compiled(dtype):
    """Attention's products (q k^T: B transposed; its gradient's s^T q: A transposed),
    batched, through jit: each summed in order (on an AVX-512 host, beside BLAS's AVX2
    kernels: with AVX-512 ones BLAS takes a transposed B), NumPy's values elsewhere."""
    rng = np.random.default_rng(4)
    q, kk = (rng.standard_normal((2, 32, 16)).astype(dtype) for _ in range(2))

    def f(q, k):
        s = xnp.einsum("bqd,bkd->bqk", q, k)
        return xnp.einsum("bqk,bqd->bkd", s, q)
    got = np.asarray(xf.jit(f, tiered=False)(q, kk))
    if small_mm.available() and not nest_ir.blas_wide():
        s = np.stack([_in_order(q[b], kk[b].T) for b in range(2)])
        np.testing.assert_array_equal(got, np.stack([_in_order(s[b].T, q[b]) for b in range(2)]))
    s = np.einsum("bqd,bkd->bqk", q.astype(np.float64), kk)
    ref = np.einsum("bqk,bqd->bkd", s, q.astype(np.float64))
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_head_views(dtype):
    """Attention's heads as strided views of (batch, seq, heads, dim) (linalg.la_mm_views:
    rows `heads * dim` apart) through jit: each summed in order by the nest on an AVX-512
    host beside BLAS's AVX2 kernels (BLAS's blocking before; with AVX-512 kernels BLAS
    takes q k^T, B transposed), NumPy's values elsewhere."""
    rng = np.random.default_rng(6)
    q, kk, v = (rng.standard_normal((1, 32, 2, 16)).astype(dtype) for _ in range(3))

    def f(q, k, v):
        s = xnp.einsum("bqhd,bkhd->bhqk", q, k)
        return xnp.einsum("bhqk,bkhd->bqhd", s, v)
    got = np.asarray(xf.jit(f, tiered=False)(q, kk, v))
    if small_mm.available() and not nest_ir.blas_wide():
        for h in range(2):
            s = _in_order(q[0, :, h], kk[0, :, h].T)
            np.testing.assert_array_equal(got[0, :, h], _in_order(s, v[0, :, h]))
    ref = np.einsum("bhqk,bkhd->bqhd", np.einsum("bqhd,bkhd->bhqk", q.astype(np.float64), kk), v)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)


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
