"""xforms.profiler (issue #36): JAX's profiler API writing a Chrome trace (JSON) of jitted
executions, traces and compiles and the user's annotations under the log directory."""
import glob
import gzip
import json
import os

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from xforms import profiler


def _events(log_dir, name="*.trace.json.gz"):
    paths = glob.glob(os.path.join(log_dir, "plugins", "profile", "*", name))
    assert len(paths) == 1, paths
    with gzip.open(paths[0]) as f:
        return json.load(f)["traceEvents"]


def test_trace_records_compiles_executions_and_annotations(tmp_path):
    f = xf.jit(lambda x: xnp.sin(x) * 2.0, tiered=False)
    with profiler.trace(tmp_path, create_perfetto_trace=True):
        with profiler.StepTraceAnnotation("train", step_num=3):
            f(np.ones(3))
            f(np.ones(3))
        out = profiler.annotate_function(lambda v: f(v) + 1.0, name="load")(np.ones(2))
    np.testing.assert_allclose(out, 2.0 * np.sin(1.0) + 1.0)
    ev = _events(tmp_path)
    names = [e["name"] for e in ev]
    assert names.count("jit(<lambda>)") == 3          # each execution, compile included
    assert names.count("compile jit(<lambda>)") == 2 and names.count("trace <lambda>") == 2
    step = ev[names.index("train")]
    assert step["args"] == {"step_num": "3"} and step["ph"] == "X"
    runs = [e for e in ev if e["name"] == "jit(<lambda>)"]
    assert all(step["ts"] <= e["ts"] and e["ts"] + e["dur"] <= step["ts"] + step["dur"] + 1
               for e in runs[:2])                    # the step's calls lie inside its span
    load = ev[names.index("load")]
    assert load["ts"] <= runs[2]["ts"]
    assert _events(tmp_path, "perfetto_trace.json.gz") == ev


def test_start_stop_and_annotations_outside_a_trace(tmp_path):
    with profiler.TraceAnnotation("nothing recorded", x=1):
        pass
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    opts = profiler.ProfileOptions()
    assert (opts.host_tracer_level, opts.python_tracer_level) == (2, 1)   # JAX's defaults
    profiler.start_trace(str(tmp_path), profiler_options=opts)
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            profiler.start_trace(str(tmp_path))
        xf.jit(lambda x: x + 1.0)(1.0)
    finally:
        path = profiler.stop_trace()
    assert path.endswith(".trace.json.gz") and os.path.exists(path)
    assert [e["name"] for e in _events(tmp_path)].count("jit(<lambda>)") == 1
    assert xf.jit(lambda x: x * 3.0)(2.0) == 6.0        # stopped: calls run unrecorded


def test_what_xforms_cannot_profile_says_so(tmp_path):
    with pytest.raises(NotImplementedError, match="not available on the CPU backend"):
        profiler.device_memory_profile("cpu")
    with pytest.raises(NotImplementedError, match="CPU backend"):
        profiler.save_device_memory_profile(str(tmp_path / "m.prof"), backend="cpu")
    with pytest.raises(NotImplementedError, match="perfetto"):
        profiler.start_trace(str(tmp_path), create_perfetto_link=True)
    with pytest.raises(NotImplementedError, match="no profiler server"):
        profiler.start_server(9999)
