"""Complex convolutions in compiled CPU kernels (session 31): the Numba rule computes one as
four real convolutions of the operands' real and imaginary parts (xforms/kernels/ops/conv.py
`_conv_complex`), so no complex `conv_run` is compiled (its first compile was 27 CPU s of
`xnp.poly` of a complex value).  Values against the eager tier (NumPy) and NumPy's own
poly/convolve, over strides, padding, dilations, feature and batch groups and layouts."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.kernels.cpu import backend

R = np.random.default_rng(11)


def _c(shape, dt=np.complex128):
    return (R.normal(size=shape) + 1j * R.normal(size=shape)).astype(dt)


_CASES = [  # (lhs shape, rhs shape, params)
    ((2, 4, 7), (6, 4, 3), dict(window_strides=(2,), padding=((1, 2),))),
    ((1, 4, 5, 6), (4, 2, 2, 3), dict(window_strides=(1, 2), padding=((1, 0), (0, 1)),
                                      lhs_dilation=(2, 1), rhs_dilation=(1, 2),
                                      feature_group_count=2)),
    ((4, 2, 6), (4, 2, 2), dict(window_strides=(1,), padding="SAME", batch_group_count=2)),
    ((2, 6, 5, 3), (3, 2, 3, 4), dict(window_strides=(1, 1), padding="VALID",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))),
]


@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
@pytest.mark.parametrize("k", range(len(_CASES)))
def test_complex_convolutions_compiled_match_eager(k, dt):
    xs, ws, p = _CASES[k]
    x, w = _c(xs, dt), _c(ws, dt)

    def f(x, w):
        return lax.conv_general_dilated(x, w, **p)
    got = np.asarray(xf.jit(f, tiered=False)(x, w))
    want = np.asarray(f(x, w))
    assert got.dtype == want.dtype == dt
    np.testing.assert_allclose(got, want, rtol=1e-5 if dt == np.complex64 else 1e-12,
                               atol=1e-5 if dt == np.complex64 else 1e-12)


def test_complex_poly_and_convolve_compile_no_complex_conv(monkeypatch):
    monkeypatch.setenv("XFORMS_LLVM_KERNELS", "0")
    z = np.complex128(1 + 2j)
    exe = backend.compile_cpu(xf.make_jaxpr(lambda z: xnp.poly(z))(z), {"name": "t"})
    assert exe.compiler == "numba" and ".view(np.float64)" in exe.source
    np.testing.assert_array_equal(np.asarray(exe(z)[0]), np.poly([z]))
    r = np.array([1 + 2j, 3j, -1.0], np.complex64)
    np.testing.assert_allclose(np.asarray(xf.jit(lambda z: xnp.poly(z), tiered=False)(r)),
                               np.poly(r), rtol=1e-6)
    a, b = _c(9), _c(4)
    for mode in ("full", "same", "valid"):
        got = xf.jit(lambda a, b: xnp.convolve(a, b, mode=mode), tiered=False)(a, b)
        np.testing.assert_allclose(np.asarray(got), np.convolve(a, b, mode), rtol=1e-12)
