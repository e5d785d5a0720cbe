"""Factorisation primitives, part 1: cholesky, triangular_solve, lu.  Each acts on a batch of
matrices (..., m, n): the leading dims are batch dims, so the batching rule only moves the
mapped axis to the front.  Spectral ones (qr, eigh, svd) are in spectral.py.

Semantics follow JAX's lax.linalg: `cholesky` reads the lower triangle and gives NaNs (no
exception) where the matrix is not positive definite; `triangular_solve` reads one triangle
of `a`; `lu` returns (lu, pivots, permutation) with zero-based int32 pivots.  The CPU
lowering is xforms/kernels/ops/linalg/factor.py (LAPACK/BLAS called from Numba); CUDA has none.

    >>> L = cholesky(a); x = triangular_solve(L, b, left_side=True, lower=True)
"""
import warnings

import numpy as np

from ...core import trace as core
from ...core.avals import ShapedArray
from ...core.trace import abstract_eval_rules, impl_rules
from ...transforms.jvp import Zero, jvp_rules, linear_primitives, tangent_aval
from ...transforms.transpose import is_undefined, transpose_rules
from ...transforms.vmap import bdim_to_front, vmap_rules
from .. import elementwise as ew
from ...core.facts import declare
from ...core.registry import exempt, primitive
from .batched import (check_matrix, const_like, dtype, eye_like, h, mm, mT, conj, nan_like, shape,
                      to_dtype, tril, triu)


def batch_to_front(args, dims):
    """Move every operand's batch axis to the front (broadcasting unbatched ones)."""
    size = next(core.get_aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
    return [bdim_to_front(x, d, size) for x, d in zip(args, dims)]


def def_batched_vmap(prim):
    """Primitives over (..., m, n) operands with equal leading dims: the mapped axis becomes
    one more leading dim of every operand and result."""
    def rule(args, dims, **params):
        outs = prim.bind(*batch_to_front(args, dims), **params)
        outs = outs if prim.multiple_results else [outs]
        return outs, [0] * len(outs)
    vmap_rules[prim] = rule


# ---- cholesky ------------------------------------------------------------------------------
cholesky_p = declare(primitive("cholesky"), eager_work="matrix")


def _cholesky_aval(a):
    check_matrix("cholesky", a)
    return [ShapedArray(a.shape, a.dtype)]


def _cholesky_impl(a):
    a = np.asarray(a)
    low = np.tril(a)
    full = low + np.conj(np.swapaxes(np.tril(a, -1), -1, -2))    # lower triangle only
    try:
        return [np.linalg.cholesky(full)]
    except np.linalg.LinAlgError:
        out = np.empty_like(full)
        for idx in np.ndindex(full.shape[:-2]):
            try:
                out[idx] = np.linalg.cholesky(full[idx])
            except np.linalg.LinAlgError:      # JAX: NaN in the lower triangle, zeros above
                out[idx] = np.tril(nan_like(full[idx]))
        return [out]


def cholesky(a):
    return cholesky_p.bind(a)


abstract_eval_rules[cholesky_p] = _cholesky_aval
impl_rules[cholesky_p] = _cholesky_impl
# cholesky's jvp: cholesky_ad.py (its tangent and cotangent maps are primitives)
def_batched_vmap(cholesky_p)


# ---- triangular_solve (left side; the right side is a transpose of it) -----------------------
triangular_solve_p = declare(primitive("triangular_solve"), eager_work="matrix")


def _tri_aval(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    check_matrix("triangular_solve", a)
    m = a.shape[-1]
    if (b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]
            or b.shape[-2 if left_side else -1] != m):
        want = f"(..., {m}, k)" if left_side else f"(..., k, {m})"
        raise TypeError(f"triangular_solve: a {a.shape} and b {b.shape} must be (..., {m}, {m}) "
                        f"and {want} with equal batch dims")
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve: a and b must have equal dtypes, got {a.dtype} and "
                        f"{b.dtype}")
    return [ShapedArray(b.shape, b.dtype)]


