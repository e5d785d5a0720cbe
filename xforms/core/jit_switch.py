"""The switches behind `xforms.disable_jit` and `xforms.default_device`: while disable_jit
is on (in this thread), a jitted function calls the user's Python instead of tracing and
compiling it (xforms/jit/jitted.py asks `jit_disabled()` first thing in each call); while a
default_device block is open, `default_platform()` names the backend that jit (without an
explicit `backend=`), device_put and devices use.

    >>> with xf.disable_jit():
    ...     f(x)          # f = xf.jit(g): runs g(x) op by op, its prints included
"""
import contextlib
import threading

_state = threading.local()
# how many disable_jit / default_device blocks are open in any thread: jit's per-call check reads this module
# global first (the dispatch hot path), and the thread-local only while one is open
active = 0
_count_lock = threading.Lock()


# xforms.profiler's running trace (process-wide) or None: jit records each execution in it
# (`recorder.execution(name)`); counted in `active` so that jit's per-call check sees it
recorder = None


def set_recorder(r):
    """Install (or, with None, remove) the profiler's recorder of jit executions."""
    global recorder, active
    with _count_lock:
        active += (r is not None) - (recorder is not None)
        recorder = r


def jit_disabled():
    return active > 0 and getattr(_state, "disabled", False)


def default_platform():
    """The backend ("cpu" or "cuda") of the innermost open default_device block in this
    thread, or None."""
    return getattr(_state, "platform", None) if active > 0 else None


@contextlib.contextmanager
def _open(attr, value):
    """Set this thread's `attr` to `value` within the block, counted in `active`."""
    global active
    old = getattr(_state, attr, None)
    setattr(_state, attr, value)
    with _count_lock:
        active += 1
    try:
        yield
    finally:
        with _count_lock:
            active -= 1
        setattr(_state, attr, old)


def use_platform(platform):
    """A block in which `default_platform()` is `platform` (None: the system default)."""
    return _open("platform", platform)


@contextlib.contextmanager
def disable_jit(disable=True):
    """Within the block, `jit`-decorated functions run un-jitted: the user's Python runs
    on each call (so prints and Python control flow run each time) and each operation is
    evaluated as it comes, as in JAX.  `disable_jit(False)` turns jit back on inside an
    outer disabled block.

    >>> with xf.disable_jit():
    ...     xf.jit(lambda x: print(x) or x * 2)(3.0)     # prints 3.0, a concrete value
    """
    with _open("disabled", bool(disable)):
        yield
