"""Differences from JAX in derivatives found in session 24 (issue #31, tools/jax_ad_sweep.py
over lax, numpy, linalg, fft, scipy_linalg): scipy.linalg.eigh of a non-Hermitian matrix, and
eigh's derivative along a non-Hermitian tangent.

JAX is absent in CI: the expected values are jax 0.10.2's (CPU, `jax_enable_x64` on),
written here as literals.
"""
import numpy as np

import xforms as xf
import xforms.lax as lax
import xforms.numpy as xnp
import xforms.scipy.linalg as xsl

# not symmetric: SciPy reads its lower triangle, JAX symmetrises it first
A = np.array([[2.0, 0.5, -0.3], [0.1, 1.5, 0.4], [0.2, -0.6, 3.0]])
D = np.array([[0.3, -0.2, 0.5], [0.7, 0.1, -0.4], [-0.1, 0.6, 0.2]])
W = np.array([0.5, -1.0, 2.0])


def _f(a):
    """Eigenvalues and sign-free products of eigenvectors, weighted."""
    w, v = xsl.eigh(a)
    return xnp.sum(w * W) + xnp.sum(v[:, 0] ** 2 * W) + v[0, 2] * v[1, 2]


def test_scipy_eigh_symmetrises_a_non_hermitian_matrix_as_jax():
    # jax.scipy.linalg.eigh(A)[0] (lower and upper alike; SciPy: [1.2544, 2.0153, 3.2304] lower,
    # [1.0629, 2.3068, 3.1303] upper)
    want = [1.3565434375989798, 2.1317185101419107, 3.0117380522591097]
    np.testing.assert_allclose(xsl.eigh(A)[0], want, rtol=1e-13)
    np.testing.assert_allclose(xsl.eigh(A, lower=False)[0], want, rtol=1e-13)


def test_scipy_eigh_gradient_and_hvp_as_jax():
    # jax.grad(f)(A) and jax.jvp(jax.grad(f), (A,), (D,))[1], f as _f with jax.scipy.linalg
    grad = [[-1.264474270209149, -0.07880551297058008, -0.2508806225271711],
            [-0.07880551297058008, 0.8121525319416446, -0.22989543204373475],
            [-0.2508806225271711, -0.22989543204373475, 1.9523217382675044]]
    hvp = [[0.15880170827937437, -0.5503657855871319, 0.6253864081054137],
           [-0.5503657855871319, -0.32257957887586874, 0.23334669679502906],
           [0.6253864081054137, 0.23334669679502906, 0.16377787059649423]]
    np.testing.assert_allclose(xf.grad(_f)(A), grad, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(xf.jvp(xf.grad(_f), (A,), (D,))[1], hvp, rtol=1e-8, atol=1e-11)
    # reverse over reverse gives the same Hessian product
    np.testing.assert_allclose(xf.vjp(xf.grad(_f), A)[1](D)[0], hvp, rtol=1e-8, atol=1e-11)


def _lax_eigh_f(lower):
    def f(a):
        v, w = lax.linalg.eigh(a, lower=lower, symmetrize_input=False)
        return xnp.sum(w * W) + xnp.sum(v[:, 0] ** 2 * W)
    return f


def test_eigh_derivative_is_that_of_the_triangle_read():
    # without symmetrize_input the value depends on one triangle only: the gradient is zero
    # on the other and matches central differences of the value (the old rule, JAX's, took
    # the tangent as Hermitian: nonzero there, and fwd-over-rev != rev-over-rev)
    for lower in (True, False):
        f = _lax_eigh_f(lower)
        eps = 1e-6
        fd = np.array([(f(A + eps * e.reshape(3, 3)) - f(A - eps * e.reshape(3, 3))) / (2 * eps)
                       for e in np.eye(9)]).reshape(3, 3)
        g = np.asarray(xf.grad(f)(A))
        np.testing.assert_allclose(g, fd, atol=1e-7)
        unread = np.triu(np.ones((3, 3)), 1) if lower else np.tril(np.ones((3, 3)), -1)
        assert not np.any(g * unread), g
        fwd_rev = xf.jvp(xf.grad(f), (A,), (D,))[1]
        rev_rev = xf.vjp(xf.grad(f), A)[1](D)[0]
        np.testing.assert_allclose(fwd_rev, rev_rev, rtol=1e-9, atol=1e-12)