def tri_impl(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a, b = np.asarray(a), np.asarray(b)
    out = np.empty(b.shape, b.dtype)
    if out.size == 0:
        return [out]
    from scipy.linalg import blas      # here: importing SciPy costs `import xforms` ~0.3 s
    trsm = blas.get_blas_funcs("trsm", (a, b))
    trans = (2 if conjugate_a else 1) if transpose_a else 0
    with np.errstate(all="ignore"):        # BLAS trsm: a zero pivot gives inf/NaN, no error
        for idx in np.ndindex(b.shape[:-2]):
            m = np.conj(a[idx]) if conjugate_a and not transpose_a else a[idx]
            out[idx] = trsm(1.0, m, b[idx], side=0 if left_side else 1, lower=lower,
                            trans_a=trans, diag=unit_diagonal)
    return [out]


def _tri_bind(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a),
                                   conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


def triangular_solve(a, b, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False):
    """lax.linalg.triangular_solve: x with op(a) @ x = b (left_side) or x @ op(a) = b, where
    op is the identity, transpose, conjugate or adjoint; a is triangular."""
    return _tri_bind(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal)


def _op(a, transpose_a, conjugate_a):
    a = conj(a) if conjugate_a else a
    return mT(a) if transpose_a else a


def _tri_jvp(primals, tangents, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """op(a) x = b: dx = op(a)^-1 (db - op(da) x); x op(a) = b: dx = (db - x op(da)) op(a)^-1,
    da restricted to the triangle that is read."""
    (a, b), (da, db) = primals, tangents
    params = (left_side, lower, transpose_a, conjugate_a, unit_diagonal)
    x = _tri_bind(a, b, *params)
    t = Zero(tangent_aval(core.get_aval(x)))
    if not isinstance(db, Zero):
        t = _tri_bind(a, db, *params)
    if not isinstance(da, Zero):
        k = -1 if unit_diagonal else 0
        dam = _op(tril(da, k) if lower else triu(da, -k), transpose_a, conjugate_a)
        ta = ew.neg(_tri_bind(a, mm(dam, x) if left_side else mm(x, dam), *params))
        t = ta if isinstance(t, Zero) else ew.add(t, ta)
    return [x], [t]


def _tri_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """b -> op(a)^-1 b transposes to ct -> op(a)^-T ct (and alike on the right)."""
    if is_undefined(a):
        raise NotImplementedError("triangular_solve: transposing with respect to the matrix "
                                  "(it is not linear in it)")
    if isinstance(ct, Zero):
        return [None, None]
    return [None, _tri_bind(a, ct, left_side, lower, not transpose_a, conjugate_a,
                            unit_diagonal)]


abstract_eval_rules[triangular_solve_p] = _tri_aval
impl_rules[triangular_solve_p] = tri_impl
jvp_rules[triangular_solve_p] = _tri_jvp
transpose_rules[triangular_solve_p] = _tri_transpose
linear_primitives.add(triangular_solve_p)     # linear in b
def_batched_vmap(triangular_solve_p)


# ---- lu: P a = L U with partial pivoting (square matrices) ---------------------------------
lu_p = declare(primitive("lu", multiple_results=True), eager_work="matrix")


def _lu_aval(a):
    check_matrix("lu", a)
    n = a.shape[-1]
    i32 = np.dtype(np.int32)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-1], i32),
            ShapedArray(a.shape[:-1], i32)]


def pivots_to_permutation(piv):
    """LAPACK row interchanges (row i swapped with piv[i], in order) -> the permutation p with
    (P a)[i] = a[p[i]]."""
    piv = np.asarray(piv)
    perm = np.broadcast_to(np.arange(piv.shape[-1], dtype=np.int32), piv.shape).copy()
    for idx in np.ndindex(piv.shape[:-1]):
        p = perm[idx]
        for i, j in enumerate(piv[idx]):
            p[i], p[j] = p[j], p[i]
    return perm


def _lu_impl(a):
    from scipy.linalg import lu_factor
    a = np.asarray(a)
    lu = np.empty_like(a)
    piv = np.empty(a.shape[:-1], np.int32)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")            # a singular matrix is not an error
        for idx in np.ndindex(a.shape[:-2]):
            lu[idx], piv[idx] = lu_factor(a[idx], check_finite=False)
    return [lu, piv, pivots_to_permutation(piv)]


def lu(a):
    """-> (lu, pivots, permutation): L (unit lower, below the diagonal) and U packed in `lu`,
    a[permutation] = L @ U.  `a` is (..., m, n): a rectangular one as LAPACK's getrf factors
    it (min(m, n) pivots, a permutation of m), by the square primitive, so its derivative,
    batching and both backends are the square one's.

        >>> lu(np.array([[1., 2., 3.], [4., 5., 6.]]))[0]     # [[4, 5, 6], [.25, .75, 1.5]]
    """
    m, n = shape(a)[-2:]
    if m == n:
        return lu_p.bind(a)
    return _lu_wide(a) if m < n else _lu_tall(a)


def _lu_wide(a):
    """m < n: the pivots are those of the leading m x m block (a step's pivot is chosen in its
    own column); U's other columns are L^-1 P of a's."""
    from ..structural import concatenate, slice as slice_
    sh = shape(a)
    m, nd = sh[-2], len(sh)
    lu_, piv, perm = lu_p.bind(slice_(a, (0,) * nd, sh[:-1] + (m,)))
    rest = triangular_solve(lu_, permute_rows(slice_(a, (0,) * (nd - 1) + (m,), sh), perm),
                            left_side=True, lower=True, unit_diagonal=True)
    return [concatenate([lu_, rest], nd - 1), piv, perm]


