"""xforms.scipy.optimize.minimize (BFGS and JAX's experimental L-BFGS): the same line search,
constants and limits as jax.scipy.optimize, so runs take JAX's iterates -- JAX's results
(jax 0.10.2, jax_enable_x64) are recorded here as literals, iteration and evaluation counts
and status included.  JAX's BFGS stops on Rosenbrock with its zoom failing (status 3) before
reaching the minimum; that is JAX's behaviour, reproduced, and checked as such."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.scipy.optimize import OptimizeResults, minimize

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
A = np.array([[3., 1., 0.5], [1., 2., 0.], [0.5, 0., 1.5]])
B = np.array([1., -2., 0.5])


def rosen(x):
    return xnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quad(x, a, b):
    return 0.5 * x @ a @ x - b @ x


X5 = [1.3, 0.7, 0.8, 1.9, 1.2]
# (method, case) -> (x, fun, nit, nfev, status, success), from jax.scipy.optimize.minimize
JAX = {
    ("BFGS", "quad"): ([0.7857142767225045, -1.392857131523099, 0.07142859797617528],
                       -1.8035714285714282, 7, 9, 0, True),
    ("BFGS", "rosen5"): ([0.9967396880997339, 0.9945007484172954, 0.9885649736274327,
                          0.9754681770102098, 0.9507830995860188], 0.0012757172677625042, 19,
                         25, 3, False),
    ("BFGS", "rosen4_maxiter5"): ([-0.5093233117132628, 0.2428366863172165],
                                  2.3055251137077875, 5, 12, 1, False),
    (LBFGS, "quad"): ([0.785711736854229, -1.3928566927107537, 0.07142677966737021],
                      -1.8035714285579374, 7, 8, 0, True),
    (LBFGS, "rosen5"): ([1.0000000074917565, 0.9999999721743824, 0.9999999956013813,
                         1.0000001401220642, 1.000000266450366], 2.7031518405142446e-12, 27,
                        42, 4, False),
    (LBFGS, "rosen4_maxiter5"): ([-0.8780493021529268, 0.7291171245514154],
                                 3.702240329597789, 6, 19, 1, False),
}
CASES = {
    "quad": lambda m, **kw: minimize(quad, xnp.zeros(3), (A, B), method=m, **kw),
    "rosen5": lambda m, **kw: minimize(rosen, xnp.array(X5), method=m, **kw),
    "rosen4_maxiter5": lambda m, **kw: minimize(rosen, xnp.array([-1.2, 1.0]), method=m,
                                                options=dict(maxiter=5)),
}


def _check(r, want, rtol):
    x, fun, nit, nfev, status, success = want
    assert isinstance(r, OptimizeResults)
    np.testing.assert_allclose(np.asarray(r.x), x, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(float(r.fun), fun, rtol=rtol, atol=rtol)
    assert (int(r.nit), int(r.nfev), int(r.njev), int(r.status), bool(r.success)) == \
        (nit, nfev, nfev, status, success)


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
@pytest.mark.parametrize("case", sorted(CASES))
def test_minimize_takes_jaxs_steps(method, case):
    _check(CASES[case](method), JAX[(method, case)], 1e-9)


@pytest.mark.parametrize("method", ["BFGS", LBFGS])
def test_minimize_compiles(method):
    f = xf.jit(lambda x0: minimize(rosen, x0, method=method), tiered=False)
    _check(f(xnp.array(X5)), JAX[(method, "rosen5")], 1e-9)


def test_minimize_under_vmap_and_its_inverse_hessian():
    r = xf.vmap(lambda x0: minimize(quad, x0, (A, B), method="BFGS"))(
        xnp.array([[0., 0., 0.], [1., 2., 3.]]))
    np.testing.assert_allclose(np.asarray(r.x), [
        [0.7857142767225045, -1.392857131523099, 0.07142859797617528],
        [0.7857141309450169, -1.3928565500450882, 0.07142826578910674]], rtol=1e-9)
    assert np.asarray(r.nit).tolist() == [7, 8] and np.asarray(r.status).tolist() == [0, 0]
    r = minimize(quad, xnp.array([1., 2., 3.]), (A, B), method="BFGS")
    np.testing.assert_allclose(np.asarray(r.hess_inv), [
        [0.430372006272688, -0.21075472359906622, -0.1419045556827017],
        [-0.2107547235990662, 0.6143221245137167, 0.07135915456860006],
        [-0.1419045556827017, 0.07135915456860008, 0.7295172921755442]], rtol=1e-8)
    assert minimize(quad, xnp.zeros(3), (A, B), method=LBFGS).hess_inv is None


def test_minimize_errors():
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(quad, xnp.zeros(3), [A, B], method="BFGS")
    with pytest.raises(ValueError, match="Method nelder-mead not recognized"):
        minimize(rosen, xnp.zeros(3), method="nelder-mead")
    with pytest.raises(TypeError, match="x0 must be a 1-D real array"):
        minimize(rosen, xnp.zeros((2, 2)), method="BFGS")
    with pytest.raises(TypeError):
        minimize(rosen, xnp.zeros(3))                  # method is required, as in JAX
