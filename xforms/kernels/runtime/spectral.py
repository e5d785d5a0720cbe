"""Numba functions behind the spectral primitives qr, eigh, eig and svd (xforms/primitives/
linalg/spectral.py), called by the code xforms/kernels/ops/linalg/factor.py generates: LAPACK's
?geqrf + ?orgqr/?ungqr, ?syevd/?heevd, ?geev and ?gesdd, the routines JAX calls, through
SciPy's Cython bindings (linalg.py's `extern`).  Numba's own np.linalg refuses inf and NaN
("Array must not contain infs or NaNs"); LAPACK does not, and its answer there is JAX's (the
Q of a matrix with a NaN keeps its finite leading columns; the eigenvectors of a symmetric
matrix with an inf are the identity).  A LAPACK failure gives `nan_fill`'s NaNs, as in JAX.

Each matrix is copied transposed into a column-major work matrix and its factors copied back
transposed.  `code`: the LAPACK type, 0 s, 1 d, 2 c, 3 z.

    >>> la_qr(a.reshape(1, m, n), q.reshape(1, m, k), r.reshape(1, k, n), False, 1)
"""
import numba
import numpy as np

from .helper_cache import CACHE as _CACHE
from .linalg import extern, ptr, nan_fill

s_geqrf, d_geqrf, c_geqrf, z_geqrf = extern("lapack", "geqrf", 8)
s_orgqr, d_orgqr, c_ungqr, z_ungqr = extern("lapack", "orgqr", 9,
                                             ["sorgqr", "dorgqr", "cungqr", "zungqr"])
s_syevd, d_syevd = extern("lapack", "syevd", 11, ["ssyevd", "dsyevd"])
c_heevd, z_heevd = extern("lapack", "heevd", 13, ["cheevd", "zheevd"])
c_geev, z_geev = extern("lapack", "geev", 14, ["cgeev", "zgeev"])


@numba.njit(cache=_CACHE, nogil=True)
def _geqrf(code, ints, buf, tau, work):
    """?geqrf(m, n, a, lda, tau, work, lwork, info) (ints: m, n, ncols, k, lda, lwork, info)."""
    args = (ptr(ints[0:1]), ptr(ints[1:2]), ptr(buf), ptr(ints[4:5]), ptr(tau),
            ptr(work), ptr(ints[5:6]), ptr(ints[6:7]))
    if code == 0:
        s_geqrf(*args)
    elif code == 1:
        d_geqrf(*args)
    elif code == 2:
        c_geqrf(*args)
    else:
        z_geqrf(*args)


@numba.njit(cache=_CACHE, nogil=True)
def _orgqr(code, ints, buf, tau, work):
    """?orgqr/?ungqr(m, ncols, k, a, lda, tau, work, lwork, info): the first ncols columns
    of Q from ?geqrf's reflectors."""
    args = (ptr(ints[0:1]), ptr(ints[2:3]), ptr(ints[3:4]), ptr(buf), ptr(ints[4:5]),
            ptr(tau), ptr(work), ptr(ints[5:6]), ptr(ints[6:7]))
    if code == 0:
        s_orgqr(*args)
    elif code == 1:
        d_orgqr(*args)
    elif code == 2:
        c_ungqr(*args)
    else:
        z_ungqr(*args)


@numba.njit(cache=_CACHE, nogil=True)
def la_qr(a, q, r, full, code):
    """Householder QR of a[i] as JAX: ?geqrf, R from its upper triangle (m x n, zero rows
    below n, when `full` and m > n), Q (m x m when `full`, else m x min(m, n)) by ?orgqr."""
    nb, m, n = a.shape
    k, ncols = min(m, n), q.shape[2]
    lwork = 64 * max(m, n, 1)
    ints = np.empty(7, np.int32)
    buf = np.zeros((max(n, ncols), m), a.dtype)          # column-major: buf[j] is column j
    tau, work = np.zeros(max(k, 1), a.dtype), np.empty(lwork, a.dtype)
    for i in range(nb):
        buf[:, :] = 0
        buf[:n, :] = a[i].T
        ints[0], ints[1], ints[2], ints[3] = m, n, ncols, k
        ints[4], ints[5], ints[6] = max(m, 1), lwork, 0
        _geqrf(code, ints, buf, tau, work)
        for row in range(r.shape[1]):
            for col in range(n):
                r[i, row, col] = buf[col, row] if row <= col else 0
        _orgqr(code, ints, buf, tau, work)
        q[i] = buf[:ncols].T


@numba.njit(cache=_CACHE, nogil=True)
def _syevd(code, ch, ints, buf, w, work, rwork, iwork):
    """?syevd(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info) or ?heevd(...,
    work, lwork, rwork, lrwork, iwork, liwork, info) (ints: n, lda, lwork, lrwork, liwork,
    info)."""
    p = (ptr(ch[0:1]), ptr(ch[1:2]), ptr(ints[0:1]), ptr(buf), ptr(ints[1:2]), ptr(w),
         ptr(work), ptr(ints[2:3]))
    tail = (ptr(iwork), ptr(ints[4:5]), ptr(ints[5:6]))
    if code == 0:
        s_syevd(*p, *tail)
    elif code == 1:
        d_syevd(*p, *tail)
    elif code == 2:
        c_heevd(*p, ptr(rwork), ptr(ints[3:4]), *tail)
    else:
        z_heevd(*p, ptr(rwork), ptr(ints[3:4]), *tail)
    return ints[5]


