"""The host code's cuBLAS calls (xforms/kernels/cuda/vendor/) run end to end on the simulator:
the device spec is told that a library may compute, and tests/cuda/blas_model.py's NumPy
model of cublas<t>gemmStridedBatched stands in for cuBLAS, reading and writing the
simulated device arrays (host memory) at the addresses the generated code passes.  This
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
from xforms.kernels.cuda import vendor
from xforms.kernels.cuda.vendor.gemm_map import COMPUTE_32F_FAST_TF32, COMPUTE_64F

from blas_model import ModelBlas

if not rt.simulating():
    pytest.skip("simulator only (host-memory device arrays)", allow_module_level=True)

RNG = np.random.default_rng(3)


@pytest.fixture
def model(monkeypatch):
    blas = ModelBlas()
    monkeypatch.setattr(rt, "_spec", dataclasses.replace(rt.device_spec(), vendor=True))
    monkeypatch.setattr(vendor, "_blas", [blas])
    monkeypatch.setenv("XFORMS_CUDA_GEMM_MIN_WORK", "0")
    return blas


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
