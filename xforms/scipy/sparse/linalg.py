"""`xforms.scipy.sparse.linalg` (jax.scipy.sparse.linalg): matrix-free Krylov solvers,
`cg`, `bicgstab` and `gmres`, with JAX's signatures and stopping rules
(`norm(residual) <= max(tol * norm(b), atol)`).  `A` and `M` are functions, or square
matrices applied with `@`; `b` may be any pytree of arrays.  Each solve is a
`lax.custom_linear_solve`, so derivatives come from a second solve with the transposed
operator, never from differentiating the iterations.

    >>> x, info = cg(lambda v: A @ v, b, tol=1e-10)
"""
import operator

import numpy as np

from ... import lax
from ... import numpy as xnp
from ...tree_util import tree_leaves, tree_map, tree_structure


# ---- pytree vector algebra ----------------------------------------------------------------
def _add(x, y):
    return tree_map(operator.add, x, y)


def _sub(x, y):
    return tree_map(operator.sub, x, y)


def _scale(a, x):
    return tree_map(lambda v: a * v, x)


def _dot(x, y):
    """sum over leaves of conj(x) . y."""
    return sum(xnp.vdot(u, v) for u, v in zip(tree_leaves(x), tree_leaves(y)))


def _rdot(x, y):
    """Re(conj(x) . y): the real inner product the stopping rules use."""
    return xnp.real(_dot(x, y))


def _norm(x):
    return xnp.sqrt(_rdot(x, x))


def _identity(x):
    return x


def _operator(A, what):
    """A function for `A`: a callable as it is, a square matrix as `A @ x`."""
    if callable(A):
        return A
    if hasattr(A, "shape") or isinstance(A, (list, tuple)):
        A = xnp.asarray(A)
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"{what}: linear operator must be a square matrix, but has "
                             f"shape: {A.shape}")
        return lambda x: xnp.matmul(A, x)
    raise TypeError(f"{what}: linear operator must be either a function or ndarray: {A!r}")


def _prepare(what, A, b, x0, M, maxiter):
    """-> (A, b, x0, M, maxiter) normalized and checked, as every solver needs them."""
    b = tree_map(xnp.asarray, b)
    x0 = tree_map(xnp.zeros_like, b) if x0 is None else tree_map(xnp.asarray, x0)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"{what}: x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    shapes = [np.shape(v) for v in tree_leaves(x0)], [np.shape(v) for v in tree_leaves(b)]
    if shapes[0] != shapes[1]:
        raise ValueError(f"{what}: arrays in x0 and b must have matching shapes: "
                         f"{shapes[0]} vs {shapes[1]}")
    size = sum(int(np.prod(np.shape(v))) for v in tree_leaves(b))
    maxiter = 10 * size if maxiter is None else maxiter     # SciPy's default
    M = _identity if M is None else _operator(M, what)
    return _operator(A, what), b, x0, M, maxiter, size


def _threshold2(b, tol, atol):
    """The squared residual norm below which an iteration stops."""
    return xnp.maximum(tol ** 2 * _rdot(b, b), atol ** 2)


def _result_dtype(tree):
    return np.result_type(*[v.dtype for v in tree_leaves(tree)])


# ---- conjugate gradients --------------------------------------------------------------------
def _cg_iterate(A, b, x0, *, tol, atol, maxiter, M):
    """Preconditioned conjugate gradients from x0 (Hermitian positive definite A)."""
    limit = _threshold2(b, tol, atol)
    r = _sub(b, A(x0))
    z = M(r)
    dt = _result_dtype(z)
    rz = _rdot(r, z).astype(dt)

    def going(state):
        _, r, rz, _, k = state
        res2 = xnp.real(rz) if M is _identity else _rdot(r, r)
        return (res2 > limit) & (k < maxiter)

    def step(state):
        x, r, rz, p, k = state
        Ap = A(p)
        alpha = rz / _rdot(p, Ap).astype(dt)
        x, r = _add(x, _scale(alpha, p)), _sub(r, _scale(alpha, Ap))
        z = M(r)
        rz_new = _rdot(r, z).astype(dt)
        return x, r, rz_new, _add(z, _scale(rz_new / rz, p)), k + 1
    return lax.while_loop(going, step, (x0, r, rz, z, 0))[0]


def _solve(iterate, A, b, x0, tol, atol, maxiter, M, symmetric):
    def solve(matvec, rhs):
        return iterate(matvec, rhs, x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    return lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve,
                                   symmetric=symmetric)


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve `A x = b` by conjugate gradients (A Hermitian positive definite); -> (x, None)
    as in JAX (`info` is a placeholder).  Derivatives solve again with cg.

    >>> x, _ = cg(lambda v: xnp.array([[4.0, 1.0], [1.0, 3.0]]) @ v, xnp.ones(2))
    """
    A, b, x0, M, maxiter, _ = _prepare("cg", A, b, x0, M, maxiter)
    real = all(np.dtype(v.dtype).kind != "c" for v in tree_leaves(b))
    return _solve(_cg_iterate, A, b, x0, tol, atol, maxiter, M, symmetric=real), None


# ---- BiCGSTAB -------------------------------------------------------------------------------
def _bicgstab_iterate(A, b, x0, *, tol, atol, maxiter, M):
    """Preconditioned BiCGSTAB from x0; the count turns negative on a breakdown (rho, alpha
    or omega zero), which stops the loop, as in JAX."""
    limit = _threshold2(b, tol, atol)
    r0 = _sub(b, A(x0))
    one = xnp.ones((), _result_dtype(b))

    def going(state):
        r, k = state[1], state[-1]
        return (_rdot(r, r) > limit) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_new = _dot(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_new / _dot(rhat, q)
        s = _sub(r, _scale(alpha, q))
        done = _rdot(s, s) < limit          # s already small: skip the stabilizing half
        shat = M(s)
        t = A(shat)
        omega = _dot(t, s) / _dot(t, t)
        x_half = _add(x, _scale(alpha, phat))
        x = tree_map(lambda a, c: xnp.where(done, a, c), x_half,
                     _add(x_half, _scale(omega, shat)))
        r = tree_map(lambda a, c: xnp.where(done, a, c), s, _sub(s, _scale(omega, t)))
        k = xnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = xnp.where(rho_new == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_new, p, q, k
    state = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(going, step, state)[0]


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve `A x = b` (any nonsingular A) by BiCGSTAB; -> (x, None) as in JAX.

    >>> x, _ = bicgstab(xnp.array([[4.0, 1.0], [2.0, 3.0]]), xnp.ones(2))
    """
    A, b, x0, M, maxiter, _ = _prepare("bicgstab", A, b, x0, M, maxiter)
    return _solve(_bicgstab_iterate, A, b, x0, tol, atol, maxiter, M, symmetric=False), None


