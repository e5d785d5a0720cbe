"""jit pauses CPython's cyclic collector while it traces and compiles a new signature
(xforms/exec/gc_pause.py) and always restores it: after the call, after an error, when nested or
concurrent, and never turns on a collector the user turned off."""
import gc
import threading

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms.exec import gc_pause


def _probe(seen):
    def f(x):
        seen.append(gc.isenabled())      # runs while jit traces
        return xnp.sin(x) * 2.0
    return f


def test_collector_paused_while_tracing_and_restored():
    seen = []
    f = xf.jit(_probe(seen), tiered=False)
    assert gc.isenabled()
    np.testing.assert_allclose(f(0.5), np.sin(0.5) * 2.0)
    assert seen == [False] and gc.isenabled()
    f(0.25)                                   # cached signature: no trace, no pause
    assert seen == [False] and gc.isenabled()


def test_restored_after_an_error():
    def bad(x):
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom"):
        xf.jit(bad)(1.0)
    assert gc.isenabled()


def test_switched_off_by_environment(monkeypatch):
    monkeypatch.setenv("XFORMS_GC_PAUSE", "0")
    seen = []
    xf.jit(_probe(seen), tiered=False)(0.5)
    assert seen == [True]


def test_never_enables_a_collector_the_user_disabled():
    gc.disable()
    try:
        seen = []
        xf.jit(_probe(seen), tiered=False)(0.5)
        assert seen == [False] and not gc.isenabled()
    finally:
        gc.enable()


def test_nested_and_concurrent_pauses_share_one_count():
    inside, release = threading.Event(), threading.Event()

    def other():
        with gc_pause.paused():
            inside.set()
            release.wait(10)
    t = threading.Thread(target=other)
    with gc_pause.paused():
        t.start()
        inside.wait(10)
        with gc_pause.paused():
            assert not gc.isenabled()
    assert not gc.isenabled()                 # the other thread still holds a pause
    release.set()
    t.join()
    assert gc.isenabled()


class _Cycle:
    def __init__(self):
        self.me = self


def _collections_during(fn):
    """Generations of the collections that ran while `fn` ran."""
    seen = []
    cb = lambda phase, info: phase == "start" and seen.append(info["generation"])  # noqa: E731
    gc.callbacks.append(cb)
    try:
        fn()
    finally:
        gc.callbacks.remove(cb)
    return seen


def _compile_like(n=20_000):
    """What a compile leaves: many live objects (returned) and a cycle of garbage (its
    weak reference)."""
    import weakref
    live = [[i] for i in range(n)]
    ref = weakref.ref(_Cycle())
    return live, ref


def test_survivors_skip_the_young_collection_and_garbage_is_not_leaked():
    thresholds = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    gc.collect()                              # the budget starts from a full collection
    out = {}

    def compile_then_use():
        with gc_pause.paused():
            out["live"], out["ref"] = _compile_like()
        out["after"] = [[i] for i in range(200)]   # the first call's own allocations
    # before: the first allocation after the pause scanned all 20,000 lists (generation 0)
    assert _collections_during(compile_then_use) == []
    assert gc.isenabled() and gc.get_threshold() == thresholds and gc.get_freeze_count() == 0
    assert out["ref"]() is not None           # the garbage waits for a full collection ...
    gc.collect()
    assert out["ref"]() is None               # ... which frees it
    assert gc_pause._deferred == 0            # and resets the budget


def test_beyond_the_budget_the_young_collection_runs(monkeypatch):
    monkeypatch.setattr(gc_pause, "DEFER_BUDGET", 1_000)
    gc.collect()

    kept = []

    def compile_then_use():
        with gc_pause.paused():
            kept.append(_compile_like())
        [[i] for i in range(200)]
    assert 0 in _collections_during(compile_then_use)
    assert gc.isenabled()


def test_user_frozen_objects_stay_frozen():
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_pause.paused():
            kept = _compile_like(2_000)
        # still frozen (an unfreeze would move all of them out; a few frozen objects may die
        # meanwhile by reference count, which lowers the count without a collection)
        assert gc.get_freeze_count() > frozen - 100 and kept and gc.isenabled()
    finally:
        gc.unfreeze()


def test_the_budget_counts_the_middle_generation(monkeypatch):
    """`gc.freeze` also moves the middle generation's survivors unscanned: they count."""
    gc.collect()
    survivors = [[i] for i in range(3_000)]
    gc.collect(0)                             # into the middle generation
    middle = len(gc.get_objects(1))
    assert middle >= 3_000
    monkeypatch.setattr(gc_pause, "_deferred", 0)
    with gc_pause.paused():
        kept = _compile_like(1_000)
    assert gc_pause._deferred >= middle + 1_000 and survivors and kept
    gc.collect()
