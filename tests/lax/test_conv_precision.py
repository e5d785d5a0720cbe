"""conv_general_dilated's `precision` and `preferred_element_type`, as JAX's: the precision
rides on the primitive and on the convolutions its jvp, transposes and vmap make (JAX 0.10.2's
jaxprs keep it there too), xf.default_matmul_precision is read when none is given, and the
CUDA backend's cuBLAS path picks its compute type from it (TF32 below HIGHEST for float32,
JAX's GPU rule: xforms/kernels/cuda/vendor/__init__.py's conv_call; the emitted calls on the
simulator: tests/cuda/test_conv_gemm.py).  preferred_element_type forms the sums in the wider
type, as JAX does, and refuses what JAX refuses.  No GPU needed."""
import dataclasses

import numpy as np
import pytest

import xforms as xf
from xforms import lax
from xforms.kernels.cuda import vendor
from xforms.kernels.cuda.device.spec import spec_for
from xforms.kernels.cuda.vendor.gemm_map import COMPUTE_32F, COMPUTE_32F_FAST_TF32, COMPUTE_64F

NCHW = ("NCHW", "OIHW", "NCHW")
X32 = np.ones((2, 3, 5, 5), np.float32)
W32 = np.ones((4, 3, 2, 2), np.float32)


def _levels(closed):
    """The `precision` parameter of every convolution in a jaxpr (None: absent)."""
    return [e.params.get("precision") for e in closed.jaxpr.eqns
            if e.prim.name == "conv_general_dilated"]


def _conv(precision=None, **kw):
    return lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=NCHW,
                                                 precision=precision, **kw)


def test_precision_rides_on_the_convolutions_a_gradient_makes():
    """JAX 0.10.2: value_and_grad of a conv at precision="highest" has three convolutions, each
    with precision=(HIGHEST, HIGHEST); at None, none (DEFAULT)."""
    def grad_of(p):
        return xf.make_jaxpr(xf.value_and_grad(lambda x, w: _conv(p)(x, w).sum(),
                                               argnums=(0, 1)))
    assert _levels(grad_of("highest")(X32, W32)) == ["highest"] * 3
    assert _levels(grad_of(lax.Precision.HIGH)(X32, W32)) == ["high"] * 3
    assert _levels(grad_of(("default", "highest"))(X32, W32)) == ["highest"] * 3
    assert _levels(grad_of(None)(X32, W32)) == [None] * 3
    assert _levels(grad_of("bfloat16_3x")(X32, W32)) == ["high"] * 3     # JAX's HIGH
    assert _levels(grad_of("fastest")(X32, W32)) == [None] * 3
    jvp = xf.make_jaxpr(lambda x, t: xf.jvp(lambda x: _conv("high")(x, W32), (x,), (t,)))
    assert set(_levels(jvp(X32, X32))) == {"high"}
    batched = xf.vmap(_conv("highest"), in_axes=(0, None))
    assert _levels(xf.make_jaxpr(batched)(np.ones((2,) + X32.shape, np.float32), W32)) == \
        ["highest"]


def test_the_default_matmul_precision_is_read_when_none_is_given():
    """JAX documents jax_default_matmul_precision as the default of products *and*
    convolutions; an explicit precision wins over it."""
    with xf.default_matmul_precision("float32"):
        assert _levels(xf.make_jaxpr(_conv())(X32, W32)) == ["highest"]
        assert _levels(xf.make_jaxpr(_conv("high"))(X32, W32)) == ["high"]
    with xf.default_matmul_precision("tensorfloat32"):
        assert _levels(xf.make_jaxpr(_conv())(X32, W32)) == ["high"]
    assert _levels(xf.make_jaxpr(_conv())(X32, W32)) == [None]


def test_a_window_sum_asks_for_full_precision():
    """reduce_window's sums run as a convolution with ones here (XLA's reduce-window in
    JAX, exact in float32): never TF32, whatever the default says."""
    f = lambda x: lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # noqa: E731
    x = np.ones((2, 6, 6, 3), np.float32)
    assert _levels(xf.make_jaxpr(f)(x)) == ["highest"]
    with xf.default_matmul_precision("bfloat16"):
        assert _levels(xf.make_jaxpr(f)(x)) == ["highest"]


