"""benchmarks' rows on the CUDA backend (issue 34): every row that times an xforms CUDA
function reports its kernel launches and host microseconds a call, whichever system name
the row has (cnn's forward row is "f"), so the first run on a GPU says where launches go."""
import numpy as np

import xforms as xf
import xforms.numpy as xnp
from benchmarks.harness import Case, Context, run_system


def test_every_row_of_an_xforms_cuda_function_reports_launches():
    ctx = Context(quick=True, backend="cuda", sim=True, repeats=1, budget=0.01)
    f = lambda x: xnp.sum(xnp.sin(x) * x)       # noqa: E731
    case = Case("grad", {}, {"xforms": lambda x: (ctx.xjit(xf.grad(f)), ctx.xput(x)),
                             "f": lambda x: (ctx.xjit(f), ctx.xput(x)),
                             "numpy": lambda x: ((lambda x: np.sum(np.sin(x) * x)), (x,))},
                make=lambda: np.linspace(0.0, 1.0, 16))
    rows = {s: run_system(ctx, "w", case, s, case.make(), None)[0] for s in case.systems}
    for s in ("xforms", "f"):
        assert rows[s]["status"] == "ok", rows[s]
        assert rows[s]["kernel_launches"] >= 1 and rows[s]["host_us"] > 0, rows[s]
        c = rows[s]["launch_counts"]
        assert c["kernels"] + c["library"] == rows[s]["kernel_launches"]
        assert c["host_waits"] == 0, c          # (no loop: nothing waits inside the call)
    assert "kernel_launches" not in rows["numpy"]


def test_launch_counts_say_where_a_host_loop_waits(monkeypatch):
    """A while_loop past block_loop's limits runs on the host: it waits for the predicate,
    computed on the device, once per test (2 iterations here: 3 waits)."""
    from xforms import lax
    from xforms.kernels.cuda.backend import _compile
    monkeypatch.setenv("XFORMS_CUDA_LOOP_BLOCK_MAX", "0")
    monkeypatch.setenv("XFORMS_CUDA_LOOP_GRID_MAX", "0")
    f = lambda x: lax.while_loop(lambda u: xnp.sum(u) < 100.0,         # noqa: E731
                                 lambda u: u + xnp.roll(u, 1), x)
    x = np.linspace(0.5, 1.0, 40)         # (40: not scalarised, prepare/scalarize.py)
    exe = _compile(xf.make_jaxpr(f)(x), {})
    u, iters = x.copy(), 0
    while u.sum() < 100.0:
        u, iters = u + np.roll(u, 1), iters + 1
    c = exe.launch_counts(x)
    assert iters == 2 and "# host loop" in exe.source
    assert c["host_waits"] == iters + 1, c
    assert c["kernels"] + c["library"] == exe.count_launches(x)
