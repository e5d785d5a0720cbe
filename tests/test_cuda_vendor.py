"""The CUDA backend's vendor layer without a GPU (xforms/kernels/cuda/vendor/): the
dot_general -> cuBLAS GEMM mapping checked against a NumPy model of the BLAS contract, the
precision -> compute-type rule, and the fallback to the tile kernel where cuBLAS is absent.
The calls on a real GPU: tests/cuda/test_gpu_vendor.py (XFORMS_CUDA_TESTS=gpu)."""
import dataclasses
import importlib.util
import itertools
import logging
import os
import sys

import numpy as np
import pytest

from xforms.kernels.cuda import vendor
from xforms.kernels.cuda.vendor import gemm_map
from xforms.kernels.cuda.vendor.gemm_map import (COMPUTE_32F, COMPUTE_32F_FAST_TF32,
                                                 COMPUTE_64F, OP_N, OP_T, Gemm, compute_type,
                                                 gemm_for)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda"))
from blas_model import gemm_strided_batched  # noqa: E402  (tests/cuda/blas_model.py)

RNG = np.random.default_rng(0)
DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def _reference(x, y, dn):
    (lc, rc), (lb, rb) = dn
    xf = [d for d in range(x.ndim) if d not in lc and d not in lb]
    yf = [d for d in range(y.ndim) if d not in rc and d not in rb]
    xt = np.transpose(x, list(lb) + xf + list(lc))
    yt = np.transpose(y, list(rb) + list(rc) + yf)
    nb = len(lb)
    bs, fx, fy = xt.shape[:nb], xt.shape[nb:nb + len(xf)], yt.shape[nb + len(rc):]
    k = int(np.prod(xt.shape[nb + len(xf):]))
    out = np.matmul(xt.reshape(bs + (-1, k)), yt.reshape(bs + (k, -1)))
    return out.reshape(bs + fx + fy)


def _via_model(g, x, y, dtype):
    """dot_general computed the way the backend asks cuBLAS to: A is y's flat buffer, B is
    x's, C the C-contiguous output buffer."""
    out = np.full(g.batch * g.m * g.n, np.nan, dtype)
    gemm_strided_batched(g, y.ravel(), x.ravel(), out)
    return out


def _patterns():
    """Every dot_general layout the tile kernel receives for operands of rank <= 3 with at
    most one batch axis: which axes are batch, contracting and free on each side, in
    every order (the backend hands dot_general over with whatever dimension numbers the
    transforms and the transpose folding produced)."""
    sizes = (2, 3, 4, 5)
    for nb, nc in itertools.product((0, 1), (1, 2)):
        for fx, fy in itertools.product((1, 2), (1, 2)):
            rx, ry = nb + nc + fx, nb + nc + fy
            if max(rx, ry) > 3 + nb:
                continue
            for px in itertools.permutations(range(rx)):
                for py in itertools.permutations(range(ry)):
                    lb, lc = px[:nb], px[nb:nb + nc]
                    rb, rc = py[:nb], py[nb:nb + nc]
                    xs, ys = [0] * rx, [0] * ry
                    for i, (a, b) in enumerate(zip(lb + lc, rb + rc)):
                        xs[a] = ys[b] = sizes[i % 2] if i < nb else sizes[(i + 1) % 4]
                    for d in px[nb + nc:]:
                        xs[d] = 3
                    for d in py[nb + nc:]:
                        ys[d] = 4
                    yield tuple(xs), tuple(ys), ((lc, rc), (lb, rb))


PATTERNS = sorted(set(_patterns()))


