"""Large arrays that compiled kernels allocate themselves, on transparent huge pages.

NumPy asks Linux for transparent huge pages (madvise MADV_HUGEPAGE) for every array of
4 MiB or more; Numba's allocator does not, so a large buffer a kernel allocates (a loop
carry's copy, an intermediate inside a loop body) sits on 4 KiB pages, and a loop that
streams through it pays a TLB miss every 4 KiB.  Measured (2 ranks, quiet, 2026-11-24): an
in-place MPI allreduce of an 8 MB loop carry took 1.29x mpi4py's time on a NumPy buffer,
0.37x with huge pages for every allocation (GLIBC_TUNABLES=glibc.malloc.hugetlb=1).

`advise_huge(a)` gives the advice for `a`'s pages and returns `a`; `huge_copy(a)` is
`a.copy()` on advised memory.  The generator uses them for arrays of HUGE_MIN_BYTES or more
on Linux (where MADV_HUGEPAGE means this); elsewhere it keeps `np.empty` and `.copy()`.
`madvise` is declared by name in the kernel's LLVM module, so the compiled code stays
disk-cacheable (no library address baked in).  Advice only: with THP off, nothing changes.

    >>> a = advise_huge(np.empty(1 << 20))           # (also callable from Python)
"""
import ctypes
import mmap
import sys

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload

HUGE_MIN_BYTES = 4 << 20        # NumPy's threshold for the same advice
MADV_HUGEPAGE = 14              # Linux
PAGE = mmap.PAGESIZE
ENABLED = sys.platform.startswith("linux")


def _page_range(addr, nbytes):
    """The whole pages inside [addr, addr + nbytes)."""
    start = (addr + PAGE - 1) // PAGE * PAGE
    return start, (addr + nbytes) // PAGE * PAGE


def advise_huge(a):
    """`a`, its whole pages advised MADV_HUGEPAGE (Linux)."""
    if ENABLED:
        start, end = _page_range(a.ctypes.data, a.nbytes)
        if end > start:
            ctypes.CDLL(None).madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start),
                                      ctypes.c_int(MADV_HUGEPAGE))
    return a


def huge_copy(a):
    """`a.copy()` (C order) in memory advised MADV_HUGEPAGE."""
    out = advise_huge(np.empty(a.shape, a.dtype))
    out[...] = a
    return out


@intrinsic
def _madvise(typingctx, start, length):
    """madvise(start, length, MADV_HUGEPAGE), by name: resolved when the kernel is loaded."""
    def codegen(context, builder, sig, args):
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [i8p, ir.IntType(64), ir.IntType(32)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "madvise")
        ptr = builder.inttoptr(args[0], i8p)
        return builder.call(fn, [ptr, args[1], ir.Constant(ir.IntType(32), MADV_HUGEPAGE)])
    return types.int32(types.uint64, types.uint64), codegen


@overload(advise_huge, jit_options={"nogil": True})
def _advise_huge(a):
    def impl(a):
        addr = np.uint64(a.ctypes.data)
        page = np.uint64(PAGE)
        start = (addr + page - np.uint64(1)) // page * page
        end = (addr + np.uint64(a.nbytes)) // page * page
        if end > start:
            _madvise(start, end - start)
        return a
    return impl


@overload(huge_copy, jit_options={"nogil": True})
def _huge_copy(a):
    def impl(a):
        out = advise_huge(np.empty(a.shape, a.dtype))
        out[...] = a
        return out
    return impl
