"""Event listeners, as `jax.monitoring`: code points record named events, durations, time
spans and scalars; every registered listener of that kind is called with them.

xforms records JAX's compile events for each `jit` signature (`timed`):
"/jax/core/compile/jaxpr_trace_duration" (tracing the user function, fun_name its name)
and "/jax/core/compile/backend_compile_duration" (the Numba compile, fun_name
"jit(name)"; for a tiered jit it is recorded from the background compile thread).  Each is
recorded as JAX does: a scalar (the start time) on entry, then a duration and a time span.

    >>> monitoring.register_event_duration_secs_listener(
    ...     lambda event, secs, **kw: print(event, kw["fun_name"]))
    >>> xf.jit(f)(1.0)              # prints /jax/core/compile/jaxpr_trace_duration f ...
"""
import time
from contextlib import contextmanager

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

_listeners = {"event": [], "duration": [], "span": [], "scalar": []}


def record_event(event, **kwargs):
    """Call every event listener with (event, **kwargs)."""
    for callback in list(_listeners["event"]):
        callback(event, **kwargs)


def record_event_duration_secs(event, duration, **kwargs):
    """Call every duration listener with (event, duration in seconds, **kwargs)."""
    for callback in list(_listeners["duration"]):
        callback(event, duration, **kwargs)


def record_event_time_span(event, start_time, end_time, **kwargs):
    """Call every time-span listener with (event, start, end (time.time()), **kwargs)."""
    for callback in list(_listeners["span"]):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event, value, **kwargs):
    """Call every scalar listener with (event, value, **kwargs)."""
    for callback in list(_listeners["scalar"]):
        callback(event, value, **kwargs)


def register_event_listener(callback):
    """Call `callback` on every `record_event`."""
    _listeners["event"].append(callback)


def register_event_duration_secs_listener(callback):
    """Call `callback` on every `record_event_duration_secs`."""
    _listeners["duration"].append(callback)


def register_event_time_span_listener(callback):
    """Call `callback` on every `record_event_time_span`."""
    _listeners["span"].append(callback)


def register_scalar_listener(callback):
    """Call `callback` on every `record_scalar`."""
    _listeners["scalar"].append(callback)


def _unregister(kind, callback):
    if callback not in _listeners[kind]:
        raise ValueError(f"unregister: {callback!r} is not a registered {kind} listener")
    _listeners[kind].remove(callback)


def unregister_event_listener(callback):
    """Stop calling `callback` (ValueError if it is not registered)."""
    _unregister("event", callback)


def unregister_event_duration_listener(callback):
    """Stop calling `callback` (ValueError if it is not registered)."""
    _unregister("duration", callback)


def unregister_event_time_span_listener(callback):
    """Stop calling `callback` (ValueError if it is not registered)."""
    _unregister("span", callback)


def unregister_scalar_listener(callback):
    """Stop calling `callback` (ValueError if it is not registered)."""
    _unregister("scalar", callback)


def clear_event_listeners():
    """Forget every listener of every kind."""
    for kind in _listeners.values():
        kind.clear()


@contextmanager
def timed(event, fun_name):
    """Record `event` around the block as JAX's compile steps do: the start time as a
    scalar, then the duration and the time span (all with fun_name=)."""
    start = time.time()
    record_scalar(event, start, fun_name=fun_name)
    try:
        yield
    finally:                          # (a failed compile is recorded too, as in JAX)
        end = time.time()
        record_event_duration_secs(event, end - start, fun_name=fun_name)
        record_event_time_span(event, start, end, fun_name=fun_name)