def test_cublas_compute_type_follows_the_precision(monkeypatch):
    """The compute type conv_call asks cuBLAS for: TF32 for float32 and complex64 at
    DEFAULT and HIGH, float32 at HIGHEST, float64 for float64 and complex128."""
    spec = dataclasses.replace(spec_for((9, 0), sms=132), vendor=True)
    monkeypatch.setattr(vendor, "_bound", {"cublas": object()})
    monkeypatch.setenv("XFORMS_CUDA_CONV_PATH", "library")
    args = ((32, 13, 13, 32), (3, 3, 32, 64), (32, 11, 11, 64),
            ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)), (1, 1))
    for dtype, precision, want in ((np.float32, None, COMPUTE_32F_FAST_TF32),
                                   (np.float32, "high", COMPUTE_32F_FAST_TF32),
                                   (np.float32, "highest", COMPUTE_32F),
                                   (np.complex64, None, COMPUTE_32F_FAST_TF32),
                                   (np.complex64, "highest", COMPUTE_32F),
                                   (np.float64, None, COMPUTE_64F),
                                   (np.complex128, "high", COMPUTE_64F)):
        assert vendor.conv_call(spec, *args, dtype, precision)[2] == want, (dtype, precision)


def test_the_cpu_computes_in_full_precision_at_every_setting():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2, 3, 6, 5)) * 1e3 + 1 / 3).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
    want = np.asarray(_conv()(x.astype(np.float64), w.astype(np.float64)))
    for p in (None, "high", "highest"):
        for run in (_conv(p), xf.jit(_conv(p), backend="cpu")):
            np.testing.assert_allclose(np.asarray(run(x, w)), want, rtol=2e-6, atol=1e-2)


def test_preferred_element_type_forms_the_sums_in_that_type():
    """JAX 0.10.2 (x64): conv of float32 operands with preferred_element_type=float64 equals
    the float64 convolution of them exactly, and differs from the float32 one cast up (by
    7e-4 on these operands); its gradient is float32 again."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((2, 3, 5, 5)) * 1e3 + 1 / 3).astype(np.float32)
    w = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
    wide = np.asarray(_conv()(x.astype(np.float64), w.astype(np.float64)))
    for run in (_conv(preferred_element_type=np.float64),
                xf.jit(_conv(preferred_element_type=np.float64))):
        got = np.asarray(run(x, w))
        assert got.dtype == np.float64
        np.testing.assert_allclose(got, wide, rtol=1e-15, atol=1e-12)
    assert np.abs(np.asarray(_conv()(x, w)).astype(np.float64) - wide).max() > 1e-4
    g = xf.grad(lambda x: _conv(preferred_element_type=np.float64)(x, w).sum())(x)
    assert np.asarray(g).dtype == np.float32
    ints = _conv(preferred_element_type=np.int32)(X32.astype(np.int8), W32.astype(np.int8))
    assert ints.dtype == np.int32 and np.asarray(ints).max() == 12


@pytest.mark.parametrize("operands, preferred, message", [
    (np.float64, np.float32, "must not be narrower than the original type"),
    (np.int32, np.int16, "must not be narrower than the original type"),
    (np.int32, np.float16, "must not be narrower than the original type"),
    (np.int8, np.uint32, "must have the same signedness"),
    (np.float32, np.complex64, "Input type is incompatible"),
    (np.float32, np.int32, "Input type is incompatible"),
])
def test_preferred_element_type_refuses_what_jax_refuses(operands, preferred, message):
    """JAX 0.10.2's TypeErrors (x64), where the old code cast the result silently."""
    with pytest.raises(TypeError, match=message):
        _conv(preferred_element_type=preferred)(X32.astype(operands), W32.astype(operands))
    ok = _conv(preferred_element_type=np.int32)(X32.astype(np.uint8), W32.astype(np.uint8))
    assert ok.dtype == np.int32


# ---- JAX's other precision forms: algorithms, explicit DEFAULT, refusals --------------------
XA = (np.arange(24, dtype=np.float32).reshape(1, 4, 6) * np.float32(0.1)
      + np.float32(1 / 3)).astype(np.float32)
WA = (np.arange(24, dtype=np.float32).reshape(2, 4, 3) * np.float32(-0.37)
      + np.float32(1.7)).astype(np.float32)
# jax 0.10.2 (CPU, x64) conv_general_dilated(XA, WA, (1,), "VALID") at every
# DotAlgorithmPreset, the same float32 numbers as at precision=None
JAX_ALGORITHM_CONV = [-15.645999908447266, -16.04800033569336, -16.450000762939453,
                      -16.851999282836914, -86.68599700927734, -92.41600036621094,
                      -98.14600372314453, -103.87600708007812]


def _conv1(precision):
    return lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", precision=precision)


