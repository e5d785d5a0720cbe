"""`xforms.scipy.optimize`: `minimize` with JAX's methods and results.

    >>> rosen = lambda x: xnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> minimize(rosen, xnp.zeros(3), method="BFGS").x        # [1., 1., 1.]

BFGS follows jax.scipy.optimize step by step (the same line search, constants and limits),
so a run takes JAX's iterates; `xf.jit` compiles the whole run (one `while_loop`).
"""
from typing import NamedTuple

import numpy as np

from ... import numpy as xnp
from .bfgs import minimize_bfgs
from .lbfgs import minimize_lbfgs

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """x (the solution), success, status (0 converged, 1 too many iterations, 3 zoom failed,
    4 saddle point, 5 too many line search iterations, -1 undefined), fun, jac, hess_inv
    (None for L-BFGS), nfev, njev, nit."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimise `fun(x, *args)` over a 1-D real x from x0 (jax.scipy.optimize.minimize).

    `method`: "BFGS" or "l-bfgs-experimental-do-not-rely-on-this"; `options` go to the
    method (BFGS: maxiter, norm, gtol, line_search_maxiter).  `tol` is accepted for
    SciPy's signature and, as in JAX, not used: set options={"gtol": ...}.

    >>> minimize(lambda x, c: xnp.sum((x - c) ** 2), xnp.zeros(2), (3.0,),
    ...          method="BFGS").x                              # [3., 3.]
    """
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to xforms.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")
    x0 = xnp.asarray(x0)
    if x0.ndim != 1 or x0.dtype.kind not in "fi":
        raise TypeError(f"minimize: x0 must be a 1-D real array, got {x0.dtype}{list(x0.shape)}"
                        " (flatten it, e.g. with xforms.flatten_util.ravel_pytree)")
    x0 = x0.astype(xnp.result_type(x0, np.float64))
    options = {} if options is None else dict(options)

    def objective(x):
        return fun(x, *args)
    kind = method.lower()
    if kind == "bfgs":
        r = minimize_bfgs(objective, x0, **options)
        hess_inv = r.H_k
    elif kind == "l-bfgs-experimental-do-not-rely-on-this":
        r = minimize_lbfgs(objective, x0, **options)
        hess_inv = None
    else:
        raise ValueError(f"Method {method} not recognized")
    return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                           fun=r.f_k, jac=r.g_k, hess_inv=hess_inv, nfev=r.nfev,
                           njev=r.ngev, nit=r.k)
