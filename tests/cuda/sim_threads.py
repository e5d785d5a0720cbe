"""Numba's CUDA simulator, fast and safe for the test processes that run it (tests/cuda's
conftest and tests/fuzz/cuda_worker.py call `tune()` when NUMBA_ENABLE_CUDASIM=1).

The simulator runs each thread of a block as a Python thread while the block's manager polls
them in a loop that holds the GIL until the interpreter's switch interval (5 ms by default)
takes it away: every __syncthreads() of every thread waited out such slices (tests/cuda took
781 s at load 15-20, 580 s of it the parallel scans' tests).  A short interval hands the GIL
on at once.  Threads then interleave finely, which exposed a race in the simulator itself:
cuda.shared.array looks up the block's array and creates it when missing, unlocked, so two
threads could each create one (a bitonic tile read np.empty's garbage as an index).  `tune()`
makes that look-up atomic first, and shortens the interval only where it could.
"""
import sys
import threading

import numpy as np

SWITCH_INTERVAL = 1e-5


def tune():
    """Make the simulator's shared arrays thread-safe, then hand the GIL on every 10 us.

    >>> import sim_threads; sim_threads.tune()      # doctest: +SKIP
    """
    from numba.cuda.simulator import kernelapi
    shared = getattr(kernelapi, "FakeCUDAShared", None)
    if shared is None or not hasattr(shared, "array"):
        return                           # another simulator: keep the safe default interval
    if not getattr(shared.array, "xforms_locked", False):
        shared.array = _locked_array(shared.array, kernelapi)
    sys.setswitchinterval(SWITCH_INTERVAL)


def _locked_array(array, kernelapi):
    """The simulator's cuda.shared.array with its look-up-or-create under a lock: one array
    per source line of the kernel (its caller), as the simulator keys them.  (A wrapper
    around the original would add a frame and so change that key.)"""
    lock = threading.Lock()

    def locked_array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:     # dynamic shared memory, or its error
            return array(self, shape, dtype, alignment)
        if isinstance(dtype, kernelapi.types.Type):
            dtype = kernelapi.numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            res = self._allocations.get(key)
            if res is None:
                res = self._allocations[key] = np.empty(shape, dtype)
        return res
    locked_array.xforms_locked = True
    return locked_array
