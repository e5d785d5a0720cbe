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
