"""`xforms.profiler`, as `jax.profiler`: a trace of what xforms did -- each jitted call's
execution, each trace and compile of a new signature (xforms.monitoring's compile events,
from the background compile thread too) and the user's TraceAnnotations -- written as a
Chrome trace (JSON, which Perfetto and chrome://tracing open) under the log directory.

    >>> with xf.profiler.trace("/tmp/prof"):
    ...     with xf.profiler.StepTraceAnnotation("train", step_num=0):
    ...         step(params, batch)
    >>> # /tmp/prof/plugins/profile/<run>/<host>.trace.json.gz

The file sits where TensorBoard's profile plugin looks for a run's trace (JAX writes an
XPlane protobuf there instead; xforms has no XLA profiler to produce one).
"""
import contextlib
import functools
import os
import threading
import time

from .core import jit_switch, monitoring

_COMPILE_EVENTS = {monitoring.JAXPR_TRACE_EVENT: "trace", monitoring.BACKEND_COMPILE_EVENT:
                   "compile"}
_lock = threading.Lock()
_session = None


class ProfileOptions:
    """JAX's profiler options, with JAX's defaults; accepted by `trace`/`start_trace` and
    not read: xforms' trace has one level (its jit, compile and annotation spans)."""

    def __init__(self):
        self.host_tracer_level, self.python_tracer_level = 2, 1
        self.enable_hlo_proto, self.include_dataset_ops = True, True
        self.duration_ms, self.start_timestamp_ns = 0, 0
        self.raise_error_on_start_failure = False
        self.repository_path, self.session_id, self.advanced_configuration = "", "", {}


class _Session:
    """One running trace: where it goes and the complete ("X") events recorded so far."""

    def __init__(self, log_dir, perfetto):
        self.log_dir, self.perfetto = os.fspath(log_dir), perfetto
        self.events, self.local = [], threading.local()

    def add(self, name, start, end, args=None):
        ev = {"name": name, "ph": "X", "ts": start * 1e6, "dur": (end - start) * 1e6,
              "pid": os.getpid(), "tid": threading.get_ident()}
        if args:
            ev["args"] = {k: str(v) for k, v in args.items()}
        with _lock:
            self.events.append(ev)

    @contextlib.contextmanager
    def span(self, name, args=None):
        start = time.time()
        try:
            yield
        finally:
            self.add(name, start, time.time(), args)

    def on_compile(self, event, start, end, **kwargs):
        what = _COMPILE_EVENTS.get(event)
        if what is not None:
            self.add(f"{what} {kwargs.get('fun_name', '')}".strip(), start, end,
                     {"event": event})

    # jit records each execution on the eager trace (jit_switch.recorder) while idle():
    # the call it wraps, and any jitted call that one makes, is one span
    def idle(self):
        return not getattr(self.local, "busy", False)

    @contextlib.contextmanager
    def execution(self, name):
        self.local.busy = True
        try:
            with self.span(name):
                yield
        finally:
            self.local.busy = False

    def write(self):
        # (imported here: at the top they were 4 ms of every `import xforms`)
        import gzip
        import json
        import socket
        run = time.strftime("%Y_%m_%d_%H_%M_%S")
        d = os.path.join(self.log_dir, "plugins", "profile", run)
        os.makedirs(d, exist_ok=True)
        data = json.dumps({"traceEvents": self.events, "displayTimeUnit": "ms"}).encode()
        paths = [os.path.join(d, f"{socket.gethostname()}.trace.json.gz")]
        if self.perfetto:
            paths.append(os.path.join(d, "perfetto_trace.json.gz"))
        for p in paths:
            with gzip.open(p, "wb") as f:
                f.write(data)
        return paths[0]


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
                profiler_options=None):
    """Start recording a trace, to be written under `log_dir` by `stop_trace`.

        >>> xf.profiler.start_trace("/tmp/prof"); f(x); xf.profiler.stop_trace()
    """
    global _session
    if create_perfetto_link:
        raise NotImplementedError(
            "profiler.start_trace(create_perfetto_link=True): xforms serves no trace to "
            "ui.perfetto.dev; open the written .trace.json.gz in Perfetto yourself")
    with _lock:
        if _session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        _session = _Session(log_dir, create_perfetto_trace)
    monitoring.register_event_time_span_listener(_session.on_compile)
    jit_switch.set_recorder(_session)


def stop_trace():
    """Stop the trace `start_trace` began and write it; -> the path of the trace file."""
    global _session
    with _lock:
        session, _session = _session, None
    if session is None:
        raise RuntimeError("No profile started")
    jit_switch.set_recorder(None)
    monitoring.unregister_event_time_span_listener(session.on_compile)
    return session.write()


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
          profiler_options=None):
    """Record a trace of the block under `log_dir` (`start_trace` ... `stop_trace`).

        >>> with xf.profiler.trace("/tmp/prof"):
        ...     f(x).block_until_ready()
    """
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A named span in the trace around a block (free while no trace is running);
    keyword arguments are recorded as the span's arguments.

        >>> with xf.profiler.TraceAnnotation("load", batch=3):
        ...     batch = next(data)
    """

    def __init__(self, name, **kwargs):
        self.name, self.kwargs, self._span = name, kwargs, None

    def __enter__(self):
        session = _session
        if session is not None:
            self._span = session.span(self.name, self.kwargs)
            self._span.__enter__()
        return self

    def __exit__(self, *exc):
        span, self._span = self._span, None
        if span is not None:
            span.__exit__(*exc)
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A training step's span (`step_num=` among its arguments), as JAX's.

        >>> with xf.profiler.StepTraceAnnotation("train", step_num=step):
        ...     params = update(params, batch)
    """

    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """`func` wrapped in a TraceAnnotation named `name` (default: its qualified name).

        >>> @xf.profiler.annotate_function
        ... def load(i): ...
    """
    name = name or getattr(func, "__qualname__", getattr(func, "__name__", "function"))

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


def device_memory_profile(backend=None):
    """JAX returns a pprof profile of the device's live buffers; xforms has none to give."""
    from .jit import default_backend
    backend = backend or default_backend()
    if backend == "cpu":
        raise NotImplementedError(
            "profiler.device_memory_profile: not available on the CPU backend (xforms' CPU "
            "arrays are NumPy arrays in host memory: use tracemalloc)")
    raise NotImplementedError(
        f"profiler.device_memory_profile(backend={backend!r}): xforms writes no pprof "
        "profile of device buffers")


def save_device_memory_profile(filename, backend=None):
    """Write `device_memory_profile(backend)` to `filename` (see it for what is available)."""
    data = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(data)


def start_server(port, requires_backend=True):
    """Not available: xforms has no profiler server for TensorBoard to connect to."""
    raise NotImplementedError("profiler.start_server: xforms has no profiler server; record "
                              "with profiler.trace(log_dir) and open the written trace")


def stop_server():
    """Not available (see start_server)."""
    raise NotImplementedError("profiler.stop_server: xforms has no profiler server")


def __getattr__(name):
    """jax.profiler's readers of XLA profiles: absent (xforms writes Chrome traces), saying
    why."""
    if name in ("ProfileData", "ProfileEvent", "ProfilePlane", "register_subprocess"):
        raise AttributeError(f"xforms.profiler.{name}: xforms has no XLA profiler (no "
                             "profile data to read, no profiler server): profiler.trace "
                             "writes a Chrome trace of jit executions and compiles")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
