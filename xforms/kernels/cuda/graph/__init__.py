"""A jitted call's launches captured once and replayed as one CUDA graph (XFORMS_CUDA_GRAPHS=1).

A call of a CUDA executable is a host launch sequence: several kernel launches, copies and
library calls, each costing host time (tens of microseconds through numba-cuda's
dispatcher).  With graphs on, `Graphs` runs an executable's calls so:

1. the first call runs as usual under a `record.Recorder`, which says whether the call may
   be a graph at all (`Recorder.verdict`: no host wait, no host-to-device copy, no
   uncapturable library routine inside); if not, the executable never tries again;
2. the next call with the same host values (the scalars passed by value, which a capture
   bakes into its launches) copies its device inputs into buffers the graph owns, captures
   the launch sequence run on those (`capture.StreamCapture`, or `ThunkCapture` on the
   simulator, which keeps the stream work as Python thunks), and launches the graph;
3. later calls with those host values copy their inputs in, launch the graph, and copy the
   outputs out into new buffers (the graph's own are overwritten by the next replay, and a
   returned array never changes).

So a call of k launches costs one graph launch plus one device copy per input and output
buffer.  At most `LIMIT` graphs are kept per executable; an executable whose host values
change at every call (a step counter passed as a scalar) stops capturing after
`MAX_CAPTURES` and runs as before.

    graphs = Graphs(capturer)
    outs = graphs(run, runtime, kernels, args)    # run(rt, K, args) -> the host code's outputs
    graphs.info()     # {"state": "replaying", "captures": 1, "replays": 9, "launches": 12, ...}
"""
from collections import OrderedDict

import numpy as np

from .record import Recorder

LIMIT = 4               # graphs kept per executable (keyed by the call's host values)
MAX_CAPTURES = 16       # captures per executable before its calls run without graphs


class ThunkCapture:
    """The simulator's stand-in for a stream capture: the Recorder keeps the stream work as
    thunks (nothing runs while capturing), and launching the graph runs them in order."""

    defers = True

    def begin(self):
        pass

    def end(self, recorder):
        return _Thunks(recorder)

    def abort(self):
        pass


class _Thunks:
    def __init__(self, recorder):
        self._rec = recorder

    def launch(self):
        self._rec.replay()

    def nodes(self):
        return len(self._rec.thunks)

    def close(self):
        self._rec = None


def host_key(args):
    """What a capture bakes in: the host values among `args` by type and bytes (NaN equals
    itself), the device buffers by dtype and size."""
    return tuple((type(a).__name__, a.tobytes()) if isinstance(a, np.generic)
                 else ("dev", str(a.dtype), a.size) for a in args)


class Graph:
    """One captured call: the input buffers it reads, what it allocated, its outputs."""

    def __init__(self, runtime, slots, outs, held, exe, launches):
        self._rt, self._slots, self._outs, self._held = runtime, slots, outs, held
        self.exe, self.launches = exe, launches

    @classmethod
    def capture(cls, capturer, run, runtime, kernels, args):
        slots = [None if isinstance(a, np.generic) else runtime.empty(a.size, a.dtype)
                 for a in args]
        inputs = [a if s is None else s for a, s in zip(args, slots)]
        rec = Recorder(runtime, kernels, deferring=capturer.defers, capturing=True)
        capturer.begin()
        try:
            outs = run(rec.rt, rec.K, inputs)
        except BaseException:
            capturer.abort()
            raise
        exe = capturer.end(rec)
        if rec.verdict() is not None:     # (host code that depends on more than its key)
            exe.close()
            raise ValueError(rec.verdict())
        for buf, value, dtype in rec.uploads:      # (the host scalars: outside the capture)
            runtime.copy_into(buf, runtime.scalar(value, dtype))
        return cls(runtime, slots, outs, rec.held, exe, rec.launches())

    def __call__(self, args):
        rt = self._rt
        for a, s in zip(args, self._slots):
            if s is not None:
                rt.copy_into(s, a)
        self.exe.launch()
        copies = {}

        def out(b):
            if id(b) not in copies:
                copies[id(b)] = rt.copy(b)
            return copies[id(b)]
        return tuple((out(b[0]), b[1]) if type(b) is tuple else out(b) for b in self._outs)


class Graphs:
    """The graphs of one executable's calls (see the module docstring)."""

    def __init__(self, capturer):
        self._capturer = capturer
        self._graphs = OrderedDict()
        self.verdict = None          # why this executable's calls are never graphs, once known
        self.recorded = False
        self.captures = self.replays = 0
        self.launches = None         # stream work of one recorded call

    def __call__(self, run, runtime, kernels, args):
        if self.verdict is not None:
            return run(runtime, kernels, args)
        if not self.recorded:
            rec = Recorder(runtime, kernels)
            outs = run(rec.rt, rec.K, args)
            self.recorded, self.verdict = True, rec.verdict()
            self.launches = rec.launches()
            return outs
        key = host_key(args)
        graph = self._graphs.get(key)
        if graph is None:
            if self.captures >= MAX_CAPTURES:
                self.verdict = f"its host values changed over {MAX_CAPTURES} captures"
                return run(runtime, kernels, args)
            try:
                graph = self._capture(key, run, runtime, kernels, args)
            except Exception as e:       # noqa: BLE001 - the driver refused: run as before
                self.verdict = f"its capture failed: {type(e).__name__}: {e}"
                return run(runtime, kernels, args)
        else:
            self._graphs.move_to_end(key)
            self.replays += 1
        return graph(args)

    def _capture(self, key, run, runtime, kernels, args):
        graph = Graph.capture(self._capturer, run, runtime, kernels, args)
        self.captures += 1
        self._graphs[key] = graph
        if len(self._graphs) > LIMIT:
            _, old = self._graphs.popitem(last=False)
            old.exe.close()
        return graph

    def info(self):
        """The state of this executable's graphs, for benchmark rows and tests."""
        state = ("refused" if self.verdict else "replaying" if self._graphs
                 else "recorded" if self.recorded else "unused")
        return {"state": state, "reason": self.verdict, "captures": self.captures,
                "replays": self.replays, "launches": self.launches,
                "graphs": len(self._graphs)}
