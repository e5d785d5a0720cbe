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
    assert "kernel_launches" not in rows["numpy"]
