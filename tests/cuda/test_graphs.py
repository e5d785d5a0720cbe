"""CUDA graphs (xf.config.use_cuda_graphs, whose default is XFORMS_CUDA_GRAPHS=1;
xforms/kernels/cuda/graph/): the bookkeeping -- which calls may be captured, what a capture
bakes in, when a graph is replayed -- on the simulator, where `ThunkCapture` stands in for
the driver's stream capture (the stream work kept as thunks and run in order by the replay);
on a GPU (XFORMS_CUDA_TESTS=gpu) the same tests run through the driver's capture
(graph/capture.py)."""
import numpy as np
import pytest

import xforms as xf
from xforms import lax
import xforms.numpy as xnp
from xforms.kernels.cuda import graph as graph_mod
from xforms.kernels.cuda import runtime as rt
from xforms.kernels.cuda.graph.record import Recorder

W1 = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
W2 = np.linspace(0.5, -0.5, 8).reshape(4, 2)


@pytest.fixture
def graphs_on():
    with xf.config.use_cuda_graphs(True):
        yield


def _step(w1, w2, x, y):
    """An MLP's gradient: several kernels per call."""
    def loss(w1, w2):
        return xnp.mean((xnp.tanh(x @ w1) @ w2 - y) ** 2)
    return xf.grad(loss, argnums=(0, 1))(w1, w2)


def _np_step(w1, w2, x, y):
    h = np.tanh(x @ w1)
    r = 2.0 * (h @ w2 - y) / y.size
    g2 = h.T @ r
    g1 = x.T @ ((r @ w2.T) * (1.0 - h * h))
    return g1, g2


def _exe(f, *args):
    return f.lower(*args)._exe


