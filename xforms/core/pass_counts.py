"""How many times each whole-program IR pass ran on this thread: traces (a Builder staging
a program), simplifications and dead-code eliminations.  A test hook, not a timer:
tests/core/test_pass_counts.py checks that the first `jit(grad(loss))` call stages four programs
and simplifies each once.  Per thread, so that a tiered background compile (which may
scalarise and clean up a program) does not count towards the caller's.

    >>> before = pass_counts.snapshot()
    >>> xf.jit(xf.grad(loss))(w, x, y)
    >>> pass_counts.since(before)
    {'trace': 4, 'simplify': 4, 'dce': 6}
"""
import threading

NAMES = ("trace", "simplify", "dce")


class _Counts(threading.local):
    """The passes add to these themselves (`local.trace += 1`: no call on their path)."""

    def __init__(self):
        self.trace = self.simplify = self.dce = 0


local = _Counts()


def snapshot():
    return {k: getattr(local, k) for k in NAMES}


def since(before):
    """The passes this thread ran since `snapshot()` returned `before`."""
    return {k: getattr(local, k) - before.get(k, 0) for k in NAMES}
