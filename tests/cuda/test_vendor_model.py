"""The host code's cuBLAS and cuFFT calls (xforms/kernels/cuda/vendor/) run end to end on the
simulator: the device spec is told that libraries may compute, and tests/cuda/vendor_model.py's
NumPy models of cublas<t>gemmStridedBatched and cufftPlanMany stand in for them, reading and
writing the simulated device arrays (host memory) at the addresses the generated code passes.  This
checks what no GPU-less test of the mapping alone can: the operand order, the pointers of
packed and reused buffers, and the stream order with the kernels around each call.  On a
real GPU, tests/cuda/test_gpu_vendor.py runs the same programs through cuBLAS itself."""
import dataclasses

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cuda import runtime as rt
from xforms.kernels.cuda.device import spec as spec_module
from xforms.kernels.cuda import vendor
from xforms.tree_util import tree_leaves
from xforms.kernels.cuda.vendor.gemm_map import COMPUTE_32F_FAST_TF32, COMPUTE_64F

from vendor_model import ModelBlas, ModelFft

if not rt.simulating():
    pytest.skip("simulator only (host-memory device arrays)", allow_module_level=True)

RNG = np.random.default_rng(3)


@pytest.fixture
def models(monkeypatch):
    libs = {"cublas": ModelBlas(), "cufft": ModelFft()}
    monkeypatch.setattr(spec_module, "_spec", dataclasses.replace(rt.device_spec(), vendor=True))
    monkeypatch.setattr(vendor, "_bound", libs)
    monkeypatch.setenv("XFORMS_CUDA_GEMM_MIN_WORK", "0")
    monkeypatch.setenv("XFORMS_CUDA_FFT_MIN_POINTS", "0")
    return libs


@pytest.fixture
def model(models):
    return models["cublas"]


