"""Cholesky's derivative maps (xforms/primitives/linalg/cholesky_ad.py): cholesky_tangent and
cholesky_cotangent are each other's transposes, the cotangent's kernels (the CPU's blocked
reverse Cholesky, xforms/kernels/runtime/linalg.py) agree with its composite definition across
block boundaries and dtypes, derivatives through a Cholesky to second order, and the
structure of `grad` of a Gaussian-process likelihood: one Cholesky and one reverse Cholesky,
no other O(n^3) operation (no inverse through two triangular solves, no n x n products)."""
import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl
from xforms.kernels.runtime import linalg as linalg_runtime
from xforms import lax
from xforms.primitives.linalg.cholesky_ad import (cholesky_cotangent, cholesky_tangent,
                                                  cotangent_composite, tangent_composite)
from xforms.test_util import check_grads

R = np.random.default_rng(5)
TOL = {np.float32: 2e-4, np.complex64: 2e-4, np.float64: 1e-11, np.complex128: 1e-11}


def rand(*shape, dt=np.float64):
    x = R.standard_normal(shape)
    if np.dtype(dt).kind == "c":
        x = x + 1j * R.standard_normal(shape)
    return x.astype(dt)


def factor(*shape, dt=np.float64):
    a = rand(*shape, dt=np.complex128 if np.dtype(dt).kind == "c" else np.float64)
    n = shape[-1]
    return np.linalg.cholesky(a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dt)


def close(a, b, dt):
    scale = max(1.0, float(np.max(np.abs(b))))
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=TOL[dt], atol=TOL[dt] * scale)


@pytest.mark.parametrize("dt", [np.float64, np.complex128, np.float32, np.complex64])
def test_transposes_of_each_other(dt):
    L, x, y = factor(2, 5, 5, dt=dt), rand(2, 5, 5, dt=dt), rand(2, 5, 5, dt=dt)
    # JAX's transposes pair by Re sum(a * b) (conj, in H, is its own transpose: the maps
    # are real-linear, not complex-linear)
    lhs = np.real(np.sum(np.asarray(cholesky_tangent(L, x)) * y))
    rhs = np.real(np.sum(x * np.asarray(cholesky_cotangent(L, y))))
    close(lhs, rhs, dt)
    assert np.allclose(np.triu(np.asarray(cholesky_cotangent(L, y))[1], 1), 0)


# n across the CPU kernel's diagonal blocks (32 rows up to n = 512, kernels/runtime/linalg.py)
@pytest.mark.parametrize("dt,n", [(np.float64, 1), (np.float64, 7), (np.float64, 64),
                                  (np.float64, 97), (np.complex128, 70), (np.float32, 66),
                                  (np.complex64, 9)])
def test_cotangent_kernel_matches_its_definition(dt, n):
    L, g = factor(2, n, n, dt=dt), rand(2, n, n, dt=dt)
    close(xf.jit(cholesky_cotangent)(L, g), cotangent_composite(L, g), dt)
    close(cholesky_cotangent(L, g), cotangent_composite(L, g), dt)       # NumPy impl
    close(xf.jit(cholesky_tangent)(L, g), tangent_composite(L, g), dt)


def test_small_blocks_and_a_failed_factor():
    L, g = factor(1, 11, 11), rand(1, 11, 11)
    out = np.empty_like(g)
    for nb in (1, 3, 4):             # several diagonal blocks at a small size
        out[0] = np.tril(g[0])
        linalg_runtime._chol_rev(1, L[0], out[0], nb)
        close(out, cotangent_composite(L, g), np.float64)
    bad = xf.jit(lambda a, g: cholesky_cotangent(xnp.linalg.cholesky(a), g))(
        -np.eye(3), np.ones((3, 3)))
    assert np.isnan(np.asarray(bad)[np.tril_indices(3)]).all()    # NaN, no exception


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_check_grads_second_order(dt):
    a = factor(2, 3, 3, dt=dt)
    s = a @ np.conj(np.swapaxes(a, -1, -2))
    check_grads(xnp.linalg.cholesky, (s,), order=2, modes=("fwd", "rev"))
    g = rand(2, 3, 3, dt=dt)
    check_grads(cholesky_cotangent, (a, g), order=2, modes=("fwd", "rev"))
    check_grads(cholesky_tangent, (a, g), order=1, modes=("fwd", "rev"))


