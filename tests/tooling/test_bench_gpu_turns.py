"""Workload processes side by side (`python -m benchmarks --parallel N`, on_gpu.sh's table):
the parent runs N at once, each with the lock folder of benchmarks/gpu_turns.py, and a row's
timing runs alone: no other process's untimed work (first calls, checks) nor timing beside
it, while untimed work of several processes overlaps; a timing that waits is not starved by
untimed work that arrives after it.  Also the JAX peer's precision: JAX's default on a GPU,
as xforms'.  No GPU needed, and no time is asserted: each check that something waited only
holds where it did (a slow thread cannot make it fail)."""
import threading

import pytest

from benchmarks import gpu_turns

WAIT = 30          # seconds for what must happen; a blocked step is checked after BLOCKED
BLOCKED = 0.5


def _inside(turn, entered, leave):
    def body():
        with turn():
            entered.set()
            assert leave.wait(WAIT)
    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


def test_a_timing_waits_for_untimed_work_and_runs_alone(monkeypatch, tmp_path):
    monkeypatch.setenv(gpu_turns.ENV, str(tmp_path))
    e = {k: threading.Event() for k in ("r1", "r2", "w", "r3", "w2")}
    go = {k: threading.Event() for k in e}
    threads = [_inside(gpu_turns.untimed, e["r1"], go["r1"]),
               _inside(gpu_turns.untimed, e["r2"], go["r2"])]
    assert e["r1"].wait(WAIT) and e["r2"].wait(WAIT)        # untimed work side by side
    threads.append(_inside(gpu_turns.timed, e["w"], go["w"]))
    assert not e["w"].wait(BLOCKED)                          # the timing waits for both
    threads.append(_inside(gpu_turns.untimed, e["r3"], go["r3"]))
    assert not e["r3"].wait(BLOCKED)                         # later untimed work waits too
    go["r1"].set()
    assert not e["w"].wait(BLOCKED)
    go["r2"].set()
    assert e["w"].wait(WAIT)                                 # alone now
    threads.append(_inside(gpu_turns.timed, e["w2"], go["w2"]))
    assert not e["r3"].wait(BLOCKED) and not e["w2"].is_set()
    go["w"].set()
    assert e["r3"].wait(WAIT) or e["w2"].wait(WAIT)          # one of the waiting ones next
    go["r3"].set()
    go["w2"].set()
    assert e["r3"].wait(WAIT) and e["w2"].wait(WAIT)
    for t in threads:
        t.join(WAIT)


def test_without_the_folder_both_turns_are_free(monkeypatch):
    monkeypatch.delenv(gpu_turns.ENV, raising=False)
    with gpu_turns.timed(), gpu_turns.timed(), gpu_turns.untimed():
        pass


@pytest.mark.parametrize("side", [1, 2])
def test_the_parent_runs_processes_side_by_side_with_the_turns_folder(monkeypatch, side):
    import benchmarks.__main__ as main
    lock = threading.Lock()
    state = {"now": 0, "most": 0, "folders": set()}
    both = threading.Barrier(2, timeout=WAIT) if side == 2 else None

    def child(cmd, cap):
        name = cmd[cmd.index("--only") + 1]
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
            state["folders"].add(main.os.environ.get(gpu_turns.ENV))
        if both is not None and name in ("mlp", "dispatch"):
            both.wait()                     # the first two run at once
        main._write_rows(cmd[cmd.index("--rows-out") + 1],
                         [dict(workload=name, system="xforms")], [], {})
        with lock:
            state["now"] -= 1
        return "exited with status 0"
    monkeypatch.setattr(main, "_run_child", child)
    monkeypatch.delenv(gpu_turns.ENV, raising=False)
    rows, wall, errors, _ = main._measure_isolated(main.parse_args(
        ["--only", "mlp,dispatch,rk4", "--budget-s", "60", "--parallel", str(side)]))
    assert not errors and [r["workload"] for r in rows] == ["mlp", "dispatch", "rk4"]
    assert state["most"] == side and set(wall) == {"mlp", "dispatch", "rk4"}
    [folder] = state["folders"]
    assert (folder is None) == (side == 1)
    assert gpu_turns.ENV not in main.os.environ


@pytest.mark.parametrize("platforms, forced", [("cpu", ["highest"]), (None, [])])
def test_jax_keeps_its_default_precision_on_a_gpu(monkeypatch, platforms, forced):
    """Issue #34's table compares both at their defaults: on a GPU JAX's float32 products and
    convolutions run in TF32 as xforms' do on cuBLAS, so the JAX peer is not forced to
    "highest" there (it was, against TF32 xforms); on the CPU (JAX_PLATFORMS=cpu, set by
    python -m benchmarks --backend cpu) it still is.  A stand-in jax module records it."""
    import sys
    import types
    from benchmarks import peers
    seen = []
    config = types.SimpleNamespace(update=lambda k, v: seen.append((k, v)))
    fake = types.ModuleType("jax")
    fake.config, fake.__version__ = config, "0"
    monkeypatch.setitem(sys.modules, "jax", fake)
    monkeypatch.setitem(sys.modules, "jax.numpy", types.ModuleType("jax.numpy"))
    if platforms is None:
        monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    else:
        monkeypatch.setenv("JAX_PLATFORMS", platforms)
    peers._load.cache_clear()
    try:
        peers._load("jax")
    finally:
        peers._load.cache_clear()
    assert [v for k, v in seen if k == "jax_default_matmul_precision"] == forced
