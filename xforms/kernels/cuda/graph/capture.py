"""Stream capture through the CUDA driver (cuda-bindings): the one module of the graph path
that talks to the driver, so that another kernel compiler (numba-cuda-mlir) or cuda.core's
graph builder replaces this file only.

    cap = StreamCapture(stream_handle)      # the backend's stream, as an integer
    cap.begin()                             # launches onto that stream are recorded, not run
    host(...)                               # the launch sequence, as on any call
    g = cap.end()                           # cuStreamEndCapture + cuGraphInstantiate
    g.launch()                              # cuGraphLaunch on the same stream
    g.close()                               # (also when garbage-collected)

The capture mode is RELAXED: the pool may call cuMemAlloc while a call is captured (a new
block is host bookkeeping and a driver allocation, neither of them stream work).  Frees wait
until the capture ends (numba-cuda's `defer_cleanup`): cuMemFree synchronises the device,
which would invalidate the capture.  Not run
by any test without a GPU (the simulator has no driver): tests/cuda/test_graphs.py checks it
on a GPU (XFORMS_CUDA_TESTS=gpu), and the bookkeeping around it on the simulator.
"""
import weakref


class CaptureError(RuntimeError):
    """The driver refused a capture step (the caller runs the call without a graph)."""


def _driver():
    from cuda.bindings import driver
    return driver


def _check(result, what):
    """The values after a driver call's status; CaptureError naming `what` if it failed."""
    drv = _driver()
    err, rest = result[0], result[1:]
    if err != drv.CUresult.CUDA_SUCCESS:
        raise CaptureError(f"{what} failed: {err!r}")
    return rest[0] if len(rest) == 1 else rest


class StreamCapture:
    """Captures what is queued on one stream between `begin` and `end` into a graph."""

    defers = False              # the driver records the work: the host code runs as usual

    def __init__(self, stream_handle, defer_cleanup=None):
        self._stream = _driver().CUstream(int(stream_handle))
        self._defer_cleanup = defer_cleanup or _numba_defer_cleanup
        self._deferred = None

    def begin(self):
        drv = _driver()
        self._deferred = self._defer_cleanup()
        self._deferred.__enter__()
        try:
            _check(drv.cuStreamBeginCapture(
                self._stream, drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED),
                "cuStreamBeginCapture")
        except BaseException:
            self._resume_cleanup()
            raise

    def _resume_cleanup(self):
        deferred, self._deferred = self._deferred, None
        if deferred is not None:
            deferred.__exit__(None, None, None)

    def end(self, recorder=None):
        """The captured work as an instantiated graph (`GraphExec`)."""
        drv = _driver()
        try:
            graph = _check(drv.cuStreamEndCapture(self._stream), "cuStreamEndCapture")
        finally:
            self._resume_cleanup()
        try:
            exe = _check(drv.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
        except CaptureError:
            drv.cuGraphDestroy(graph)
            raise
        return GraphExec(graph, exe, self._stream)

    def abort(self):
        """End a capture that failed half-way and drop what it recorded."""
        drv = _driver()
        try:
            err, graph = drv.cuStreamEndCapture(self._stream)
        finally:
            self._resume_cleanup()
        if err == drv.CUresult.CUDA_SUCCESS and graph is not None:
            drv.cuGraphDestroy(graph)


def _numba_defer_cleanup():
    from numba import cuda
    return cuda.defer_cleanup()


class GraphExec:
    """An instantiated graph, launched onto the stream it was captured from."""

    def __init__(self, graph, exe, stream):
        self._graph, self._exe, self._stream = graph, exe, stream
        self._free = weakref.finalize(self, _destroy, graph, exe)

    def launch(self):
        _check(_driver().cuGraphLaunch(self._exe, self._stream), "cuGraphLaunch")

    def nodes(self):
        """How many nodes (kernels, copies, library kernels) the graph holds."""
        _, n = _check(_driver().cuGraphGetNodes(self._graph, 0), "cuGraphGetNodes")
        return int(n)

    def close(self):
        self._free()


def _destroy(graph, exe):
    drv = _driver()
    drv.cuGraphExecDestroy(exe)
    drv.cuGraphDestroy(graph)
