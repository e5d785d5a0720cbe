"""cuFFT through ctypes: plans cached per CUDA context and transform, each bound to the
backend's stream, and one execution per `run`.

    fft = Cufft(ctypes.CDLL("libcufft.so.12"))
    fft.run(plan, x_ptr, out_ptr, context=ctx, stream=s)     # plan: fft_map.FftPlan

Pointers are device addresses (ints); `context` and `stream` the driver's handles as ints.
A plan holds its work area (cuFFT allocates it) for the life of its context (contexts.py:
destroyed at exit, forgotten when the context is closed).
"""
import threading
from ctypes import POINTER, byref, c_int

from .contexts import PerContext
from .status import ADDR, LibraryError
from .fft_map import C2C, C2R, D2Z, R2C, Z2D, Z2Z, FftPlan

# cufftExec* of each cufftType, and whether it takes a direction
_EXEC = {C2C: ("cufftExecC2C", True), Z2Z: ("cufftExecZ2Z", True),
         R2C: ("cufftExecR2C", False), D2Z: ("cufftExecD2Z", False),
         C2R: ("cufftExecC2R", False), Z2D: ("cufftExecZ2D", False)}
_STATUS = {1: "CUFFT_INVALID_PLAN", 2: "CUFFT_ALLOC_FAILED", 3: "CUFFT_INVALID_TYPE",
           4: "CUFFT_INVALID_VALUE", 5: "CUFFT_INTERNAL_ERROR", 6: "CUFFT_EXEC_FAILED",
           7: "CUFFT_SETUP_FAILED", 8: "CUFFT_INVALID_SIZE", 9: "CUFFT_UNALIGNED_DATA",
           11: "CUFFT_INVALID_DEVICE", 13: "CUFFT_NO_WORKSPACE", 16: "CUFFT_NOT_SUPPORTED"}


class CufftError(LibraryError):
    """A cuFFT call returned an error status."""


def _check(status, what):
    if status != 0:
        raise CufftError(f"cuFFT {what} failed with status {status} "
                         f"({_STATUS.get(status, 'unknown')})")


class Cufft:
    """The bound library: `run` executes one FftPlan on the given stream."""

    def __init__(self, lib):
        self._lib = lib
        ints = POINTER(c_int)
        lib.cufftPlanMany.argtypes = [ints, c_int, ints, ints, c_int, c_int, ints, c_int,
                                      c_int, c_int, c_int]
        lib.cufftSetStream.argtypes = [c_int, ADDR]
        lib.cufftDestroy.argtypes = [c_int]
        self._exec = {}
        for t, (name, directed) in _EXEC.items():
            fn = getattr(lib, name)
            fn.argtypes = [c_int, ADDR, ADDR] + ([c_int] if directed else [])
            self._exec[t] = (fn, directed)
        # (rank, n, type, batch) -> [handle, stream] in the current context
        self._plans = PerContext(lambda e: _check(lib.cufftDestroy(e[0]), "cufftDestroy"))
        self._lock = threading.Lock()

    def _plan(self, p, context, stream):
        def make():
            h, n = c_int(), (c_int * p.rank)(*p.n)
            # no embeddings: the basic layout, transforms contiguous one after another
            _check(self._lib.cufftPlanMany(byref(h), p.rank, n, None, 1, 0, None, 1, 0,
                                           p.type, p.batch), f"cufftPlanMany{tuple(p)}")
            return [h.value, None]
        entry = self._plans.get(context, (p.rank, p.n, p.type, p.batch), make)
        if entry[1] != stream:
            _check(self._lib.cufftSetStream(entry[0], ADDR(stream)), "cufftSetStream")
            entry[1] = stream
        return entry[0]

    def run(self, p, x, out, context, stream):
        """out = the transform of x (addresses), unscaled (cuFFT's convention); `p`: an
        FftPlan or its tuple (as the generated host code writes it)."""
        p = FftPlan(*p)
        fn, directed = self._exec[p.type]
        with self._lock:               # a plan is bound to one stream at a time
            h = self._plan(p, context, stream)
            status = fn(h, x, out, p.direction) if directed else fn(h, x, out)
        _check(status, f"{fn.__name__}{tuple(p)}")
