"""BFGS (Nocedal & Wright, Algorithm 6.1) with the Wolfe line search, as
jax.scipy.optimize's: one `while_loop` over iterations, so it runs under jit.

    >>> minimize_bfgs(lambda x: xnp.sum((x - 2.0) ** 2), xnp.zeros(3)).x_k   # [2., 2., 2.]
"""
from typing import NamedTuple

import numpy as np

from ... import api, lax
from ... import numpy as xnp
from .line_search import line_search


class BFGSResults(NamedTuple):
    """The state of a BFGS run: converged, failed, k (iterations), nfev, ngev, nhev, x_k,
    f_k, g_k, H_k (the inverse Hessian estimate), old_old_fval, status (0 converged, 1 too
    many iterations, 2 + the line search's status when it failed), line_search_status."""
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def _norm(g, order):
    return xnp.linalg.norm(g, ord=order)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimise `fun` (flat x -> real scalar) from x0 until |grad|_norm < gtol."""
    maxiter = np.size(x0) * 200 if maxiter is None else maxiter
    eye = xnp.eye(x0.shape[0], dtype=x0.dtype)
    f0, g0 = api.value_and_grad(fun)(x0)
    zero = xnp.array(0)
    state = BFGSResults(converged=_norm(g0, norm) < gtol, failed=xnp.array(False), k=zero,
                        nfev=xnp.array(1), ngev=xnp.array(1), nhev=zero, x_k=x0, f_k=f0,
                        g_k=g0, H_k=eye, old_old_fval=f0 + _norm(g0, 2) / 2, status=zero,
                        line_search_status=zero)

    def body(s):
        p = -(s.H_k @ s.g_k)
        ls = line_search(fun, s.x_k, p, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                         gfk=s.g_k, maxiter=line_search_maxiter)
        step = ls.a_k * p
        y = ls.g_k - s.g_k
        rho = 1.0 / xnp.dot(y, step)
        w = eye - rho * xnp.outer(step, y)
        h_new = w @ s.H_k @ w.T + rho * xnp.outer(step, step)
        return s._replace(converged=_norm(ls.g_k, norm) < gtol, failed=ls.failed, k=s.k + 1,
                          nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x_k=s.x_k + step,
                          f_k=ls.f_k, g_k=ls.g_k,
                          H_k=xnp.where(xnp.isfinite(rho), h_new, s.H_k),
                          old_old_fval=s.f_k, line_search_status=ls.status)
    s = lax.while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, state)
    status = xnp.where(s.converged, 0, xnp.where(s.k == maxiter, 1, xnp.where(
        s.failed, 2 + s.line_search_status, -1)))
    return s._replace(status=status)
