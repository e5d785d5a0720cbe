"""What one call of a host launch sequence does, and whether it may be captured as a graph.

The generated `host(_rt, _K, ...)` (xforms/kernels/cuda/backend.py) reaches the device only
through `_K` (configured kernels) and `_rt` (the runtime module, runtime.py).  A `Recorder`
stands in for both: it passes each call on, notes what kind of step it was, and, while
`deferring`, keeps the stream work as thunks instead of running it (the simulator's stand-in
for a stream capture, in which the driver records launches rather than running them).

    rec = Recorder(runtime, kernels)
    outs = host(rec.rt, rec.K, ...)          # runs as usual; rec.steps lists what it did
    rec.verdict()                           # None if a graph may replay it, else why not

A call may become a graph when everything it puts on the stream is a kernel launch, a
device-to-device copy or a library call that stream capture accepts, and the host never
waits for the device inside it (a `while_loop` reading its condition back does), nor copies
host memory to the device (a capture cannot take a pageable host copy) other than a scalar
(`_rt.scalar`: a host value, fixed by the graph's key).  While capturing, such a scalar
becomes a buffer uploaded once after the capture (`uploads`, never written by the graph)
and a captured device copy of it into the buffer the host code uses, which the graph may
write (a loop's carry): every replay starts from the value again.
"""

#: how each runtime function the host code calls behaves under stream capture:
#:   "host"    no device work (views of existing buffers, the stream object)
#:   "alloc"   a buffer from the pool (host bookkeeping; the graph keeps the buffer alive)
#:   "stream"  device work queued on the stream: captured as graph nodes
#:   "sync"    the host waits for the device: a capture cannot contain it
#:   "const"   a scalar from the host (`_rt.scalar`): uploaded outside the capture
#:   "upload"  a copy from host memory: a capture cannot contain it
#:   "library" a library routine that captures only partly: cuSOLVER's matrix-by-matrix
#:             loop takes workspace per matrix and some routines read results on the host
RUNTIME_KINDS = {
    "view": "host", "words": "host", "locks": "host", "stream": "host", "simulating": "host",
    "empty": "alloc",
    "copy": "stream", "copy_into": "stream", "copy_range": "stream",
    "gemm": "stream", "fft": "stream",          # cuBLAS and cuFFT calls capture
    "fetch": "sync", "host_copy": "sync",
    "scalar": "const", "to_device": "upload",
    "solve": "library",
}

_REFUSED = {"sync": "the host waits for the device inside the call ({})",
            "upload": "it copies host memory to the device inside the call ({})",
            "library": "it calls a library routine that cannot be captured ({})",
            "unknown": "it calls a runtime function of unknown kind ({})"}


class Recorder:
    """`_rt` and `_K` for one host call, noting each step as (kind, name) in `steps`, the
    buffers allocated in `held`, and, while `deferring`, the stream work in `thunks`;
    `capturing`: host scalars go to `uploads` (buffer, value, dtype), for after the capture."""

    def __init__(self, runtime, kernels, deferring=False, capturing=False):
        self.steps, self.held, self.thunks, self.uploads = [], [], [], []
        self.deferring, self.capturing = deferring, capturing
        self.rt = _RecordingRuntime(self, runtime)
        self.K = [self._kernel(i, k) for i, k in enumerate(kernels)]

    def _kernel(self, site, k):
        def launch(*args):
            return self.stream_work(("launch", site), k, args)
        return launch

    def stream_work(self, step, fn, args):
        """Note `step`; run `fn(*args)` now, or keep it for `replay` while deferring."""
        self.steps.append(step)
        if self.deferring:
            self.thunks.append((fn, args))
            return None
        return fn(*args)

    def replay(self):
        """Run the kept stream work in order (what launching the captured graph does)."""
        for fn, args in self.thunks:
            fn(*args)

    def launches(self):
        """How many kernels and library routines the recorded call put on the stream."""
        return sum(1 for kind, name in self.steps
                   if kind == "launch" or (kind == "stream" and name in ("gemm", "fft")))

    def verdict(self):
        """None if the recorded call may be captured and replayed as one graph, else the
        reason it may not (the first step that rules it out)."""
        for kind, name in self.steps:
            if kind in _REFUSED:
                return _REFUSED[kind].format(f"_rt.{name}")
        return None


class _RecordingRuntime:
    """The runtime module as the host code sees it, each call classified by RUNTIME_KINDS."""

    def __init__(self, rec, runtime):
        self._rec, self._rt = rec, runtime

    def copy(self, buf):
        # an allocation, then device work: split so that a deferred copy has its buffer now
        out = self.empty(buf.size, buf.dtype)
        self.copy_into(out, buf)
        return out

    def scalar(self, value, dtype):
        rec = self._rec
        if not rec.capturing:
            rec.steps.append(("const", "scalar"))
            return self._rt.scalar(value, dtype)
        src = self.empty(1, dtype)              # (filled once the capture has ended)
        rec.uploads.append((src, value, dtype))
        out = self.empty(1, dtype)
        self.copy_into(out, src)
        return out

    def empty(self, size, dtype):
        self._rec.steps.append(("alloc", "empty"))
        buf = self._rt.empty(size, dtype)
        self._rec.held.append(buf)
        return buf

    def __getattr__(self, name):
        fn = getattr(self._rt, name)
        kind = RUNTIME_KINDS.get(name, "unknown")
        if not callable(fn) or kind == "host":
            return fn
        rec = self._rec
        if kind == "stream":
            return lambda *a: rec.stream_work(("stream", name), fn, a)

        def other(*a):
            rec.steps.append((kind, name))
            return fn(*a)
        return other
