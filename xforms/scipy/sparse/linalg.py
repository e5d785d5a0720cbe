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
from .. import linalg as _sl
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


def _arnoldi_step(A, M, V, k, dt, restart):
    """The k-th Arnoldi step on M A: the next Krylov vector orthonormalized against V's
    columns (classical Gram-Schmidt, applied twice) into column k + 1, and its overlaps
    h (length restart + 1, h[k + 1] its norm: 0 on a breakdown)."""
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
    return V, h.at[k + 1].set(w_norm2.astype(dt)), w_norm2 == 0


def _krylov_start(u, restart, dt):
    return tree_map(lambda v: xnp.zeros(v.shape + (restart + 1,), dt).at[..., 0].set(v), u)


def _gmres_batched(A, M, b, x, u, beta, restart, ptol, dt):
    """One restart: up to `restart` Arnoldi steps, then the least-squares minimizer of
    |beta e1 - H y| by its normal equations.  H is kept transposed (row k holds column k
    of the Hessenberg matrix) and starts as the identity, so rows never reached after a
    breakdown keep the normal equations regular."""
    V, H = _krylov_start(u, restart, dt), xnp.eye(restart, restart + 1, dtype=dt)

    def going(state):
        return (state[2] < restart) & ~state[3]

    def step(state):
        V, H, k, _ = state
        V, h, broke = _arnoldi_step(A, M, V, k, dt, restart)
        return V, H.at[k, :].set(h), k + 1, broke
    V, H, _, _ = lax.while_loop(going, step, (V, H, 0, False))
    e1 = xnp.zeros(restart + 1, dt).at[0].set(beta.astype(dt))
    Ht = H.T                                  # the (restart + 1, restart) Hessenberg matrix
    y = xnp.linalg.solve(xnp.conj(Ht.T) @ Ht, xnp.conj(Ht.T) @ e1)
    return tree_map(lambda X: X[..., :-1] @ y, V)


def _rotate(v, i, cs, sn):
    """Apply the Givens rotation (cs, sn) to entries i, i + 1 of v."""
    a, c = v[i], v[i + 1]
    return v.at[i].set(xnp.conj(cs) * a - xnp.conj(sn) * c).at[i + 1].set(sn * a + cs * c)


def _givens(a, c):
    """(cs, sn) whose rotation zeroes c against a."""
    small_a = xnp.abs(a) < xnp.abs(c)
    safe_c = xnp.where(c == 0, 1, c)
    t = -xnp.where(small_a, a, c) / xnp.where(small_a, safe_c, xnp.where(a == 0, 1, a))
    r = (1 / xnp.sqrt(1 + xnp.abs(t) ** 2)).astype(t.dtype)
    zero = xnp.abs(c) == 0
    return (xnp.where(zero, 1, xnp.where(small_a, r * t, r)),
            xnp.where(zero, 0, xnp.where(small_a, r, r * t)))


def _gmres_incremental(A, M, b, x, u, beta, restart, ptol, dt):
    """One restart with the QR factorization of H kept up to date by Givens rotations, so
    the residual norm is known after every step and the restart ends once it is below
    ptol.  The triangular solve runs on the full (identity-padded) factor, as JAX's."""
    V, R = _krylov_start(u, restart, dt), xnp.eye(restart, restart + 1, dtype=dt)
    rots = xnp.zeros((restart, 2), dt)
    g = xnp.zeros(restart + 1, dt).at[0].set(beta.astype(dt))

    def going(state):
        return (state[0] < restart) & (state[1] > ptol)

    def step(state):
        k, _, V, R, g, rots = state
        V, h, _ = _arnoldi_step(A, M, V, k, dt, restart)
        h = lax.fori_loop(0, k, lambda i, h: _rotate(h, i, rots[i, 0], rots[i, 1]), h)
        cs, sn = _givens(h[k], h[k + 1])
        rots = rots.at[k, :].set(xnp.stack([cs, sn]))
        g = _rotate(g, k, cs, sn)
        return k + 1, xnp.abs(g[k + 1]), V, R.at[k, :].set(_rotate(h, k, cs, sn)), g, rots
    _, _, V, R, g, _ = lax.while_loop(going, step, (0, beta, V, R, g, rots))
    y = _sl.solve_triangular(R[:, :-1].T, g[:-1])
    return tree_map(lambda X: X[..., :-1] @ y, V)


def _gmres_iterate(A, b, x0, *, atol, ptol, restart, maxiter, M, cycle):
    dt = _result_dtype(b)
    u, beta = _unit(M(_sub(b, A(x0))))

    def going(state):
        return (state[1] < maxiter) & (state[3] > atol)

    def step(state):
        x, k, u, beta = state
        x = _add(x, cycle(A, M, b, x, u, beta, restart, ptol, dt))
        u, beta = _unit(M(_sub(b, A(x))))
        return x, k + 1, u, beta
    return lax.while_loop(going, step, (x0, 0, u, beta))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solve `A x = b` by restarted GMRES (Krylov spaces of dimension `restart`, at most
    `maxiter` restarts); -> (x, info) with info -1 when x holds NaN, else 0, as in JAX.
    `solve_method`: "batched" (default: the least-squares problem solved once per restart)
    or "incremental" (Givens rotations, stopping inside a restart once converged).

    >>> x, info = gmres(xnp.array([[4.0, 1.0], [2.0, 3.0]]), xnp.ones(2), tol=1e-10)
    """
    cycle = {"batched": _gmres_batched, "incremental": _gmres_incremental}.get(solve_method)
    if cycle is None:
        raise ValueError(f"gmres: invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")
    A, b, x0, M, maxiter, size = _prepare("gmres", A, b, x0, M, maxiter)
    restart = min(restart, size)
    b_norm = _norm(b)
    atol = xnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * xnp.minimum(1.0, atol / b_norm)   # (incremental's inner test)

    def solve(matvec, rhs):
        return _gmres_iterate(matvec, rhs, x0, atol=atol, ptol=ptol, restart=restart,
                              maxiter=maxiter, M=M, cycle=cycle)
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    return x, xnp.where(xnp.isnan(_norm(x)), -1, 0)


__all__ = ["cg", "bicgstab", "gmres"]
