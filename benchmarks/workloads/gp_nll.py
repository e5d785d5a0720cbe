"""gp_nll: ``jit(grad)`` of a Gaussian-process negative log-likelihood.

An RBF kernel K = v exp(-|xi - xj|^2 / (2 l^2)) + (s + 1e-6) I on n points in 3-d, the loss
0.5 y^T K^-1 y + sum(log diag(chol K)) + n/2 log(2 pi) by a Cholesky factor and a
triangular solve, differentiated with respect to the three log-hyperparameters (l, v, s);
n = 100, 500, 2000 in float64.  The squared distances are an input.  The limit is a
hand-written NumPy/SciPy gradient (0.5 tr((K^-1 - a a^T) dK) with a = K^-1 y: one Cholesky,
one inverse from it); ``f`` is the NumPy forward loss.
"""
from __future__ import annotations

import numpy as np

from ..harness import Case

NAME = "gp_nll"
SWEEP = "n"


def loss(theta, d2, y, np_, solve_triangular):
    """Negative log marginal likelihood of y under a GP with an RBF kernel."""
    ls, var, noise = np_.exp(theta[0]), np_.exp(theta[1]), np_.exp(theta[2])
    n = y.shape[0]
    k = var * np_.exp(-0.5 * d2 / (ls * ls)) + (noise + 1e-6) * np_.eye(n)
    c = np_.linalg.cholesky(k)
    alpha = solve_triangular(c, y, lower=True)
    return (0.5 * np_.sum(alpha * alpha) + np_.sum(np_.log(np_.linalg.diagonal(c)))
            + 0.5 * n * np.log(2 * np.pi))


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, (n, 3))
    d2 = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    y = np.sin(x).sum(-1) + 0.1 * rng.standard_normal(n)
    theta = np.array([np.log(0.7), np.log(1.3), np.log(0.05)])
    return theta, d2, y


def numpy_grad(theta, d2, y):
    """The gradient written by hand: dNLL/dt = 0.5 tr((K^-1 - a a^T) dK/dt)."""
    import scipy.linalg as sl
    ls, var, noise = np.exp(theta)
    n = y.shape[0]
    e = np.exp(-0.5 * d2 / (ls * ls))
    k = var * e
    k[np.diag_indices(n)] += noise + 1e-6
    c = sl.cho_factor(k, lower=True)
    a = sl.cho_solve(c, y)
    w = sl.cho_solve(c, np.eye(n)) - np.outer(a, a)
    dk_dls = var * e * d2 / (ls * ls)          # d/d log(l)
    return 0.5 * np.array([np.sum(w * dk_dls), np.sum(w * var * e), noise * np.trace(w)])


def _systems(ctx):
    def xforms(d):
        p = ctx.peer("xforms")
        import xforms.scipy.linalg as xsl
        g = p.xf.grad(lambda t, d2, y: loss(t, d2, y, p.xnp, xsl.solve_triangular))
        return ctx.xjit(g), ctx.xput(*d)

    def jax(d):
        p = ctx.peer("jax")
        import jax.scipy.linalg as jsl
        g = p.jax.grad(lambda t, d2, y: loss(t, d2, y, p.jnp, jsl.solve_triangular))
        return ctx.jax_call(g), d

    def f(d):
        import scipy.linalg as sl
        return (lambda t, d2, y: loss(t, d2, y, np, sl.solve_triangular)), d

    return dict(xforms=xforms, jax=jax, numpy=lambda d: (numpy_grad, d), f=f)


def cases(ctx):
    sizes = [8] if ctx.sim else [50] if ctx.quick else [100, 500, 2000]
    return [Case("jit(grad)", {"n": n, "dtype": "float64"}, _systems(ctx),
                 make=lambda n=n: make_data(n, ctx.seed), unit="ms/call", limit="numpy",
                 rtol=1e-6) for n in sizes]
