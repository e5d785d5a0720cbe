"""`xforms.scipy.linalg` (jax.scipy.linalg): SciPy's signatures over the factorisation
primitives, batched over leading dims where JAX batches them.  Matrix functions (expm,
solve_sylvester, block_diag) are in linalg_functions.py, polar, schur, funm and the
other decompositions in linalg_decompositions.py, the special-matrix constructors
(toeplitz, hankel, circulant, pascal, ...) in matrices.py.

    >>> import xforms.scipy.linalg as xsl
    >>> x = xsl.solve_triangular(L, b, lower=True)
"""
import numpy as np

from ..numpy import linalg as _nl
from ..primitives.operands import aval as _aval, broadcast_to as _bcast, returns_arrays as _returns
from ..numpy.linalg.decompositions import matrix_operand as _matrix
from ..numpy.linalg.products import matmul as _matmul
from ..numpy.linalg.solves import promote_keep, lu_solve_core as _lu_solve_core
from ..numpy.manipulation.shapes import expand_dims as _expand, squeeze as _squeeze
from ..primitives.linalg import factor as _pl
from ..primitives import elementwise as _ew
from ..primitives.linalg.batched import eye_like as _eye_like, h as _h, mT as _mT, tril as _tril
from ..primitives.linalg.batched import triu as _triu
from ..core.avals import broadcast_shapes as _bshapes
from .linalg_decompositions import (eigh_tridiagonal, expm_frechet, funm, hessenberg, polar,
                                    qr_multiply, rsf2csf, schur)
from .linalg_functions import block_diag, expm, solve_sylvester, sqrtm
from .matrices import (circulant, companion, convolution_matrix, dft, fiedler, fiedler_companion,
                       hadamard, hankel, helmert, hilbert, invhilbert, invpascal, leslie, pascal,
                       toeplitz)

_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}


def _trans(name, trans):
    if trans not in _TRANS:
        raise ValueError(f"{name}: trans must be 0/'N', 1/'T' or 2/'C', got {trans!r}")
    return _TRANS[trans]


def _rhs(name, a, b):
    """Line up b with the matrices a (..., n, n): b is (..., n) (a vector, when it has one
    dim fewer than a) or (..., n, k); -> (a, b as matrices, was it a vector)."""
    a, b = promote_keep(a, _nl_float(b), name)
    sa, sb = _aval(a).shape, _aval(b).shape
    n = sa[-1]
    vec = len(sb) == len(sa) - 1
    if vec:
        b = _expand(b, -1)
        sb = _aval(b).shape
    if len(sb) < 2 or sb[-2] != n:
        raise ValueError(f"{name}: a {sa} and b {_aval(b).shape if not vec else sb[:-1]} do "
                         f"not match (b must be (..., {n}) or (..., {n}, k))")
    batch = _bshapes(sa[:-2], sb[:-2], op=name)
    return _bcast(a, batch + (n, n)), _bcast(b, batch + sb[-2:]), vec


def _nl_float(x):
    from ..primitives.operands import asarray_operand, float_of
    return float_of(asarray_operand(x))


def _unvec(x, vec):
    return _squeeze(x, -1) if vec else x


@_returns
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """x with op(a) x = b for triangular a (only its `lower`/upper triangle is read);
    op per `trans`: 0/'N' a, 1/'T' a^T, 2/'C' a^H.  A zero pivot gives inf/NaN."""
    t = _trans("solve_triangular", trans)
    a = _matrix("solve_triangular", a)
    a, b, vec = _rhs("solve_triangular", a, b)
    x = _pl.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=t > 0,
                             conjugate_a=t == 2, unit_diagonal=unit_diagonal)
    return _unvec(x, vec)


@_returns
def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor read from a's lower (or upper) triangle: L, or U = L^H (default)."""
    a = _matrix("cholesky", a)
    if lower:
        return _pl.cholesky(a)
    return _h(_pl.cholesky(_h(a)))


@_returns
def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower): the factor for cho_solve (zeros in the other triangle)."""
    return cholesky(a, lower=lower), lower


@_returns
def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a x = b from cho_factor's (c, lower)."""
    c, lower = c_and_lower
    c = _matrix("cho_solve", c)
    c, b, vec = _rhs("cho_solve", c, b)
    if lower:       # L L^H x = b
        y = _pl.triangular_solve(c, b, left_side=True, lower=True)
        x = _pl.triangular_solve(c, y, left_side=True, lower=True, transpose_a=True,
                                 conjugate_a=True)
    else:           # U^H U x = b
        y = _pl.triangular_solve(c, b, left_side=True, lower=False, transpose_a=True,
                                 conjugate_a=True)
        x = _pl.triangular_solve(c, y, left_side=True, lower=False)
    return _unvec(x, vec)