def test_every_layout_gemm_expresses_matches_the_blas_model():
    mapped = 0
    for xs, ys, dn in PATTERNS:
        g = gemm_for(xs, ys, dn)
        if g is None:
            continue
        mapped += 1
        x, y = RNG.standard_normal(xs), RNG.standard_normal(ys)
        np.testing.assert_allclose(_via_model(g, x, y, np.float64),
                                   _reference(x, y, dn).ravel(), rtol=1e-12,
                                   err_msg=f"{xs} . {ys} {dn}: {g}")
    # pinned: of 961 layouts, 120 are one GEMM (the rest have a batch axis innermost, or
    # free or contracted axes that another axis splits); a change to the mapping that takes
    # or refuses more updates these numbers, and the check above keeps what it takes right
    assert (len(PATTERNS), mapped) == (961, 120)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_and_no_conjugation(dtype):
    xs, ys, dn = (2, 4, 3), (2, 5, 3), (((2,), (2,)), ((0,), (0,)))      # x @ y^T, batched
    x = (RNG.standard_normal(xs) + 1j * RNG.standard_normal(xs)).astype(dtype) \
        if np.dtype(dtype).kind == "c" else RNG.standard_normal(xs).astype(dtype)
    y = (RNG.standard_normal(ys) - 2j * RNG.standard_normal(ys)).astype(dtype) \
        if np.dtype(dtype).kind == "c" else RNG.standard_normal(ys).astype(dtype)
    g = gemm_for(xs, ys, dn)
    assert (g.transa, g.transb) == (OP_T, OP_N)
    got = _via_model(g, x, y, dtype).reshape(2, 4, 5)
    np.testing.assert_allclose(got, np.einsum("bmk,bnk->bmn", x, y),
                               rtol=1e-5 if np.dtype(dtype).itemsize <= 8 else 1e-12)


@pytest.mark.parametrize("xs, ys, dn, want", [
    # plain x @ y: C^T = y^T x^T, both as they lie
    ((3, 4), (4, 5), (((1,), (0,)), ((), ())), Gemm(OP_N, OP_N, 5, 3, 4, 5, 4, 5, 0, 0, 15, 1)),
    # x^T @ y and x @ y^T: transposed operands read in place
    ((4, 3), (4, 5), (((0,), (0,)), ((), ())), Gemm(OP_N, OP_T, 5, 3, 4, 5, 3, 5, 0, 0, 15, 1)),
    ((3, 4), (5, 4), (((1,), (1,)), ((), ())), Gemm(OP_T, OP_N, 5, 3, 4, 4, 4, 5, 0, 0, 15, 1)),
    # a batch axis in the middle of y: a strided batch with a wide leading dimension
    ((2, 3, 4), (4, 2, 5), (((2,), (0,)), ((0,), (1,))),
     Gemm(OP_N, OP_N, 5, 3, 4, 10, 4, 5, 5, 12, 15, 2)),
    # two contracting axes merge into one K
    ((3, 2, 4), (2, 4, 5), (((1, 2), (0, 1)), ((), ())),
     Gemm(OP_N, OP_N, 5, 3, 8, 5, 8, 5, 0, 0, 15, 1)),
])
def test_gemm_parameters_of_common_layouts(xs, ys, dn, want):
    assert gemm_for(xs, ys, dn) == want


@pytest.mark.parametrize("xs, ys, dn", [
    ((3, 4, 2), (4, 5, 2), (((1,), (0,)), ((2,), (2,)))),    # batch innermost: no unit stride
    ((3, 4, 5), (4, 6), (((1,), (0,)), ((), ()))),            # free axes 0, 2 split by K
    ((4, 3, 4), (4, 4, 5), (((0, 2), (0, 1)), ((), ()))),     # contracting axes split by M
])
def test_layouts_one_gemm_cannot_express_fall_back(xs, ys, dn):
    assert gemm_for(xs, ys, dn) is None


def test_compute_type_follows_jax_precision():
    assert compute_type(np.float32) == COMPUTE_32F_FAST_TF32               # DEFAULT: TF32
    assert compute_type(np.complex64, "high") == COMPUTE_32F_FAST_TF32
    assert compute_type(np.float32, "highest") == COMPUTE_32F
    assert compute_type(np.float32, ("default", "highest")) == COMPUTE_32F
    from xforms import lax
    assert compute_type(np.complex64, lax.Precision.HIGHEST) == COMPUTE_32F
    for dt in (np.float64, np.complex128):
        assert compute_type(dt) == compute_type(dt, "highest") == COMPUTE_64F


# ---- the backend's choice (needs numba-cuda to emit CUDA source; no GPU) -----------------------
needs_numba_cuda = pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                                      reason="numba-cuda is not installed")


