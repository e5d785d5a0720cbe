"""Factorisation primitives, part 2: qr (Householder), eigh, svd, batched over leading dims
like those of linalg.py, with JAX's forward rules (reverse mode transposes them).

Derivative caveats, as in JAX: eigh's and svd's vector derivatives divide by differences of
eigenvalues (singular values), so they are infinite or NaN where two are equal, and the
eigen-/singular vectors themselves are only defined up to phase; the derivative of the
values alone is always finite.  qr's derivative needs m >= n (reduced) or a square matrix.

    >>> v, w = eigh(a)          # a @ v == v * w
"""
import numpy as np

from ...core import trace as core
from ...core.avals import ShapedArray
from ...core.trace import abstract_eval_rules, impl_rules
from ...transforms.jvp import jvp_rules
from .. import elementwise as ew
from ...core.facts import declare
from ...core.registry import primitive
from .factor import def_batched_vmap, solve, triangular_solve
from .cholesky_ad import hermitian
from ..reductions import reduce_sum
from .batched import (check_matrix, col, const_like, diag_embed, diagonal, eye_like, h, mm,
                      nan_like, row, row_to, shape, to_dtype, tril)


def _real_dtype(dt):
    return np.dtype(np.finfo(dt).dtype)


def _nan_on_failure(fn, a, nout):
    """fn over a batch of matrices; a matrix whose factorisation fails (NaN input, no
    convergence) gives NaN outputs instead of an exception, as in JAX."""
    try:
        return fn(a)
    except np.linalg.LinAlgError:
        pass
    outs = None
    for idx in np.ndindex(a.shape[:-2]):
        try:
            res = fn(a[idx])
        except np.linalg.LinAlgError:
            res = [nan_like(o) for o in fn(np.eye(*a.shape[-2:], dtype=a.dtype))]
        if outs is None:
            outs = [np.empty(a.shape[:-2] + np.shape(r), np.asarray(r).dtype) for r in res]
        for o, r in zip(outs, res):
            o[idx] = r
    return outs


# ---- qr -------------------------------------------------------------------------------------
qr_p = declare(primitive("qr", multiple_results=True), eager_work="matrix")


def _qr_aval(a, *, full_matrices):
    check_matrix("qr", a, square=False)
    m, n = a.shape[-2:]
    k = m if full_matrices else min(m, n)
    b = a.shape[:-2]
    return [ShapedArray(b + (m, k), a.dtype), ShapedArray(b + (k, n), a.dtype)]


def _qr_impl(a, *, full_matrices):
    mode = "complete" if full_matrices else "reduced"
    return _nan_on_failure(lambda x: list(np.linalg.qr(x, mode=mode)), np.asarray(a), 2)


def qr(a, full_matrices=False):
    return qr_p.bind(a, full_matrices=bool(full_matrices))


def _qr_jvp(primals, tangents, *, full_matrices):
    (a,), (da,) = primals, tangents
    m, n = shape(a)[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError(f"qr: the derivative needs m >= n and full_matrices=False "
                                  f"(or a square matrix), got shape {shape(a)} with "
                                  f"full_matrices={full_matrices}")
    q, r = qr(a, full_matrices)
    dx_rinv = triangular_solve(r, da, left_side=False, lower=False)      # dA R^-1
    qt = mm(h(q), dx_rinv)
    low = tril(qt, -1)
    do = ew.sub(low, h(low))                                            # skew-Hermitian part
    if core.get_aval(a).dtype.kind == "c":       # Q^H dQ's diagonal is imaginary
        im = ew.complex(ew.mul(ew.real(qt), 0.0), ew.imag(qt))
        do = ew.add(do, ew.mul(im, eye_like(im)))
    dq = ew.add(mm(q, ew.sub(do, qt)), dx_rinv)
    dr = mm(ew.sub(qt, do), r)
    return [q, r], [dq, dr]


abstract_eval_rules[qr_p] = _qr_aval
impl_rules[qr_p] = _qr_impl
jvp_rules[qr_p] = _qr_jvp
def_batched_vmap(qr_p)


# ---- eigh: a = v diag(w) v^H, eigenvalues ascending -------------------------------------------
eigh_p = declare(primitive("eigh", multiple_results=True), eager_work="matrix")


def _eigh_aval(a, *, lower):
    check_matrix("eigh", a)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-1], _real_dtype(a.dtype))]


def _eigh_impl(a, *, lower):
    uplo = "L" if lower else "U"

    def fn(x):
        w, v = np.linalg.eigh(x, UPLO=uplo)
        return [v, w]
    return _nan_on_failure(fn, np.asarray(a), 2)


