"""Special functions and the FFT on the CUDA backend (simulator): the special-function
primitives' scalar kernels run as device functions inside the fused kernels; `fft` has no CUDA
kernel and says so, naming the primitive."""
import numpy as np
import pytest
import scipy.special as sp

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.special as xsp
from xforms.errors import LoweringError


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


def test_sqrtm_is_a_clear_lowering_error_on_cuda():
    import xforms.scipy.linalg as xsl
    with pytest.raises(LoweringError, match="sqrtm"):
        xf.jit(xsl.sqrtm, backend="cuda")(np.eye(2))


def test_fft_is_a_clear_lowering_error_on_cuda():
    with pytest.raises(LoweringError, match=r"CUDA backend cannot lower primitive 'fft'.*"
                                            r"backend='cpu'"):
        xf.jit(lambda x: xnp.fft.rfft(x), backend="cuda")(np.ones(8))
