"""`xforms.lax.linalg`: JAX's lax-level linear algebra (jax.lax.linalg), with JAX's names,
keyword arguments and output order, on the factorisation primitives of
xforms/primitives/linalg*.py -- so differentiable, batchable and compiled like them.

    >>> v, w = lax.linalg.eigh(a)             # eigenvectors first, as in JAX
    >>> lu, pivots, perm = lax.linalg.lu(a)

Differences from JAX are NotImplementedErrors naming the option: qr(pivoting=True),
eigh/svd(subset_by_index), and the factorisations xforms has no primitive for
(tridiagonal, qdwh). JAX's primitive objects (`lax.linalg.lu_p`, ...) and implementation
enums (EighImplementation, ...) are at the end.
"""
import enum

import numpy as np

from ..core.registry import lookup
from ..numpy.creation import constructors as _cr, matrices as _mx
from ..numpy.elementwise import ufuncs as _uf
from ..numpy.linalg import norms as _ln, products as _lo, solves as _ls
from ..numpy.manipulation import shapes as _ma
from ..numpy.reductions import aggregates as _rd
from ..primitives.linalg import factor as _pl
from ..primitives.linalg import spectral as _ps
from ..primitives.linalg import schur as _schur
from ..primitives.linalg.batched import h
from ..primitives.operands import aval, broadcast_to
from ..numpy.linalg import decompositions as _decomp
from ..numpy.linalg.decompositions import matrix_operand, symmetrize
from . import scan

lu_pivots_to_permutation = _pl.lu_pivots_to_permutation


def cholesky(x, *, symmetrize_input=True):
    """Lower Cholesky factor; with symmetrize_input=False only the lower triangle is read.
    NaNs where x is not positive definite."""
    a = matrix_operand("cholesky", x)
    return _pl.cholesky(symmetrize(a) if symmetrize_input else a)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """x with op(a) x = b (left_side) or x op(a) = b, a triangular (only its `lower` or upper
    triangle is read)."""
    a = matrix_operand("triangular_solve", a)
    b = _cr.asarray(b).astype(aval(a).dtype)
    return _pl.triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal)


def lu(x):
    """-> (lu, pivots, permutation): L (unit, strictly below) and U packed in `lu`, LAPACK's
    zero-based row interchanges and the permutation with x[permutation] = L @ U; x is
    (..., m, n), with min(m, n) pivots."""
    return tuple(_pl.lu(matrix_operand("lu", x, square=False)))


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """-> (q, r) by Householder reflections."""
    if pivoting:
        raise NotImplementedError("lax.linalg.qr: pivoting=True (column-pivoted QR) is not "
                                  "supported by xforms")
    return tuple(_ps.qr(matrix_operand("qr", x, square=False), full_matrices=full_matrices))


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None):
    """-> (v, w): eigenvectors (columns) and ascending eigenvalues of Hermitian x."""
    if subset_by_index is not None:
        raise NotImplementedError("lax.linalg.eigh: subset_by_index is not supported by xforms")
    a = matrix_operand("eigh", x)
    v, w = _ps.eigh(symmetrize(a) if symmetrize_input else a, lower=lower)
    return v, w              # LAPACK's ascending order: sort_eigenvalues changes nothing


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """-> (u, s, vh), or s alone with compute_uv=False; s descending (xnp.linalg.svd's)."""
    out = _decomp.svd(x, full_matrices=full_matrices, compute_uv=compute_uv,
                      subset_by_index=subset_by_index)
    return tuple(out) if compute_uv else out


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):
    """-> [w, vl, vr] (the vectors asked for): eigenvalues and unit eigenvectors, complex.

    Left eigenvectors (vl^H x = w vl^H) are the columns of inv(vr)^H, each scaled to unit
    norm with its largest component real, LAPACK's convention."""
    a = matrix_operand("eig", x)
    want_vr = compute_left_eigenvectors or compute_right_eigenvectors
    outs = _ps.eig(a, vectors=want_vr, vector_derivs=enable_eigvec_derivs)
    w = outs[0]
    result = [w]
    if compute_left_eigenvectors:
        result.append(_left_vectors(outs[1]))
    if compute_right_eigenvectors:
        result.append(outs[1])
    return result


