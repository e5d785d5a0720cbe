"""The CUDA backend: `jit(f, backend="cuda")`, numba-cuda kernels launched from a generated
host function, device arrays that stay on the GPU between calls.

    printer/emit.py       Plan -> kernels (fused loops) + the host launch sequence
    printer/reduce.py     reductions as two-level trees (shared memory, then a second pass)
    printer/ops.py        dot_general (cuBLAS, or register-blocked shared-memory tiles),
                          gather/scatter (atomic adds), dynamic slices, pad, concatenate, reshape
    printer/control.py    control flow: whole loops in one kernel when lane-local, else host
    printer/block_loop.py ... or the host loop's text run by one block (a cooperative grid):
                          one launch for a stencil loop, a barrier after each step's kernels
    printer/scalar.py     CUDA spellings of scalar rules that use NumPy ufuncs on the CPU
    printer/complexes.py  complex64/complex128 rules numba-cuda cannot compile without a GPU
    runtime.py            DeviceArray, the stream, buffers and transfers, packing
    device/               whether CUDA is here, the device's launch configuration, the
                          transfer guard
    packing.py            where buffers live: small ones packed, so launches take few arguments
    pool.py               the device buffer pool (memory reused across calls)
    backend.py            compile_cuda -> CudaExecutable; compile_ptx (tests, no GPU needed)
    vendor/               NVIDIA's libraries (cuBLAS for large products, cuFFT, cuSOLVER),
                          loaded lazily; our kernels where one is absent and on the simulator

`BACKEND` is the "cuda" entry of `kernels.BACKENDS` (compile, device_put and the
`cuda_available` probe); importing this package imports nothing from numba.cuda: that
happens when the backend is first used.
"""
import os
import sys

from xforms import config
from xforms.errors import BackendError


def _backend():
    try:
        from . import backend
    except ImportError as e:
        from .runtime import HOW_TO
        raise BackendError(f"backend 'cuda' needs numba-cuda, which failed to import ({e}): "
                           f"{HOW_TO}") from None
    if not config.cuda_simulator():
        _check_numpy_support()
        from ..numba_fixes import patches   # (numba-cuda's own compiler core: the same fixes)
        patches.apply_cuda()
    return backend


def _check_numpy_support():
    """numba-cuda registers its NumPy overloads when the first kernel compiles, naming
    NumPy functions as it goes; a NumPy newer than it knows fails there, deep inside that
    compile (numba-cuda 0.30.4 names np.row_stack, which NumPy 2.5 removed).  Importing
    that module now turns the failure into an error that says what to install."""
    try:
        import numba.cuda.np.arrayobj  # noqa: F401, PLC0415 - for its import-time overloads
    except (AttributeError, ImportError) as e:
        import numba_cuda
        import numpy as np
        raise BackendError(
            f"backend 'cuda': numba-cuda {getattr(numba_cuda, '__version__', '?')} does not "
            f"support NumPy {np.__version__} ({type(e).__name__}: {e}); install a NumPy it "
            "supports (pip install 'numpy<2.5') or a numba-cuda release that supports this "
            "NumPy") from None


def compile_cuda(closed, options=None):
    return _backend().compile_cuda(closed, options)


def device_put(tree):
    """Copy a pytree of arrays to the GPU (DeviceArrays pass through)."""
    return _backend().device_put(tree)


_probe = None


def cuda_available():
    """Is there a usable GPU (or the simulator)?  Checks for an NVIDIA driver before it
    imports numba.cuda, so a machine without one pays nothing; the answer is cached."""
    global _probe
    if _probe is None:
        _probe = _detect()
    return _probe


def _find_library(name):
    # (imported here: ctypes.util brings subprocess and 8 more modules into every
    # process that imports the compilers, for a Windows-only probe)
    import ctypes.util
    return ctypes.util.find_library(name)


def _detect():
    if config.cuda_simulator():
        return True
    driver = (os.path.exists("/proc/driver/nvidia") or os.path.exists("/dev/nvidiactl")
              or (sys.platform == "win32" and _find_library("nvcuda")))
    if not driver:
        return False
    try:
        from numba import cuda
        return bool(cuda.is_available())
    except Exception:
        return False


#: the "cuda" entry of `kernels.BACKENDS` (keyword arguments of `xforms.jit.register_backend`)
BACKEND = {"compile_fn": compile_cuda, "device_put": device_put, "available": cuda_available}