def eigh(a, lower=True):
    """-> (v, w): eigenvectors (columns) and ascending eigenvalues of Hermitian a."""
    return eigh_p.bind(a, lower=bool(lower))


def _read_triangle(da, lower):
    """The Hermitian matrix that the triangle of da eigh reads stands for: eigh's value
    depends on that triangle alone, so its derivative must too (JAX's rule assumes a
    Hermitian da; along a non-Hermitian one, as lax.linalg.eigh(symmetrize_input=False)
    meets, it is not the derivative of the value, and its second order is not symmetric).

        >>> _read_triangle(da, lower=True)     # tril(da, -1) + its conjugate + Re diag(da)
    """
    return hermitian(da if lower else h(da))


def _eigh_jvp(primals, tangents, *, lower):
    """dw = real(diag(V^H dA V)); dV = V (F o V^H dA V), F[i, j] = 1 / (w[j] - w[i]) off the
    diagonal (infinite where eigenvalues repeat: the degenerate case has no derivative);
    dA is the Hermitian matrix of the triangle read (_read_triangle)."""
    (a,), (da,) = primals, tangents
    v, w = eigh(a, lower)
    dt = core.get_aval(a).dtype
    vda = mm(mm(h(v), _read_triangle(da, lower)), v)
    diff = ew.sub(row(w), col(w))                    # diff[i, j] = w[j] - w[i]
    eye = const_like(np.eye(shape(w)[-1]), diff)
    f = ew.sub(ew.div(const_like(1.0, diff), ew.add(diff, eye)), eye)
    dv = mm(v, ew.mul(to_dtype(f, dt), vda))
    dw = diagonal(ew.real(vda) if dt.kind == "c" else vda)
    return [v, w], [dv, dw]


abstract_eval_rules[eigh_p] = _eigh_aval
impl_rules[eigh_p] = _eigh_impl
jvp_rules[eigh_p] = _eigh_jvp
def_batched_vmap(eigh_p)


# ---- svd: a = u diag(s) vt, singular values descending -----------------------------------
svd_p = declare(primitive("svd", multiple_results=True), eager_work="matrix")


def _svd_aval(a, *, full_matrices, compute_uv):
    check_matrix("svd", a, square=False)
    m, n = a.shape[-2:]
    k = min(m, n)
    b = a.shape[:-2]
    s = ShapedArray(b + (k,), _real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    ku, kv = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray(b + (m, ku), a.dtype), ShapedArray(b + (kv, n), a.dtype)]


def _svd_impl(a, *, full_matrices, compute_uv):
    def fn(x):
        if not compute_uv:
            return [np.linalg.svd(x, compute_uv=False)]
        u, s, vt = np.linalg.svd(x, full_matrices=full_matrices)
        return [s, u, vt]
    return _nan_on_failure(fn, np.asarray(a), 3 if compute_uv else 1)


