"""Buffers a compiled CPU function keeps between calls instead of allocating them in every
call.  Fresh memory costs page faults (2-4 µs per 4 KiB page on a VM; glibc maps blocks of
32 MiB or more afresh for every allocation and unmaps them on free), and buffers carved
from one workspace at fixed offsets give LLVM constant strides.  Measured: the gradient of
a 3000x3000 outer-product program went from 80,000 faults and 1.0 s per call to none and
0.44 s; the MLP gradient of benchmarks/workloads/mlp.py is 6-19% faster at batch 32-256.

A kernel takes two kinds of buffers from Python instead of allocating them (recorded by
`emit_cpu.Emitter.alloc`, chosen by `place_buffers` below): one *workspace*, a byte array
that the kernel carves into the program's top-level intermediates (`cpu_runtime.view_as`),
and the buffers of its large *outputs*.

    pool = BufferPool(ws_nbytes, [((784, 512), np.float64)])
    entry = pool.acquire()                # this call's own buffers
    try:
        out = kernel(*inputs, *consts, *pool.args(entry))
    finally:
        pool.release(entry)
    result = read_only(out.view(Array))   # a new view each call: entry[1] is its .base

Safety:
- An entry belongs to one call at a time: `acquire` pops it from the free list (atomic under
  the GIL), or makes a new one when the list is empty, so concurrent calls from several
  threads, or a call made while another is running, never share buffers.
- An output buffer goes to a later call only once nothing outside the pool references it:
  the caller gets a new `Array` view whose `.base` is the buffer, and every view, memoryview,
  Numba array or `np.asarray` of a result keeps a reference to it.  So what a call returned
  is never overwritten by a later call.  Each output keeps two buffers because callers
  usually still hold the previous result while asking for the next (`g = grad_fn(...)`).
- All pools together keep at most `XFORMS_BUFFER_CACHE_MB` (default 1024) between calls.
  A function that needs an entry beyond the budget first drops the idle entries of all
  other functions (they make new ones on their next call); if it still does not fit, its
  entry is allocated for the call and dropped, as without a pool.

The entry layout (a list, indexed by the generated call path in `dispatch.py`):
`[workspace or None, out0, spare0, out1, spare1, ..., keep]`.
"""
import sys
import threading
import weakref

import numpy as np

from xforms import config

from ..codegen import dtype_str, shape_str
from ..prepare.shape_symbols import is_symbolic

ALIGN = 64                     # bytes: workspace views start on cache-line boundaries
MAX_KEPT_ENTRIES = 4           # per function: more concurrent calls get transient entries

# The workspace only when the program's top-level intermediates add up to this much (below
# it, allocating them inside the kernel costs less than the extra argument).  An output
# buffer only from glibc's largest mmap threshold: larger blocks are mapped afresh for every
# allocation, page faults on every call, while smaller ones circulate in the heap, where the
# caller's own arrays of the same sizes reuse them (pooling those too made the NumPy SGD
# update after each MLP gradient fault more than the call saved: 800 faults per step
# instead of 550).
WORKSPACE_MIN_BYTES = 16 << 10
POOLED_OUTPUT_MIN_BYTES = 32 << 20
# The copy of a top-level loop's initial carry that leaves as an output (an optimizer state
# updated by a fori_loop) is pooled from this size: such a program returns, and its caller
# drops, the whole state at once -- more than glibc keeps in the heap -- so each call faulted
# every page of it afresh: JAX's MNIST VAE epoch (benchmarks/workloads/real_programs.py),
# 322 faults per training step, 8.8 -> 8.0/8.2 ms per step with none (one thread, two
# interleaved pairs, own autogroup at nice -20 on the loaded machine, 2026-11-25).
POOLED_CARRY_MIN_BYTES = 1 << 20

_getrefcount = sys.getrefcount


def _free_count():
    """getrefcount(lst[k]) of an object referenced only by the list `lst`: the list's
    reference plus the temporary passed in (calibrated, since interpreters differ)."""
    lst = [object()]
    return _getrefcount(lst[0])


FREE = _free_count()


def is_free(entry, i):
    """Whether nothing outside the pool holds output buffer `entry[i]`.  A result is
    normally a NumPy view, whose `.base` collapses to the buffer's owner (`entry[i].base`);
    but a result Numba made by reshaping the buffer inside the kernel is a new array over
    Numba's memory-info object, which holds the buffer itself, not the owner.  So both
    counts must be the pool's own: the entry's reference to the buffer, and the buffer's to
    its owner.  (Indexing `entry` here, not passing the buffer, keeps the counts at FREE.)"""
    return _getrefcount(entry[i]) == FREE and _getrefcount(entry[i].base) == FREE


class _Budget:
    """Bytes kept by all pools between calls."""

    def __init__(self):
        self.lock = threading.Lock()
        self.used = 0

    def take(self, n):
        with self.lock:
            if self.used + n > config.buffer_cache_bytes():
                return False
            self.used += n
            return True

    def give_back(self, n):
        with self.lock:
            self.used -= n


BUDGET = _Budget()
_pools = weakref.WeakSet()
_pools_lock = threading.Lock()


def workspace_array(nbytes):
    """A C-contiguous uint8 array of `nbytes` starting on an ALIGN-byte boundary."""
    raw = np.empty(nbytes + ALIGN - 1, np.uint8)
    off = (-raw.ctypes.data) % ALIGN
    return raw[off:off + nbytes]


