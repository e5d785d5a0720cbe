"""Numba functions behind schur and hessenberg (xforms/primitives/linalg/schur.py) and sqrtm
(through the complex Schur form), called by the code xforms/kernels/ops/linalg/factor.py generates:
LAPACK ?gees and ?gehrd, the routines the fast tier calls through SciPy, so both tiers give
the same factors.

Each matrix is copied transposed into a column-major work matrix (LAPACK's layout) and its
factors copied back transposed.  LAPACK sees non-finite matrices too, as in JAX (the Schur
vectors of a matrix with an inf are the identity); a LAPACK failure gives `nan_fill`'s NaNs,
as in JAX.  `code` is the LAPACK type of the outputs (0 s, 1 d, 2 c, 3 z).

    >>> la_schur(a.reshape(1, n, n), t.reshape(1, n, n), z.reshape(1, n, n), 1)
"""
import numba
import numpy as np

from .helper_cache import CACHE as _CACHE
from .linalg import extern, ptr, nan_fill

s_gees, d_gees = extern("lapack", "gees", 15, ["sgees", "dgees"])
c_gees, z_gees = extern("lapack", "gees", 15, ["cgees", "zgees"])
s_gehrd, d_gehrd, c_gehrd, z_gehrd = extern("lapack", "gehrd", 9)


@numba.njit(cache=_CACHE, nogil=True)
def _load(a, t):
    """t := a transposed (a row-major matrix as LAPACK's column-major t)."""
    n = a.shape[0]
    for r in range(n):
        for c in range(n):
            t[c, r] = a[r, c]


@numba.njit(cache=_CACHE, nogil=True)
def _gees_workspace(n, dtype):
    """?gees' arguments for an n x n matrix of `dtype`, made once per call of la_schur or
    la_sqrtm: (ch = jobvs "V", sort "N"; ints; lwork; t, z: the matrix and its Schur
    vectors; w: eigenvalues (wr for the real routines); wi; work; rwork: n reals, also big
    enough for cgees; bwork)."""
    ch = np.empty(2, np.uint8)
    ch[0], ch[1] = ord("V"), ord("N")
    ints = np.empty(6, np.int32)
    lwork = max(1, 64 * n)
    m = max(n, 1)
    return (ch, ints, lwork, np.empty((n, n), dtype), np.empty((n, n), dtype),
            np.empty(m, dtype), np.empty(m, dtype), np.empty(lwork, dtype),
            np.empty(m, np.float64), np.zeros(m, np.int32))


@numba.njit(cache=_CACHE, nogil=True)
def _real_gees(code, ch, ints, t, wr, wi, z, work, bwork):
    """LAPACK s/dgees(jobvs, sort, select, n, a, lda, sdim, wr, wi, vs, ldvs, work, lwork,
    bwork, info): the real Schur form, no sorting."""
    args = (ptr(ch[0:1]), ptr(ch[1:2]), ptr(bwork), ptr(ints[0:1]), ptr(t),
            ptr(ints[1:2]), ptr(ints[2:3]), ptr(wr), ptr(wi), ptr(z), ptr(ints[3:4]),
            ptr(work), ptr(ints[4:5]), ptr(bwork), ptr(ints[5:6]))
    if code == 0:
        s_gees(*args)
    else:
        d_gees(*args)
    return ints[5]


@numba.njit(cache=_CACHE, nogil=True)
def la_schur(a, tout, zout, code):
    """tout[i], zout[i] = T, Z with a[i] = Z T Z^H (real form for real outputs, else the
    complex form of a[i] taken as complex)."""
    nb, n, _ = a.shape
    ch, ints, lwork, t, z, wr, wi, work, rwork, bwork = _gees_workspace(n, tout.dtype)
    for i in range(nb):
        if n == 0:
            continue
        _load(a[i], t)
        ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = n, n, 0, n, lwork, 0
        info = _real_gees(code, ch, ints, t, wr, wi, z, work, bwork) if code < 2 else \
            _gees(code, ch, ints, t, wr, z, work, rwork, bwork)
        if info != 0:
            nan_fill(tout[i])
            nan_fill(zout[i])
            continue
        tout[i] = t.T
        zout[i] = z.T