def svd(a, full_matrices=True, compute_uv=True):
    """-> [s, u, vt] (or [s] without compute_uv), a = u diag(s) vt."""
    return svd_p.bind(a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (da,) = primals, tangents
    m, n = shape(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(f"svd: the derivative of u and vt with full_matrices=True "
                                  f"needs a square matrix, got shape {shape(a)}; use "
                                  "full_matrices=False")
    dt = core.get_aval(a).dtype
    s, u, vt = svd(a, full_matrices=False, compute_uv=True)
    v = h(vt)
    ds_mat = mm(mm(h(u), da), v)                      # U^H dA V, (k, k)
    ds = diagonal(ew.real(ds_mat) if dt.kind == "c" else ds_mat)
    if not compute_uv:
        return [s], [ds]
    k = shape(s)[-1]
    eye = const_like(np.eye(k), row(s))
    sr, sc = row(s), col(s)                          # s[j], s[i]
    sdiff = ew.mul(ew.add(sr, sc), ew.sub(sr, sc))   # s_j^2 - s_i^2
    f = ew.sub(ew.div(const_like(1.0, sdiff), ew.add(sdiff, eye)), eye)
    s_c = to_dtype(sr, dt)
    dss = ew.mul(ds_mat, s_c)                         # dS diag(s)
    sds = ew.mul(to_dtype(sc, dt), ds_mat)            # diag(s) dS
    zero = ew.convert_element_type(ew.eq(s, ew.mul(s, 0.0)), core.get_aval(s).dtype)
    s_inv = ew.sub(ew.div(const_like(1.0, s), ew.add(s, zero)), zero)
    s_inv_mat = to_dtype(diag_embed(s_inv), dt)
    half = ew.mul(ew.sub(ds_mat, h(ds_mat)), ew.mul(s_inv_mat, 0.5))
    fc = to_dtype(f, dt)
    du = mm(u, ew.add(ew.mul(fc, ew.add(dss, h(dss))), half))
    dv = mm(v, ew.mul(fc, ew.add(sds, h(sds))))
    if m > n:
        dav = mm(da, v)
        du = ew.add(du, ew.div(ew.sub(dav, mm(u, mm(h(u), dav))), to_dtype(row_to(s, m), dt)))
    if n > m:
        dahu = mm(h(da), u)
        dv = ew.add(dv, ew.div(ew.sub(dahu, mm(v, mm(vt, dahu))), to_dtype(row_to(s, n), dt)))
    return [s, u, vt], [ds, du, h(dv)]


abstract_eval_rules[svd_p] = _svd_aval
impl_rules[svd_p] = _svd_impl
jvp_rules[svd_p] = _svd_jvp
def_batched_vmap(svd_p)


# ---- eig: general (non-Hermitian) eigendecomposition, complex results, CPU only -------------
eig_p = declare(primitive("eig", multiple_results=True), eager_work="matrix")


def _complex_dtype(dt):
    return np.dtype(np.complex64) if np.dtype(dt) in (np.float32, np.complex64) else \
        np.dtype(np.complex128)


def _eig_aval(a, *, vectors, vector_derivs=False):
    check_matrix("eig", a)
    c = _complex_dtype(a.dtype)
    w = ShapedArray(a.shape[:-1], c)
    return [w, ShapedArray(a.shape, c)] if vectors else [w]


def _eig_impl(a, *, vectors, vector_derivs=False):
    a = np.asarray(a)
    c = _complex_dtype(a.dtype)

    def fn(x):          # real x: real ?geev, NumPy's and JAX's order and vectors
        w, v = np.linalg.eig(x)
        w, v = w.astype(c), v.astype(c)
        return [w, v] if vectors else [w]
    return _nan_on_failure(fn, a, 2 if vectors else 1)


def eig(a, vectors=True, vector_derivs=False):
    """-> [w, v] (or [w]): eigenvalues and unit right eigenvectors (columns) of a, complex,
    in LAPACK's order (unsorted; for real a real ?geev's, as NumPy and JAX).  The vectors are differentiable only with vector_derivs
    (JAX's enable_eigvec_derivs): their derivative assumes distinct eigenvalues, and fixes
    each vector's phase by Re(v^H dv) = 0 rather than by LAPACK's convention."""
    return eig_p.bind(a, vectors=bool(vectors), vector_derivs=bool(vector_derivs))


def _eig_jvp(primals, tangents, *, vectors, vector_derivs=False):
    """With M = V^-1 dA V: dw = diag(M); dV = V (F o M), F[i, j] = 1 / (w[j] - w[i]) off the
    diagonal, then each column made orthogonal (in the real sense) to its vector, which
    keeps it unit-norm."""
    if vectors and not vector_derivs:
        raise NotImplementedError("eig: derivatives of the eigenvectors of a non-Hermitian "
                                  "matrix are not provided (as in JAX); differentiate "
                                  "linalg.eigvals for the eigenvalues, or use eigh for "
                                  "Hermitian matrices")
    (a,), (da,) = primals, tangents
    w, v = eig(a, vectors=True, vector_derivs=True)
    dac = to_dtype(da, core.get_aval(w).dtype)
    m = solve(v, mm(dac, v))
    dw = diagonal(m)
    if not vectors:
        return [w], [dw]
    diff = ew.sub(row(w), col(w))
    eye = const_like(np.eye(shape(w)[-1]), diff)
    f = ew.sub(ew.div(const_like(1.0, diff), ew.add(diff, eye)), eye)
    dv = mm(v, ew.mul(f, m))
    along = ew.real(reduce_sum(ew.mul(ew.conj(v), dv), (len(shape(v)) - 2,)))
    dv = ew.sub(dv, ew.mul(v, to_dtype(row_to(along, shape(v)[-2]), core.get_aval(v).dtype)))
    return [w, v], [dw, dv]


abstract_eval_rules[eig_p] = _eig_aval
impl_rules[eig_p] = _eig_impl
jvp_rules[eig_p] = _eig_jvp
def_batched_vmap(eig_p)