def _emit(f, *args, vendor_on=True):
    import xforms as xf
    from xforms.kernels.cuda import runtime as rt
    from xforms.kernels.cuda.backend import emit_program
    spec = dataclasses.replace(rt.spec_for((9, 0), sms=132), vendor=vendor_on)
    return emit_program(xf.make_jaxpr(f)(*args), spec, "f")


@pytest.fixture
def no_cublas(monkeypatch):
    monkeypatch.setattr(vendor, "_blas", [])
    monkeypatch.setattr(vendor, "_libs", {})
    monkeypatch.setattr(vendor, "_SONAMES", {"cublas": ("libxforms-no-such-cublas.so",)})
    monkeypatch.setattr(vendor, "_find_pathfinder", lambda name: None)


@needs_numba_cuda
def test_without_cublas_products_use_the_tile_kernel_and_log_once(no_cublas, caplog):
    x, y = np.ones((128, 256), np.float32), np.ones((256, 128), np.float32)
    with caplog.at_level(logging.WARNING, logger=vendor.__name__):
        first = _emit(lambda a, b: (a @ b, b @ a), x, y)
        _emit(lambda a, b: a @ b * 2.0, x, y)
    assert "_rt.gemm" not in first.source
    assert sum("dot_general:" in k.what for k in first.kernels) == 2
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 1 and "cublas was not found" in logged[0], logged


@needs_numba_cuda
def test_with_cublas_large_products_become_one_gemm_call(monkeypatch):
    monkeypatch.setattr(vendor, "_blas", [object()])       # present; nothing is called
    monkeypatch.delenv("XFORMS_CUDA_GEMM_MIN_WORK", raising=False)
    x, y = np.ones((128, 256), np.float32), np.ones((128, 128), np.float32)
    prog = _emit(lambda a, b: (a.T @ b, a[:8, :8] @ b[:8, :8]), x, y)
    g = gemm_for((128, 256), (128, 128), (((0,), (0,)), ((), ())))
    # JAX's default precision on a GPU: TF32 for float32
    assert f"_rt.gemm({tuple(g)}, 'float32', {COMPUTE_32F_FAST_TF32}," in prog.source
    from xforms import lax
    dn = (((0,), (0,)), ((), ()))
    highest = _emit(lambda a, b: lax.dot_general(a, b, dn, precision="highest"), x, y)
    assert f"_rt.gemm({tuple(g)}, 'float32', {COMPUTE_32F}," in highest.source
    # the small product stays a fused tile kernel (below GEMM_MIN_WORK)
    assert [k.what.split(":")[0] for k in prog.kernels].count("dot_general") == 1
    monkeypatch.setenv("XFORMS_CUDA_GEMM_MIN_WORK", "0")
    prog = _emit(lambda a, b: (a.T @ b, a[:8, :8] @ b[:8, :8]), x, y)
    assert prog.source.count("_rt.gemm(") == 2 and not any(
        "dot_general" in k.what for k in prog.kernels)
    # the simulator's spec (and compile_ptx's) never calls a library
    assert "_rt.gemm" not in _emit(lambda a, b: a.T @ b, x, y, vendor_on=False).source


def test_the_binding_against_the_installed_cublas():
    """Where libcublas can be loaded (a CUDA machine, or the nvidia-cublas wheel on the
    loader's path) its symbols bind with our signatures; without a driver the first call
    fails as a CublasError naming cuBLAS's status, not a crash."""
    from xforms.kernels.cuda import cuda_available
    from xforms.kernels.cuda.vendor.cublas import Cublas, CublasError
    if cuda_available():
        pytest.skip("a GPU is present: tests/cuda/test_gpu_vendor.py calls cuBLAS there")
    lib = vendor._find("cublas")
    if lib is None:
        pytest.skip("libcublas is not installed here")
    blas = Cublas(lib)
    g = gemm_for((64, 32), (32, 16), (((1,), (0,)), ((), ())))
    try:
        blas.gemm(g, np.float64, COMPUTE_64F, 0, 0, 0, context=1, stream=0)
    except CublasError as e:       # no GPU: cublasCreate cannot initialise
        assert "cuBLAS cublasCreate failed with status" in str(e)
    else:
        pytest.fail("a GEMM on null pointers must not succeed")
