"""A NumPy/SciPy model of the cuSOLVER (cusolverDn) C functions xforms/kernels/cuda/vendor/
calls, standing in for the shared library itself: `ModelSolverLib` has the C symbols as
attributes, so the real ctypes binding (vendor/cusolver.py: argument order, leading
dimensions, per-matrix offsets, workspace queries) runs against it.  Each routine reads and
writes column-major matrices in host memory at the addresses it is passed (simulated device
arrays are host memory) through SciPy's LAPACK wrappers, which compute the same LAPACK
routines cuSOLVER implements, with cuSOLVER's documented differences: getrf's pivots are
1-based, gesvd takes m >= n only and destroys A, and each routine writes its status to devInfo
(0, or > 0 where LAPACK reports a failure).  The workspace is filled with NaN, so a result
that read it, or a workspace shared wrongly, shows."""
import numpy as np
from scipy.linalg import lapack

from vendor_model import _memory

DTYPES = {"S": np.float32, "D": np.float64, "C": np.complex64, "Z": np.complex128}
LOWER = 0
INVALID_VALUE = 3


def _matrix(address, rows, cols, ld, dtype):
    """The column-major rows x cols matrix at `address` (leading dimension ld), writable."""
    mem = _memory(address, ld * (cols - 1) + rows, dtype)
    return np.lib.stride_tricks.as_strided(mem, (rows, cols), (mem.itemsize,
                                                               ld * mem.itemsize))


def _vector(address, n, dtype):
    return _memory(address, max(n, 1), dtype)


def _handle_fn(name):
    def fn(*args):
        if name not in ("cusolverDnSetStream", "cusolverDnDestroy"):    # &handle: made
            args[0]._obj.value = 1
        return 0
    return fn


def _lapack(letter, name):
    return getattr(lapack, letter.lower() + name)


