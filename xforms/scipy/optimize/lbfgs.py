"""L-BFGS (Nocedal & Wright, Algorithm 7.5: the two-loop recursion over the last `maxcor`
steps) with the Wolfe line search, as jax.scipy.optimize's experimental method
"l-bfgs-experimental-do-not-rely-on-this".

    >>> minimize_lbfgs(lambda x: xnp.sum((x - 2.0) ** 2), xnp.zeros(3)).x_k  # [2., 2., 2.]
"""
from typing import NamedTuple

import numpy as np

from ... import api, lax
from ... import numpy as xnp
from .line_search import line_search


class LBFGSResults(NamedTuple):
    """converged, failed, k, nfev, ngev, x_k, f_k, g_k, the step/gradient-change/rho
    histories (oldest first), gamma (the initial inverse Hessian scale), status (0 ok,
    1 maxiter, 2 maxfun, 3 maxgrad, 4 no progress (ftol), 5 line search failed), ls_status."""
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    x_k: object
    f_k: object
    g_k: object
    s_history: object
    y_history: object
    rho_history: object
    gamma: object
    status: object
    ls_status: object


def _direction(s):
    """-H g by the two-loop recursion over the filled part of the history."""
    m = s.rho_history.shape[0]
    used = xnp.minimum(s.k, m)

    def newest_first(j, carry):
        q, alphas = carry
        i = m - 1 - j
        a = s.rho_history[i] * xnp.dot(s.s_history[i], q)
        return q - a * s.y_history[i], alphas.at[i].set(a)
    q, alphas = lax.fori_loop(0, used, newest_first, (-s.g_k, xnp.zeros_like(s.rho_history)))

    def oldest_first(j, q):
        i = m - used + j
        b = s.rho_history[i] * xnp.dot(s.y_history[i], q)
        return q + (alphas[i] - b) * s.s_history[i]
    return lax.fori_loop(0, used, oldest_first, s.gamma * q)


def _push(history, new):
    """The history with its oldest entry dropped and `new` appended."""
    return xnp.concatenate([history[1:], new[None]], axis=0)


def minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
                   gtol=1e-05, maxfun=None, maxgrad=None, maxls=20):
    """Minimise `fun` (flat x -> real scalar) from x0 until |grad|_norm < gtol or a limit."""
    d, dt = x0.shape[0], x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    maxiter, maxfun, maxgrad = [np.inf if v is None else v for v in (maxiter, maxfun, maxgrad)]
    f0, g0 = api.value_and_grad(fun)(x0)
    zero = xnp.array(0)
    state = LBFGSResults(xnp.array(False), xnp.array(False), zero, xnp.array(1),
                         xnp.array(1), x0, f0, g0, xnp.zeros((maxcor, d), dt),
                         xnp.zeros((maxcor, d), dt), xnp.zeros((maxcor,), dt),
                         xnp.ones((), dt), zero, zero)

    def body(s):
        p = _direction(s)
        ls = line_search(fun, s.x_k, p, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        step = ls.a_k * p
        y = ls.g_k - s.g_k
        sy = xnp.dot(y, step)
        status = xnp.where(ls.failed, 5, xnp.where(s.k >= maxiter, 1, xnp.where(
            s.nfev >= maxfun, 2, xnp.where(s.ngev >= maxgrad, 3, xnp.where(
                s.f_k - ls.f_k < ftol, 4, 0)))))
        converged = xnp.linalg.norm(ls.g_k, ord=norm) < gtol
        return LBFGSResults(converged, (status > 0) & ~converged, s.k + 1, s.nfev + ls.nfev,
                            s.ngev + ls.ngev, s.x_k + step, ls.f_k, ls.g_k,
                            _push(s.s_history, step), _push(s.y_history, y),
                            _push(s.rho_history, 1.0 / sy), sy / xnp.dot(y, y),
                            xnp.where(converged, 0, status), ls.status)
    return lax.while_loop(lambda s: ~s.converged & ~s.failed, body, state)
