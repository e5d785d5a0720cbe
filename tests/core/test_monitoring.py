"""xforms.monitoring: JAX's listener API, fed by real trace and compile events.

JAX 0.10.2 (checked with the installed jax) records, for jax.jit(f)(x) on its first call,
"/jax/core/compile/jaxpr_trace_duration" with fun_name="f" and
"/jax/core/compile/backend_compile_duration" with fun_name="jit(f)" (each as a scalar start
time, a duration and a time span); a cached call records nothing.
"""
import time

import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import monitoring

TRACE = "/jax/core/compile/jaxpr_trace_duration"
COMPILE = "/jax/core/compile/backend_compile_duration"


@pytest.fixture
def events():
    got = []
    listeners = [
        (monitoring.register_event_duration_secs_listener,
         monitoring.unregister_event_duration_listener,
         lambda e, d, **k: got.append(("duration", e, d, k))),
        (monitoring.register_event_time_span_listener,
         monitoring.unregister_event_time_span_listener,
         lambda e, s, t, **k: got.append(("span", e, t - s, k))),
        (monitoring.register_scalar_listener, monitoring.unregister_scalar_listener,
         lambda e, v, **k: got.append(("scalar", e, v, k))),
    ]
    for register, _, cb in listeners:
        register(cb)
    yield got
    for _, unregister, cb in listeners:
        unregister(cb)


def _step(x):
    return xnp.sin(x) * 2.0


def test_jit_records_trace_and_compile_as_jax(events):
    before = time.time()
    g = xf.jit(_step, tiered=False)
    g(xnp.ones(3))
    kinds = [(kind, e, k["fun_name"]) for kind, e, _, k in events]
    assert kinds == [("scalar", TRACE, "_step"), ("duration", TRACE, "_step"),
                     ("span", TRACE, "_step"), ("scalar", COMPILE, "jit(_step)"),
                     ("duration", COMPILE, "jit(_step)"), ("span", COMPILE, "jit(_step)")]
    durations = {e: d for kind, e, d, _ in events if kind == "duration"}
    spans = {e: d for kind, e, d, _ in events if kind == "span"}
    assert durations == spans and all(d >= 0 for d in durations.values())
    assert all(before <= v <= time.time() for kind, _, v, _ in events if kind == "scalar")
    events.clear()
    g(xnp.ones(3))                               # cached: nothing traced or compiled
    assert events == []
    g(xnp.ones(4))                               # a new signature
    assert [e for kind, e, _, _ in events if kind == "duration"] == [TRACE, COMPILE]


def test_a_background_compile_is_recorded(events):
    g = xf.jit(lambda x: xnp.cos(x) + 1.0)
    g(xnp.ones(5))
    g.wait_compiled()
    names = [(e, k["fun_name"]) for kind, e, _, k in events if kind == "duration"]
    assert names == [(TRACE, "<lambda>"), (COMPILE, "jit(<lambda>)")]


def test_record_register_unregister_clear():
    got = []
    cb = lambda e, **k: got.append((e, k))
    monitoring.register_event_listener(cb)
    monitoring.record_event("/my/event", step=3)
    monitoring.unregister_event_listener(cb)
    monitoring.record_event("/my/event")
    assert got == [("/my/event", {"step": 3})]
    with pytest.raises(ValueError, match="not a registered"):
        monitoring.unregister_event_listener(cb)
    monitoring.register_scalar_listener(lambda e, v, **k: got.append((e, v)))
    monitoring.clear_event_listeners()
    monitoring.record_scalar("/my/scalar", 1.5)
    assert len(got) == 1