class ModelSolverLib:
    """cusolverDn's C API over host memory; `calls` records (routine name, m, n) per call."""

    def __init__(self):
        self.calls = []
        self.work = {}                 # routine -> lwork it answered

    def __getattr__(self, name):        # a plain function per symbol, as ctypes' are
        if not name.startswith("cusolverDn"):
            raise AttributeError(name)
        if name in ("cusolverDnCreate", "cusolverDnSetStream", "cusolverDnCreateSyevjInfo",
                    "cusolverDnCreateParams", "cusolverDnDestroy"):
            return _handle_fn(name)
        if name.startswith("cusolverDnXgeev"):
            return self._xgeev_fn(name)
        letter, routine = name[len("cusolverDn")], name[len("cusolverDn") + 1:]
        query = routine.endswith("_bufferSize")
        routine = routine.replace("_bufferSize", "")
        impl = getattr(self, "_" + {"ungqr": "orgqr", "heevd": "syevd",
                                    "heevjBatched": "syevjBatched"}.get(routine, routine))
        dt = DTYPES[letter]

        def fn(handle, *args):
            if query:                    # &lwork: any size (the binding passes it on)
                next(a for a in args if type(a).__name__ == "CArgObject")._obj.value = \
                    7 + len(self.calls)
                return 0
            return impl(letter, dt, *args)
        fn.__name__ = name
        return fn

    def _xgeev_fn(self, name):
        def fn(handle, *args):
            if name.endswith("_bufferSize"):             # two &sizes, in bytes
                dev, host = args[-2:]
                dev._obj.value, host._obj.value = 64, 32
                return 0
            return self._xgeev(*args)
        fn.__name__ = name
        return fn

    def _xgeev(self, params, jobvl, jobvr, n, ta, a, lda, tw, w, tvl, vl, ldvl, tvr, vr, ldvr,
               compute, dwork, dbytes, hwork, hbytes, info):
        """cusolverDnXgeev with every type complex (CUDA_C_32F = 4, CUDA_C_64F = 5): zgeev's
        values and unit right eigenvectors (largest component real); A is overwritten."""
        dt = {4: np.complex64, 5: np.complex128}.get(ta)
        if dt is None or len({ta, tw, tvr, compute}) != 1 or jobvl != 0 or params is None \
                or lda < max(1, n) or (jobvr and ldvr < max(1, n)) or hwork is None:
            return INVALID_VALUE
        _vector(dwork, dbytes, np.uint8)[:] = 0xFF      # NaN in every float type
        A = _matrix(a, n, n, lda, dt)
        vals, _, vecs, status = _lapack("Z" if dt == np.complex128 else "C", "geev")(
            np.array(A), compute_vl=0, compute_vr=int(jobvr))
        A[...] = np.nan
        _vector(w, n, dt)[:n] = vals
        if jobvr:
            _matrix(vr, n, n, ldvr, dt)[...] = vecs
        return self._done(info, status, "geev", n)

    def _done(self, info, value, routine, *dims):
        _vector(info, 1, np.int32)[0] = value
        self.calls.append((routine,) + dims)
        return 0

    @staticmethod
    def _poison(work, lwork, dt):
        _vector(work, lwork, dt)[:] = np.nan

    def _potrf(self, L, dt, uplo, n, a, lda, work, lwork, info):
        if lda < max(1, n):
            return INVALID_VALUE
        self._poison(work, lwork, dt)
        A = _matrix(a, n, n, lda, dt)
        c, status = _lapack(L, "potrf")(np.array(A), lower=uplo == LOWER, clean=0)
        A[...] = c
        return self._done(info, status, "potrf", n)

    def _getrf(self, L, dt, m, n, a, lda, work, ipiv, info):
        if lda < max(1, m):
            return INVALID_VALUE
        A = _matrix(a, m, n, lda, dt)
        lu, piv, status = _lapack(L, "getrf")(np.array(A))
        A[...] = lu
        _vector(ipiv, min(m, n), np.int32)[:min(m, n)] = piv + 1      # 1-based, as LAPACK
        return self._done(info, status, "getrf", m, n)

    def _geqrf(self, L, dt, m, n, a, lda, tau, work, lwork, info):
        if lda < max(1, m):
            return INVALID_VALUE
        self._poison(work, lwork, dt)
        A = _matrix(a, m, n, lda, dt)
        qr, t, _, status = _lapack(L, "geqrf")(np.array(A))
        A[...] = qr
        _vector(tau, min(m, n), dt)[:min(m, n)] = t
        return self._done(info, status, "geqrf", m, n)

    def _orgqr(self, L, dt, m, n, k, a, lda, tau, work, lwork, info):
        if not m >= n >= k or lda < max(1, m):
            return INVALID_VALUE
        self._poison(work, lwork, dt)
        A = _matrix(a, m, n, lda, dt)
        q, _, status = _lapack(L, "ungqr" if L in "CZ" else "orgqr")(
            np.array(A), np.array(_vector(tau, k, dt)[:k]))
        A[...] = q
        return self._done(info, status, "orgqr", m, n, k)

    def _syevd(self, L, dt, jobz, uplo, n, a, lda, w, work, lwork, info):
        if lda < max(1, n):
            return INVALID_VALUE
        self._poison(work, lwork, dt)
        A = _matrix(a, n, n, lda, dt)
        fn = _lapack(L, "heevd" if L in "CZ" else "syevd")
        vals, vecs, status = fn(np.array(A), compute_v=jobz, lower=uplo == LOWER)
        A[...] = vecs
        _vector(w, n, np.empty(0, dt).real.dtype)[:n] = vals
        return self._done(info, status, "syevd", n)

    def _syevjBatched(self, L, dt, jobz, uplo, n, a, lda, w, work, lwork, info, params,
                      batch):
        """cuSOLVER's contract: n <= 32, the batch's matrices one every lda * n elements,
        their values n apart in W, one devInfo each; same results as syevd (ascending)."""
        if not 1 <= n <= 32 or lda < max(1, n) or params is None:
            return INVALID_VALUE
        real = np.empty(0, dt).real.dtype
        for p in range(batch):
            self._syevd(L, dt, jobz, uplo, n, a + p * lda * n * np.dtype(dt).itemsize, lda,
                        w + p * n * real.itemsize, work, lwork, info + 4 * p)
        self.calls[-batch:] = [("syevjBatched", n, batch)]
        return 0

    def _gesvd(self, L, dt, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork,
               rwork, info):
        job = chr(jobu)
        k = min(m, n)
        ucols, vrows = (m, n) if job == "A" else (k, k)
        if m < n or jobu != jobvt or lda < max(1, m) or \
                (job != "N" and (ldu < max(1, m) or ldvt < max(1, vrows))):
            return INVALID_VALUE                  # cuSOLVER's gesvd: m >= n only
        self._poison(work, lwork, dt)
        A = _matrix(a, m, n, lda, dt)
        U, S, VT, status = _lapack(L, "gesvd")(np.array(A), compute_uv=job != "N",
                                               full_matrices=job == "A")
        A[...] = np.nan                            # "the contents of A are destroyed"
        _vector(s, k, np.empty(0, dt).real.dtype)[:k] = S
        if job != "N":
            _matrix(u, m, ucols, ldu, dt)[...] = U[:, :ucols]
            _matrix(vt, vrows, n, ldvt, dt)[...] = VT[:vrows]
        return self._done(info, status, "gesvd", m, n, job)
