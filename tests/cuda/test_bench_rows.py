"""benchmarks' rows on the CUDA backend (issue 34): every row that times an xforms CUDA
function reports its kernel launches and host microseconds a call, whichever system name
the row has (cnn's forward row is "f"), so the first run on a GPU says where launches go;
every row of on_gpu.sh's GPU table runs here at the simulator's sizes (Context.sim), its
launches counted and its result checked."""
import contextlib
import os
import re

import numpy as np
import pytest

import xforms as xf
import xforms.numpy as xnp
from benchmarks import peers
from benchmarks.harness import Case, Context, compare, run_system
from benchmarks.workloads import load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def gpu_table():
    """The workloads of benchmarks/on_gpu.sh's GPU_TABLE, as the script names them."""
    with open(os.path.join(ROOT, "benchmarks", "on_gpu.sh")) as fh:
        text = fh.read()
    return re.search(r"GPU_TABLE=\$\{GPU_TABLE:-([\w,]+)\}", text).group(1).split(",")


def _cuda_rows(ctx, case, data):
    """{system: (fn, args)} of the case's systems that are xforms CUDA functions (what the
    harness counts launches of: `ctx.xjit`'s, whatever the system's name)."""
    rows = {}
    for system, setup in case.systems.items():
        if system in ("jax", "numpy", "numba", "autograd", "pytensor", "bandwidth"):
            continue                  # (peers: no CUDA launches to count)
        try:
            prepared = setup(data)
        except (peers.Absent, peers.Skip):    # (a direct-launch row on the simulator)
            continue
        fn, args = prepared if isinstance(prepared, tuple) else (prepared, ())
        if hasattr(fn, "jitted"):
            rows[system] = fn, args
    return rows


def _reference(case, data):
    """The case's hand-written NumPy answer, or the xforms function on the CPU (no JAX in
    CI): what the row's CUDA result is checked against."""
    if "numpy" in case.systems:
        prepared = case.systems["numpy"](data)
        fn, args = prepared if isinstance(prepared, tuple) else (prepared, ())
        return fn(*args)
    return None


@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # (the simulator's NumPy scalars)
@pytest.mark.parametrize("workload", gpu_table())
def test_every_gpu_table_row_runs_with_its_launches_counted(workload):
    """Each xforms row of the GPU table (the "xforms" system and the forward "f" ones) runs
    on the simulator at its sizes there, matches the case's NumPy answer where it has one
    (else xforms on the CPU), and reports its launches: the rows cnn's and cliffs'
    block/Newton-CG rows had never produced on the simulator (too slow under the harness's
    repeats) now run once each."""
    ctx = Context(quick=True, backend="cuda", sim=True, repeats=1, budget=0.01)
    cpu = Context(quick=True, backend="cpu", sim=True)
    cases, cpu_cases = load(workload).cases(ctx), load(workload).cases(cpu)
    assert cases, workload
    counted = 0
    for case, cpu_case in zip(cases, cpu_cases or [None] * len(cases)):
        data = case.make()
        with case.background() if case.background else contextlib.nullcontext():
            rows = _cuda_rows(ctx, case, data)
            ref = _reference(case, data)
            for system, (fn, args) in rows.items():
                out = fn(*args)
                c = ctx.launch_counts(fn, args)
                assert c["kernels"] + c["library"] >= 1, (workload, case.task, system, c)
                same = cpu_case is not None and (cpu_case.task, cpu_case.params) == (
                    case.task, case.params)
                if ref is None and same and system in cpu_case.systems:
                    cfn, cargs = cpu_case.systems[system](data)
                    want = cfn(*cargs)
                else:
                    want = ref
                if want is not None and system == "xforms":
                    assert compare(out, want, max(case.rtol, 1e-6)) is None, \
                        (workload, case.task, case.params, compare(out, want, case.rtol))
                counted += 1
    assert counted, f"{workload}: no xforms CUDA row"


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


def test_the_gpu_warm_up_shares_every_case_once_and_runs_them():
    """benchmarks/gpu_warm.py (on_gpu.sh compiles the table's programs with it, beside the
    tests, into the cache the table reads): its workers' round-robin shares cover every case
    of the table once, and a share's xforms CUDA functions run (compiling them) without a
    failure."""
    from benchmarks import gpu_warm
    jobs = gpu_warm._jobs(gpu_table(), True)
    shares = [gpu_warm.shard(jobs, k, 6) for k in range(6)]
    assert sorted(j for s in shares for j in s) == sorted(jobs) and len(set(jobs)) == len(jobs)
    assert {w for w, _ in jobs} == set(gpu_table())
    assert gpu_warm._warm([j for j in jobs if j[0] in ("dispatch", "pow_loop")], True) == 0


def test_a_direct_launch_row_times_the_same_program_through_other_launchers(monkeypatch):
    """dispatch's and cuda_graphs' `direct launch` rows (issue 34: the direct launcher was
    never measured): the row's executable -- the one its calls run -- launches through the
    launchers XFORMS_CUDA_FAST_LAUNCH gives while the row runs (here a stand-in marked
    direct, as on a GPU; the simulator has no direct launches) and through the dispatcher
    again after it; on the simulator as it is the row is skipped, saying why."""
    from xforms.kernels.cuda import backend
    real, used = backend.launcher, []

    def stand_in(dispatcher, grid, block):
        cfg = real(dispatcher, grid, block)
        if os.environ.get("XFORMS_CUDA_FAST_LAUNCH") != "1":
            return cfg

        def go(*args):
            used.append(1)
            return cfg(*args)
        go.direct = True
        return go
    ctx = Context(quick=True, backend="cuda", sim=True, repeats=1, budget=0.01)
    [_, case] = load("dispatch").cases(ctx)
    assert case.task == "jit(grad) direct launch"
    skipped = run_system(ctx, "dispatch", case, "xforms", case.make(), None)[0]
    assert skipped["status"] == "skipped" and "simulator" in skipped["reason"], skipped
    monkeypatch.setattr(backend, "launcher", stand_in)
    before = os.environ.get("XFORMS_CUDA_FAST_LAUNCH")
    [_, case] = load("dispatch").cases(ctx)
    setup, made = case.systems["xforms"], []
    case.systems["xforms"] = lambda d: made.append(setup(d)) or made[-1]
    with case.background():
        row, out = run_system(ctx, "dispatch", case, "xforms", case.make(), None)
    assert row["status"] == "ok" and row["kernel_launches"] == 1, row
    assert len(used) >= row["repeats"]
    assert abs(float(out) - (np.cos(0.7) * 0.7 + np.sin(0.7) + 1.4)) < 1e-12
    fn, args = made[0]
    exe = fn.jitted.lower(*args)._exe
    assert not any(getattr(k, "direct", False) for k in exe._K)
    assert os.environ.get("XFORMS_CUDA_FAST_LAUNCH") == before