def _lu_tall(a):
    """m > n: a with m - n columns appended that leave its n pivot steps as they are and
    pivot in place after them -- zeros, for the permutation; then, so that U stays
    invertible for the derivative, the columns whose rows n.. in pivoted order are the
    identity: [a, E] with E[r, j] = (perm[n + j] == r) factors as [L, (0; I)] (U, 0; 0, I)."""
    from ..structural import broadcast_in_dim, concatenate, iota, pad, slice as slice_
    sh = shape(a)
    m, n, nd = sh[-2], sh[-1], len(sh)
    zeros = pad(a, np.zeros((), dtype(a)), [(0, 0, 0)] * (nd - 1) + [(0, m - n, 0)])
    perm = lu_p.bind(zeros)[2]
    tail = slice_(perm, (0,) * (nd - 2) + (n,), sh[:-1])
    ext = sh[:-1] + (m - n,)
    e = ew.eq(broadcast_in_dim(tail, ext, tuple(range(nd - 2)) + (nd - 1,)),
              iota(np.int32, ext, nd - 2))
    lu_, piv, perm = lu_p.bind(concatenate([a, to_dtype(e, dtype(a))], nd - 1))
    return [slice_(lu_, (0,) * nd, sh), slice_(piv, (0,) * (nd - 1), sh[:-2] + (n,)), perm]


def permutation_matrix(perm, dt):
    """One-hot rows: P[..., i, j] = (perm[..., i] == j), so P @ a = a[..., perm, :]."""
    from ..structural import broadcast_in_dim, iota
    sh = shape(perm)
    n = sh[-1]
    full = sh + (n,)
    p = broadcast_in_dim(perm, full, tuple(range(len(sh))))
    j = iota(np.int32, full, len(sh))
    return ew.convert_element_type(ew.eq(p, j), dt)


def permute_rows(x, perm):
    """x[..., perm, :] (batched: row i of matrix b is x[b][perm[b, i]]), a gather: O(n k)
    where a permutation matrix product costs O(n^2 k)."""
    from ..indexing import gather
    from ..structural import iota
    sh = shape(x)
    nb = len(sh) - 2
    rows = tuple(shape(perm))
    idx = [iota(np.int32, rows, d) for d in range(nb)] + [perm]
    return gather(x, idx, tuple(range(nb + 1)))


def _lu_jvp(primals, tangents):
    """With L^-1 P dA U^-1 = X: dL = L tril(X, -1), dU = triu(X) U."""
    (a,), (da,) = primals, tangents
    lu_, piv, perm = lu(a)
    L = ew.add(tril(lu_, -1), eye_like(lu_))
    U = triu(lu_)
    pda = permute_rows(da, perm)
    la = triangular_solve(L, pda, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(U, la, left_side=False, lower=False)
    dlu = ew.add(mm(L, tril(lau, -1)), mm(triu(lau), U))
    z = [Zero(tangent_aval(core.get_aval(v))) for v in (piv, perm)]
    return [lu_, piv, perm], [dlu] + z


def solve(a, b):
    """x with a @ x = b for square a (..., n, n) and b (..., n, k) with equal batch dims,
    by LU with partial pivoting."""
    lu_, _, perm = lu(a)
    pb = permute_rows(b, perm)
    y = triangular_solve(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, y, left_side=True, lower=False)


abstract_eval_rules[lu_p] = _lu_aval
impl_rules[lu_p] = _lu_impl
jvp_rules[lu_p] = _lu_jvp
def_batched_vmap(lu_p)

# ---- lu_pivots_to_permutation: LAPACK row interchanges -> the permutation they make ---------
lu_pivots_to_permutation_p = primitive("lu_pivots_to_permutation")


def _p2p_aval(piv, *, permutation_size):
    if piv.dtype.kind != "i" or piv.ndim < 1 or piv.shape[-1] > permutation_size:
        raise TypeError(f"lu_pivots_to_permutation: expected integer pivots (..., k) with "
                        f"k <= {permutation_size}, got {piv.str_short()}")
    return [ShapedArray(piv.shape[:-1] + (permutation_size,), np.dtype(np.int32))]


def _p2p_impl(piv, *, permutation_size):
    piv = np.asarray(piv)
    padded = np.broadcast_to(np.arange(permutation_size, dtype=np.int32),
                             piv.shape[:-1] + (permutation_size,)).copy()
    padded[..., :piv.shape[-1]] = piv
    return [pivots_to_permutation(np.clip(padded, 0, permutation_size - 1))]


def lu_pivots_to_permutation(pivots, permutation_size):
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


abstract_eval_rules[lu_pivots_to_permutation_p] = _p2p_aval
impl_rules[lu_pivots_to_permutation_p] = _p2p_impl
def_batched_vmap(lu_pivots_to_permutation_p)
exempt(lu_pivots_to_permutation_p, "jvp", "integer output: tangent is a symbolic zero")

# cholesky, triangular_solve, lu, lu_pivots_to_permutation: CUDA rules in
# xforms/kernels/ops/linalg/factor.py; schur, hessenberg and sqrtm in xforms/kernels/ops/linalg/schur.py

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation",
           "permutation_matrix", "permute_rows", "solve"]
