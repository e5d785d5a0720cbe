"""`xforms.numpy.linalg` solvers and functions of a factorisation: solve, inv, det, slogdet
(LU), lstsq, pinv, matrix_rank, cond (SVD), matrix_power, multi_dot, tensorsolve, tensorinv.
Batched over leading dims as in JAX; singular matrices give inf/NaN, never an exception.

    >>> x = xnp.linalg.solve(a, b)        # a @ x == b
"""
import numpy as np

from ...core import trace as core
from ...primitives.control import control_flow as cf
from ...primitives.custom import LazyJaxpr, custom_jvp_call_p
from ...primitives.linalg import factor as pl
from ...primitives.structural import iota
from ...primitives.linalg.batched import diagonal, h, mT
from ...transforms.tracing import trace_cached
from ...core.avals import broadcast_shapes
from ..reductions import aggregates as red
from ..elementwise import ufuncs
from ...primitives.operands import (asarray_operand, aval, broadcast_to, convert, float_of,
                                    promote_dtypes, returns_arrays)
from ..creation.constructors import eye
from ..reductions.cumulative import cumprod
from .decompositions import SlogdetResult, matrix_operand, svd
from .products import matmul
from ..manipulation.shapes import expand_dims, moveaxis, reshape, squeeze


def _finfo_eps(dt):
    return float(np.finfo(dt).eps)


def lu_solve_core(lu_, perm, b, trans=0):
    """x with op(A) x = b from A's packed LU (A[perm] = L U); b (..., n, k) with lu's
    batch dims.  trans: 0 A, 1 A^T, 2 A^H."""
    if trans == 0:
        y = pl.triangular_solve(lu_, pl.permute_rows(b, perm), left_side=True, lower=True,
                                unit_diagonal=True)
        return pl.triangular_solve(lu_, y, left_side=True, lower=False)
    conj = trans == 2
    y = pl.triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True,
                            conjugate_a=conj)
    z = pl.triangular_solve(lu_, y, left_side=True, lower=True, transpose_a=True,
                            conjugate_a=conj, unit_diagonal=True)
    return matmul(mT(pl.permutation_matrix(perm, aval(lu_).dtype)), z)    # P^T z


def _solve_operands(name, a, b):
    a = matrix_operand(name, a)
    b = float_of(asarray_operand(b))
    a, b = promote_keep(a, b, name)
    sa, sb = aval(a).shape, aval(b).shape
    n = sa[-1]
    if len(sb) == 1:
        if sb[0] != n:
            raise ValueError(f"{name}: a {sa} and b {sb} do not match (b must have shape "
                             f"({n},) or (..., {n}, k))")
        batch = sa[:-2]
        return broadcast_to(a, batch + (n, n)), broadcast_to(reshape(b, (n, 1)), batch + (n, 1)), True
    if len(sb) < 2 or sb[-2] != n:
        raise ValueError(f"{name}: a {sa} and b {sb} do not match (b must have shape ({n},) "
                         f"or (..., {n}, k))")
    batch = broadcast_shapes(sa[:-2], sb[:-2], op=name)
    return broadcast_to(a, batch + (n, n)), broadcast_to(b, batch + sb[-2:]), False


def promote_keep(a, b, name):
    """Both operands in their common dtype, shapes unchanged."""
    dt, _ = promote_dtypes((aval(a).dtype, False), (aval(b).dtype, False))
    return convert(a, dt), convert(b, dt)


@returns_arrays
def solve(a, b):
    """x with a @ x = b, by LU with partial pivoting; b is (n,) or (..., n, k).

    >>> xnp.linalg.solve(xnp.array([[2.0, 0.0], [0.0, 4.0]]), xnp.array([2.0, 4.0]))
    """
    a, b, vec = _solve_operands("solve", a, b)
    lu_, _, perm = pl.lu(a)
    x = lu_solve_core(lu_, perm, b)
    return squeeze(x, -1) if vec else x


@returns_arrays
def inv(a):
    """Inverse of square matrices (inf/NaN where singular)."""
    a = matrix_operand("inv", a)
    sh = aval(a).shape
    ident = broadcast_to(eye(sh[-1], dtype=aval(a).dtype), sh)
    return solve(a, ident)


