"""Compiled code's switch to one BLAS thread around a region (a convolution's products):
`serial_begin()` returns the count in force and sets 1, `serial_end(prev)` puts it back.

A convolution's products are a few hundred rows per block (121 at batch 1): OpenBLAS splits
each one statically over its threads, so a second thread costs a hand-off per product and,
when another process holds the second core, a wait for it.  Measured for the small CNN's
gradient at batch 1 (2-core VM, loaded): 0.52-0.57 ms a call with 2 BLAS threads against
0.35 ms with one -- the "0.34 or 0.55 ms" from process to process, depending on what the load
monitor (xforms/kernels/runtime/products/blas_threads.py) had chosen.  The monitor still sets the count for every
other product.

The functions are SciPy's OpenBLAS's (the library Numba's `np.dot` calls), registered with
LLVM under fixed names (blas_pointers.bind_thread_symbols, which imports no Numba: the
direct LLVM path binds them too) so that code calling them stays in Numba's disk cache;
without an OpenBLAS to steer they are no-ops.

    @numba.njit
    def products(a, b, o):
        prev = serial_begin()
        np.dot(a, b, o)
        serial_end(prev)
"""
import numba
from numba.core import types

from ..helper_cache import CACHE as _CACHE
from .blas_pointers import THREADS_GET as _GET, THREADS_SET as _SET, bind_thread_symbols

bind_thread_symbols()
_get = types.ExternalFunction(_GET, types.intc())
current_threads = _get      # the BLAS thread count in force (small_mm.py's parts)
_set = types.ExternalFunction(_SET, types.void(types.intc))


@numba.njit(cache=_CACHE, nogil=True)
def serial_begin():
    """Set one BLAS thread; returns the count to give back to `serial_end`."""
    prev = _get()
    if prev > 1:
        _set(1)
    return prev


@numba.njit(cache=_CACHE, nogil=True)
def serial_end(prev):
    """Give back the count `serial_begin` returned (a concurrent change by the load monitor
    in between is overwritten until its next change: a matter of speed, never of results)."""
    if prev > 1:
        _set(prev)