@numba.njit(cache=_CACHE, nogil=True)
def la_eigh(a, v, w, lower, code):
    """Eigenvectors v[i] (columns) and ascending eigenvalues w[i] of Hermitian a[i], read
    from its lower (or upper) triangle, by ?syevd/?heevd as JAX; NaN if LAPACK fails."""
    nb, n, _ = a.shape
    ch = np.empty(2, np.uint8)
    ch[0], ch[1] = ord("V"), ord("L") if lower else ord("U")
    lwork = 1 + 6 * n + 2 * n * n if code <= 1 else 2 * n + n * n     # LAPACK's minima
    ints = np.empty(6, np.int32)
    buf = np.empty((n, n), a.dtype)                      # column-major a[i]
    work, iwork = np.empty(max(lwork, 1), a.dtype), np.empty(3 + 5 * n, np.int32)
    rwork = np.empty(1 + 5 * n + 2 * n * n, w.dtype)
    for i in range(nb):
        if n == 0:
            continue
        buf[:, :] = a[i].T
        ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = (n, n, lwork, rwork.size,
                                                                iwork.size, 0)
        if _syevd(code, ch, ints, buf, w[i], work, rwork, iwork) != 0:
            nan_fill(w[i])
            nan_fill(v[i])
        else:
            v[i] = buf.T


s_geev, d_geev = extern("lapack", "geev", 14, ["sgeev", "dgeev"])


@numba.njit(cache=_CACHE, nogil=True)
def _geev(code, ch, ints, buf, wr, wi, vr, work):
    """LAPACK ?geev(jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr, work, lwork, info)
    on the column-major real buf: eigenvalues and right eigenvectors (no left ones)."""
    args = (ptr(ch[0:1]), ptr(ch[1:2]), ptr(ints[0:1]), ptr(buf), ptr(ints[1:2]),
            ptr(wr), ptr(wi), ptr(vr), ptr(ints[2:3]), ptr(vr), ptr(ints[1:2]),
            ptr(work), ptr(ints[3:4]), ptr(ints[4:5]))
    if code == 0:
        s_geev(*args)
    else:
        d_geev(*args)
    return ints[4]


@numba.njit(cache=_CACHE, nogil=True)
def _eig_failed(w, v, vectors):
    """JAX's eig of a matrix with an inf or NaN (or that ?geev fails on): all nan+nanj."""
    nan_fill(w)
    if vectors:
        nan_fill(v)


@numba.njit(cache=_CACHE, nogil=True)
def _la_eig_real(a, w, v, vectors, code):
    """eig of real a[i] by real ?geev, as NumPy and JAX do: the same eigenvalue order, and
    each complex pair's vectors v_j = vr_j + i vr_{j+1}, v_{j+1} = conj(v_j)."""
    nb, n, _ = a.shape
    ch = np.empty(2, np.uint8)
    ch[0], ch[1] = ord("N"), ord("V") if vectors else ord("N")
    ints = np.empty(5, np.int32)
    lwork = max(1, 8 * n)
    buf = np.empty((n, n), a.dtype)
    wr = np.empty(max(n, 1), a.dtype)
    wi = np.empty(max(n, 1), a.dtype)
    vr = np.empty((n, n), a.dtype)
    work = np.empty(lwork, a.dtype)
    for i in range(nb):
        if n == 0:
            continue
        buf[:, :] = a[i].T                       # column-major a[i]
        ints[0], ints[1], ints[2], ints[3], ints[4] = n, n, n, lwork, 0
        if not np.all(np.isfinite(buf)) or _geev(code, ch, ints, buf, wr, wi, vr, work) != 0:
            _eig_failed(w[i], v[i], vectors)
            continue
        for j in range(n):
            w[i, j] = wr[j] + 1j * wi[j]
        if not vectors:
            continue
        vt = vr                 # column-major: row j of the C-order buffer is vector j
        j = 0
        while j < n:
            if wi[j] != 0.0 and j + 1 < n:
                for r in range(n):
                    v[i, r, j] = vt[j, r] + 1j * vt[j + 1, r]
                    v[i, r, j + 1] = vt[j, r] - 1j * vt[j + 1, r]
                j += 2
            else:
                for r in range(n):
                    v[i, r, j] = vt[j, r]
                j += 1


@numba.njit(cache=_CACHE, nogil=True)
def _cgeev(code, ch, ints, buf, w, vr, work, rwork):
    """LAPACK ?geev(jobvl, jobvr, n, a, lda, w, vl, ldvl, vr, ldvr, work, lwork, rwork, info)
    on the column-major complex buf."""
    args = (ptr(ch[0:1]), ptr(ch[1:2]), ptr(ints[0:1]), ptr(buf), ptr(ints[1:2]),
            ptr(w), ptr(vr), ptr(ints[2:3]), ptr(vr), ptr(ints[1:2]), ptr(work),
            ptr(ints[3:4]), ptr(rwork), ptr(ints[4:5]))
    if code == 2:
        c_geev(*args)
    else:
        z_geev(*args)
    return ints[4]


