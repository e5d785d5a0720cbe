"""Timing helpers: warm-up, autorange and median-of-repeats.

The machine is noisy, so every figure is the median over several repeats of a
loop that runs the function ``number`` times (``number`` chosen so that one
repeat lasts at least ``target`` seconds, as ``timeit.Timer.autorange`` does).
"""
from __future__ import annotations

import gc
import itertools
import statistics
import time
from dataclasses import dataclass, asdict

perf = time.perf_counter


@dataclass
class Timing:
    """Seconds per call: median, min and quartiles over ``repeats`` repeats; ``taken``: the
    repeats in the order taken (which ones an adaptive runtime ran differently)."""
    median: float
    min: float
    q1: float
    q3: float
    number: int
    repeats: int
    taken: tuple = ()

    def as_dict(self) -> dict:
        return asdict(self)


def _loop(fn, args, number: int) -> float:
    """Seconds for ``number`` calls of ``fn(*args)`` (GC off, as timeit does)."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        t0 = perf()
        for _ in itertools.repeat(None, number):
            fn(*args)
        return perf() - t0
    finally:
        if gc_was_on:
            gc.enable()


def autorange(fn, args=(), target: float = 0.02, max_number: int = 1_000_000) -> tuple[int, float]:
    """Smallest ``number`` in 1, 2, 5, 10, 20, ... whose loop takes >= ``target`` s.

    Returns ``(number, seconds_per_call_of_last_trial)``.
    """
    for number in (k * 10 ** e for e in range(7) for k in (1, 2, 5)):
        if number > max_number:
            break
        t = _loop(fn, args, number)
        if t >= target:
            return number, t / number
    return max_number, t / number


def measure(fn, args=(), *, repeats: int = 7, target: float = 0.02, budget: float = 2.0) -> Timing:
    """Median seconds per call of ``fn(*args)``, after one timed warm-up call.

    Fast functions: ``repeats`` repeats of an autoranged loop, fewer (at least
    3) if the whole measurement would exceed ``budget`` s.  Slow functions (the
    warm-up took over a third of the budget): one call per repeat, the warm-up
    counting as the first, 3 samples in all.
    """
    t_warm = _loop(fn, args, 1)
    if t_warm > budget / 3:
        taken = [t_warm] + [_loop(fn, args, 1) for _ in range(2)]
        number = 1
    else:
        number, per_call = autorange(fn, args, target)
        per_repeat = max(per_call * number, 1e-9)
        repeats = max(3, min(repeats, int(budget / per_repeat)))
        taken = [_loop(fn, args, number) / number for _ in range(repeats)]
    samples = sorted(taken)
    q = statistics.quantiles(samples, n=4, method="inclusive")
    return Timing(statistics.median(samples), samples[0], q[0], q[2], number, len(samples),
                  tuple(taken))


def time_once(fn, args=()) -> tuple[float, object]:
    """Wall seconds and result of a single call (used for first-call/compile time)."""
    t0 = perf()
    out = fn(*args)
    return perf() - t0, out
