"""scipy.stats.gaussian_kde against scipy.stats.gaussian_kde (densities, log densities,
integrals; 1-D and weighted 2-D), as a pytree through jit and grad, and its resample and
gradient against JAX's values (jax 0.10.2, jax_enable_x64, written here as literals: JAX is
not installed in CI)."""
import numpy as np
import pytest
import scipy.stats as ss

import xforms as xf
import xforms.scipy.stats as xst
from xforms import random

RNG = np.random.default_rng(0)
D1 = RNG.standard_normal(30)
D2 = RNG.standard_normal((2, 40))
W = RNG.uniform(0.5, 2, 40)
P1 = np.linspace(-3, 3, 7)
P2 = RNG.standard_normal((2, 5))


@pytest.mark.parametrize("bw", [None, "silverman", 0.3, lambda kde: 0.5])
def test_1d_matches_scipy(bw):
    a, b = xst.gaussian_kde(D1, bw), ss.gaussian_kde(D1, bw)
    np.testing.assert_allclose(a(P1), b(P1), rtol=1e-13)
    np.testing.assert_allclose(a.pdf(P1), b.pdf(P1), rtol=1e-13)
    np.testing.assert_allclose(a.logpdf(P1), b.logpdf(P1), rtol=1e-13)
    np.testing.assert_allclose(a.integrate_box_1d(-1, 0.5), b.integrate_box_1d(-1, 0.5),
                               rtol=1e-13)
    np.testing.assert_allclose(a.integrate_kde(xst.gaussian_kde(D1[:10], bw)),
                               b.integrate_kde(ss.gaussian_kde(D1[:10], bw)), rtol=1e-13)


def test_weighted_2d_matches_scipy():
    a, b = xst.gaussian_kde(D2, weights=W), ss.gaussian_kde(D2, weights=W)
    assert (a.d, a.n) == (2, 40)
    np.testing.assert_allclose(a.neff, b.neff, rtol=1e-14)
    np.testing.assert_allclose(a.covariance, b.covariance, rtol=1e-13)
    np.testing.assert_allclose(a(P2), b(P2), rtol=1e-13)
    np.testing.assert_allclose(a.logpdf(P2), b.logpdf(P2), rtol=1e-13)
    np.testing.assert_allclose(a.integrate_gaussian([0.1, 0.2], np.eye(2)),
                               b.integrate_gaussian([0.1, 0.2], np.eye(2)), rtol=1e-13)
    far = np.array([[40.0], [40.0]])      # the density underflows; its log does not
    np.testing.assert_allclose(a.logpdf(far), b.logpdf(far), rtol=1e-12)


def test_pytree_jit_grad_and_resample_match_jax():
    kde = xst.gaussian_kde(D1)
    np.testing.assert_allclose(xf.jit(lambda k, x: k.logpdf(x))(kde, P1),
                               ss.gaussian_kde(D1).logpdf(P1), rtol=1e-13)
    g = xf.grad(lambda data: xst.gaussian_kde(data).logpdf(0.3)[0])(D1)
    np.testing.assert_allclose(g[:3], [0.0759652244660868, 0.12263979319295681,
                                       -0.12318050136856361], rtol=1e-12)
    got = kde.resample(random.PRNGKey(0), (4,))
    assert got.shape == (1, 4)
    np.testing.assert_allclose(got, [[-0.4582347669503933, 0.4684615730872754,
                                      -0.3628192471763461, 0.2093042634473283]], rtol=1e-13)


def test_errors():
    with pytest.raises(ValueError, match="multiple elements"):
        xst.gaussian_kde(np.array([1.0]))
    with pytest.raises(ValueError, match="bw_method"):
        xst.gaussian_kde(D1, "wide")
    with pytest.raises(ValueError, match="dimension"):
        xst.gaussian_kde(D2)(np.ones((3, 2)))
    with pytest.raises(NotImplementedError, match="integrate_box_1d"):
        xst.gaussian_kde(D2).integrate_box([0, 0], [1, 1])
