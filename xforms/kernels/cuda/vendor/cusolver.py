"""cuSOLVER (dense) through ctypes: one handle per CUDA context (contexts.py), bound to the
backend's stream, and `run`, which executes one SolverCall (solver_map.py) matrix by matrix
(or, for a batched routine, in one call).

    solver = Cusolver(ctypes.CDLL("libcusolver.so.12"))
    solver.run(call, a_ptr, {"info": info_ptr}, scratch, context=ctx, stream=s)

Pointers are device addresses (ints); `scratch(count, dtype)` returns the address of a
device buffer of `count` elements that stays valid until the stream has run this call (the
backend's pool: blocks are reused in stream order).  Each routine's workspace size comes
from its `_bufferSize` query, once per call; one workspace serves the whole batch, since the
matrices' calls run one after another on the stream.  devInfo is written per matrix into
the `info` buffer and never read here: the rule's next kernel turns a failure into NaNs.
Signatures: cusolverDn.h of the nvidia-cusolver 12.4 wheel (CUDA 13).
"""
import threading
from ctypes import POINTER, byref, c_byte, c_int, c_int64, c_size_t

import numpy as np

from .contexts import PerContext
from .gemm_map import DATA_TYPE
from .solver_map import BATCHED, EIG_VECTOR, ROUTINES, SolverCall, buffer_sizes, routine_name
from .status import ADDR, LibraryError

_C = {"i": c_int, "p": ADDR, "c": c_byte, "w": POINTER(c_int), "l": c_int64, "z": c_size_t,
      "s": POINTER(c_size_t)}
# cusolverDnXgeev (64-bit API): params jobvl jobvr n | type A lda | type W | type VL ldvl |
# type VR ldvr | computeType; then the query's two &sizes, or the call's workspaces and info
_GEEV = "piil" + "ipl" + "ip" + "ipl" + "ipl" + "i"
# routine -> (arguments of its _bufferSize query after the handle; those of the routine itself
# after the handle), by letter: i int, p pointer or handle, c signed char, w &lwork
SIGNATURES = {"potrf": ("iipiw", "iipipip"),         # uplo n A lda | work lwork info
              "getrf": ("iipiw", "iipippp"),         # m n A lda | work ipiv info
              "geqrf": ("iipiw", "iipippip"),        # m n A lda | tau work lwork info
              "orgqr": ("iiipipw", "iiipippip"),     # m n k A lda tau | work lwork info
              "syevd": ("iiipipw", "iiipippip"),     # jobz uplo n A lda W | work lwork info
              "syevjBatched": ("iiipipwpi",          # jobz uplo n A lda W lwork params batch
                               "iiipippippi"),       # ... W work lwork info params batch
              "gesvd": ("iiw", "cciipippipipipp"),   # m n | ... S U ldu VT ldvt work lwork
#                                                      rwork info
              "geev": (_GEEV + "ss", _GEEV + "pzpzp")}  # ... device work, bytes, host work,
#                                                         bytes, info
_LWORK = object()                  # where a query's &lwork goes
_STATUS = {1: "NOT_INITIALIZED", 2: "ALLOC_FAILED", 3: "INVALID_VALUE", 4: "ARCH_MISMATCH",
           5: "MAPPING_ERROR", 6: "EXECUTION_FAILED", 7: "INTERNAL_ERROR",
           8: "MATRIX_TYPE_NOT_SUPPORTED", 9: "NOT_SUPPORTED"}


class CusolverError(LibraryError):
    """A cuSOLVER call returned an error status."""


def _check(status, what):
    if status != 0:
        raise CusolverError(f"cuSOLVER {what} failed with status {status} "
                            f"(CUSOLVER_STATUS_{_STATUS.get(status, 'UNKNOWN')})")


def _real(dtype):
    return np.empty(0, dtype).real.dtype