# ---- GMRES ----------------------------------------------------------------------------------
def _unit(x, floor=None):
    """x / norm(x) and norm(x); both zero when the norm is at most `floor` (default: eps)."""
    n = _norm(x)
    floor = np.finfo(np.dtype(n.dtype)).eps if floor is None else floor
    ok = n > floor
    safe = xnp.where(ok, n, 1.0)
    return tree_map(lambda v: xnp.where(ok, v / safe.astype(v.dtype), 0), x), \
        xnp.where(ok, n, 0.0)


def _gmres_cycle(A, M, b, x, u, beta, restart, dt):
    """One restart: `restart` Arnoldi steps on M A from the unit residual u (classical
    Gram-Schmidt, applied twice), then the least-squares minimizer of |beta e1 - H y|.
    H is kept transposed (row k holds column k of the Hessenberg matrix) and starts as the
    identity, so rows never reached after a breakdown keep the normal equations regular."""
    V = tree_map(lambda v: xnp.zeros(v.shape + (restart + 1,), dt).at[..., 0].set(v), u)
    H = xnp.eye(restart, restart + 1, dtype=dt)

    def going(state):
        return (state[2] < restart) & ~state[3]

    def step(state):
        V, H, k, _ = state
        w = M(A(tree_map(lambda X: X[..., k], V)))
        w_norm = _norm(w)
        h = xnp.zeros(restart + 1, dt)
        for _ in range(2):      # once more against the rounding of the first pass
            c = sum(xnp.einsum("...n,...->n", xnp.conj(X), v)
                    for X, v in zip(tree_leaves(V), tree_leaves(w)))
            w = tree_map(lambda X, v: v - xnp.einsum("...n,n->...", X, c), V, w)
            h = h + c
        w, w_norm2 = _unit(w, np.finfo(np.dtype(w_norm.dtype)).eps * w_norm)
        V = tree_map(lambda X, v: X.at[..., k + 1].set(v), V, w)
        H = H.at[k, :].set(h.at[k + 1].set(w_norm2.astype(dt)))
        return V, H, k + 1, w_norm2 == 0
    V, H, _, _ = lax.while_loop(going, step, (V, H, 0, False))
    e1 = xnp.zeros(restart + 1, dt).at[0].set(beta.astype(dt))
    Ht = H.T                                  # the (restart + 1, restart) Hessenberg matrix
    y = xnp.linalg.solve(xnp.conj(Ht.T) @ Ht, xnp.conj(Ht.T) @ e1)
    x = _add(x, tree_map(lambda X: X[..., :-1] @ y, V))
    u, beta = _unit(M(_sub(b, A(x))))
    return x, u, beta


def _gmres_iterate(A, b, x0, *, atol, restart, maxiter, M):
    dt = _result_dtype(b)
    u, beta = _unit(M(_sub(b, A(x0))))

    def going(state):
        return (state[1] < maxiter) & (state[3] > atol)

    def step(state):
        x, k, u, beta = state
        x, u, beta = _gmres_cycle(A, M, b, x, u, beta, restart, dt)
        return x, k + 1, u, beta
    return lax.while_loop(going, step, (x0, 0, u, beta))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve `A x = b` by restarted GMRES (Krylov spaces of dimension `restart`, at most
    `maxiter` restarts); -> (x, info) with info -1 when x holds NaN, else 0, as in JAX.
    Only JAX's default `solve_method="batched"` (the least-squares problem solved once per
    restart) is implemented.

    >>> x, info = gmres(xnp.array([[4.0, 1.0], [2.0, 3.0]]), xnp.ones(2), tol=1e-10)
    """
    if solve_method == "incremental":
        raise NotImplementedError("gmres: solve_method='incremental' (Givens rotations "
                                  "with early exit inside a restart) is not implemented; "
                                  "use the default solve_method='batched'")
    if solve_method != "batched":
        raise ValueError(f"gmres: invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")
    A, b, x0, M, maxiter, size = _prepare("gmres", A, b, x0, M, maxiter)
    restart = min(restart, size)
    atol = xnp.maximum(tol * _norm(b), atol)

    def solve(matvec, rhs):
        return _gmres_iterate(matvec, rhs, x0, atol=atol, restart=restart, maxiter=maxiter,
                              M=M)
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    return x, xnp.where(xnp.isnan(_norm(x)), -1, 0)


__all__ = ["cg", "bicgstab", "gmres"]
