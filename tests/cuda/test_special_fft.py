"""Special functions and the FFT on the CUDA backend (simulator): the special-function
primitives' scalar kernels run as device functions inside the fused kernels; `fft` is a direct
DFT kernel (xforms/kernels/ops/fft.py), checked against NumPy."""
import numpy as np
import pytest
import scipy.special as sp

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.special as xsp


def test_special_functions_on_cuda():
    x = np.linspace(0.5, 5.0, 8)

    def f(x):
        return (xsp.gammaln(x), xsp.digamma(x), xsp.erfinv(x / 10), xsp.ndtri(x / 6),
                xsp.gammainc(x, x + 1), xsp.betainc(x, x, x / 6), xsp.i0e(x), xsp.i1e(-x),
                xsp.zeta(x + 1, x))
    got = xf.jit(f, backend="cuda")(x)
    want = (sp.gammaln(x), sp.digamma(x), sp.erfinv(x / 10), sp.ndtri(x / 6),
            sp.gammainc(x, x + 1), sp.betainc(x, x, x / 6), sp.i0e(x), sp.i1e(-x),
            sp.zeta(x + 1, x))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-13)
    g = xf.jit(xf.grad(lambda x: xnp.sum(xsp.gammaln(x) * xsp.erf(x))), backend="cuda")(x)
    np.testing.assert_allclose(np.asarray(g), sp.digamma(x) * sp.erf(x) + sp.gammaln(x) * 2
                               / np.sqrt(np.pi) * np.exp(-x * x), rtol=1e-12)


def test_bessel_and_logaddexp_on_cuda():
    x = np.linspace(0.5, 40.0, 8)

    def f(x):
        return (xsp.jn(3, x), xsp.yn(2, x), xsp.iv(1.5, x), xsp.ive(-2.0, -x),
                xnp.logaddexp(x, 2 * x - 20))
    got = xf.jit(f, backend="cuda")(x)
    want = (sp.jn(3, x), sp.yn(2, x), sp.iv(1.5, x), sp.ive(-2.0, -x),
            np.logaddexp(x, 2 * x - 20))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-15)
    g = xf.jit(xf.grad(lambda x: xnp.sum(xsp.j0(x) + xnp.logaddexp(x, 1.0))), backend="cuda")(x)
    np.testing.assert_allclose(np.asarray(g), -sp.j1(x) + sp.expit(x - 1.0), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fft_kernels_match_numpy(dtype):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 6, 5)).astype(dtype)
    z = (x + 1j * rng.standard_normal(x.shape)).astype(np.result_type(dtype, np.complex64))
    h = np.fft.rfft2(x[0])                 # Hermitian input of irfft2, odd and even lengths

    def f(x, z, h):
        return (xnp.fft.fft(z), xnp.fft.ifft(z, axis=1), xnp.fft.rfft(x), xnp.fft.fftn(z),
                xnp.fft.irfft(z[..., :3], n=4), xnp.fft.irfft2(h, s=(6, 5)),
                xnp.fft.rfftn(x, axes=(0, 2)), xnp.fft.ifft2(z))
    got = xf.jit(f, backend="cuda")(x, z, h)
    want = (np.fft.fft(z), np.fft.ifft(z, axis=1), np.fft.rfft(x), np.fft.fftn(z),
            np.fft.irfft(z[..., :3], n=4), np.fft.irfft2(h, s=(6, 5)),
            np.fft.rfftn(x, axes=(0, 2)), np.fft.ifft2(z))
    tol = 2e-5 if dtype == "float32" else 1e-12
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == np.asarray(f(x, z, h)[k]).dtype, k
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * np.abs(w).max(), err_msg=str(k))


def test_fft_gradient_on_cuda():
    x = np.linspace(-1.0, 2.0, 6)
    loss = lambda x: xnp.sum(xnp.abs(xnp.fft.rfft(xnp.sin(x))) ** 2)        # noqa: E731
    g = xf.jit(xf.grad(loss), backend="cuda")(x)
    np.testing.assert_allclose(np.asarray(g), xf.grad(loss)(x), rtol=1e-12)