LAYOUTS = [   # shapes unique to this file (the executable cache is keyed by program)
    ((5, 7), (7, 3), (((1,), (0,)), ((), ()))),
    ((7, 5), (3, 7), (((0,), (1,)), ((), ()))),
    ((2, 5, 7), (7, 2, 3), (((2,), (0,)), ((0,), (1,)))),
    ((5, 2, 3), (2, 3, 4), (((1, 2), (0, 1)), ((), ()))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("xs, ys, dn", LAYOUTS)
def test_emitted_gemm_calls_compute_dot_general(model, xs, ys, dn, dtype):
    x = RNG.standard_normal(xs).astype(dtype)
    y = (RNG.standard_normal(ys) * (1 - 1j if np.dtype(dtype).kind == "c" else 1)).astype(dtype)
    exe = xf.jit(lambda a, b: lax.dot_general(a, b, dn), backend="cuda").lower(x, y)._exe
    assert exe.source.count("_rt.gemm(") == 1
    got = np.asarray(exe(x, y)[0])
    assert [c[1:] for c in model.calls] == [(np.dtype(dtype).name, COMPUTE_32F_FAST_TF32
                                             if dtype == np.float32 else COMPUTE_64F)]
    np.testing.assert_allclose(got, np.asarray(lax.dot_general(x, y, dn)), rtol=1e-5)


def test_a_failing_library_call_is_reported_with_its_line_of_host_code(model, monkeypatch):
    from xforms.kernels.cuda.vendor.cublas import CublasError

    def fail(*args):
        raise CublasError("cuBLAS cublasGemmStridedBatchedEx failed with status 13 "
                          "(the GPU program failed to execute)")
    monkeypatch.setattr(model, "gemm", fail)
    x = np.ones((6, 5))
    exe = xf.jit(lambda a: a @ a.T, backend="cuda").lower(x)._exe
    with pytest.raises(RuntimeError, match=r"the CUDA backend failed running line \d+ of "
                       r".*\(_rt\.gemm\(.*cuBLAS: \[1\] x \(6 x 5\) @ \(5 x 6\)\).*status 13"):
        exe(x)


def test_gemm_between_kernels_and_in_a_gradient(model):
    """Products between fused kernels, on buffers the plan reuses, and the transposed
    products of reverse mode."""
    w1, w2, x = (RNG.standard_normal(s) for s in ((6, 9), (9, 4), (11, 6)))

    def loss(w1, w2, x):
        return xnp.sum(xnp.tanh(xnp.tanh(x * 2.0 @ w1) @ w2) ** 2)
    g = xf.jit(xf.grad(loss, argnums=(0, 1)), backend="cuda")
    assert g.lower(w1, w2, x)._exe.source.count("_rt.gemm(") >= 4
    want = xf.jit(xf.grad(loss, argnums=(0, 1)), backend="cpu")(w1, w2, x)
    for _ in range(2):             # the second call reuses the workspace
        for a, b in zip(g(w1, w2, x), want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)
    assert len(model.calls) >= 8
    exe = g.lower(w1, w2, x)._exe              # count_launches: the kernels and each GEMM
    assert exe.count_launches(w1, w2, x) == exe.launch_sites + exe.source.count("_rt.gemm(")


@pytest.mark.parametrize("single", [True, False])
@pytest.mark.parametrize("kind, shape, lengths", [
    ("FFT", (3, 8), (8,)), ("IFFT", (2, 4, 6), (4, 6)), ("RFFT", (5, 9), (9,)),
    ("IRFFT", (3, 5), (8,)), ("IRFFT", (2, 3, 4), (3, 7)),
])
def test_emitted_fft_calls_compute_lax_fft(models, kind, shape, lengths, single):
    x = RNG.standard_normal(shape)
    if kind != "RFFT":
        x = x + 1j * RNG.standard_normal(shape)
    x = x.astype({(True, "f"): np.float32, (True, "c"): np.complex64,
                  (False, "f"): np.float64, (False, "c"): np.complex128}[single, x.dtype.kind])
    exe = xf.jit(lambda v: lax.fft(v, kind, lengths), backend="cuda").lower(x)._exe
    assert exe.source.count("_rt.fft(") == 1
    xd = xf.device_put(x, backend="cuda")
    got = np.asarray(exe(xd)[0])
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    want = {"FFT": lambda: np.fft.fftn(x, axes=axes), "IFFT": lambda: np.fft.ifftn(x, axes=axes),
            "RFFT": lambda: np.fft.rfftn(x, axes=axes),
            "IRFFT": lambda: np.fft.irfftn(x, s=lengths, axes=axes)}[kind]()
    tol = 1e-4 if single else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    assert len(models["cufft"].calls) == 1
    # the model overwrites a complex-to-real transform's input, as cuFFT may: the operand
    # the user passed is untouched because the host code transformed a copy
    np.testing.assert_array_equal(np.asarray(xd), x)


def test_a_library_call_in_a_loop_body_keeps_the_loop_on_the_host(model, monkeypatch):
    """cuBLAS cannot be called from a kernel: a fori_loop or scan whose body's product goes to
    it (past vendor.loop_gemm_max_work, here 0) stays a host loop of launches (block_loop.py
    says why in the host code), a call a step; a stacked product is written by cuBLAS into
    its row (control.py rows_in_place)."""
    monkeypatch.setenv("XFORMS_CUDA_LOOP_GEMM_MAX_WORK", "0")
    w = RNG.standard_normal((6, 6)) / 3
    u = np.linspace(-1.0, 1.0, 48).reshape(6, 8)        # (48: not scalarised)
    xs = RNG.standard_normal((4, 6, 8))
    progs = [(lambda w, u: lax.fori_loop(0, 3, lambda i, u: xnp.tanh(w @ u + 0.1), u),
              (w, u), 3),
             (lambda w, u, xs: lax.scan(lambda h, x: (xnp.tanh(w @ h + x), w @ h), u, xs),
              (w, u, xs), 4)]
    for f, args, steps in progs:
        exe = xf.jit(f, backend="cuda").lower(*args)._exe
        assert "# host loop, not one kernel: _rt.gemm(" in exe.source
        model.calls.clear()
        got = [np.asarray(o) for o in exe(*args)]
        assert len(model.calls) == steps
        for g, r in zip(got, tree_leaves(xf.jit(f, backend="cpu")(*args)), strict=True):
            np.testing.assert_allclose(g, np.asarray(r), rtol=1e-12, atol=1e-14)
    # the scan: the carry's copy in, nothing a step (before: a copy into the row a step)
    assert exe.launch_counts(*args)["copies"] == 1


def _lstm(params, xs):
    wx, wh, b = params

    def step(carry, x):
        h, c = carry
        i, f, g, o = xnp.split(x @ wx + h @ wh + b, 4, axis=1)
        c = c / (1.0 + xnp.exp(-f)) + xnp.tanh(g) / (1.0 + xnp.exp(-i))
        h = xnp.tanh(c) / (1.0 + xnp.exp(-o))
        return (h, c), h
    h0 = xnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype)
    return xnp.mean(lax.scan(step, (h0, h0), xs)[1] ** 2)


@pytest.mark.parametrize("grad", [False, True])
def test_a_scan_of_small_products_is_one_launch_not_a_library_call_a_step(
        model, monkeypatch, grad):
    """cliffs' LSTM launched per step on a GPU (its 32 x 128 x 512 product a step went to
    cuBLAS, which keeps a loop on the host): a product within vendor.loop_gemm_max_work stays
    in the tile kernel, so each scan -- the forward one, and the gradient's reverse one,
    whose cotangent carries swap buffers (loop_carries.through_scratch) -- is one launch;
    the products outside the scans still go to cuBLAS.  Values as on the CPU."""
    from xforms.kernels.cuda.backend import _compile
    from xforms.kernels.cuda.device.spec import SIM_SPEC
    # (the matmul tile's 4 x 4 threads: the loop's block, as on a GPU's 16 x 16 = 256)
    monkeypatch.setattr(spec_module, "_spec", dataclasses.replace(SIM_SPEC, block=16,
                                                                  vendor=True))
    f = xf.grad(_lstm) if grad else _lstm
    args = ((RNG.standard_normal((4, 64)) / 2, RNG.standard_normal((16, 64)) / 4,
             0.1 * RNG.standard_normal(64)), RNG.standard_normal((3, 4, 4)))
    flat = tree_leaves(args)
    exe = _compile(xf.make_jaxpr(f)(*args), {})
    assert "host loop" not in exe.source
    assert exe.source.count("as one cooperative grid") + exe.source.count(
        "as one block") == 1 + grad
    model.calls.clear()
    got = [np.asarray(o) for o in exe(*flat)]
    assert len(model.calls) == (3 if grad else 1)       # x @ wx for all steps; its grads
    for g, r in zip(got, tree_leaves(xf.jit(f, backend="cpu")(*args)), strict=True):
        np.testing.assert_allclose(g, np.asarray(r), rtol=1e-12, atol=1e-15)
    counts = exe.launch_counts(*flat)
    assert counts["library"] == (3 if grad else 1) and counts["host_waits"] == 0, counts
    monkeypatch.setenv("XFORMS_CUDA_LOOP_GEMM_MAX_WORK", "0")     # past the bound
    exe = _compile(xf.make_jaxpr(f)(*args), {})
    assert "host loop, not one kernel: _rt.gemm(" in exe.source


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("why", ["block", "shared"])
def test_a_scan_refused_as_one_kernel_puts_its_products_back_on_cublas(
        model, monkeypatch, grad, why):
    """On 8-thread blocks the tile kernel (4 x 4 threads) cannot be called by a loop's
    kernel (or, on 16, its shared memory is past a lowered SHARED_MAX), so the LSTM's scan
    stays a host loop: its small products, kept in the tile kernel for a one-launch loop,
    would then launch the slower tile a step.  Refused, the loop is emitted again with its
    products on cuBLAS (block_loop.emit).  Values as on the CPU."""
    from xforms.kernels.cuda.backend import _compile
    from xforms.kernels.cuda.device.spec import SIM_SPEC
    from xforms.kernels.cuda.printer import block_loop
    monkeypatch.setattr(spec_module, "_spec", dataclasses.replace(
        SIM_SPEC, block=8 if why == "block" else 16, vendor=True))
    if why == "shared":
        monkeypatch.setattr(block_loop, "SHARED_MAX", 0)
    args = ((RNG.standard_normal((4, 64)) / 2, RNG.standard_normal((16, 64)) / 4,
             0.1 * RNG.standard_normal(64)), RNG.standard_normal((5, 4, 4)))
    f = xf.grad(_lstm) if grad else _lstm
    exe = _compile(xf.make_jaxpr(f)(*args), {})
    assert exe.source.count("host loop, not one kernel: _rt.gemm(") == 1 + grad, exe.source
    assert "as one cooperative grid" not in exe.source and "as one block" not in exe.source
    model.calls.clear()
    got = [np.asarray(o) for o in exe(*tree_leaves(args))]
    # x @ wx for all steps, then h @ wh a step (the gradient: one more a step back, and
    # the 2 outside the scans)
    assert len(model.calls) == (1 + 5 + 5 + 2 if grad else 1 + 5), len(model.calls)
    for g, r in zip(got, tree_leaves(xf.jit(f, backend="cpu")(*args)), strict=True):
        np.testing.assert_allclose(g, np.asarray(r), rtol=1e-12, atol=1e-15)