@numba.njit(cache=_CACHE, nogil=True)
def _gehrd(code, ints, t, tau, work):
    """LAPACK ?gehrd(n, ilo, ihi, a, lda, tau, work, lwork, info) on the whole matrix
    (ilo = 1, ihi = n)."""
    args = (ptr(ints[0:1]), ptr(ints[1:2]), ptr(ints[2:3]), ptr(t), ptr(ints[3:4]),
            ptr(tau), ptr(work), ptr(ints[4:5]), ptr(ints[5:6]))
    if code == 0:
        s_gehrd(*args)
    elif code == 1:
        d_gehrd(*args)
    elif code == 2:
        c_gehrd(*args)
    else:
        z_gehrd(*args)
    return ints[5]


@numba.njit(cache=_CACHE, nogil=True)
def la_hessenberg(a, pout, tauout, code):
    """pout[i], tauout[i] = ?gehrd's packed Hessenberg form of a[i] and its n - 1 taus."""
    nb, n, _ = a.shape
    ints = np.empty(6, np.int32)
    lwork = max(1, 64 * n)
    t = np.empty((n, n), pout.dtype)
    tau = np.empty(max(n - 1, 1), pout.dtype)
    work = np.empty(lwork, pout.dtype)
    for i in range(nb):
        if n == 0:
            continue
        _load(a[i], t)
        ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = n, 1, n, n, lwork, 0
        if _gehrd(code, ints, t, tau, work) == 0:
            pout[i] = t.T
            tauout[i] = tau[:n - 1]
        else:
            nan_fill(pout[i])
            nan_fill(tauout[i])


@numba.njit(cache=_CACHE, nogil=True)
def _gees(code, ch, ints, t, w, z, work, rwork, bwork):
    """LAPACK ?gees(jobvs, sort, select, n, a, lda, sdim, w, vs, ldvs, work, lwork, rwork,
    bwork, info): complex Schur form, no sorting (select and bwork are not referenced)."""
    args = (ptr(ch[0:1]), ptr(ch[1:2]), ptr(bwork), ptr(ints[0:1]), ptr(t),
            ptr(ints[1:2]), ptr(ints[2:3]), ptr(w), ptr(z), ptr(ints[3:4]), ptr(work),
            ptr(ints[4:5]), ptr(rwork), ptr(bwork), ptr(ints[5:6]))
    if code == 2:
        c_gees(*args)
    else:
        z_gees(*args)
    return ints[5]


@numba.njit(cache=_CACHE, nogil=True)
def la_sqrtm(a, out, real_input, code):
    """out[i] = the principal square root of a[i] (out complex: code 2 or 3): complex Schur
    form Z T Z^H by ?gees, the triangular root R of T, Z R Z^H; NaN if ?gees fails.  LAPACK
    sees the row-major a[i] as its transpose, and sqrtm(A^T) = sqrtm(A)^T, so the result's
    column-major buffer read row-major is already sqrtm(a[i]).  For real a, an eigenvalue
    the Schur form gives as negative real up to rounding (|imag| <= 100 eps max|T_jj|)
    takes the root i sqrt(-re): the principal root of the real matrix (SciPy's, from its
    real Schur form), whatever the sign of the rounding error."""
    nb, n, _ = a.shape
    eps = 1.2e-7 if code == 2 else 2.3e-16
    ch, ints, lwork, t, z, w, _, work, rwork, bwork = _gees_workspace(n, out.dtype)
    for i in range(nb):
        if n == 0:
            continue
        for r in range(n):
            for c in range(n):
                t[r, c] = a[i, r, c]
        ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = n, n, 0, n, lwork, 0
        if not np.all(np.isfinite(t)) or _gees(code, ch, ints, t, w, z, work, rwork,
                                               bwork) != 0:
            nan_fill(out[i])        # JAX: all NaN for a non-finite matrix
            continue
        # t and z read row-major are T^T and Z^T of the column-major matrix M = a[i]^T
        tt = np.ascontiguousarray(t.T)
        zz = np.ascontiguousarray(z.T)
        rr = np.zeros((n, n), out.dtype)
        tol = -1.0
        if real_input:
            for j in range(n):
                tol = max(tol, 100.0 * eps * abs(tt[j, j]))
        for j in range(n):
            d = tt[j, j]
            if d.real < 0.0 and abs(d.imag) <= tol:
                rr[j, j] = 1j * np.sqrt(-d.real)
            else:
                rr[j, j] = np.sqrt(d)
            for k in range(j - 1, -1, -1):
                s = tt[k, j]
                for m in range(k + 1, j):
                    s -= rr[k, m] * rr[m, j]
                rr[k, j] = s / (rr[k, k] + rr[j, j])
        sm = np.dot(np.dot(zz, rr), np.conj(zz.T))        # sqrtm(M) = sqrtm(a[i])^T
        out[i] = sm.T
