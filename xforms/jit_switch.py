"""The switch behind `xforms.disable_jit`: while it is on (in this thread), a jitted
function calls the user's Python instead of tracing and compiling it (xforms/jit.py asks
`jit_disabled()` first thing in each call).

    >>> with xf.disable_jit():
    ...     f(x)          # f = xf.jit(g): runs g(x) op by op, its prints included
"""
import contextlib
import threading

_state = threading.local()


def jit_disabled():
    return getattr(_state, "disabled", False)


@contextlib.contextmanager
def disable_jit(disable=True):
    """Within the block, `jit`-decorated functions run un-jitted: the user's Python runs
    on each call (so prints and Python control flow run each time) and each operation is
    evaluated as it comes, as in JAX.  `disable_jit(False)` turns jit back on inside an
    outer disabled block.

    >>> with xf.disable_jit():
    ...     xf.jit(lambda x: print(x) or x * 2)(3.0)     # prints 3.0, a concrete value
    """
    old = jit_disabled()
    _state.disabled = bool(disable)
    try:
        yield
    finally:
        _state.disabled = old
