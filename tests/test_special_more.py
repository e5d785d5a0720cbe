"""scipy.special names added for issue #36: bernoulli against exact rationals, poch's
derivatives against JAX's and by check_grads, boxcox/boxcox1p and spence edge values (their
values against SciPy are in tests/test_special.py's CASES)."""
from fractions import Fraction
from math import comb

import numpy as np
import pytest
import scipy.special as sp

import xforms as xf
import xforms.scipy.special as xsp
from xforms.test_util import check_grads


def _exact_bernoulli(n):
    """B_0..B_n (B_1 = -1/2) from sum_k C(m + 1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return np.array([float(v) for v in b])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 9, 60])
def test_bernoulli_exact(n):
    got = np.asarray(xsp.bernoulli(n))
    want = _exact_bernoulli(n)
    assert got.shape == (n + 1,) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    np.testing.assert_allclose(got, sp.bernoulli(n), rtol=1e-11)


def test_bernoulli_overflow_and_errors():
    b = np.asarray(xsp.bernoulli(300))
    assert np.isinf(b[-1]) and b[-1] < 0 and b[-2] == 0 and np.isinf(b[-3]) and b[-3] > 0
    with pytest.raises(ValueError):
        xsp.bernoulli(-1)
    with pytest.raises(TypeError):
        xsp.bernoulli(2.5)


def test_poch_derivatives():
    # jax.grad(jax.scipy.special.poch, argnums=(0, 1))(2.5, 1.5), JAX 0.10.2 float64
    gz, gm = xf.grad(xsp.poch, argnums=(0, 1))(2.5, 1.5)
    np.testing.assert_allclose([gz, gm], [2.49579882, 5.66950803], rtol=1e-8)
    check_grads(lambda z, m: xsp.poch(z, m), (np.array([0.7, 2.5, 4.0]),
                                             np.array([1.5, -0.3, 2.2])), order=2, rtol=1e-4)
    np.testing.assert_array_equal(xsp.poch(np.array([3.0, -2.5]), 0.0), [1.0, 1.0])


def test_boxcox_edges_and_grads():
    np.testing.assert_array_equal(xsp.boxcox(np.array([-1.0, 0.0]), 0.5),
                                  sp.boxcox(np.array([-1.0, 0.0]), 0.5))
    np.testing.assert_allclose(xsp.boxcox1p(1e-12, 0.0), 1e-12, rtol=1e-12)
    check_grads(lambda x, l: xsp.boxcox(x, l) + xsp.boxcox1p(x, l),
                (np.array([0.5, 2.0, 3.0]), np.array([0.3, -1.2, 2.0])), order=2, rtol=1e-4)
    jitted = xf.jit(lambda x, l: xsp.boxcox1p(x, l), tiered=False)
    x, l = np.array([0.5, 2.0]), np.array([0.0, 1.5])
    np.testing.assert_allclose(jitted(x, l), sp.boxcox1p(x, l), rtol=1e-14)


def test_spence_at_one_and_edges():
    # Li2(1 - x): derivative log(x) / (1 - x) -> -1 at x = 1 (JAX's piecewise gives 0)
    np.testing.assert_allclose(xf.grad(xsp.spence)(1.0), -1.0, rtol=1e-15)
    np.testing.assert_allclose(xf.grad(xsp.spence)(2.5), -0.6108604879161039, rtol=1e-13)
    got = xsp.spence(np.array([0.0, 1.0, 2.0, -1.0, np.inf]))
    np.testing.assert_allclose(got, [np.pi ** 2 / 6, 0.0, -np.pi ** 2 / 12, np.nan, np.nan],
                               rtol=1e-15)
    with pytest.raises(TypeError, match="not supported"):
        xsp.spence(np.array([1, 2]))
