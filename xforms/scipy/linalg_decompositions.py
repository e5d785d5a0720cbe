"""Decompositions of `xforms.scipy.linalg` beyond the factorisations of linalg.py: polar,
expm_frechet, eigh_tridiagonal, qr_multiply (composed from svd, expm, eigh and qr, so they
differentiate, batch and compile), schur and hessenberg (primitives, fast tier only:
xforms/primitives/linalg/schur.py), and rsf2csf and funm on top of schur.

    >>> u, p = xsl.polar(a)                 # a == u @ p, p positive semidefinite
"""
import numpy as np

from .. import numpy as xnp
from ..api import jvp
from ..primitives.operands import aval as _aval, float_of as _float_of, returns_arrays as _returns
from ..primitives.operands import asarray_operand as _operand
from ..numpy.linalg.decompositions import matrix_operand as _matrix
from ..lax import linalg as _lax_linalg
from ..primitives.linalg import schur as _ps
from .linalg_functions import expm


def _h(x):
    return xnp.conj(xnp.swapaxes(x, -1, -2))


@_returns
def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """(u, p) with a = u p (side "right", p (..., n, n)) or a = p u (side "left", p
    (..., m, m)); u has orthonormal columns (rows when n > m), p is positive semidefinite.
    Both methods are computed from the SVD a = U S V^H (u = U V^H): the factors are unique
    for full-rank a, so "qdwh" gives JAX's QDWH result to rounding; eps and max_iterations
    (QDWH's) are accepted and unused.

        >>> u, p = polar(xnp.array([[1., 2.], [3., 4.]]))
    """
    a = _matrix("polar", a, square=False)
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: unknown method {method!r} (use 'qdwh' or 'svd')")
    u, s, vh = xnp.linalg.svd(a, full_matrices=False)
    s = s.astype(_aval(a).dtype)
    unitary = xnp.matmul(u, vh)
    if side == "right":
        return unitary, xnp.matmul(_h(vh) * s[..., None, :], vh)
    return unitary, xnp.matmul(u * s[..., None, :], _h(u))


@_returns
def expm_frechet(A, E, *, method=None, compute_expm=True):
    """(expm(A), L(A, E)) or, without compute_expm, L(A, E): the Frechet derivative of expm
    at A in the direction E, as JAX computes it (the jvp of expm; method is unused).

        >>> ea, l = expm_frechet(a, e)
    """
    a, e = _matrix("expm_frechet", A), _matrix("expm_frechet", E)
    if _aval(a).shape != _aval(e).shape:
        raise ValueError(f"expm_frechet: expected A and E of the same shape, got "
                         f"{_aval(a).shape} and {_aval(e).shape}")
    e = e.astype(xnp.result_type(a, e))
    ea, l = jvp(expm, (a.astype(_aval(e).dtype),), (e,))
    return (ea, l) if compute_expm else l


def _select(name, n, select, select_range):
    """The (first, last + 1) eigenvalue indices of JAX's select 'a' / 'i'."""
    if select == "a":
        return 0, n
    if select == "i":
        if select_range is None:
            raise ValueError(f"{name}: select='i' needs select_range=(lo, hi)")
        lo, hi = (int(i) for i in select_range)
        if lo > hi:
            raise ValueError(f"{name}: empty index range select_range={select_range!r}")
        return lo, hi + 1
    if select == "v":
        raise NotImplementedError(f"{name}: select='v' is not implemented (as in JAX: the "
                                  "number of eigenvalues would be data dependent); use 'i'")
    raise ValueError(f"{name}: select must be 'a', 'i' or 'v', got {select!r}")


