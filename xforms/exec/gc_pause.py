"""CPython's cyclic garbage collector is paused while jit traces and compiles a new
signature, and the compile's surviving objects join the oldest generation unscanned.

Tracing, transforming, planning and the Numba compile allocate hundreds of thousands of
small container objects (variables, equations, abstract values, Numba's own IR) that stay
alive until the compile ends; each full collection re-scans all of them, which made a
program's compile time grow faster than its size (measured on scalar chains under grad:
collections were 17% of tracing at 2,300 equations and 50% at 23,000; pausing them cut the
whole first call's CPU time by 23-32% at 2,300-7,000 equations, for 3-7 MB more peak
memory).  `XFORMS_GC_PAUSE=0` turns the pause off.  Nested and concurrent pauses (a tiered
background compile) share one count: the collector resumes when the last one ends, and
only if it was enabled when the first began.

When it resumes, the objects allocated meanwhile are mostly long-lived (a first compile
in a process: 170,000-190,000 objects of which ~85% are Numba's and the compiler's modules,
registries and caches, imported and set up on the way).  A young collection then would scan
them all in the call that compiled (0.03-0.05 s), and a middle one again soon after; instead
`gc.freeze(); gc.unfreeze()` moves them to the oldest generation without a scan, so their
garbage (Numba's type-inference and LLVM IR cycles) is freed by the next full collection,
which scans that generation anyway.  At most `DEFER_BUDGET` objects wait so between two full
collections (this module counts them by a `gc.callbacks` hook); beyond it, and while the user
has frozen objects of their own (`gc.freeze` would be undone), the young collection runs as
usual.  Nothing is ever collected explicitly.

    >>> with gc_pause.paused():
    ...     closed = trace(...)
"""
import gc
import threading

from .. import config

_lock = threading.Lock()
_depth = 0
_resume = False
# objects moved unscanned since the last full collection, and the most that may be: a first
# compile's ~190,000 and a few later ones; the garbage among them (~10-25%) waits for a full
# collection, so this bounds that memory (tens of MB at most)
_deferred = 0
DEFER_BUDGET = 400_000
_OLDEST = len(gc.get_threshold()) - 1


def _on_collection(phase, info):
    """A full collection scanned the oldest generation: what waited there is freed."""
    global _deferred
    if phase == "stop" and info["generation"] == _OLDEST:
        _deferred = 0


gc.callbacks.append(_on_collection)


def _unscanned_young():
    """The objects `gc.freeze` would move that the oldest generation does not hold yet: the
    young generation's count, plus the middle generations' objects (survivors of earlier
    young collections, a few thousand at most: listing them costs microseconds)."""
    return gc.get_count()[0] + sum(len(gc.get_objects(g)) for g in range(1, _OLDEST))


def _promote_unscanned():
    """The young objects join the oldest generation without a young collection, within
    the budget and unless the user froze objects (`unfreeze` would thaw them)."""
    global _deferred
    young = _unscanned_young()
    if gc.get_freeze_count() or _deferred + young > DEFER_BUDGET:
        return
    gc.freeze()                 # everything to the permanent generation (counts reset) ...
    gc.unfreeze()               # ... and back into the oldest one, none of it scanned
    _deferred += young


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
                _promote_unscanned()
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
