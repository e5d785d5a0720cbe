"""dot_general through cuBLAS and fft through cuFFT on a real GPU (xforms/kernels/cuda/vendor/):
collected only with XFORMS_CUDA_TESTS=gpu (benchmarks/on_gpu.sh), never on the simulator,
which keeps the backend's own kernels.  The size thresholds are set to 0 so that small
cases take the library path; each result is compared with NumPy in float64/complex128.
What runs without a GPU (the mappings against models of the libraries' contracts, the
fallbacks) is in tests/kernels/cuda/test_cuda_vendor.py and tests/cuda/test_vendor_model.py."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cuda import runtime as rt
from xforms.kernels.cuda import vendor

import operands

RNG = np.random.default_rng(7)


def _rand(shape, dtype):
    return operands.rand(RNG, shape, dtype)


DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


@pytest.fixture(autouse=True)
def everything_to_the_libraries(monkeypatch):
    monkeypatch.setenv("XFORMS_CUDA_GEMM_MIN_WORK", "0")
    monkeypatch.setenv("XFORMS_CUDA_FFT_MIN_POINTS", "0")
    if vendor.blas() is None or vendor.fft() is None:
        pytest.fail("cuBLAS or cuFFT was not found on this GPU machine (see the log above)")


def _exe(f, *args):
    return xf.jit(f, backend="cuda").lower(*args)._exe


LAYOUTS = [   # (x shape, y shape, dimension numbers): shapes unique to this file
    ((40, 72), (72, 24), (((1,), (0,)), ((), ()))),                  # x @ y
    ((72, 40), (72, 24), (((0,), (0,)), ((), ()))),                  # x^T @ y
    ((40, 72), (24, 72), (((1,), (1,)), ((), ()))),                  # x @ y^T
    ((72, 40), (24, 72), (((0,), (1,)), ((), ()))),                  # x^T @ y^T
    ((3, 40, 72), (3, 72, 24), (((2,), (1,)), ((0,), (0,)))),        # batched
    ((40, 3, 72), (72, 3, 24), (((2,), (0,)), ((1,), (1,)))),        # batch axis in the middle
    ((40, 6, 12), (6, 12, 24), (((1, 2), (0, 1)), ((), ()))),        # two contracting axes
]


@pytest.mark.parametrize("precision", [None, "highest"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs, ys, dn", LAYOUTS)
def test_dot_general_through_cublas(xs, ys, dn, dtype, precision):
    x, y = _rand(xs, dtype), _rand(ys, dtype)
    f = lambda a, b: lax.dot_general(a, b, dn, precision=precision)   # noqa: E731
    exe = _exe(f, x, y)
    assert "_rt.gemm(" in exe.source, exe.source
    assert not any("dot_general" in k.what for k in exe.program.kernels)
    got = np.asarray(exe(x, y)[0])
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    want = np.asarray(lax.dot_general(x.astype(wide), y.astype(wide), dn))
    # float32 arithmetic: TF32 (10-bit mantissa) at JAX's DEFAULT, float32 at HIGHEST
    single = np.dtype(dtype) in (np.float32, np.complex64)
    tol = (2e-3 if precision is None else 1e-5) if single else 1e-13
    scale = np.sqrt(np.prod([xs[d] for d in dn[0][0]]))
    np.testing.assert_allclose(got, want, atol=tol * scale, rtol=tol)


def test_layout_gemm_cannot_express_keeps_the_tile_kernel():
    x, y = _rand((40, 72, 3), np.float64), _rand((72, 24, 3), np.float64)
    dn = (((1,), (0,)), ((2,), (2,)))                                 # batch innermost
    exe = _exe(lambda a, b: lax.dot_general(a, b, dn), x, y)
    assert "_rt.gemm(" not in exe.source
    np.testing.assert_allclose(np.asarray(exe(x, y)[0]), np.einsum("mkb,knb->bmn", x, y),
                               rtol=1e-12)


def test_gemm_runs_in_stream_order_between_kernels():
    """Kernels before and after the library call, on the one stream the handle is bound to."""
    x, y = _rand((56, 88), np.float64), _rand((88, 40), np.float64)
    exe = _exe(lambda a, b: xnp.tanh((a * 2.0) @ b + 1.0).sum(axis=0), x, y)
    assert "_rt.gemm(" in exe.source and len(exe.program.kernels) >= 2
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(exe(x, y)[0]),
                                   np.tanh((x * 2.0) @ y + 1.0).sum(axis=0), rtol=1e-12)
    blas = vendor.blas()
    (handle, bound), = blas._handles.values()
    assert bound == int(rt.stream().handle)


def test_mlp_gradient_through_cublas_matches_the_cpu():
    """The transposed products reverse mode makes (x^T @ g, g @ w^T) go to cuBLAS too."""
    w1, w2 = _rand((36, 52), np.float64), _rand((52, 12), np.float64)
    x = _rand((44, 36), np.float64)

    def loss(w1, w2, x):
        return xnp.sum(xnp.tanh(xnp.tanh(x @ w1) @ w2) ** 2)
    g = xf.jit(xf.grad(loss, argnums=(0, 1)), backend="cuda")
    assert g.lower(w1, w2, x)._exe.source.count("_rt.gemm(") >= 4
    got = [np.asarray(v) for v in g(w1, w2, x)]
    want = xf.jit(xf.grad(loss, argnums=(0, 1)), backend="cpu")(w1, w2, x)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-11)


@pytest.mark.parametrize("single", [True, False])
@pytest.mark.parametrize("kind, shape, lengths", [
    ("FFT", (6, 96), (96,)), ("IFFT", (3, 12, 10), (12, 10)), ("RFFT", (5, 90), (90,)),
    ("IRFFT", (4, 33), (64,)), ("IRFFT", (2, 6, 5, 4), (6, 5, 6)),
])
def test_fft_through_cufft(kind, shape, lengths, single):
    x = RNG.standard_normal(shape)
    if kind == "IRFFT":      # a real signal's half spectrum (what irfft is defined on)
        lead = shape[:len(shape) - len(lengths)]
        x = np.fft.rfftn(RNG.standard_normal(lead + lengths), axes=range(-len(lengths), 0))
    elif kind != "RFFT":
        x = x + 1j * RNG.standard_normal(shape)
    x = x.astype({(True, "f"): np.float32, (True, "c"): np.complex64,
                  (False, "f"): np.float64, (False, "c"): np.complex128}[single, x.dtype.kind])
    assert x.shape == shape
    exe = _exe(lambda v: lax.fft(v, kind, lengths), x)
    assert exe.source.count("_rt.fft(") == 1, exe.source
    xd = xf.device_put(x, backend="cuda")
    got = np.asarray(exe(xd)[0])
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    wide = x.astype(np.complex128 if kind != "RFFT" else np.float64)
    want = {"FFT": lambda: np.fft.fftn(wide, axes=axes),
            "IFFT": lambda: np.fft.ifftn(wide, axes=axes),
            "RFFT": lambda: np.fft.rfftn(wide, axes=axes),
            "IRFFT": lambda: np.fft.irfftn(wide, s=lengths, axes=axes)}[kind]()
    tol = 2e-5 if single else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    np.testing.assert_array_equal(np.asarray(xd), x)       # IRFFT transformed a copy


@pytest.mark.parametrize("name", ["nhwc_valid", "nchw_dilated_padded", "feature_groups",
                                  "batch_groups"])
@pytest.mark.parametrize("dtype, precision", [(np.float32, None), (np.float32, "highest"),
                                              (np.float64, None)])
def test_convolutions_through_im2col_and_cublas(name, dtype, precision, monkeypatch):
    """conv_general_dilated's forward, data and weight convolutions as im2col + one cuBLAS
    GEMM (vendor/conv_map.py): in place (NHWC), through the weight's copy and the output's
    permutation (NCHW), groups as the GEMM's batch; against the CPU backend (float32 in
    TF32 at JAX's DEFAULT, in full float32 at HIGHEST)."""
    from conv_families import FAMILIES, program
    monkeypatch.setenv("XFORMS_CUDA_CONV_PATH", "library")
    f, args = program(*FAMILIES[name], seed=9, precision=precision)
    args = tuple(a.astype(dtype) for a in args)
    exe = _exe(f, *args)
    assert "# cuBLAS: conv as" in exe.source, exe.source
    # TF32 rounds each operand to 10 mantissa bits (relative 2^-11 = 4.9e-4)
    tol = 1e-12 if dtype == np.float64 else 2e-5 if precision else 4e-3
    got = [np.asarray(o) for o in exe(*args)]
    want = xf.tree_util.tree_leaves(xf.jit(f, backend="cpu")(*args))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, np.asarray(w), rtol=tol, atol=tol * np.abs(w).max())
