"""Buffers a compiled CPU function keeps between calls, so that a call does not pay for
fresh memory: on this kind of machine every first touch of a new page is a page fault of
2-4 µs, and the allocator hands large blocks back to the kernel and maps them again later
(a training loop that allocates in between calls faulted hundreds of times per call).

A kernel takes two kinds of buffers from Python instead of allocating them (see
`emit_cpu.Emitter.alloc`): one *workspace*, a byte array that the kernel carves into the
program's top-level intermediates, and the buffers of its large *outputs*.

    pool = BufferPool(ws_nbytes, [((784, 512), np.float64)])
    entry = pool.acquire()                # this call's own buffers
    try:
        out = kernel(*inputs, *consts, *pool.args(entry))
    finally:
        pool.release(entry)
    result = out.view(Array)              # a new view each call: entry[1] is its .base

Safety:
- An entry belongs to one call at a time: `acquire` pops it from the free list (atomic under
  the GIL), or makes a new one when the list is empty, so concurrent calls from several
  threads, or a call made while another is running, never share buffers.
- An output buffer goes to a later call only once nothing outside the pool references it:
  the caller gets a new `Array` view whose `.base` is the buffer, and every view, memoryview,
  Numba array or `np.asarray` of a result keeps a reference to it.  So what a call returned
  is never overwritten by a later call.  Each output keeps two buffers because callers
  usually still hold the previous result while asking for the next (`g = grad_fn(...)`).
- All pools together keep at most `XFORMS_BUFFER_CACHE_MB` (default 1024) between calls;
  entries past that budget are allocated per call and dropped, as without a pool.

The entry layout (a list, indexed by the generated call path in `dispatch.py`):
`[workspace or None, out0, spare0, out1, spare1, ..., keep]`.
"""
import os
import sys
import threading
import weakref

import numpy as np

ALIGN = 64                     # bytes: workspace views start on cache-line boundaries
MAX_KEPT_ENTRIES = 4           # per function: more concurrent calls get transient entries

_getrefcount = sys.getrefcount


def _free_count():
    """getrefcount(lst[k]) of an object referenced only by the list `lst`: the list's
    reference plus the temporary passed in (calibrated, since interpreters differ)."""
    lst = [object()]
    return _getrefcount(lst[0])


FREE = _free_count()


def budget_bytes():
    v = os.environ.get("XFORMS_BUFFER_CACHE_MB", "").strip()
    try:
        mb = float(v) if v else 1024.0
    except ValueError:
        mb = 1024.0
    return int(max(mb, 0.0) * (1 << 20))


class _Budget:
    """Bytes kept by all pools between calls."""

    def __init__(self):
        self.lock = threading.Lock()
        self.used = 0

    def take(self, n):
        with self.lock:
            if self.used + n > budget_bytes():
                return False
            self.used += n
            return True

    def give_back(self, n):
        with self.lock:
            self.used -= n


BUDGET = _Budget()


def workspace_array(nbytes):
    """A C-contiguous uint8 array of `nbytes` starting on an ALIGN-byte boundary."""
    raw = np.empty(nbytes + ALIGN - 1, np.uint8)
    off = (-raw.ctypes.data) % ALIGN
    return raw[off:off + nbytes]


class BufferPool:
    """The reusable buffers of one compiled function: `ws_nbytes` of workspace (0: none)
    and one recycled buffer per entry of `out_specs` ((shape, dtype) pairs)."""

    def __init__(self, ws_nbytes, out_specs):
        self.ws_nbytes = int(ws_nbytes)
        self.out_specs = [(tuple(s), np.dtype(d)) for s, d in out_specs]
        self.free = []
        self.entry_bytes = self.ws_nbytes + 2 * sum(
            int(np.prod(s, dtype=np.int64)) * d.itemsize for s, d in self.out_specs)
        self._lock = threading.Lock()
        self._kept = [0, 0]            # entries kept, bytes taken from the budget
        # the budget gets the bytes back when the pool (its function) is collected
        weakref.finalize(self, _give_back, self._kept)

    def __bool__(self):
        return bool(self.ws_nbytes or self.out_specs)

    def _new_entry(self):
        with self._lock:
            keep = self._kept[0] < MAX_KEPT_ENTRIES and BUDGET.take(self.entry_bytes)
            if keep:
                self._kept[0] += 1
                self._kept[1] += self.entry_bytes
        entry = [workspace_array(self.ws_nbytes) if self.ws_nbytes else None]
        for shape, dt in self.out_specs:
            entry += [np.empty(shape, dt), None]
        entry.append(keep)
        return entry

    def acquire(self):
        """An entry for one call, exclusively."""
        try:
            return self.free.pop()
        except IndexError:
            return self._new_entry()

    def release(self, entry):
        if entry[-1]:
            self.free.append(entry)

    def claim(self, entry, i):
        """Make entry[i] (output buffer i // 2) one that nothing else references, when the
        current one is still held (by the caller's earlier result): the spare if it is free,
        else a new buffer.  The one still held becomes the spare (it is free again once the
        caller lets go), the pool's reference to an older held one is dropped."""
        if entry[i + 1] is not None and _getrefcount(entry[i + 1]) == FREE:
            entry[i], entry[i + 1] = entry[i + 1], entry[i]
            return
        shape, dt = self.out_specs[(i - 1) // 2]
        entry[i + 1] = entry[i]
        entry[i] = np.empty(shape, dt)

    def args(self, entry):
        """The kernel's trailing arguments for this entry (claiming free output buffers)."""
        out = [entry[0]] if self.ws_nbytes else []
        for i in range(1, 2 * len(self.out_specs), 2):
            if _getrefcount(entry[i]) != FREE:
                self.claim(entry, i)
            out.append(entry[i])
        return out


def _give_back(kept):
    if kept[1]:
        BUDGET.give_back(kept[1])
        kept[1] = 0
