"""Eager NumPy code as silent as JAX: no RuntimeWarning for `x / 0.0`, `log(0.0)`,
`sqrt(-1.0)`, an overflowing `exp` or a cast of NaN to an integer (XLA computes IEEE values
and reports nothing; NumPy computes the same values and warns).

NumPy 2 keeps its error state (np.errstate) in a context variable; the evaluator sets it to
"ignore" around the NumPy code it runs and resets it after -- two C calls, where entering
`np.errstate` costs about a microsecond -- so the user's own state (np.seterr, their
np.errstate blocks, their warnings filters) is never changed outside xforms' calls.

    token = enter(IGNORE)
    try:
        out = np.divide(x, 0.0)         # inf, silently
    finally:
        leave(token)

The user's own Python code that xforms runs (pure_callback, io_callback, debug.callback)
runs under the user's state instead, as JAX runs it (jax's eager and jitted callbacks warn,
or raise FloatingPointError under np.errstate(divide="raise")): each entry that silences
NumPy from another state records that state (`note_user`), and `as_user` restores it.
"""
import contextvars

import numpy as np

try:            # (NumPy 2's own variable: what np.errstate sets)
    from numpy._core._ufunc_config import _extobj_contextvar as _STATE
    with np.errstate(all="ignore"):
        IGNORE = _STATE.get()
    enter, leave = _STATE.set, _STATE.reset
    # NumPy's own default (a token's old_value is Token.MISSING where no one set the state)
    _DEFAULT = contextvars.Context().run(_STATE.get)
except (ImportError, AttributeError):       # pragma: no cover  (another NumPy)
    IGNORE = None

    class _Token:           # (old_value: what a context variable's token has; None here)
        old_value = None

        def __init__(self):
            self.state = np.errstate(all="ignore")
            self.state.__enter__()

    def enter(_):
        return _Token()

    def leave(token):
        token.state.__exit__(None, None, None)


# the user's NumPy error state, as it was when xforms last silenced NumPy from it in this
# context (thread); read only while xforms' silence is on, so it is always that entry's
_USER = contextvars.ContextVar("xforms_user_errstate", default=None)
note_user = _USER.set


class silenced:
    """`with silenced():` NumPy's floating-point warnings off, as `np.errstate(all="ignore")`
    but by the two C calls above (~0.3 us, where np.errstate costs 1-4 us): for the impls
    that silence a step of their own, called in eager code thousands of times.

        >>> with silenced(): np.log(0.0)          # -inf, no RuntimeWarning"""
    __slots__ = ("token",)

    def __enter__(self):
        self.token = enter(IGNORE)

    def __exit__(self, *exc):
        leave(self.token)


def silently(fn, *args, **kwargs):
    """`fn(*args, **kwargs)` with NumPy's floating-point warnings off (see above).

        >>> silently(np.log, 0.0)           # -inf, no RuntimeWarning"""
    token = enter(IGNORE)
    if token.old_value is not IGNORE:       # (None, IGNORE: nothing to note)
        note_user(token.old_value)
    try:
        return fn(*args, **kwargs)
    finally:
        leave(token)


def as_user(fn, *args):
    """`fn(*args)` (the user's callback) under the user's NumPy error state: the one xforms'
    silence replaced, where it is on (eager, jit's fast tier); else the current one (jit's
    compiled tier, whose kernels leave it alone).

        >>> silently(as_user, np.log, 0.0)  # -inf, and NumPy's RuntimeWarning"""
    user = _USER.get()
    if IGNORE is None or _STATE.get() is not IGNORE or user is None:
        return fn(*args)
    token = enter(_DEFAULT if user is contextvars.Token.MISSING else user)
    try:
        return fn(*args)
    finally:
        leave(token)
