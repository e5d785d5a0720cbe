"""A large kernel compiled in parts, on every core (issue #35): runs of its steps moved into
functions of their own (`text.split`), each compiled in an LLVM module and context of its
own on a thread of its own (`engine.compile_aside`) while the kernel's function compiles on
the calling thread; the kernel's engine binds their symbols when it loads.

    fn = compile_kernel(loops.lower(plan), "xf_kernel")    # as engine.compile_ir

Each module's object code is kept on disk under its own text, so a second process loads
them all.  A part is compiled once while some kernel holds it (`_jobs`: two kernels with the
same run of steps share it); the kernel's function holds its parts' code.  Where a part does
not compile, the kernel is compiled whole instead (a compile problem costs time, never a
result).
"""
import os
import threading
import weakref

from xforms import config
from .. import engine
from .text import split

# the most modules a kernel is cut into (the cores this process may run on, up to this)
MAX_PIECES = 4
_jobs = weakref.WeakValueDictionary()     # part symbol -> its compile job, while held
_jobs_lock = threading.Lock()


def pieces():
    """Modules a kernel is cut into here: XFORMS_LLVM_PARTS (default 1: whole), with
    `auto` the cores this process may use, at most MAX_PIECES."""
    asked = config.llvm_parts()
    if asked is not None:
        return asked
    cores = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
             else os.cpu_count() or 1)
    return max(1, min(cores, MAX_PIECES))


def compile_kernel(text, name, count=None):
    """The kernel function `name` of LLVM IR `text` as a builtin (`engine.compile_ir`),
    compiled in `count` (default `pieces()`) modules at once where `text.split` cuts it."""
    cut = split(text, name, pieces() if count is None else count)
    if cut is None:
        return engine.compile_ir(text, name)
    main, parts = cut
    jobs = [_job(symbol, part) for symbol, part in parts]
    try:
        return engine.compile_ir(main, name, keep=jobs)
    except Exception:                      # (a part or the cut is at fault: compiled whole)
        with _jobs_lock:
            for job in jobs:
                if job.owner is None and _jobs.get(job.fn_name) is job:
                    del _jobs[job.fn_name]
        return engine.compile_ir(text, name)


def _job(symbol, text):
    """The compile of part `symbol` (module `text`): one started now, or the one a kernel
    holds already."""
    with _jobs_lock:
        job = _jobs.get(symbol)
        if job is None or job.owner is None and job.error is not None:
            job = engine.compile_aside(text, symbol, waits=True)
            _jobs[symbol] = job
        return job