@_returns
def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
    """Eigenvalues (ascending) and, without eigvals_only, eigenvectors (as columns) of the
    Hermitian tridiagonal matrix with diagonal d (n,) and superdiagonal e (n - 1,) (its
    conjugate below).  Computed by eigh of the assembled matrix, so it also differentiates;
    tol and key (JAX's bisection tolerance and inverse-iteration seed) are unused.

        >>> w = eigh_tridiagonal(xnp.array([1., 2.]), xnp.array([1.]), eigvals_only=True)
    """
    d, e = _float_of(_operand(d)), _float_of(_operand(e))
    n = _aval(d).shape[0] if _aval(d).ndim == 1 else -1
    if n < 1 or _aval(e).shape != (n - 1,):
        raise ValueError(f"eigh_tridiagonal: expected d of shape (n,) and e of shape (n - 1,), "
                         f"got {_aval(d).shape} and {_aval(e).shape}")
    lo, hi = _select("eigh_tridiagonal", n, select, select_range)
    dt = xnp.result_type(d, e)
    t = (xnp.diag(xnp.real(d)).astype(dt) + xnp.diag(e.astype(dt), 1)
         + xnp.diag(xnp.conj(e).astype(dt), -1))
    w, v = xnp.linalg.eigh(t)
    return w[lo:hi] if eigvals_only else (w[lo:hi], v[:, lo:hi])


@_returns
def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """(Q @ c, R) (mode "left", c (..., k, p) with k = min(m, n)) or (c @ Q, R) (mode
    "right", c (..., p, m)) of a's reduced QR (m, n); conjugate uses conj(Q).  A 1-D c is a
    column (left) or a row (right), and the product comes back 1-D.

        >>> qc, r = qr_multiply(a, b)        # Q^T b as a row, and R: least squares
    """
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True is not provided by xforms")
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    a = _matrix("qr_multiply", a, square=False)
    c = _float_of(_operand(c))
    dt = xnp.result_type(a, c)
    a, c = a.astype(dt), c.astype(dt)
    onedim = _aval(c).ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = _aval(a).shape[-2:]
    k, ax = min(m, n), (-2 if mode == "left" else -1)
    want = k if mode == "left" else m
    if _aval(c).ndim < 2 or _aval(c).shape[ax] != want:
        raise ValueError(f"qr_multiply: a {_aval(a).shape} has Q of shape ({m}, {k}), which "
                         f"does not fit c {_aval(c).shape} in mode {mode!r}")
    q, r = xnp.linalg.qr(a, mode="reduced")
    q = xnp.conj(q) if conjugate else q
    out = xnp.matmul(q, c) if mode == "left" else xnp.matmul(c, q)
    return (xnp.ravel(out) if onedim else out), r


