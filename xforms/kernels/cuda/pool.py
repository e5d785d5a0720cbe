"""A device memory pool: flat buffers reused across compiled calls instead of a `cuMemAlloc`
and a `cuMemFree` per buffer (the driver's free waits for the whole device, and both cost
microseconds of host time on every call).

    pool = BufferPool(limit_bytes=1 << 30)
    a = pool.take(1000, np.float64)     # a flat numba device array (from the pool if it can)
    del a                               # its block goes back to the pool, not to the driver

Blocks are sized in classes (four per octave, so at most 25% is wasted) and handed out
wrapped in a *new* array object over the block's memory; a finalizer on that object gives
the block back when it and everything that references it are gone.  What a compiled call
returns to the caller is such an array (or a view holding one), so a later call can never
be handed memory the caller still holds.  Blocks are reused in the order of the backend's
one stream: a kernel that reads a block and a later kernel that writes it after it came back
run in that order.  (A consumer that takes a DeviceArray through
`__cuda_array_interface__` onto *another* stream must keep it alive until its work is done,
as with CuPy's and PyTorch's caching allocators.)
"""
import gc
import threading
import weakref

import numpy as np

MIN_BLOCK = 512


def size_class(nbytes):
    """The block size serving a request of `nbytes`: four classes per power of two.

    >>> [size_class(n) for n in (1, 512, 513, 1000, 5000)]
    [512, 512, 640, 1024, 5120]
    """
    n = max(int(nbytes), MIN_BLOCK)
    step = 1 << max((n - 1).bit_length() - 3, 0)   # 2**k < n <= 2**(k+1): steps of 2**(k-2)
    return -(-n // step) * step


class BufferPool:
    """Free blocks by size class.  `alloc(nbytes)` makes a new raw block (a uint8 device
    array); `wrap(raw, size, dtype)` makes the array handed out.  At most `limit_bytes` of
    free blocks are kept; beyond that a returned block goes back to the driver."""

    def __init__(self, alloc, wrap, limit_bytes):
        self._alloc, self._wrap, self.limit = alloc, wrap, int(limit_bytes)
        self._free = {}
        self._lock = threading.Lock()
        self.cached_bytes = 0          # bytes in free blocks
        self.hits = self.misses = 0

    def take(self, size, dtype):
        dtype = np.dtype(dtype)
        cls = size_class(max(int(size), 1) * dtype.itemsize)
        raw = None
        with self._lock:
            blocks = self._free.get(cls)
            if blocks:
                raw = blocks.pop()
                self.cached_bytes -= cls
                self.hits += 1
            else:
                self.misses += 1
        if raw is None:
            raw = self._new(cls)
        arr = self._wrap(raw, max(int(size), 1), dtype)
        fin = weakref.finalize(arr, self._give, cls, raw)
        fin.atexit = False
        return arr

    def _new(self, cls):
        try:
            return self._alloc(cls)
        except Exception as e:          # out of memory: give the cached blocks back, retry
            if "OUT_OF_MEMORY" not in f"{type(e).__name__} {e}".upper().replace(" ", "_"):
                raise
            self.clear()
            gc.collect()
            return self._alloc(cls)

    def _give(self, cls, raw):
        with self._lock:
            if self.cached_bytes + cls <= self.limit:
                self._free.setdefault(cls, []).append(raw)
                self.cached_bytes += cls

    def clear(self):
        """Give every free block back to the driver."""
        with self._lock:
            self._free.clear()
            self.cached_bytes = 0

    def stats(self):
        return {"hits": self.hits, "misses": self.misses, "cached_bytes": self.cached_bytes,
                "free_blocks": sum(len(b) for b in self._free.values())}


def numba_pool(cuda, simulating, stream, limit_bytes):
    """A BufferPool over numba-cuda device arrays (or the simulator's)."""
    def alloc(nbytes):
        return cuda.device_array(nbytes, np.uint8, stream=stream)

    if simulating:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        def wrap(raw, size, dtype):
            return FakeCUDAArray(raw._ary[:size * dtype.itemsize].view(dtype), stream=stream)
    else:
        from numba.cuda.cudadrv.devicearray import DeviceNDArray

        def wrap(raw, size, dtype):
            # the block's memory (an OwnedPointer the raw array keeps alive), new array object
            return DeviceNDArray((size,), (dtype.itemsize,), dtype, stream=stream,
                                 gpu_data=raw.gpu_data)
    return BufferPool(alloc, wrap, limit_bytes)