@_returns
def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u (or (p @ l, u) with permute_l); a is (..., m, n), l is
    (..., m, k) and u (..., k, n) with k = min(m, n).

    >>> p, l, u = xf.scipy.linalg.lu(np.array([[1., 2., 3.], [4., 5., 6.]]))
    """
    a = _matrix("lu", a, square=False)
    m, n = _aval(a).shape[-2:]
    k = min(m, n)
    lu_, _, perm = _pl.lu(a)
    l = _ew.add(_tril(lu_[..., :k], -1), _eye_like(lu_[..., :k]))
    u = _triu(lu_[..., :k, :])
    # real as JAX's (float64 for complex128): a permutation has no imaginary part
    p = _mT(_pl.permutation_matrix(perm, np.finfo(_aval(a).dtype).dtype))
    if permute_l:
        return _matmul(p, l), u
    return p, l, u


@_returns
def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv): packed L and U, zero-based row interchanges (LAPACK's getrf); a is
    (..., m, n)."""
    lu_, piv, _ = _pl.lu(_matrix("lu_factor", a, square=False))
    return lu_, piv


@_returns
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with op(a) x = b from lu_factor's (lu, piv)."""
    t = _trans("lu_solve", trans)
    lu_, piv = lu_and_piv
    lu_ = _matrix("lu_solve", lu_)
    lu_, b, vec = _rhs("lu_solve", lu_, b)
    piv = _bcast(piv, _aval(lu_).shape[:-1]) if _aval(piv).ndim else piv
    perm = _pl.lu_pivots_to_permutation(piv.astype(np.int32) if _aval(piv).dtype != np.int32
                                        else piv, _aval(lu_).shape[-1])
    return _unvec(_lu_solve_core(lu_, perm, b, t), vec)


@_returns
def det(a, overwrite_a=False, check_finite=True):
    return _nl.det(a)


@_returns
def inv(a, overwrite_a=False, check_finite=True):
    return _nl.inv(a)


@_returns
def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """x with a x = b; assume_a 'pos' uses Cholesky (reading the `lower`/upper triangle),
    the others LU.  b is (..., n) or (..., n, k)."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos', got "
                         f"{assume_a!r}")
    a = _matrix("solve", a)
    a, b, vec = _rhs("solve", a, b)
    if assume_a == "pos":
        return _unvec(cho_solve(cho_factor(a, lower=lower), b), vec)
    return _unvec(_nl.solve(a, b), vec)


@_returns
def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):
    """Eigenvalues w (ascending) and eigenvectors v of Hermitian a: (w, v), or w with
    eigvals_only.  As JAX's (lax.linalg.eigh's default), a is symmetrised, (a + a^H) / 2,
    before its `lower` (or upper) triangle is read: SciPy reads the triangle alone, which
    differs for a non-Hermitian a.

        >>> w, v = eigh(xnp.array([[2.0, 1.0], [1.0, 2.0]]))     # w = [1, 3]
    """
    if b is not None or type != 1 or eigvals is not None:
        raise NotImplementedError("eigh: the generalized problem (b, type, eigvals) is not "
                                  "provided by xforms")
    w, v = _nl.eigh(a, UPLO="L" if lower else "U", symmetrize_input=True)
    return w if eigvals_only else (w, v)


@_returns
def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """(u, s, vh) with a = u diag(s) vh, or s without compute_uv."""
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    if not compute_uv:
        return _nl.svd(a, compute_uv=False)
    u, s, vh = _nl.svd(a, full_matrices=full_matrices)
    return u, s, vh


@_returns
def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """(q, r) for mode 'full' (complete) or 'economic' (reduced); (r,) for mode 'r'."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not provided by xforms")
    if mode not in ("full", "economic", "r"):
        raise (NotImplementedError if mode == "raw" else ValueError)(
            f"qr: mode {mode!r} is not supported (use 'full', 'economic' or 'r')")
    q, r = _nl.qr(a, mode="reduced" if mode == "economic" else "complete")
    return (r,) if mode == "r" else (q, r)


__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv",
           "lu", "lu_factor", "lu_solve", "qr", "solve", "solve_sylvester",
           "solve_triangular", "sqrtm", "svd", "circulant", "companion", "convolution_matrix",
           "dft", "fiedler", "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert",
           "invhilbert", "invpascal", "leslie", "pascal", "toeplitz", "eigh_tridiagonal",
           "expm_frechet", "funm", "hessenberg", "polar", "qr_multiply", "rsf2csf", "schur"]
