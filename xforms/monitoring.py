"""`xforms.monitoring`: event listeners, as `jax.monitoring` (the mechanism and the events
xforms records: xforms/core/monitoring.py).

    >>> seen = []
    >>> xf.monitoring.register_event_duration_secs_listener(
    ...     lambda event, secs, **kw: seen.append((event, kw["fun_name"])))
    >>> xf.jit(lambda x: x * 2, tiered=False)(1.0)
    >>> seen     # [('/jax/core/compile/jaxpr_trace_duration', '<lambda>'),
    ...          #  ('/jax/core/compile/backend_compile_duration', 'jit(<lambda>)')]
"""
from .core.monitoring import (clear_event_listeners, record_event, record_event_duration_secs,
                              record_event_time_span, record_scalar,
                              register_event_duration_secs_listener, register_event_listener,
                              register_event_time_span_listener, register_scalar_listener,
                              unregister_event_duration_listener, unregister_event_listener,
                              unregister_event_time_span_listener, unregister_scalar_listener)

__all__ = ["clear_event_listeners", "record_event", "record_event_duration_secs",
           "record_event_time_span", "record_scalar", "register_event_duration_secs_listener",
           "register_event_listener", "register_event_time_span_listener",
           "register_scalar_listener", "unregister_event_duration_listener",
           "unregister_event_listener", "unregister_event_time_span_listener",
           "unregister_scalar_listener"]
