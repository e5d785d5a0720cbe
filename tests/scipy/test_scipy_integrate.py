"""xforms.scipy.integrate.trapezoid against scipy.integrate and JAX (values recorded with
jax 0.10.2: JAX is not installed in CI), on the fast and compiled tiers, with check_grads."""
import numpy as np
import pytest
import scipy.integrate as si

import xforms as xf
import xforms.scipy.integrate as xint
from xforms.test_util import check_grads

RNG = np.random.default_rng(7)


def test_trapezoid_jax_docstring_values():
    # jax.scipy.integrate.trapezoid's documented examples (jax 0.10.2): 13.0 and 43.0
    y = np.array([1, 2, 3, 2, 3, 2, 1])
    assert float(xint.trapezoid(y, dx=1.0)) == 13.0
    assert float(xint.trapezoid(y, np.array([0, 2, 5, 7, 10, 15, 20]))) == 43.0


@pytest.mark.parametrize("tiered", [False, True], ids=["compiled", "fast"])
def test_trapezoid_against_scipy(tiered):
    y = RNG.standard_normal((4, 5))
    x1 = np.cumsum(RNG.uniform(0.1, 1.0, 4))
    x2 = np.cumsum(RNG.uniform(0.1, 1.0, (4, 5)), axis=1)

    def run(y, x1, x2):
        return (xint.trapezoid(y, x1, axis=0), xint.trapezoid(y, x2),
                xint.trapezoid(y, dx=0.3, axis=0))
    got = xf.jit(run, tiered=tiered)(y, x1, x2)
    want = (si.trapezoid(y, x1, axis=0), si.trapezoid(y, x2), si.trapezoid(y, dx=0.3, axis=0))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-14)


def test_trapezoid_grads_and_vmap():
    y, x = RNG.standard_normal((4, 5)), np.cumsum(RNG.uniform(0.1, 1.0, 4))
    check_grads(lambda y, x: xint.trapezoid(y, x, axis=0), (y, x), order=2)
    np.testing.assert_allclose(xf.vmap(lambda r: xint.trapezoid(r, x))(y.T),
                               si.trapezoid(y.T, x, axis=1), rtol=1e-14)