def test_unsymmetrised_input_differentiates_the_lower_triangle():
    # the primitive reads the lower triangle: its derivative is that triangle's, so finite
    # differences in any direction agree and the gradient is lower triangular
    s = factor(4, 4) @ factor(4, 4).T + np.triu(rand(4, 4), 1)
    f = lambda a: lax.linalg.cholesky(a, symmetrize_input=False)    # noqa: E731
    check_grads(f, (s,), order=1, modes=("fwd", "rev"))
    g = np.asarray(xf.grad(lambda a: xnp.sum(f(a) ** 2))(s))
    assert np.allclose(np.triu(g, 1), 0)
    # symmetrised (jnp.linalg.cholesky): JAX's gradient, symmetric
    g = np.asarray(xf.grad(lambda a: xnp.sum(xnp.linalg.cholesky(a) ** 2))(s))
    np.testing.assert_allclose(g, g.T, rtol=1e-12, atol=1e-12)


def test_vmap_and_jit_of_grad():
    s = factor(3, 4, 4) @ np.swapaxes(factor(3, 4, 4), -1, -2)
    g = xf.grad(lambda a: xnp.sum(xnp.linalg.cholesky(a) ** 3))
    want = np.stack([np.asarray(g(x)) for x in s])
    np.testing.assert_allclose(np.asarray(xf.vmap(g)(s)), want, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(np.asarray(xf.jit(xf.vmap(g))(s)), want, rtol=1e-11,
                               atol=1e-11)


# ---- the Gaussian-process likelihood's gradient (benchmarks/workloads/gp_nll.py) ----------
def _gp_loss(theta, d2, y):
    ls, var, noise = xnp.exp(theta[0]), xnp.exp(theta[1]), xnp.exp(theta[2])
    n = y.shape[0]
    k = var * xnp.exp(-0.5 * d2 / (ls * ls)) + (noise + 1e-6) * xnp.eye(n)
    c = xnp.linalg.cholesky(k)
    alpha = xsl.solve_triangular(c, y, lower=True)
    return 0.5 * xnp.sum(alpha * alpha) + xnp.sum(xnp.log(xnp.linalg.diagonal(c)))


def _gp_data(n):
    x = R.uniform(-2.0, 2.0, (n, 3))
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return np.log([0.7, 1.3, 0.05]), d2, np.sin(x).sum(-1)


def _hand_gradient(theta, d2, y):
    ls, var, noise = np.exp(theta)
    e = np.exp(-0.5 * d2 / ls ** 2)
    k = var * e + (noise + 1e-6) * np.eye(len(y))
    kinv = np.linalg.inv(k)
    a = kinv @ y
    w = kinv - np.outer(a, a)
    return 0.5 * np.array([np.sum(w * var * e * d2 / ls ** 2), np.sum(w * var * e),
                           noise * np.trace(w)])


def _cubic(eqn, n):
    """Whether an equation costs O(n^3): a factorisation, or a solve or product of n x n."""
    name = eqn.prim.name
    if name in ("cholesky", "cholesky_cotangent", "lu", "cholesky_tangent"):
        return True
    if name == "triangular_solve":
        return all(d >= n for d in eqn.outvars[0].aval.shape[-2:])
    if name == "dot_general":
        (contract, _), _ = eqn.params["dimension_numbers"]
        k = np.prod([eqn.invars[0].aval.shape[d] for d in contract])
        return k >= n and all(d >= n for d in eqn.outvars[0].aval.shape[-2:])
    return False


def test_gp_gradient_costs_one_cholesky_and_one_reverse_cholesky():
    n = 70
    theta, d2, y = _gp_data(n)
    grad = xf.grad(_gp_loss)
    eqns = xf.make_jaxpr(grad)(theta, d2, y).jaxpr.eqns
    assert sorted(e.prim.name for e in eqns if _cubic(e, n)) == \
        ["cholesky", "cholesky_cotangent"]
    want = _hand_gradient(theta, d2, y)
    np.testing.assert_allclose(np.asarray(xf.jit(grad)(theta, d2, y)), want, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(grad(theta, d2, y)), want, rtol=1e-9)