def test_a_dot_algorithm_is_a_convolutions_default():
    """JAX takes every DotAlgorithmPreset (also by name) and a DotAlgorithm as a
    convolution's precision and lowers it as DEFAULT (lax.precision_attr): the CPU result is
    the default float32 one, for F64_F64_F64 and the float8 ones alike (jax 0.10.2: equal at
    every preset, float32/float64/complex64/int32 operands); the old code raised
    "conv: unknown precision"."""
    default = np.asarray(_conv1(None)(XA, WA))
    forms = list(lax.DotAlgorithmPreset) + ["F64_F64_F64", "ANY_F8_ANY_F8_F32",
                                             lax.DotAlgorithm(np.float32, np.float32,
                                                              np.float32)]
    for p in forms:
        got = np.asarray(_conv1(p)(XA, WA))
        assert got.dtype == np.float32, p
        np.testing.assert_array_equal(got, default, err_msg=str(p))
    np.testing.assert_allclose(default.ravel(), JAX_ALGORITHM_CONV, rtol=1e-6)
    f64 = _conv1(lax.DotAlgorithmPreset.F32_F32_F32)(XA.astype(np.float64), WA * 1.0)
    assert f64.dtype == np.float64                # no rounding through float32 either
    np.testing.assert_array_equal(f64, _conv1(None)(XA.astype(np.float64), WA * 1.0))
    jitted = xf.jit(_conv1(lax.DotAlgorithmPreset.BF16_BF16_F32))
    np.testing.assert_array_equal(np.asarray(jitted(XA, WA)),
                                  np.asarray(xf.jit(_conv1(None))(XA, WA)))


def test_an_algorithm_or_a_given_default_is_not_the_configured_precision():
    """jax 0.10.2 under default_matmul_precision("highest"): precision=None gives
    (HIGHEST, HIGHEST), "default" or Precision.DEFAULT (DEFAULT, DEFAULT), an algorithm the
    algorithm (lowered as DEFAULT) -- on the convolution and on the three of its gradient,
    and on dot_general.  Here: the parameter absent (TF32 on cuBLAS), where the old code
    read the setting ("highest") for a given "default"."""
    def grad_of(p):
        return xf.make_jaxpr(xf.value_and_grad(lambda x, w: _conv(p)(x, w).sum(),
                                               argnums=(0, 1)))
    dots = lambda p: [e.params.get("precision") for e in xf.make_jaxpr(  # noqa: E731
        lambda a: lax.dot(a, a.T, precision=p))(XA[0]).jaxpr.eqns
        if e.prim.name == "dot_general"]
    with xf.default_matmul_precision("highest"):
        assert _levels(xf.make_jaxpr(_conv())(X32, W32)) == ["highest"]
        for p in ("default", lax.Precision.DEFAULT, "fastest", lax.DotAlgorithmPreset.F32_F32_F32,
                  "TF32_TF32_F32", lax.DotAlgorithm(np.float32, np.float32, np.float32)):
            assert _levels(grad_of(p)(X32, W32)) == [None] * 3, p
        assert dots(None) == ["highest"]
        assert dots("default") == [None] and dots(lax.Precision.DEFAULT) == [None]
        assert dots(lax.DotAlgorithmPreset.F32_F32_F32) == ["highest"]
        g = xf.make_jaxpr(xf.grad(lambda a: lax.dot(a, a.T, precision="default").sum()))
        assert {e.params.get("precision") for e in g(XA[0]).jaxpr.eqns
                if e.prim.name == "dot_general"} == {None}


@pytest.mark.parametrize("precision", [("high", None), (None, None), "tensorfloat32_3x",
                                       "f32_f32_f32", (lax.Precision.HIGH, "high"), "fast"])
def test_precisions_jax_refuses_are_refused(precision):
    """jax 0.10.2 raises ValueError ("Precision argument must be one of ...") for these, on
    conv_general_dilated and dot_general alike; the old conv took the pairs with None."""
    with pytest.raises(ValueError, match="conv_general_dilated: unknown precision"):
        _conv1(precision)(XA, WA)
    with pytest.raises(ValueError, match="dot_general: unknown precision"):
        lax.dot(XA[0], XA[0].T, precision=precision)


def test_cublas_takes_an_algorithm_as_tf32_under_any_setting(monkeypatch):
    """On CUDA the convolution's compute type follows the stored parameter: an algorithm
    (absent parameter) is TF32 for float32 even under default_matmul_precision("float32")."""
    spec = dataclasses.replace(spec_for((9, 0), sms=132), vendor=True)
    monkeypatch.setattr(vendor, "_bound", {"cublas": object()})
    monkeypatch.setenv("XFORMS_CUDA_CONV_PATH", "library")
    args = ((32, 13, 13, 32), (3, 3, 32, 64), (32, 11, 11, 64),
            ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)), (1, 1))
    with xf.default_matmul_precision("float32"):
        levels = _levels(xf.make_jaxpr(_conv(lax.DotAlgorithmPreset.F32_F32_F32))(X32, W32))
    assert levels == [None]
    assert vendor.conv_call(spec, *args, np.float32, levels[0])[2] == COMPUTE_32F_FAST_TF32