def _lu_parts(name, a):
    a = matrix_operand(name, a)
    lu_, piv, _ = pl.lu(a)
    d = diagonal(lu_)
    n = aval(a).shape[-1]
    # an iota, not np.arange: det's custom rule traces this and takes no constants
    swaps = red.sum(ufuncs.not_equal(piv, iota(np.int32, (n,))), axis=-1)
    odd = ufuncs.equal(ufuncs.remainder(swaps, 2), 1)
    return a, d, odd


def _cofactor_det(a):
    """The determinant of (..., n, n) a for n = 2 or 3 as a sum of products of its entries
    (JAX's rule for these sizes: an inf gives NaN, inf - inf, where LU gives inf)."""
    def e(r, c):
        return a[..., r, c]
    if aval(a).shape[-1] == 2:
        return e(0, 0) * e(1, 1) - e(0, 1) * e(1, 0)
    terms = [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    plus = [e(0, i) * e(1, j) * e(2, k) for i, j, k in terms]
    minus = [e(0, 2) * e(1, 1) * e(2, 0), e(0, 0) * e(1, 2) * e(2, 1),
             e(0, 1) * e(1, 0) * e(2, 2)]
    return plus[0] + plus[1] + plus[2] - minus[0] - minus[1] - minus[2]


@returns_arrays
def det(a):
    """Determinant: of a 2x2 or 3x3 matrix by cofactors, as JAX; otherwise JAX's
    sign * exp(log|det|) from slogdet, so it rounds as JAX does (the LU product of U's
    diagonal differs in the last bits), with the LU product's derivative.

        >>> det(np.array([[1.0, 2.0], [3.0, 4.0]]))     # -2.0
    """
    a = matrix_operand("det", a)
    if aval(a).shape[-1] in (2, 3):
        return _cofactor_det(a)
    return _det(a)


def _det_by_slogdet(a):
    sign, logabs = slogdet(a)
    return ufuncs.multiply(sign, ufuncs.exp(logabs).astype(aval(sign).dtype))


def _cofactor_solve(a, b):
    """(det(a), adj(a) @ b) by LU, finite where a has rank n - 1 too (JAX's rule for det's
    derivative): with a[perm] = L U, adj(a) b = det(a) U^-1 L^-1 b[perm], and the last row
    of that needs det(a) / U[n-1, n-1] = (the product of U's other diagonal entries), so U's
    corner is replaced by that product's reciprocal and the other rows are scaled by det(a).
    Below rank n - 1 the adjugate is 0 (JAX's filter: U^-1 is not finite there).

        >>> _cofactor_solve(np.array([[1., 2.], [2., 4.]]), np.eye(2))[1]   # [[4, -2], [-2, 1]]
    """
    n = aval(a).shape[-1]
    lu_, piv, perm = pl.lu(a)
    swaps = red.sum(ufuncs.not_equal(piv, iota(np.int32, (n,))), axis=-1)
    sign = ufuncs.subtract(1, ufuncs.multiply(2, ufuncs.remainder(swaps, 2)))
    partial = ufuncs.multiply(cumprod(diagonal(lu_), axis=-1),
                              expand_dims(sign.astype(aval(lu_).dtype), -1))
    det = partial[..., -1]
    corner = ufuncs.logical_and(ufuncs.equal(iota(np.int32, (n, n), 0), n - 1),
                                ufuncs.equal(iota(np.int32, (n, n), 1), n - 1))
    u = ufuncs.where(corner, ufuncs.reciprocal(partial[..., -2])[..., None, None], lu_)
    ones = broadcast_to(np.ones((n, 1), aval(lu_).dtype), aval(lu_).shape[:-1] + (1,))
    low_rank = red.any(ufuncs.logical_not(ufuncs.isfinite(pl.triangular_solve(
        u, ones, left_side=True, lower=False))), axis=(-2, -1))[..., None, None]
    x = ufuncs.where(low_rank, 0, pl.permute_rows(b, perm))
    x = pl.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    rows = iota(np.int32, (n, 1), 0)
    x = ufuncs.where(ufuncs.less(rows, n - 1), ufuncs.multiply(x, det[..., None, None]), x)
    x = pl.triangular_solve(u, x, left_side=True, lower=False)
    return det, ufuncs.where(low_rank, 0, x)


def _det(a):
    """det's value by slogdet, its tangent tr(adj(a) da) (_cofactor_solve: finite at
    singular matrices, as JAX's); the rule calls _det again, so every order of derivative
    goes through it."""
    if core.current_trace() is core.eval_trace:    # no derivative asked: the value alone
        return _det_by_slogdet(a)
    in_avals = [core.get_aval(a)]
    call, consts = cf.trace(lambda x: [_det_by_slogdet(x)], in_avals)
    assert not consts, "det's value takes no constants"

    def rule():
        def jvp(x, dx):
            z = _cofactor_solve(x, dx)[1]
            return [_det(x), red.sum(diagonal(z), axis=-1)]
        # the rule's masks stay closed over (its operands are only (x, dx))
        return trace_cached(None, jvp, in_avals * 2)[0]
    return custom_jvp_call_p.bind(a, call_jaxpr=call, jvp_jaxpr_thunk=LazyJaxpr(rule, "det"),
                                  num_consts=0, name="det")[0]


@returns_arrays
def slogdet(a, *, method=None):
    """(sign, log|det|) by LU; a singular matrix gives (0, -inf)."""
    if method not in (None, "lu"):
        raise NotImplementedError(f"slogdet: method={method!r} (xforms uses LU)")
    a, d, odd = _lu_parts("slogdet", a)
    dt = aval(a).dtype
    ad = ufuncs.abs(d)
    zero = ufuncs.equal(ad, 0)
    if dt.kind == "c":
        unit = ufuncs.where(zero, 0, ufuncs.divide(d, ufuncs.where(zero, 1, ad).astype(dt)))
    else:       # JAX's: -1 per negative pivot, so a NaN pivot leaves the sign +-1
        unit = ufuncs.where(zero, 0, ufuncs.where(ufuncs.less(d, 0), -1, 1)).astype(dt)
    sign = red.prod(unit, axis=-1)
    sign = ufuncs.where(odd, ufuncs.negative(sign), sign)
    logabs = red.sum(ufuncs.log(ad), axis=-1)
    return SlogdetResult(sign, logabs)


# ---- SVD-based -----------------------------------------------------------------------------
@returns_arrays
def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of a @ x = b by SVD -> (x, resid, rank, s); a is (m, n), b (m,)
    or (m, k).  resid is |b - a x|^2 per column (with numpy_resid, NumPy's rule: empty unless
    a has full column rank and m > n)."""
    a = matrix_operand("lstsq", a, square=False)
    b = float_of(asarray_operand(b))
    if aval(a).ndim != 2 or aval(b).ndim not in (1, 2) or aval(b).shape[0] != aval(a).shape[0]:
        raise ValueError(f"lstsq: a must be (m, n) and b (m,) or (m, k), got {aval(a).shape} "
                         f"and {aval(b).shape}")
    a, b = promote_keep(a, b, "lstsq")
    m, n = aval(a).shape
    vec = aval(b).ndim == 1
    bm = reshape(b, (m, 1)) if vec else b
    u, s, vt = svd(a, full_matrices=False)
    rdt = aval(s).dtype
    rc = _finfo_eps(rdt) * max(m, n) if rcond is None else (
        _finfo_eps(rdt) if rcond < 0 else float(rcond))
    k = aval(s).shape[-1]
    keep = ufuncs.greater_equal(s, ufuncs.multiply(s[..., :1], rc)) if k else s
    rank = red.sum(keep, axis=-1).astype(np.int64)   # JAX's default int (x64 mode)
    s_inv = ufuncs.where(keep, ufuncs.divide(1, ufuncs.where(keep, s, 1)), 0)
    uhb = matmul(h(u), bm)
    x = matmul(h(vt), ufuncs.multiply(expand_dims(s_inv, -1).astype(aval(a).dtype), uhb))
    r = ufuncs.subtract(bm, matmul(a, x))
    resid = red.sum(ufuncs.real(ufuncs.multiply(ufuncs.conj(r), r)), axis=0)
    if numpy_resid and not (int(rank) == n and m > n):
        resid = np.zeros((0,), rdt)
    elif vec:
        resid = squeeze(resid, 0)
    return (squeeze(x, -1) if vec else x), resid, rank, s


def _pinv_default_rtol(a):
    m, n = aval(a).shape[-2:]
    return 10.0 * max(m, n) * _finfo_eps(np.finfo(aval(a).dtype).dtype)


def _pinv_svd(a, rtol):
    """V diag(1/s) U^H over the singular values above rtol * the largest.  A NaN or inf in
    `a` makes every singular value NaN, none is kept: zeros, as JAX."""
    u, s, vt = svd(a, full_matrices=False)
    keep = ufuncs.greater(s, ufuncs.multiply(s[..., :1], rtol))
    s_inv = ufuncs.where(keep, ufuncs.divide(1, ufuncs.where(keep, s, 1)), 0)
    return matmul(h(vt), ufuncs.multiply(expand_dims(s_inv, -1).astype(aval(a).dtype), h(u)))


def _pinv_tangent(a, p, da):
    """Golub and Pereyra's derivative of the pseudo-inverse where the rank is locally
    constant (full rank included): -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P."""
    dah = h(da)
    left = matmul(matmul(p, h(p)), dah)
    right = matmul(dah, matmul(h(p), p))
    return ufuncs.add(ufuncs.negative(matmul(matmul(p, da), p)),
                      ufuncs.add(ufuncs.subtract(left, matmul(matmul(left, a), p)),
                                 ufuncs.subtract(right, matmul(matmul(p, a), right))))


def _pinv(a, rtol):
    """The pseudo-inverse with a custom derivative rule, as JAX: differentiating the SVD
    would give NaN where singular values repeat, and the rule's P is this function again, so
    every order of derivative uses the rule.  (A rule attached as `f - stop_gradient(f)`
    instead turned the zeros of an input with inf into NaN: inf - inf.)"""
    if min(aval(a).shape[-2:]) == 0:
        return h(a)
    if core.current_trace() is core.eval_trace:    # no derivative asked: the value alone
        return _pinv_svd(a, rtol)
    in_avals = [core.get_aval(a)]
    call, consts = cf.trace(lambda x: [_pinv_svd(x, rtol)], in_avals)
    assert not consts, "pinv's value takes no constants"

    def rule():
        def jvp(x, dx):
            p = _pinv(x, rtol)
            return [p, _pinv_tangent(x, p, dx)]
        closed, c = cf.trace(jvp, in_avals * 2)
        assert not c, "pinv's rule takes no constants"
        return closed
    return custom_jvp_call_p.bind(a, call_jaxpr=call, jvp_jaxpr_thunk=LazyJaxpr(rule, "pinv"),
                                  num_consts=0, name="pinv")[0]


@returns_arrays
def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse by SVD; singular values below rtol * the largest count
    as zero (default rtol: 10 * max(m, n) * eps, as JAX)."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified")
        rtol = rcond
    a = matrix_operand("pinv", a, square=False)
    rtol = _pinv_default_rtol(a) if rtol is None else float(rtol)
    return _pinv(a, rtol)


@returns_arrays
def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """Number of singular values above rtol * the largest (default max(m, n) * eps)."""
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol and rtol may be specified")
        rtol = tol
    M = float_of(asarray_operand(M))
    if aval(M).ndim < 2:
        return red.any(ufuncs.not_equal(M, 0)).astype(np.int32)
    s = svd(M, compute_uv=False)
    if rtol is None:
        rtol = ufuncs.multiply(red.max(s, axis=-1),
                               max(aval(M).shape[-2:]) * _finfo_eps(aval(s).dtype))
    rtol = expand_dims(asarray_operand(rtol), -1) if aval(rtol).ndim else rtol
    return red.sum(ufuncs.greater(s, rtol), axis=-1)


@returns_arrays
def cond(x, p=None):
    """Condition number: s_max / s_min for p None or 2, else norm(x, p) norm(inv(x), p)."""
    from .norms import norm
    x = matrix_operand("cond", x, square=p not in (None, 2, -2))
    if p is None or p == 2:
        s = svd(x, compute_uv=False)
        return ufuncs.divide(s[..., 0], s[..., -1])
    if p == -2:
        s = svd(x, compute_uv=False)
        r = ufuncs.divide(s[..., -1], s[..., 0])
    else:
        r = ufuncs.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))
    nan_in = red.any(ufuncs.isnan(x), axis=(-2, -1))
    return ufuncs.where(ufuncs.logical_and(ufuncs.isnan(r), ufuncs.logical_not(nan_in)),
                        np.inf, r)


# ---- products and tensors --------------------------------------------------------------------
@returns_arrays
def matrix_power(a, n):
    """a @ a @ ... (n times) by repeated squaring; n = 0 gives identities, n < 0 uses inv."""
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: n must be an integer, got {n!r}")
    a = asarray_operand(a)
    sh = aval(a).shape
    if len(sh) < 2 or sh[-1] != sh[-2]:
        raise ValueError(f"matrix_power: expected square matrices (..., n, n), got shape {sh}")
    if n == 0:
        return broadcast_to(eye(sh[-1], dtype=aval(a).dtype), sh)
    if n < 0:
        a, n = inv(a), -int(n)
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


def _chain_order(dims):
    """Optimal parenthesisation of a matrix chain (dims[i] x dims[i+1] matrices): split[i][j]."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = None
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


@returns_arrays
def multi_dot(arrays, *, precision=None):
    """Product of a chain of matrices in the cheapest order (the first and last may be
    vectors)."""
    arrays = [asarray_operand(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("multi_dot: expected at least two arrays")
    first_vec, last_vec = aval(arrays[0]).ndim == 1, aval(arrays[-1]).ndim == 1
    if first_vec:
        arrays[0] = reshape(arrays[0], (1, -1))
    if last_vec:
        arrays[-1] = reshape(arrays[-1], (-1, 1))
    for x in arrays:
        if aval(x).ndim != 2:
            raise ValueError(f"multi_dot: arrays must be 2-d (the first and last may be 1-d), "
                             f"got shapes {[aval(y).shape for y in arrays]}")
    dims = [aval(arrays[0]).shape[0]] + [aval(x).shape[1] for x in arrays]
    split = _chain_order(dims)

    def prod(i, j):
        if i == j:
            return arrays[i]
        s = split[i][j]
        return matmul(prod(i, s), prod(s + 1, j))
    out = prod(0, len(arrays) - 1)
    if first_vec:
        out = squeeze(out, 0)
    if last_vec:
        out = squeeze(out, -1)
    return out


@returns_arrays
def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b."""
    a, b = asarray_operand(a), asarray_operand(b)
    if axes is not None:
        nd = aval(a).ndim
        axes = [ax % nd for ax in axes]
        a = moveaxis(a, axes, list(range(nd - len(axes), nd)))
    sa, sb = aval(a).shape, aval(b).shape
    xshape = sa[len(sb):]
    nb, nx = int(np.prod(sb, dtype=np.int64)), int(np.prod(xshape, dtype=np.int64))
    if sa[:len(sb)] != sb or nb != nx:
        raise ValueError(f"tensorsolve: a {sa} must start with b's shape {sb} and be 'square' "
                         "(the product of b's dims equal to that of the remaining dims)")
    return reshape(solve(reshape(a, (nb, nx)), reshape(b, (nb,))), xshape)


@returns_arrays
def tensorinv(a, ind=2):
    """The inverse of a as a map from its first `ind` dims to the rest."""
    a = asarray_operand(a)
    sh = aval(a).shape
    if not isinstance(ind, (int, np.integer)) or ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got {ind!r}")
    left, right = sh[:ind], sh[ind:]
    nl, nr = int(np.prod(left, dtype=np.int64)), int(np.prod(right, dtype=np.int64))
    if nl != nr:
        raise ValueError(f"tensorinv: a of shape {sh} with ind={ind} is not 'square'")
    return reshape(inv(reshape(a, (nl, nr))), right + left)