def _left_vectors(vr):
    vl = h(_ls.inv(vr))
    vl = vl / _ln.norm(vl, axis=-2, keepdims=True)
    n = aval(vl).shape[-1]
    big = _rd.argmax(_uf.abs(vl), axis=-2)                          # per column
    pick = big[..., None, :] == _cr.arange(n)[:, None]
    top = _rd.sum(_uf.where(pick, vl, 0), axis=-2)                  # the largest component
    phase = _uf.conj(top) / _uf.abs(top)
    return vl * phase[..., None, :]


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """Solve the tridiagonal systems with sub-, main and super-diagonals dl, d, du (each
    (..., m); dl[..., 0] and du[..., -1] unused) for b (..., m, n), by the Thomas algorithm
    (no pivoting: LAPACK's gtsv pivots, so nearly singular systems may differ)."""
    if perturb_singular:
        raise NotImplementedError("lax.linalg.tridiagonal_solve: perturb_singular=True is not "
                                  "supported by xforms")
    dl, d, du, b = (_cr.asarray(v) for v in (dl, d, du, b))
    mv = lambda v: _ma.moveaxis(v, -1, 0)                   # noqa: E731  (scan over m)

    def forward(carry, row):
        c_prev, y_prev = carry
        l, dd, u, bb = row
        denom = dd - l * c_prev
        c = u / denom
        y = (bb - l[..., None] * y_prev) / denom[..., None]
        return (c, y), (c, y)
    m0 = (_cr.zeros_like(d[..., 0]), _cr.zeros_like(b[..., 0, :]))
    _, (cs, ys) = scan(forward, m0, (mv(dl), mv(d), mv(du), _ma.moveaxis(b, -2, 0)))

    def backward(x_next, row):
        c, y = row
        x = y - c[..., None] * x_next
        return x, x
    _, xs = scan(backward, _cr.zeros_like(b[..., 0, :]), (cs, ys), reverse=True)
    return _ma.moveaxis(xs, 0, -2)


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """alpha * a @ a^T + beta * c (a symmetric rank-k update), optionally symmetrised."""
    a, c = _cr.asarray(a_matrix), _cr.asarray(c_matrix)
    out = alpha * _lo.matmul(a, _ma.swapaxes(a, -1, -2)) + beta * c
    if symmetrize_output:
        lower = _mx.tril(out)
        out = lower + _ma.swapaxes(_mx.tril(out, -1), -1, -2)
    return out


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of R^H R + w w^H, given the upper factor R (O(n^3): it
    refactors rather than applying Givens rotations)."""
    r, w = _cr.asarray(r_matrix), _cr.asarray(w_vector)
    a = _lo.matmul(h(r), r) + _uf.conj(w)[..., :, None] * w[..., None, :]
    return h(_pl.cholesky(a))


def householder_product(a, taus):
    """Q = H_0 H_1 ... H_{k-1}, H_i = I - tau_i v_i v_i^H, v_i the i-th column of `a` below the
    diagonal with a unit at i (LAPACK's orgqr/ungqr): the (m, n) leading columns of Q.

        >>> q = householder_product(a, taus)      # a (m, n), taus (k,), k <= n <= m
    """
    a, taus = _cr.asarray(a), _cr.asarray(taus)
    m, n = aval(a).shape[-2:]
    eye = broadcast_to(_cr.eye(m, n, dtype=aval(a).dtype), aval(a).shape)
    return _apply_reflectors(a, taus, eye, adjoint=False, trailing=True)


def ormqr(a, taus, c, *, left=True, transpose=False):
    """Q @ c (left), c @ Q (not left), or with Q^H for transpose (the conjugate transpose for
    complex types), Q = H_0 ... H_{k-1} from the Householder vectors below the diagonal of a
    (m, k) and taus (k,) (LAPACK's ormqr/unmqr), without forming Q.

        >>> qc = ormqr(a, taus, c)                # == householder_product(a', taus) @ c
    """
    a, taus, c = _cr.asarray(a), _cr.asarray(taus), _cr.asarray(c)
    m = aval(a).shape[-2]
    side, rows = ("left", -2) if left else ("right", -1)
    if aval(c).ndim < 2 or aval(c).shape[rows] != m:
        raise ValueError(f"lax.linalg.ormqr: with left={left} c must have {m} "
                         f"{'rows' if left else 'columns'} (the rows of the Householder "
                         f"matrix a {aval(a).shape}); got c of shape {aval(c).shape} ({side})")
    dts = [aval(x).dtype for x in (a, taus, c)]
    if len(set(dts)) > 1:
        raise TypeError(f"lax.linalg.ormqr: a, taus and c must have one dtype, as in JAX; got "
                        f"{', '.join(map(str, dts))} (cast them with .astype first)")
    if left:
        return _apply_reflectors(a, taus, c, adjoint=transpose)
    # c Q = (Q^H c^H)^H and c Q^H = (Q c^H)^H
    return h(_apply_reflectors(a, taus, h(c), adjoint=not transpose))


def _apply_reflectors(a, taus, c, *, adjoint, trailing=False):
    """Q c, or Q^H c with adjoint, Q = H_0 ... H_{k-1} from the columns of `a` below its
    diagonal (a unit on it) and taus: Q c applies H_{k-1} first, Q^H c applies H_0^H first
    (H_i^H = I - conj(tau_i) v_i v_i^H).  With `trailing` (c the identity: forming Q), H_i
    changes only c[i:, i:], as LAPACK's orgqr: elsewhere it is the identity's rows and
    columns already, and a NaN in a later reflector stays out of the earlier columns."""
    m, n = aval(a).shape[-2:]
    k = aval(taus).shape[-1]
    v = _mx.tril(a, -1) + _cr.eye(m, n, dtype=aval(a).dtype)
    t = _uf.conj(taus) if adjoint else taus
    rows, cols = np.arange(aval(c).shape[-2])[:, None], np.arange(aval(c).shape[-1])
    for i in (range(k) if adjoint else reversed(range(k))):
        vi = v[..., :, i]
        proj = _rd.sum(_uf.conj(vi)[..., :, None] * c, axis=-2)           # v^H c
        new = c - t[..., i, None, None] * vi[..., :, None] * proj[..., None, :]
        c = _uf.where((rows >= i) & (cols >= i), new, c) if trailing else new
    return c


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """-> [t, z] (or [t] without compute_schur_vectors), x = z t z^H: the real Schur form of a
    real x (quasi-triangular, 2x2 blocks for complex pairs), the complex one of a complex x.
    As in JAX, select_callable only matters with sort_eig_vals, which JAX does not implement
    either (NotImplementedError); not differentiable.

        >>> t, z = schur(a)
    """
    if sort_eig_vals:
        raise NotImplementedError("lax.linalg.schur: sort_eig_vals=True (LAPACK gees's "
                                  "sorting) is not implemented, as in JAX")
    t, z = _schur.schur(matrix_operand("schur", x), output="real")
    return [t, z] if compute_schur_vectors else [t]


def hessenberg(a):
    """-> [a_out, taus]: LAPACK gehrd's packed Hessenberg reduction a = Q H Q^H: H is a_out on
    and above its first subdiagonal, Q = H_0 ... H_{n-2} with the Householder vectors below
    it (householder_product(a_out[..., 1:, :-1], taus), bordered by a unit row and column,
    as scipy.linalg.hessenberg(calc_q=True) forms it); taus (..., n - 1).  Not
    differentiable, as in JAX.

        >>> a_out, taus = hessenberg(a)
    """
    return list(_schur.hessenberg(matrix_operand("hessenberg", a)))


def _missing(name):
    def f(*args, **kwargs):
        raise NotImplementedError(f"lax.linalg.{name} is not supported by xforms (no "
                                  "primitive for this factorisation yet)")
    f.__name__ = f.__qualname__ = name
    return f


tridiagonal = _missing("tridiagonal")
qdwh = _missing("qdwh")


# ---- JAX's implementation choices and primitive objects -------------------------------------
class EigImplementation(enum.Enum):
    """jax's choice of eig kernel; accepted, and xforms runs LAPACK's geev (NumPy's) on CPU."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """jax's choice of eigh algorithm; accepted, and xforms runs LAPACK's (or, on a GPU
    without cuSOLVER, its Jacobi kernel): the values agree to rounding."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """jax's choice of SVD algorithm; accepted, and xforms runs LAPACK's gesdd on CPU."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


# bind(*operands, **params) as jax 0.10.2's: same parameters, same values
lu_p, hessenberg_p = lookup("lu"), lookup("hessenberg")
triangular_solve_p = lookup("triangular_solve")
lu_pivots_to_permutation_p = lookup("lu_pivots_to_permutation")
# the objects xforms' programs hold, whose bind takes xforms' parameters (eqn.params):
# eigh (lower), eig (vectors, vector_derivs), svd (full_matrices, compute_uv), qr
# (full_matrices), schur (output); cholesky's zeroes the upper triangle JAX leaves unset
cholesky_p, eigh_p, eig_p = lookup("cholesky"), lookup("eigh"), lookup("eig")
svd_p, qr_p, schur_p = lookup("svd"), lookup("qr"), lookup("schur")


def __getattr__(name):
    """jax.lax.linalg's primitive objects xforms has no primitive for: absent to hasattr, and
    the AttributeError says why."""
    if name.endswith("_p"):
        raise AttributeError(
            f"xforms.lax.linalg has no {name}: xforms has no primitive of that name (the "
            f"function, where xforms has it, is built from other primitives)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