@_returns
def schur(a, output="real"):
    """(T, Z) with a = Z T Z^H: T quasi-upper-triangular (output "real", 2x2 blocks for the
    complex pairs of a real matrix) or upper triangular ("complex").  Not differentiable and
    not compiled (jit's fast tier runs it), as JAX runs it on the CPU only.

        >>> t, z = schur(xnp.array([[1., 2.], [-3., 1.]]))
    """
    if output not in ("real", "complex"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    return tuple(_ps.schur(_matrix("schur", a), output=output))


@_returns
def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """H, or (H, Q) with calc_q, where a = Q H Q^H and H is zero below the first
    subdiagonal: formed from lax.linalg.hessenberg's packed reduction, as JAX forms it.
    Not differentiable (as in JAX); a matrix with a non-finite entry gives NaNs.

        >>> h = hessenberg(xnp.ones((3, 3)))
    """
    a = _matrix("hessenberg", a)
    shape, dt = _aval(a).shape, _aval(a).dtype
    if shape[-1] == 0:
        return (xnp.zeros_like(a), xnp.zeros_like(a)) if calc_q else xnp.zeros_like(a)
    packed, taus = _ps.hessenberg(a)
    # triu selects, as JAX: zeros below the subdiagonal whatever the reduction holds there
    # (a 0/1 mask's product made them NaN, and a complex nan+0j subdiagonal nan+nanj)
    h = xnp.triu(packed, -1)
    if not calc_q:
        return h
    q = _lax_linalg.householder_product(packed[..., 1:, :-1], taus)
    q = xnp.pad(q, [(0, 0)] * (len(shape) - 2) + [(1, 0), (1, 0)])
    return h, q.at[..., 0, 0].set(1)


def _givens_step(t, z, m, eps):
    """One step of rsf2csf: the rotation G that zeroes T[m, m-1] of a 2x2 block, applied to
    rows m-1, m and columns m-1, m of T and to Z's columns; T is kept where T[m, m-1] is
    already negligible."""
    p, q = t[..., m - 1, m - 1], t[..., m, m]
    b, s = t[..., m - 1, m], t[..., m, m - 1]
    half = (p - q) / 2
    mu = half + xnp.sqrt(half * half + b * s)        # the block's first eigenvalue - q
    r = xnp.sqrt(xnp.abs(mu) ** 2 + xnp.abs(s) ** 2).astype(t.dtype)
    keep = ~(xnp.abs(s) > eps * (xnp.abs(p) + xnp.abs(q)))
    r = xnp.where(keep, 1, r)
    c, s = mu / r, s / r
    g = xnp.stack([xnp.stack([xnp.conj(c), s], -1), xnp.stack([-s, c], -1)], -2)
    gh = _h(g)
    t2 = t.at[..., m - 1:m + 1, m - 1:].set(xnp.matmul(g, t[..., m - 1:m + 1, m - 1:]))
    t2 = t2.at[..., :m + 1, m - 1:m + 1].set(xnp.matmul(t2[..., :m + 1, m - 1:m + 1], gh))
    z2 = z.at[..., :, m - 1:m + 1].set(xnp.matmul(z[..., :, m - 1:m + 1], gh))
    kk = keep[..., None, None]
    return xnp.where(kk, t, t2).at[..., m, m - 1].set(0), xnp.where(kk, z, z2)


@_returns
def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form (T, Z) from the real one (schur's output "real"), by a Givens
    rotation per 2x2 block, bottom up, as SciPy and JAX do.

        >>> tc, zc = rsf2csf(*schur(a))
    """
    t, z = _matrix("rsf2csf", T), _matrix("rsf2csf", Z)
    if _aval(t).shape[-1] != _aval(z).shape[-1]:
        raise ValueError(f"rsf2csf: T {_aval(t).shape} and Z {_aval(z).shape} do not match")
    dt = np.result_type(_aval(t).dtype, _aval(z).dtype, np.complex64)
    shape = xnp.broadcast_shapes(_aval(t).shape, _aval(z).shape)
    t, z = xnp.broadcast_to(t.astype(dt), shape), xnp.broadcast_to(z.astype(dt), shape)
    eps = float(np.finfo(dt).eps)
    for m in range(shape[-1] - 1, 0, -1):
        t, z = _givens_step(t, z, m, eps)
    return t, z


@_returns
def funm(A, func, disp=True):
    """func applied to the square matrix A through its complex Schur form A = Z T Z^H and
    Parlett's recurrence F T = T F (Golub & Van Loan, Algorithm 11.1.1), one superdiagonal
    at a time; complex result, as JAX's.  With disp=False also an error estimate.

        >>> funm(xnp.array([[1., 2.], [3., 4.]]), xnp.exp)    # ~ expm (complex)
    """
    a = _matrix("funm", A)
    if _aval(a).ndim != 2:
        raise ValueError(f"funm: expected one square matrix (n, n), got {_aval(a).shape}")
    t, z = rsf2csf(*schur(a))
    n = _aval(t).shape[-1]
    diag = xnp.diagonal(t)
    f = xnp.diag(func(diag).astype(t.dtype))
    minden = xnp.abs(t[0, 0])
    for p in range(1, n):
        # with F filled below superdiagonal p, (T F - F T)[i, i + p] is the recurrence's sum
        s = xnp.diagonal(xnp.matmul(t, f) - xnp.matmul(f, t), p)
        den = diag[p:] - diag[:-p]
        f = f + xnp.diag(xnp.where(den != 0, s / xnp.where(den != 0, den, 1), s), p)
        minden = xnp.minimum(minden, xnp.min(xnp.abs(den)))
    f = xnp.matmul(xnp.matmul(z, f), _h(z))
    if disp:
        return f
    return f, _funm_error(f, t, minden)


def _funm_error(f, t, minden):
    """JAX's estimate: min(1, max(tol, tol / minden * |triu(T, 1)|_1)), inf if F has inf."""
    tol = float(np.finfo(f.dtype).eps)
    minden = xnp.where(minden == 0, tol, minden)
    est = xnp.minimum(1, xnp.maximum(tol, tol / minden * xnp.linalg.norm(xnp.triu(t, 1), 1)))
    return xnp.where(xnp.any(xnp.isinf(f)), np.inf, est)


__all__ = ["eigh_tridiagonal", "expm_frechet", "funm", "hessenberg", "polar", "qr_multiply",
           "rsf2csf", "schur"]
