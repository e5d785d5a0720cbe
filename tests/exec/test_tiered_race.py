"""A tiered first call that gives up (xforms/exec/first_tier.py `first_call_tier`, "race";
xforms/core/eager/abandon.py): an eager evaluation still running when the compile is done,
or past its deadline, stops at a loop trip and the compiled code answers, with the compiled
values; a program with effects is never given up (its effects run once a call); a short
program still answers on the fast tier.  No timings: the compile's completion is staged
(a compile that returns once the call runs) and the deadlines are injected."""
import threading
import time

import numpy as np

import xforms as xf
import xforms.numpy as xnp
from xforms import lax
from xforms.core.eager import abandon
from xforms.exec import tiered
from xforms.exec.tiered import TieredExecutable

LONG = 10 ** 7          # trips: ~25 s eagerly, were a call not given up


def count_to(n):
    """A while loop of `n` trips (its trip count is data to the cost model)."""
    return lambda x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x + 0.5),
                                    (0, x))[1]


_COMPILED = {}


def compiled(fn, x):
    """The synchronously compiled executable of jit(fn) at `x` (shared by the tests)."""
    if fn not in _COMPILED:
        g = xf.jit(fn, tiered=False)
        g(x)
        (exe, _, _), = g._fast.values()
        _COMPILED[fn] = exe
    return _COMPILED[fn]


LONG_FN = count_to(LONG)


def _once_running(exe, result):
    """A compile_fn that is done only once a fast-tier call of `exe[0]` runs."""
    def compile_fn():
        while not exe[0]._running:
            time.sleep(0.001)
        return result
    return compile_fn


def test_a_call_running_when_the_compile_is_done_answers_with_the_compiled_values():
    x = 0.999
    closed = xf.make_jaxpr(LONG_FN)(x)
    want = compiled(LONG_FN, x)
    holder = []
    exe = TieredExecutable(closed, _once_running(holder, want), race=1e6, spare_core=True)
    holder.append(exe)
    got = exe(np.float64(x))
    assert exe.abandoned == 1 and exe.compiled is want
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want(np.float64(x))[0]))
    assert not abandon.STOP[0]                  # (no request left behind)


def test_a_call_past_its_deadline_waits_for_the_compile():
    x = 0.999
    closed = xf.make_jaxpr(LONG_FN)(x)
    want = compiled(LONG_FN, x)
    # (a deadline of 1 ns of the call's CPU: passed at the compile thread's first look)
    exe = TieredExecutable(closed, lambda: want, race=1e-9, spare_core=False)
    got = exe(np.float64(x))
    assert exe.deadline_passed and exe.abandoned == 1
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want(np.float64(x))[0]))


def test_a_short_race_answers_on_the_fast_tier():
    short = count_to(50)
    closed = xf.make_jaxpr(short)(0.5)
    release = threading.Event()
    exe = TieredExecutable(closed, lambda: (release.wait(60), compiled(short, 0.5))[1],
                           race=1e6, spare_core=True)
    try:
        got = exe(np.float64(0.5))
        assert exe.abandoned == 0 and exe.compiled is None      # answered eagerly
    finally:
        release.set()
    want = exe.wait(60)(np.float64(0.5))
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-12)


def test_effects_run_once_a_call_and_are_never_given_up():
    seen = []

    def f(x):
        def body(c):
            xf.debug.callback(lambda i: (seen.append(int(i)), time.sleep(0.002)), c[0])
            return c[0] + 1, c[1] * x
        return lax.while_loop(lambda c: c[0] < 40, body, (0, x))[1]
    closed = xf.make_jaxpr(f)(0.5)
    assert tiered.first_call_tier(closed, lambda c: True)[0] != "race"
    # (even if asked to race, a deadline of 1 ns does not stop it; the "compiled" code, a
    # NaN, would show in the result had the call been given up)
    nan = lambda *args: [np.float64(np.nan)]                       # noqa: E731
    exe = TieredExecutable(closed, lambda: nan, race=1e-9, spare_core=False)
    got = exe(np.float64(0.5))
    xf.effects_barrier()
    assert seen == list(range(40)) and exe.abandoned == 0
    np.testing.assert_allclose(float(got[0]), 0.5 ** 41, rtol=1e-12)


def test_a_guessed_loop_just_above_its_compile_races():
    """A while loop over a 10^5-element carry: ~7000 estimated units (100 guessed trips)
    against the direct LLVM path's ~5000, within GUESS_BAND; under Numba's budget it stays
    on the fast tier, and far above (a thousand guessed trips' worth) it compiles first."""
    def loop(body_eqns):
        def f(v):
            def body(c):
                u = c[1]
                for _ in range(body_eqns):
                    u = xnp.sin(u)
                return c[0] + 1, u
            return lax.while_loop(lambda c: c[0] < 3, body, (0, v))[1]
        return xf.make_jaxpr(f)(np.broadcast_to(np.zeros(()), (10 ** 5,)))
    tier, seconds = tiered.first_call_tier(loop(1), lambda c: True)
    assert tier == "race" and 0.015 < seconds < 0.05      # (half the compile: 0.05 s)
    assert tiered.first_call_tier(loop(1), lambda c: False) == ("fast", None)
    assert tiered.first_call_tier(loop(200), lambda c: True) == ("compile", None)