def output_buffer(shape, dtype):
    """A pooled output buffer: a writable view (the kernel's argument) of an owner that is
    read-only.  Results are views of the owner (`buffer.base`), so every `.base` chain of a
    result ends at a read-only array: a caller cannot write a later call's result through
    it (issue #31).  The pool asks the owner's reference count whether a result is held.

        >>> b = output_buffer((2,), np.float64); b.flags.writeable, b.base.flags.writeable
        (True, False)
    """
    owner = np.empty(shape, dtype)
    buf = owner.view()
    owner.setflags(write=False)        # (after the view: a view of it would be read-only)
    return buf


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
        with _pools_lock:
            _pools.add(self)

    def __bool__(self):
        return bool(self.ws_nbytes or self.out_specs)

    def _reserve(self):
        with self._lock:
            if self._kept[0] >= MAX_KEPT_ENTRIES or not BUDGET.take(self.entry_bytes):
                return False
            self._kept[0] += 1
            self._kept[1] += self.entry_bytes
            return True

    def _drop_idle(self):
        """Forget the entries not in use; -> bytes given back to the budget."""
        n = 0
        while True:
            try:
                self.free.pop()
            except IndexError:
                break
            n += 1
        with self._lock:
            self._kept[0] -= n
            self._kept[1] -= n * self.entry_bytes
        BUDGET.give_back(n * self.entry_bytes)
        return n * self.entry_bytes

    def _new_entry(self):
        keep = self._reserve()
        if (not keep and self._kept[0] < MAX_KEPT_ENTRIES
                and self.entry_bytes <= config.buffer_cache_bytes()):
            with _pools_lock:
                others = [p for p in _pools if p is not self]
            if sum(p._drop_idle() for p in others):      # (no lock held here)
                keep = self._reserve()
        entry = [workspace_array(self.ws_nbytes) if self.ws_nbytes else None]
        for shape, dt in self.out_specs:
            entry += [output_buffer(shape, dt), None]
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
        if entry[i + 1] is not None and is_free(entry, i + 1):
            entry[i], entry[i + 1] = entry[i + 1], entry[i]
            return
        shape, dt = self.out_specs[(i - 1) // 2]
        entry[i + 1] = entry[i]
        entry[i] = output_buffer(shape, dt)

    def args(self, entry):
        """The kernel's trailing arguments for this entry (claiming free output buffers)."""
        out = [entry[0]] if self.ws_nbytes else []
        for i in range(1, 2 * len(self.out_specs), 2):
            if not is_free(entry, i):
                self.claim(entry, i)
            out.append(entry[i])
        return out


def _give_back(kept):
    if kept[1]:
        BUDGET.give_back(kept[1])
        kept[1] = 0


# ---- emission: which buffers come from the caller -------------------------------------------
class Buffer:
    """A top-level buffer the kernel allocates once per call, at body line `line`
    (recorded by `emit_cpu.Emitter.alloc`); `carry`: a loop's initial carry is copied in."""

    def __init__(self, line, name, shape, dtype, storage, carry=False):
        self.line, self.name, self.shape, self.dtype = line, name, shape, dtype
        self.storage, self.carry = storage, carry
        self.nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize

    def pooled(self):
        """Whether this output buffer comes from the caller's pool."""
        return self.storage.is_output and self.nbytes >= (
            POOLED_CARRY_MIN_BYTES if self.carry else POOLED_OUTPUT_MIN_BYTES)


def pooled_carry(em, v):
    """Whether carry `v` of a loop being emitted gets a pooled output buffer: a top-level
    loop's array carry of static shape and at least POOLED_CARRY_MIN_BYTES that leaves as
    a program output in its own buffer (no buffer taken over from another Var)."""
    st = em.plan.storage.get(v)
    return (em.plan is em.top_plan and em.sb.depth == 0 and em.hoisted is None
            and st is not None and st.is_output and not st.external
            and em.plan.reuse.get(v) is None and not is_symbolic(v.aval.shape)
            and v.aval.size * np.dtype(v.aval.dtype).itemsize >= POOLED_CARRY_MIN_BYTES)


def place_buffers(em):
    """Rewrite the allocation lines of the emitter's buffers that come from the caller;
    -> the extra kernel parameters.  Intermediates share one workspace (one argument,
    carved into typed views at ALIGN-byte offsets by `cpu_runtime.view_as`); an output gets
    its own buffer, so that a caller who keeps one result pins only that one.  A buffer of
    a storage that ever holds an output (`reuse` chains included) is never workspace."""
    work = [b for b in em.buffers if not b.storage.is_output]
    outs = [b for b in em.buffers if b.pooled()]
    # with symbolic sizes (xforms/kernels/prepare/shape_symbols.py) the text must not depend on the
    # batch size: the workspace whatever its size, the kernel reading the offsets (which
    # vary between calls) from a constant array argument
    symbolic = any(is_symbolic(b.shape) for b in work)
    if sum(b.nbytes for b in work) < WORKSPACE_MIN_BYTES and not symbolic:
        work = []
    params, off, offsets = [], 0, []
    for k, b in enumerate(work):
        at = f"_WO[{k}]" if symbolic else off
        em.sb.lines[b.line] = (f"{b.name} = view_as(_ws, {at}, {shape_str(b.shape)}, "
                               f"{dtype_str(b.dtype)})")
        offsets.append(off)
        off += -(-b.nbytes // ALIGN) * ALIGN
    if symbolic:
        em.const_params.append(("_WO", np.array(offsets, np.int64)))
    if work:
        params.append("_ws")
        em.runtime_used.add("view_as")
    for j, b in enumerate(outs):
        em.sb.lines[b.line] = f"{b.name} = _out{j}      # reused once the caller drops it"
        params.append(f"_out{j}")
    em.workspace_bytes, em.output_buffers = off, outs
    return params