@numba.njit(cache=_CACHE, nogil=True)
def la_eig(a, w, v, vectors, code):
    """Eigenvalues w[i] and unit right eigenvectors v[i] of general a[i]; NaN on failure.
    Real a: real ?geev (code 0/1: NumPy's and JAX's order); complex a: complex ?geev.
    Without `vectors`, v is scratch."""
    if code <= 1:
        _la_eig_real(a, w, v, vectors, code)
        return
    nb, n, _ = a.shape
    ch = np.empty(2, np.uint8)
    ch[0], ch[1] = ord("N"), ord("V") if vectors else ord("N")
    ints = np.empty(5, np.int32)
    lwork = max(1, 8 * n)
    buf, vr = np.empty((n, n), w.dtype), np.empty((n, n), w.dtype)
    work, rwork = np.empty(lwork, w.dtype), np.empty(max(2 * n, 1), w.real.dtype)
    for i in range(nb):
        if n == 0:
            continue
        buf[:, :] = a[i].T                       # column-major a[i]
        ints[0], ints[1], ints[2], ints[3], ints[4] = n, n, n, lwork, 0
        if not np.all(np.isfinite(buf)) or _cgeev(code, ch, ints, buf, w[i], vr, work,
                                                  rwork) != 0:
            _eig_failed(w[i], v[i], vectors)
        elif vectors:
            v[i] = vr.T                          # column-major: row j is vector j

s_gesdd, d_gesdd = extern("lapack", "gesdd", 14, ["sgesdd", "dgesdd"])
c_gesdd, z_gesdd = extern("lapack", "gesdd", 15, ["cgesdd", "zgesdd"])


@numba.njit(cache=_CACHE, nogil=True)
def _gesdd(code, ch, ints, buf, s, u, vt, work, rwork, iwork):
    """LAPACK ?gesdd(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, [rwork,] iwork,
    info) on the column-major buf (ints: m, n, lda, ldu, ldvt, lwork, info)."""
    p = (ptr(ch), ptr(ints[0:1]), ptr(ints[1:2]), ptr(buf), ptr(ints[2:3]), ptr(s),
         ptr(u), ptr(ints[3:4]), ptr(vt), ptr(ints[4:5]), ptr(work), ptr(ints[5:6]))
    if code == 0:
        s_gesdd(*p, ptr(iwork), ptr(ints[6:7]))
    elif code == 1:
        d_gesdd(*p, ptr(iwork), ptr(ints[6:7]))
    elif code == 2:
        c_gesdd(*p, ptr(rwork), ptr(iwork), ptr(ints[6:7]))
    else:
        z_gesdd(*p, ptr(rwork), ptr(iwork), ptr(ints[6:7]))
    return ints[6]


@numba.njit(cache=_CACHE, nogil=True)
def la_svd(a, s, u, vt, full, compute_uv, code):
    """Singular values s[i] (descending) and, with compute_uv, u[i] and vt[i], by ?gesdd as
    NumPy and JAX (Numba's svd refuses inf and NaN; LAPACK's answer there is JAX's, e.g. the
    factors of a matrix with an inf are finite and its values NaN); NaN when LAPACK fails.
    Without compute_uv, u and vt are unused placeholders."""
    nb, m, n = a.shape
    if m == 0 or n == 0:
        # (LAPACK refuses an empty matrix; NumPy and JAX give identity factors)
        for i in range(nb):
            if compute_uv and full:
                u[i] = np.eye(u.shape[1], dtype=u.dtype)
                vt[i] = np.eye(vt.shape[1], dtype=vt.dtype)
        return
    k, mx = min(m, n), max(m, n)
    ucol, ldvt = (m, n) if full else (k, k)
    ch = np.empty(1, np.uint8)
    ch[0] = ord("N") if not compute_uv else ord("A") if full else ord("S")
    lwork = 4 * k * k + 7 * k + mx if code <= 1 else k * k + 3 * k + mx   # LAPACK's minima
    ints = np.empty(7, np.int32)
    buf = np.empty((n, m), a.dtype)              # column-major a[i]
    ub, vb = np.empty((ucol, m), a.dtype), np.empty((n, ldvt), a.dtype)
    work = np.empty(lwork, a.dtype)
    rwork = np.empty(max(5 * k * k + 7 * k, 2 * mx * k + 2 * k * k + k), s.dtype)
    iwork = np.empty(8 * k, np.int32)
    for i in range(nb):
        buf[:, :] = a[i].T
        ints[0], ints[1], ints[2], ints[3], ints[4], ints[5], ints[6] = m, n, m, m, ldvt, lwork, 0
        if _gesdd(code, ch, ints, buf, s[i], ub, vb, work, rwork, iwork) != 0:
            nan_fill(s[i])
            if compute_uv:
                nan_fill(u[i])
                nan_fill(vt[i])
        elif compute_uv:
            u[i] = ub.T
            vt[i] = vb.T
