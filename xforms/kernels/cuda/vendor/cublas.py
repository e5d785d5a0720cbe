"""cuBLAS through ctypes: one handle per CUDA context (contexts.py), bound to the backend's
stream, and the one call the backend makes (cublasGemmStridedBatchedEx).

    blas = Cublas(ctypes.CDLL("libcublas.so.13"))
    blas.gemm(g, np.float32, COMPUTE_32F, a_ptr, b_ptr, c_ptr, context=ctx, stream=s)

Pointers are device addresses (ints, from `__cuda_array_interface__`); `context` and
`stream` are the driver's handles as ints.  cuBLAS allocates its own workspace per handle.
"""
import ctypes
import threading
from ctypes import POINTER, c_int, c_longlong

import numpy as np

from .contexts import PerContext
from .gemm_map import DATA_TYPE
from .status import ADDR, LibraryError

_GEMM_ARGS = [ADDR, c_int, c_int, c_int, c_int, c_int,     # handle, ops, m, n, k
              ADDR, ADDR, c_int, c_int, c_longlong,        # alpha, A, type, ld, stride
              ADDR, c_int, c_int, c_longlong,              # B, type, ld, stride
              ADDR, ADDR, c_int, c_int, c_longlong,        # beta, C, type, ld, stride
              c_int, c_int, c_int]                         # batch, compute, algo
_ALGO_DEFAULT = -1                                                     # CUBLAS_GEMM_DEFAULT


class CublasError(LibraryError):
    """A cuBLAS call returned an error status."""


class Cublas:
    """The bound library: `gemm` runs one Gemm (gemm_map.py) on the given stream."""

    def __init__(self, lib):
        self._lib = lib
        lib.cublasCreate_v2.argtypes = [POINTER(ADDR)]
        lib.cublasSetStream_v2.argtypes = [ADDR, ADDR]
        lib.cublasDestroy_v2.argtypes = [ADDR]
        lib.cublasGemmStridedBatchedEx.argtypes = _GEMM_ARGS
        lib.cublasGetStatusString.restype = ctypes.c_char_p
        lib.cublasGetStatusString.argtypes = [c_int]
        self._gemm = lib.cublasGemmStridedBatchedEx
        # [handle, the stream it is bound to] of the current context
        self._handles = PerContext(lambda e: self._check(lib.cublasDestroy_v2(e[0]),
                                                         "cublasDestroy"))
        self._lock = threading.Lock()
        # alpha = 1, beta = 0 in each dtype (host pointer mode: cuBLAS reads them at the call)
        self._scale = {dt: (np.ones(1, dt), np.zeros(1, dt)) for dt in DATA_TYPE}

    def _check(self, status, what):
        if status != 0:
            text = self._lib.cublasGetStatusString(status).decode()
            raise CublasError(f"cuBLAS {what} failed with status {status} ({text})")

    def _create(self):
        h = ADDR()
        self._check(self._lib.cublasCreate_v2(ctypes.byref(h)), "cublasCreate")
        return [h, None]

    def _handle(self, context, stream):
        """This context's handle, created on first use and bound to `stream`."""
        entry = self._handles.get(context, "handle", self._create)
        if entry[1] != stream:         # rebinding resets cuBLAS's workspace: only on change
            self._check(self._lib.cublasSetStream_v2(entry[0], ADDR(stream)),
                        "cublasSetStream")
            entry[1] = stream
        return entry[0]

    def gemm(self, g, dtype, compute, a, b, c, context, stream):
        """C = op(A) op(B) for each of g.batch matrices (g: a Gemm or its tuple)."""
        (transa, transb, m, n, k, lda, ldb, ldc, sa, sb, sc, batch) = g
        dt = np.dtype(dtype)
        t = DATA_TYPE[dt]
        one, zero = self._scale[dt]
        with self._lock:               # a handle is bound to one stream at a time
            h = self._handle(context, stream)
            status = self._gemm(h, transa, transb, m, n, k, one.ctypes.data, a, t, lda, sa,
                                b, t, ldb, sb, zero.ctypes.data, c, t, ldc, sc, batch,
                                compute, _ALGO_DEFAULT)
        self._check(status, f"cublasGemmStridedBatchedEx{tuple(g)}")
