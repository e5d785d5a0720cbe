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
"""
import numpy as np

try:            # (NumPy 2's own variable: what np.errstate sets)
    from numpy._core._ufunc_config import _extobj_contextvar as _STATE
    with np.errstate(all="ignore"):
        IGNORE = _STATE.get()
    enter, leave = _STATE.set, _STATE.reset
except (ImportError, AttributeError):       # pragma: no cover  (another NumPy)
    IGNORE = None

    def enter(_):
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def leave(state):
        state.__exit__(None, None, None)


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
    try:
        return fn(*args, **kwargs)
    finally:
        leave(token)
