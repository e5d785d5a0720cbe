"""OpenMP's thread team for the direct LLVM path's kernels (issue #35): GNU OpenMP's
`GOMP_parallel` -- the pool Numba's "omp" threading layer runs its prange loops on -- bound
by its C entry point, with no Numba in the process, and the team size a call runs with.

    if available():                       # libgomp loaded, its symbols bound for LLVM
        module_text += HELPERS            # defines xf_parallel(fn, ctx, nchunks)
    set_num_threads(2)                    # as numba.set_num_threads

`xf_parallel(fn, ctx, n)` runs `fn(ctx, first chunk, end chunk)` on this thread when the
team size (`xf_num_threads`) is 1, else shares the `n` chunks out statically over the team
(slot 0 of `ctx` holds `fn`, slot 1 `n`).  The chunked loops that call it are
xforms/kernels/cpu/llvm/threaded.py; the products' blocks and threaded products
(llvm/ops/linalg/blocks.py, llvm/ops/linalg/products.py) ask `available` and `count` here,
below them.
"""
import ctypes
import os

_lib = []                         # [libgomp] once bound; [None] when it cannot be loaded

HELPERS = """declare void @GOMP_parallel(ptr, ptr, i32, i32)
declare i32 @omp_get_thread_num()
declare i32 @omp_get_num_threads()
@xf_num_threads = external global i32

define internal void @xf_omp_body(ptr %ctx) {
entry:
  %fn = load ptr, ptr %ctx
  %np = getelementptr i64, ptr %ctx, i64 1
  %nch = load i64, ptr %np
  %t32 = call i32 @omp_get_thread_num()
  %nt32 = call i32 @omp_get_num_threads()
  %t = sext i32 %t32 to i64
  %nt = sext i32 %nt32 to i64
  %a = mul i64 %t, %nch
  %lo = sdiv i64 %a, %nt
  %t1 = add i64 %t, 1
  %b = mul i64 %t1, %nch
  %hi = sdiv i64 %b, %nt
  call void %fn(ptr %ctx, i64 %lo, i64 %hi)
  ret void
}

define internal void @xf_parallel(ptr %fn, ptr %ctx, i64 %nch) {
entry:
  store ptr %fn, ptr %ctx
  %np = getelementptr i64, ptr %ctx, i64 1
  store i64 %nch, ptr %np
  %nt32 = load i32, ptr @xf_num_threads
  %nt = sext i32 %nt32 to i64
  %one = icmp slt i64 %nt, 2
  br i1 %one, label %serial, label %team
team:
  %fewer = icmp slt i64 %nch, %nt
  %k = select i1 %fewer, i64 %nch, i64 %nt
  %k32 = trunc i64 %k to i32
  call void @GOMP_parallel(ptr @xf_omp_body, ptr %ctx, i32 %k32, i32 0)
  ret void
serial:
  call void %fn(ptr %ctx, i64 0, i64 %nch)
  ret void
}
"""


def count():
    """The threads a threaded kernel may use: NUMBA_NUM_THREADS, else the CPUs this process
    may run on (Numba's own default), read without importing Numba."""
    v = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if v.isdigit() and int(v) > 0:
        return int(v)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


# the team size a kernel call runs with (`xf_num_threads`; `set_num_threads`)
_threads = ctypes.c_int(count())


def available():
    """Whether GNU OpenMP's entry points are bound for the kernels (loaded once: the library
    Numba's omp layer links, `libgomp.so.1`); False where it cannot be loaded."""
    if not _lib:
        _lib.append(_bind())
    return _lib[0] is not None


def _bind():
    try:
        lib = ctypes.CDLL("libgomp.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError:
        return None
    import llvmlite.binding as llvm
    for name in ("GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads"):
        llvm.add_symbol(name, ctypes.cast(getattr(lib, name), ctypes.c_void_p).value)
    llvm.add_symbol("xf_num_threads", ctypes.addressof(_threads))
    return lib


def launches(ir):
    """Whether kernel IR `ir` (of `loops.lower`) runs chunks on the team."""
    return "call void @xf_parallel(" in ir


def get_num_threads():
    """The team size the next kernel call runs with (as `numba.get_num_threads`)."""
    return _threads.value


def set_num_threads(k):
    """Run the next kernel calls on `k` threads (1: no team), as `numba.set_num_threads`;
    read by a kernel while it holds the GIL, so one setting per call."""
    _threads.value = max(1, int(k))
