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

The block's manager also polled its threads in a busy loop for their __syncthreads(): it
took the GIL from the threads it waited for.  `tune()` replaces that loop by a condition
each thread signals as it blocks or ends (the same rule: when every live thread waits, all
go on; a thread's exception aborts the block), so the manager sleeps until there is work.
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
    from numba.cuda.simulator import kernel
    if _has_polling_manager(kernel):
        _signal_syncthreads(kernel)
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


def _has_polling_manager(kernel):
    """Whether `kernel` is the simulator whose manager `_signal_syncthreads` replaces."""
    thread, manager = getattr(kernel, "BlockThread", None), getattr(kernel, "BlockManager", None)
    return (manager is not None and not getattr(manager.run, "xforms_signalled", False)
            and all(hasattr(thread, a) for a in ("syncthreads", "run", "__init__")))


def _signal_syncthreads(kernel):
    """BlockManager.run without polling: each BlockThread notifies its manager's condition
    when it blocks in syncthreads() or ends, and the manager waits on it.  As numba-cuda's
    loop: all live threads blocked -> all released; an exception -> every thread aborted and
    the exception raised."""
    thread = kernel.BlockThread

    def syncthreads(self):
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads call")
        with self._manager.xforms_cond:
            self.syncthreads_blocked = True
            self._manager.xforms_cond.notify()
        self.syncthreads_event.wait()
        self.syncthreads_event.clear()
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads clear")

    plain_run = thread.run

    def run(self):
        try:
            plain_run(self)
        finally:
            with self._manager.xforms_cond:
                self.xforms_done = True
                self._manager.xforms_cond.notify()

    def manager_run(self, grid_point, *args):
        cond = self.xforms_cond = threading.Condition()
        threads = []
        with cond:                  # (no thread reports before the manager waits)
            for block_point in np.ndindex(*self._block_dim):
                t = thread(lambda: self._f(*args), self, grid_point, block_point, self._debug)
                t.xforms_done = False
                t.start()
                threads.append(t)
            while True:
                failed = next((t for t in threads if t.exception), None)
                if failed is not None:
                    for t in threads:
                        t.abort = True
                        t.syncthreads_blocked = False
                        t.syncthreads_event.set()
                    raise failed.exception[0].with_traceback(failed.exception[1])
                live = [t for t in threads if not t.xforms_done]
                if not live:
                    return
                if all(t.syncthreads_blocked for t in live):
                    for t in live:
                        t.syncthreads_blocked = False
                        t.syncthreads_event.set()
                cond.wait()
    manager_run.xforms_signalled = True
    thread.syncthreads, thread.run = syncthreads, run
    kernel.BlockManager.run = manager_run