class Cusolver:
    """The bound library: `run` executes one SolverCall on the given stream."""

    def __init__(self, lib):
        self._lib = lib
        lib.cusolverDnCreate.argtypes = [POINTER(ADDR)]
        lib.cusolverDnSetStream.argtypes = [ADDR, ADDR]
        lib.cusolverDnDestroy.argtypes = [ADDR]
        self._fns = {}
        self._syevj = None             # syevjBatched's parameters (host-side: defaults)
        self._params = None            # the 64-bit API's cusolverDnParams_t (defaults)
        self._host_work = np.empty(0, np.uint8)     # geev's host workspace, kept
        # [handle, the stream it is bound to] of the current context
        self._handles = PerContext(lambda e: _check(lib.cusolverDnDestroy(e[0]),
                                                    "cusolverDnDestroy"))
        self._lock = threading.Lock()

    def bind(self, routine, dtype):
        """(the _bufferSize query, the routine) as ctypes functions with their argtypes."""
        key = (routine, np.dtype(dtype))
        if key not in self._fns:
            name = routine_name(routine, dtype)
            query, call = SIGNATURES[routine]
            q, f = getattr(self._lib, name + "_bufferSize"), getattr(self._lib, name)
            q.argtypes = [ADDR] + [_C[t] for t in query]
            f.argtypes = [ADDR] + [_C[t] for t in call]
            self._fns[key] = (q, f)
        return self._fns[key]

    def _new_handle(self):
        h = ADDR()
        _check(self._lib.cusolverDnCreate(byref(h)), "cusolverDnCreate")
        return [h, None]

    def _handle(self, context, stream):
        entry = self._handles.get(context, "handle", self._new_handle)
        if entry[1] != stream:
            _check(self._lib.cusolverDnSetStream(entry[0], ADDR(stream)), "cusolverDnSetStream")
            entry[1] = stream
        return entry[0]

    def run(self, call, a, buffers, scratch, context, stream):
        """Run SolverCall `call` (or its tuple) on the matrices at address `a`; `buffers`:
        the address of each buffer ROUTINES names for it."""
        c = SolverCall(*call)
        dt = np.dtype(c.dtype)
        q, f = self.bind(c.routine, dt)
        with self._lock:               # a handle is bound to one stream at a time
            h = self._handle(context, stream)
            if c.routine == "geev":
                return self._geev(c, q, f, h, a, buffers, scratch)
            lwork = c_int()
            extra = self._syevj_params() if c.routine in BATCHED else None
            query = [byref(lwork) if x is _LWORK else x
                     for x in _query_args(c, a, buffers, extra)]
            _check(q(h, *query), f"{q.__name__}{tuple(c)}")
            work = scratch(max(1, lwork.value), dt)
            rwork = scratch(max(1, min(c.m, c.n)), _real(dt)) if c.routine == "gesvd" else None
            for p in range(1 if c.routine in BATCHED else c.batch):
                args = _call_args(c, _at(c, a, buffers, p), work, lwork.value, rwork, extra)
                _check(f(h, *args), f"{f.__name__}{tuple(c)} (matrix {p})")

    def _geev(self, c, q, f, h, a, buffers, scratch):
        """cusolverDnXgeev matrix by matrix: right eigenvectors only (jobvl = NOVECTOR), all
        types the complex dtype; device and host workspaces in bytes."""
        if self._params is None:
            self._params = self._create("cusolverDnCreateParams")
        t = DATA_TYPE[np.dtype(c.dtype)]
        job = EIG_VECTOR if c.job == "V" else 0

        def head(x):
            return (self._params, 0, job, c.n, t, x["a"], c.m, t, x["w"], t, None, 1, t, x["vr"],
                    c.n, t)
        dev, host = c_size_t(), c_size_t()
        _check(q(h, *head(_at(c, a, buffers, 0)), byref(dev), byref(host)),
               f"{q.__name__}{tuple(c)}")
        work = scratch(max(1, dev.value), np.uint8)
        if self._host_work.size < host.value:
            self._host_work = np.empty(host.value, np.uint8)
        for p in range(c.batch):
            x = _at(c, a, buffers, p)
            _check(f(h, *head(x), work, dev.value, self._host_work.ctypes.data, host.value,
                     x["info"]), f"{f.__name__}{tuple(c)} (matrix {p})")

    def _create(self, name):
        fn = getattr(self._lib, name)
        fn.argtypes = [POINTER(ADDR)]
        p = ADDR()
        _check(fn(byref(p)), name)
        return p

    def _syevj_params(self):
        """syevjBatched's syevjInfo_t, made once: the defaults (tolerance: machine
        precision, 100 sweeps, eigenvalues sorted ascending)."""
        if self._syevj is None:
            self._syevj = self._create("cusolverDnCreateSyevjInfo")
        return self._syevj


def _at(c, a, buffers, p):
    """The addresses of matrix p's A and buffers."""
    dt = np.dtype(c.dtype)
    sizes = buffer_sizes(c)
    real = _real(dt).itemsize      # eigen- and singular values are real (geev's: complex)
    item = {"info": 4, "ipiv": 4, "s": real, "w": dt.itemsize if c.routine == "geev" else real}
    out = {"a": a + p * c.stride * dt.itemsize}
    for name in ROUTINES[c.routine]:
        out[name] = buffers[name] + p * sizes[name] * item.get(name, dt.itemsize)
    return out


def _query_args(c, a, buffers, params):
    w = _LWORK
    return {"potrf": lambda: (c.uplo, c.n, a, c.m, w),
            "getrf": lambda: (c.m, c.n, a, c.m, w),
            "geqrf": lambda: (c.m, c.n, a, c.m, w),
            "orgqr": lambda: (c.m, c.n, c.k, a, c.m, buffers["tau"], w),
            "syevd": lambda: (EIG_VECTOR, c.uplo, c.n, a, c.m, buffers["w"], w),
            "syevjBatched": lambda: (EIG_VECTOR, c.uplo, c.n, a, c.m, buffers["w"], w, params,
                                     c.batch),
            "gesvd": lambda: (c.m, c.n, w)}[c.routine]()


def _call_args(c, x, work, lwork, rwork, params):
    job = ord(c.job)
    ldvt = max(1, min(c.m, c.n) if c.job == "S" else c.n)
    return {"potrf": lambda: (c.uplo, c.n, x["a"], c.m, work, lwork, x["info"]),
            "getrf": lambda: (c.m, c.n, x["a"], c.m, work, x["ipiv"], x["info"]),
            "geqrf": lambda: (c.m, c.n, x["a"], c.m, x["tau"], work, lwork, x["info"]),
            "orgqr": lambda: (c.m, c.n, c.k, x["a"], c.m, x["tau"], work, lwork, x["info"]),
            "syevd": lambda: (EIG_VECTOR, c.uplo, c.n, x["a"], c.m, x["w"], work, lwork,
                              x["info"]),
            "syevjBatched": lambda: (EIG_VECTOR, c.uplo, c.n, x["a"], c.m, x["w"], work, lwork,
                                     x["info"], params, c.batch),
            "gesvd": lambda: (job, job, c.m, c.n, x["a"], c.m, x["s"], x["u"], c.m, x["vt"],
                              ldvt, work, lwork, rwork, x["info"])}[c.routine]()
