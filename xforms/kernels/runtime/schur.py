"""Numba functions behind schur and hessenberg (xforms/primitives/linalg/schur.py), called by
the code xforms/kernels/ops/linalg.py generates: LAPACK ?gees and ?gehrd, the routines the
fast tier calls through SciPy, so both tiers give the same factors.

Each matrix is copied transposed into a column-major work matrix (LAPACK's layout) and its
factors copied back transposed; a non-finite matrix or a LAPACK failure gives NaNs, as the
fast tier does.  `code` is the LAPACK type of the outputs (0 s, 1 d, 2 c, 3 z).

    >>> la_schur(a.reshape(1, n, n), t.reshape(1, n, n), z.reshape(1, n, n), 1)
"""
import numba
import numpy as np

from .helper_cache import CACHE as _CACHE
from .linalg import _extern, _gees, _ptr

s_gees, d_gees = _extern("lapack", "gees", 15, ["sgees", "dgees"])
s_gehrd, d_gehrd, c_gehrd, z_gehrd = _extern("lapack", "gehrd", 9)


@numba.njit(cache=_CACHE, nogil=True)
def _load(a, t):
    """t := a transposed (a row-major matrix as LAPACK's column-major t); False if a has a
    non-finite entry."""
    n = a.shape[0]
    for r in range(n):
        for c in range(n):
            t[c, r] = a[r, c]
    return np.all(np.isfinite(a))


@numba.njit(cache=_CACHE, nogil=True)
def _real_gees(code, ch, ints, t, wr, wi, z, work, bwork):
    """LAPACK s/dgees(jobvs, sort, select, n, a, lda, sdim, wr, wi, vs, ldvs, work, lwork,
    bwork, info): the real Schur form, no sorting."""
    args = (_ptr(ch[0:1]), _ptr(ch[1:2]), _ptr(bwork), _ptr(ints[0:1]), _ptr(t),
            _ptr(ints[1:2]), _ptr(ints[2:3]), _ptr(wr), _ptr(wi), _ptr(z), _ptr(ints[3:4]),
            _ptr(work), _ptr(ints[4:5]), _ptr(bwork), _ptr(ints[5:6]))
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
    ch = np.empty(2, np.uint8)
    ch[0], ch[1] = ord("V"), ord("N")
    ints = np.empty(6, np.int32)
    lwork = max(1, 64 * n)
    t = np.empty((n, n), tout.dtype)
    z = np.empty((n, n), tout.dtype)
    wr = np.empty(max(n, 1), tout.dtype)
    wi = np.empty(max(n, 1), tout.dtype)
    work = np.empty(lwork, tout.dtype)
    rwork = np.empty(max(n, 1), np.float64)      # n reals: also big enough for cgees
    bwork = np.zeros(max(n, 1), np.int32)
    for i in range(nb):
        if n == 0:
            continue
        ok = _load(a[i], t)
        ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = n, n, 0, n, lwork, 0
        if ok:
            info = _real_gees(code, ch, ints, t, wr, wi, z, work, bwork) if code < 2 else \
                _gees(code, ch, ints, t, wr, z, work, rwork, bwork)
            ok = info == 0
        if not ok:
            tout[i] = np.nan
            zout[i] = np.nan
            continue
        tout[i] = t.T
        zout[i] = z.T


@numba.njit(cache=_CACHE, nogil=True)
def _gehrd(code, ints, t, tau, work):
    """LAPACK ?gehrd(n, ilo, ihi, a, lda, tau, work, lwork, info) on the whole matrix
    (ilo = 1, ihi = n)."""
    args = (_ptr(ints[0:1]), _ptr(ints[1:2]), _ptr(ints[2:3]), _ptr(t), _ptr(ints[3:4]),
            _ptr(tau), _ptr(work), _ptr(ints[4:5]), _ptr(ints[5:6]))
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
        ok = _load(a[i], t)
        ints[0], ints[1], ints[2], ints[3], ints[4], ints[5] = n, 1, n, n, lwork, 0
        if ok and _gehrd(code, ints, t, tau, work) == 0:
            pout[i] = t.T
            tauout[i] = tau[:n - 1]
        else:
            pout[i] = np.nan
            tauout[i] = np.nan
