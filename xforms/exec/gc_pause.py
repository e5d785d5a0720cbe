"""CPython's cyclic garbage collector is paused while jit traces and compiles a new
signature.

Tracing, transforming, planning and the Numba compile allocate hundreds of thousands of
small container objects (variables, equations, abstract values, Numba's own IR) that stay
alive until the compile ends; each full collection re-scans all of them, which made a
program's compile time grow faster than its size (measured on scalar chains under grad:
collections were 17% of tracing at 2,300 equations and 50% at 23,000; pausing them cut the
whole first call's CPU time by 23-32% at 2,300-7,000 equations, for 3-7 MB more peak
memory).  Garbage is collected as usual once the compile ends.  `XFORMS_GC_PAUSE=0` turns
the pause off.  Nested and concurrent pauses (a tiered background compile) share one count:
the collector resumes when the last one ends, and only if it was enabled when the first
began.

    >>> with gc_pause.paused():
    ...     closed = trace(...)
"""
import gc
import threading

from .. import config

_lock = threading.Lock()
_depth = 0
_resume = False


class _Paused:
    def __enter__(self):
        global _depth, _resume
        with _lock:
            if _depth == 0:
                _resume = gc.isenabled()
                gc.disable()
            _depth += 1

    def __exit__(self, *exc):
        global _depth
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
        return False


class _Nothing:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        return False


_PAUSED, _NOTHING = _Paused(), _Nothing()


def paused():
    """A context in which the cyclic collector does not run (unless XFORMS_GC_PAUSE=0)."""
    return _PAUSED if config.gc_pause() else _NOTHING