def test_replayed_calls_match_and_earlier_outputs_stay(graphs_on):
    f = xf.jit(_step, backend="cuda")
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((5, 3)), rng.standard_normal((5, 2))) for _ in range(4)]
    outs = [f(W1, W2, x, y) for x, y in batches]
    for (x, y), (g1, g2) in zip(batches, outs):    # (a replay never overwrites an output)
        e1, e2 = _np_step(W1, W2, x, y)
        np.testing.assert_allclose(np.asarray(g1), e1, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(np.asarray(g2), e2, rtol=1e-12, atol=1e-14)
    info = _exe(f, W1, W2, *batches[0]).graphs().info()
    # call 1 recorded, call 2 captured and launched, calls 3 and 4 replayed
    assert info["state"] == "replaying" and info["captures"] == 1 and info["replays"] == 2, info
    assert info["launches"] >= 3, info


def test_device_inputs_are_copied_into_the_graph(graphs_on):
    f = xf.jit(lambda a, b: xnp.sin(a) * b + a, backend="cuda")
    a0 = np.linspace(0.0, 1.0, 7)
    for k in range(4):
        a, b = xf.device_put(a0 + k, backend="cuda"), xf.device_put(a0 * k, backend="cuda")
        np.testing.assert_allclose(np.asarray(f(a, b)), np.sin(a0 + k) * (a0 * k) + a0 + k)
    assert _exe(f, a, b).graphs().info()["replays"] == 2


def test_a_new_scalar_value_is_a_new_capture(graphs_on, monkeypatch):
    monkeypatch.setattr(graph_mod, "MAX_CAPTURES", 3)
    f = xf.jit(lambda x, s: xnp.exp(x) * s, backend="cuda")
    x = np.linspace(0.0, 1.0, 5)
    for s in (1.0, 2.0, 2.0, 3.0, 2.0, float("nan"), float("nan")):
        np.testing.assert_allclose(np.asarray(f(x, s)), np.exp(x) * s)
    g = _exe(f, x, 2.0).graphs()
    # 1.0 recorded; 2.0, 3.0, nan captured (nan equals itself as bytes); 2.0 twice, nan once
    assert (g.captures, g.replays, g.verdict) == (3, 3, None), g.info()
    np.testing.assert_allclose(np.asarray(f(x, 4.0)), np.exp(x) * 4.0)
    assert "changed over 3 captures" in g.info()["reason"]
    np.testing.assert_allclose(np.asarray(f(x, 5.0)), np.exp(x) * 5.0)   # (plain calls)


def test_a_call_that_waits_for_the_device_is_never_captured(graphs_on):
    def f(x):        # the loop's condition reads a reduction of an array back on the host:
        # a solver call keeps the loop there (a cumsum did until session 26, when scans and
        # sorts joined one-kernel loops)
        return lax.while_loop(
            lambda c: xnp.sum(c[1]) < 100.0,
            lambda c: (c[0] + 1, c[1] * 1.5 + xnp.linalg.solve(xnp.eye(3) * 2.0, c[1][:3]).sum()),
            (0, x))[1]
    g = xf.jit(f, backend="cuda")
    x = np.linspace(0.5, 1.0, 300)
    for _ in range(3):
        y = g(x)
    exe = _exe(g, x)
    assert exe.graphs().info()["state"] == "refused", exe.graphs().info()
    assert "waits for the device" in exe.graphs().info()["reason"]
    assert exe.graphs().captures == 0


def test_host_scalar_outputs_are_uploaded_outside_the_capture(graphs_on):
    """A scalar input returned as it is and a literal output are host values the host code
    uploads (`_rt.scalar`): in a graph, a buffer filled once after the capture and copied
    into the output on every replay."""
    def f(x, s):
        y = lax.fori_loop(0, 3, lambda i, c: c * 2.0 + xnp.sum(x), s * 1.0)
        return xnp.sin(x) * y, s, 2.0
    g = xf.jit(f, backend="cuda")
    x = np.linspace(0.0, 1.0, 4)
    assert "_rt.scalar(" in g.lower(x, 1.0).as_text()
    for s in (1.0, 1.0, 1.0, 2.0, 2.0, 1.0):
        y = s
        for _ in range(3):
            y = y * 2.0 + x.sum()
        a, b, c = g(x, s)
        np.testing.assert_allclose(np.asarray(a), np.sin(x) * y, rtol=1e-13)
        assert (float(b), float(c)) == (s, 2.0)
    info = _exe(g, x, 1.0).graphs().info()
    assert info["state"] == "replaying" and info["captures"] == 2 and info["replays"] == 3, info


def test_graphs_off_by_default_and_the_environment_read_once(monkeypatch):
    """XFORMS_CUDA_GRAPHS is the option's default, read at import: a call never reads the
    environment (it cost ~0.5 us a call), the option turns graphs on and off in a process."""
    if xf.config.CUDA_GRAPHS:
        pytest.skip("XFORMS_CUDA_GRAPHS=1 in this process's environment")
    monkeypatch.setenv("XFORMS_CUDA_GRAPHS", "1")        # (after import: no effect)
    f = xf.jit(lambda x: xnp.cos(x) + 1.0, backend="cuda")
    x = np.ones(3)
    f(x), f(x), f(x)
    assert _exe(f, x)._graphs is None
    xf.config.update("xforms_cuda_graphs", True)
    try:
        f(x), f(x)
    finally:
        xf.config.update("xforms_cuda_graphs", False)
    assert _exe(f, x).graphs().info()["captures"] == 1
    f(x)
    assert _exe(f, x).graphs().info()["captures"] == 1    # (off again: a plain call)


class _FakeRuntime:
    """Runtime functions as the host code calls them, logging what ran."""

    def __init__(self):
        self.ran = []

    def empty(self, size, dtype):
        return np.zeros(size, dtype)

    def copy_into(self, dst, src):
        self.ran.append("copy_into")
        dst[:] = src

    def fetch(self, buf):
        self.ran.append("fetch")
        return buf[0]

    def scalar(self, value, dtype):
        return np.full(1, value, dtype)


def test_recorder_classifies_each_step():
    rt_, ran = _FakeRuntime(), []
    rec = Recorder(rt_, [lambda a: ran.append(a[0])], deferring=True)
    buf = rec.rt.empty(2, np.float64)
    rec.K[0](buf)
    rec.rt.copy_into(buf, np.ones(2))
    assert ran == [] and rt_.ran == []          # deferred: nothing ran while capturing
    assert rec.launches() == 1 and rec.verdict() is None and rec.held == [buf]
    rec.replay()
    assert ran == [0.0] and rt_.ran == ["copy_into"]
    rec = Recorder(rt_, [])
    rec.rt.fetch(np.ones(1))
    assert "waits for the device" in rec.verdict() and "_rt.fetch" in rec.verdict()
    rec = Recorder(rt_, [], deferring=True, capturing=True)
    one = rec.rt.scalar(1.5, np.float64)      # captured: a device copy of an upload
    assert rec.verdict() is None and [u[1:] for u in rec.uploads] == [(1.5, np.float64)]
    rec.uploads[0][0][:] = 1.5                # (the upload, after the capture)
    rec.replay()
    assert one[0] == 1.5


def test_host_key_bakes_in_host_values_only():
    d = rt.empty(3, np.float32)
    assert graph_mod.host_key([d, np.float64(1.0)]) == graph_mod.host_key(
        [rt.empty(3, np.float32), np.float64(1.0)])
    assert graph_mod.host_key([np.float64(1.0)]) != graph_mod.host_key([np.float64(2.0)])
    assert graph_mod.host_key([np.float64(np.nan)]) == graph_mod.host_key([np.float64(np.nan)])


class _FakeDriver:
    """cuda.bindings.driver's graph calls as (status, values...) tuples, logged."""

    class CUresult:
        CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE = 0, 1

    class CUstreamCaptureMode:
        CU_STREAM_CAPTURE_MODE_RELAXED = 2

    CUstream = int

    def __init__(self, fail=()):
        self.log, self.fail = [], fail

    def __getattr__(self, name):
        def call(*args):
            self.log.append((name,) + args)
            status = 1 if name in self.fail else 0
            return {"cuStreamEndCapture": (status, "graph"),
                    "cuGraphInstantiate": (status, "exec"),
                    "cuGraphGetNodes": (status, [], 5)}.get(name, (status,))
        return call


def test_stream_capture_drives_the_driver(monkeypatch):
    from xforms.kernels.cuda.graph import capture
    drv = _FakeDriver()
    monkeypatch.setattr(capture, "_driver", lambda: drv)
    deferred = []

    class Defer:         # (numba-cuda's defer_cleanup: no cuMemFree while capturing)
        def __enter__(self):
            deferred.append("on")

        def __exit__(self, *exc):
            deferred.append("off")
    cap = capture.StreamCapture(77, defer_cleanup=Defer)
    cap.begin()
    assert deferred == ["on"]
    g = cap.end()
    assert deferred == ["on", "off"]
    g.launch()
    assert g.nodes() == 5
    g.close()
    assert [e[0] for e in drv.log] == ["cuStreamBeginCapture", "cuStreamEndCapture",
                                       "cuGraphInstantiate", "cuGraphLaunch", "cuGraphGetNodes",
                                       "cuGraphExecDestroy", "cuGraphDestroy"]
    assert drv.log[0][1:] == (77, 2) and drv.log[3][1:] == ("exec", 77)
    drv = _FakeDriver(fail=("cuGraphInstantiate",))
    monkeypatch.setattr(capture, "_driver", lambda: drv)
    with pytest.raises(capture.CaptureError, match="cuGraphInstantiate"):
        capture.StreamCapture(77, defer_cleanup=Defer).end()
    assert drv.log[-1] == ("cuGraphDestroy", "graph")


def test_stream_capture_uses_the_installed_bindings_signatures():
    driver = pytest.importorskip("cuda.bindings.driver")
    for name, params in (("cuStreamBeginCapture", "(hStream, mode"),
                         ("cuStreamEndCapture", "(hStream)"),
                         ("cuGraphInstantiate", "(hGraph, unsigned long long flags)"),
                         ("cuGraphLaunch", "(hGraphExec, hStream)"),
                         ("cuGraphGetNodes", "(hGraph, size_t numNodes=0)"),
                         ("cuGraphExecDestroy", "(hGraphExec)"), ("cuGraphDestroy", "(hGraph)")):
        assert (getattr(driver, name).__doc__ or "").startswith(name + params), name
    assert driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED


def test_every_runtime_function_the_host_code_calls_has_a_kind():
    """A runtime function the generated host code calls but RUNTIME_KINDS does not name
    would keep every call using it off graphs ("unknown kind")."""
    import os
    import re
    from xforms.kernels.cuda.graph.record import RUNTIME_KINDS
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    called = set()
    for folder, _, files in os.walk(os.path.join(root, "xforms", "kernels")):
        for f in files:
            if f.endswith(".py"):
                called |= set(re.findall(r"_rt\.([a-z_]+)\(", open(os.path.join(folder, f)).read()))
    assert called and called - set(RUNTIME_KINDS) == set(), called - set(RUNTIME_KINDS)
