"""Convolutions through the host code's cuBLAS call on the simulator: the device spec is told
that libraries may compute, XFORMS_CUDA_CONV_PATH=library sends every convolution to
im2col + GEMM (xforms/kernels/cuda/vendor/conv_map.py, ops/conv.py's `_conv_library`), and
tests/cuda/vendor_model.py's ModelBlas stands in for cuBLAS, recording its calls.  Each
shape family of conv_families.py (a gradient: its forward, data and weight convolutions)
against the CPU backend, the GEMMs asked for against the mapping, and the direct kernel
where cuBLAS is absent.  The mapping alone: tests/kernels/cuda/test_cuda_conv_map.py."""
import dataclasses

import numpy as np
import pytest

import xforms as xf
from xforms import lax
from xforms.kernels.cuda import runtime as rt
from xforms.kernels.cuda import vendor
from xforms.kernels.cuda.device import spec as spec_module
from xforms.kernels.cuda.vendor.conv_map import conv_gemm
from xforms.tree_util import tree_leaves

from conv_families import FAMILIES, conv_eqns, program
from vendor_model import ModelBlas

# ModelBlas computes on host arrays, which only the simulator's device arrays are; on a GPU
# the same families run against the real cuBLAS in test_gpu_vendor.py
if not rt.simulating():
    pytest.skip("simulator only (host-memory device arrays)", allow_module_level=True)


@pytest.fixture
def blas(monkeypatch):
    model = ModelBlas()
    monkeypatch.setattr(spec_module, "_spec", dataclasses.replace(rt.device_spec(), vendor=True))
    monkeypatch.setattr(vendor, "_bound", {"cublas": model})
    monkeypatch.setenv("XFORMS_CUDA_CONV_PATH", "library")
    monkeypatch.setenv("XFORMS_CUDA_GEMM_MIN_WORK", str(2 ** 62))   # (convolutions only)
    return model


def _check(f, args, tol=1e-12, want=None):
    """f on the simulator against the CPU backend's f (or `want`: a reference computed
    otherwise)."""
    got = tree_leaves(xf.jit(f, backend="cuda")(*args))
    want = tree_leaves(xf.jit(f, backend="cpu")(*args) if want is None else want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


def _cpu64(f, args):
    """f's values in float64 on the CPU backend, for float32 operands: the references of the
    float32 tests.  (The CPU convolution kernel's float32 and complex signatures cost ~30 s
    of cold Numba compiles here; tests/test_conv.py and test_conv_complex.py check those.)"""
    return xf.jit(f, backend="cpu")(*(np.asarray(a, np.float64) for a in args))


def _complex_by_real_convs(conv, x, w):
    """conv(x, w) for complex operands from four float64 convolutions on the CPU backend
    (the convolution is bilinear): the complex test's reference."""
    def parts(xr, xi, wr, wi):
        return conv(xr, wr) - conv(xi, wi), conv(xr, wi) + conv(xi, wr)
    real, imag = xf.jit(parts, backend="cpu")(x.real, x.imag, w.real, w.imag)
    return np.asarray(real) + 1j * np.asarray(imag)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_family_runs_through_im2col_and_the_gemm(blas, name):
    f, args = program(*FAMILIES[name], seed=1)
    eqns = conv_eqns(f, args)
    src = xf.jit(f, backend="cuda").lower(*args)._exe.source
    assert src.count("# cuBLAS: conv as") == len(eqns) and "im2col" in src
    _check(f, args)
    # one GEMM per convolution, with the mapping's shapes and strides, in full precision
    want = [(tuple(conv_gemm(xs, ws, os_, p["dimension_numbers"], p["feature_group_count"],
                             p["batch_group_count"]).gemm), "float64", 70)
            for xs, ws, os_, p in eqns]
    assert sorted(blas.calls) == sorted(want)


def test_float32_and_complex_convolutions(blas):
    """float32 as JAX on a GPU: TF32 (COMPUTE_32F_FAST_TF32) at the default precision, full
    float32 (COMPUTE_32F) at HIGHEST, for the forward convolution and both of its gradient's
    (the precision rides on them); complex operands never conjugated."""
    f, (x, w) = program(*FAMILIES["nhwc_strided_same"])
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    want = _cpu64(f, (x32, w32))
    _check(f, (x32, w32), tol=2e-4, want=want)
    assert [c[1:] for c in blas.calls] == [("float32", 77)] * 3
    blas.calls.clear()
    _check(program(*FAMILIES["nhwc_strided_same"], precision="highest")[0], (x32, w32),
           tol=2e-4, want=want)
    assert [c[1:] for c in blas.calls] == [("float32", 68)] * 3
    blas.calls.clear()
    with xf.default_matmul_precision("float32"):
        _check(f, (x32, w32), tol=2e-4, want=want)
    assert [c[1:] for c in blas.calls] == [("float32", 68)] * 3
    blas.calls.clear()
    xs, ws, strides, padding, dn, _, _, fg = FAMILIES["feature_groups"]
    z = [a + 0.5j * a[::-1] for a in program(*FAMILIES["feature_groups"])[1]]
    conv = lambda x, w: lax.conv_general_dilated(x, w, strides, padding,  # noqa: E731
                                                 dimension_numbers=dn, feature_group_count=fg)
    _check(conv, z, want=_complex_by_real_convs(conv, *z))
    assert ("complex128", 70) in {c[1:] for c in blas.calls}


def test_without_cublas_the_direct_kernel_computes(blas, monkeypatch):
    """The binding absent (a GPU without libcublas): no library call is emitted, the direct
    kernel (one thread per output element) computes the same."""
    monkeypatch.setattr(vendor, "_bound", {"cublas": None})
    f, args = program(*FAMILIES["nchw_dilated_padded"], seed=2)
    src = xf.jit(f, backend="cuda").lower(*args)._exe.source
    assert "_rt.gemm(" not in src and "im2col" not in src
    _check(f, args)
    monkeypatch.setattr(vendor, "_bound", {"cublas": blas})
    monkeypatch.setenv("XFORMS_CUDA_CONV_PATH", "own")
    f, args = program(*FAMILIES["nchw_dilated_padded"], seed=3)
    assert "_rt.gemm(" not in xf.jit(f, backend="cuda").lower(*args)._exe.source
    assert blas.calls == []


def test_a_conv_gemm_call_in_a_gradient_counts_as_a_launch_and_replays_as_a_graph(blas):
    """The im2col, copy and permutation kernels and the GEMM are stream work: counted by
    count_launches, and a call of them may be captured as a CUDA graph (the pooled col
    buffer is an allocation the graph keeps)."""
    f, args = program(*FAMILIES["nchw_dilated_padded"], seed=4)
    exe = xf.jit(f, backend="cuda").lower(*args)._exe
    assert exe.count_launches(*args) == exe.launch_sites + exe.source.count("_rt.gemm(")
    g = xf.jit(f, backend="cuda")
    with xf.config.use_cuda_graphs(True):
        rng = np.random.default_rng(5)
        calls = [tuple(rng.standard_normal(a.shape) for a in args) for _ in range(3)]
        outs = [g(*c) for c in calls]
        info = g.lower(*args)._exe.graphs().info()
    assert info["state"] == "replaying" and info["replays"] == 1, info
    for c, o in zip(calls, outs):     # (a replay never overwrites an earlier output)
        for a, b in zip(tree_leaves(o), tree_leaves(xf.jit(f, backend="cpu")(*c))):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
