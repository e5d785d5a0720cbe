"""The benchmark suite's quick mode runs end to end (a smoke test: no timing is asserted)."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


@pytest.mark.early
def test_quick_benchmarks_run(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = [f for f in os.listdir(tmp_path) if f.endswith(".json")]
    assert results, "no JSON results written"
    data = json.loads((tmp_path / results[0]).read_text())
    assert data, "empty results"
    assert "xforms" in proc.stdout


def test_cuda_suite_without_gpu_exits_nonzero(tmp_path):
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--backend", "cuda", "--quick",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env=env)
    try:
        import numba.cuda
        has_gpu = numba.cuda.is_available()
    except Exception:
        has_gpu = False
    if not has_gpu:
        assert proc.returncode != 0
        assert "GPU" in proc.stdout + proc.stderr or "CUDA" in proc.stdout + proc.stderr


def test_cost_model_report_runs_and_judges_the_first_call():
    """`python -m benchmarks.cost_model` on the README loss (smoke: no timing asserted),
    and its verdict on made-up rows: the fast tier is wrong only when the synchronous
    compile would have answered first."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks.cost_model", "--programs",
                           "readme"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "| readme | 9 |" in proc.stdout and "wrong first-call choices" in proc.stdout
    from benchmarks.cost_model import judge
    row = dict(program="p", eqns=1, pred_eager_s=0.1, pred_compile_s=1.0, pred_slowdown=2.0,
               eager_s=5.0, compile_s=1.0, steady_s=0.5)
    bad = judge(dict(row))
    assert bad["choice"] == "fast tier" and not bad["right"] and bad["lost_s"] == 3.5
    good = judge(dict(row, eager_s=0.2))
    assert good["right"] and good["lost_s"] == 0.0 and good["eager_err"] == 0.5


def test_rows_of_several_processes_merge_with_their_spread():
    from benchmarks.report import add_ratios, merge_processes
    base = dict(workload="w", task="t", params={"n": 1}, status="ok", scale=1.0, limit="jax")
    rows = [dict(base, system=s, process=k, median_s=t)
            for s, times in (("xforms", (1.0, 3.0, 2.0)), ("jax", (2.0, 2.0, 4.0)))
            for k, t in enumerate(times)]
    merged = merge_processes(rows)
    add_ratios(merged)
    xf_row = next(r for r in merged if r["system"] == "xforms")
    assert len(merged) == 2 and xf_row["median_s"] == 2.0 and xf_row["spread"] == 3.0
    assert xf_row["process_median_s"] == [1.0, 3.0, 2.0]
    assert xf_row["ratio_jax_each"] == [0.5, 1.5, 0.5] and xf_row["ratio_jax"] == 1.0
    assert merge_processes([dict(base, system="jax", median_s=1.0)])[0].get("spread") is None


def test_rows_carry_the_machines_speed_beside_their_timing():
    """Issue #37: the VM runs fixed code at two speeds for seconds at a time, every
    system's; each CPU row records a fixed probe's CPU ms just before and after its timing
    (benchmarks/machine_speed.py), kept per process when processes merge."""
    from benchmarks import harness
    from benchmarks.report import merge_processes
    row = dict(workload="w", task="t", params={}, status="ok", scale=1.0, limit="jax")
    row, _ = harness._timed(harness.Context(repeats=3, target=1e-4, budget=0.05), "numpy",
                            lambda x: x + 1.0, (np.ones(8),), None, dict(row, system="numpy"))
    machine = row["machine"]
    assert set(machine) == {"before", "after"}, machine
    assert all(set(p) == {"exp_ms", "mm_ms"} and min(p.values()) > 0 for p in machine.values())
    rows = [dict(row, process=k, median_s=t) for k, t in enumerate((1.0, 2.0))]
    each = merge_processes(rows)[0]["process_diagnostics"]
    assert [d["machine"] for d in each] == [machine, machine]


def _errors_under_budget(tmp_path, only, budget):
    """The harness errors of `python -m benchmarks --quick --only ONLY --budget-s BUDGET`."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", only,
                           "--budget-s", str(budget), "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    [result] = [f for f in os.listdir(tmp_path) if f.endswith(".json")]
    os.rename(tmp_path / result, tmp_path / f"{result}.seen")
    return json.loads((tmp_path / f"{result}.seen").read_text())["meta"]["harness_errors"]


def test_budget_stops_workloads_and_still_writes_the_json(tmp_path):
    """--budget-s: each workload's process gets an equal share of what is left (half a
    second: stopped before it measured anything); with none left none starts; the JSON is
    written and names them in its errors."""
    assert _errors_under_budget(tmp_path, "mlp", 0.5) == [
        "mlp: its process was stopped after its share of --budget-s (0.5 s) and wrote no rows"]
    assert _errors_under_budget(tmp_path, "mlp,dispatch", 0) == [
        f"{w}: its process was not started: --budget-s was spent and wrote no rows"
        for w in ("mlp", "dispatch")]


def test_gpu_script_names_registered_workloads_and_caps_every_step():
    """benchmarks/on_gpu.sh (one lent-GPU call of at most 8 minutes): its table's workloads
    exist, every Python step runs under `timeout`, and the caps fit the total."""
    from benchmarks.workloads import REGISTRY
    text = open(os.path.join(ROOT, "benchmarks", "on_gpu.sh")).read()
    table = re.search(r"GPU_TABLE=\$\{GPU_TABLE:-([\w,]+)\}", text).group(1).split(",")
    assert table and not set(table) - set(REGISTRY), set(table) - set(REGISTRY)
    steps = re.findall(r"^.*\"\$PY\" -m .*$", text, re.M)
    # (the GPU's record of benchmarks/gpu_info.py, the table's warm-up, the tests, the vendor
    # sweep, the loop sweep of kernels/cuda/printer/block_loop.py's modes, the table)
    assert len(steps) == 6 and all("timeout $(" in s for s in steps), steps
    # (a cap may differ on the simulator's dry run: `$([ "$dry" = 1 ] && echo D || echo G)`,
    # the GPU's G counts)
    either = r'(?:\$\(\[ "\$dry" = 1 \] && echo \d+ \|\| echo )?(\d+)'
    total = int(re.search(r"TOTAL_BUDGET:-" + either, text).group(1))
    caps = {k: int(c) for k, c in re.findall(r"(\w+)_TIMEOUT:-" + either, text)}
    # (the versions' two steps, the tests, the vendor sweep, the loop sweep; the warm-up
    # runs beside the tests, in the background, within their time)
    assert sorted(caps) == ["LOOP", "SWEEP", "TEST", "VERSIONS", "WARM"], caps
    assert caps.pop("WARM") <= caps["TEST"] and re.search(r'gpu_warm .*\n.*&$', text, re.M)
    # the table: the warmed cache, the systems beside JAX on the GPU (no host peers)
    assert "--cache-dir \"$XFORMS_CACHE_DIR\"" in text and "--systems \"$GPU_SYSTEMS\"" in text
    # its workloads' processes side by side, their timings in turn (benchmarks/gpu_turns.py)
    assert "--parallel \"${TABLE_PARALLEL:-3}\"" in text
    assert len(re.findall(r"timeout \$\(cap \$vcap\)", text)) == 2
    # the table's reserve: the steps before it are clipped to leave it that much
    reserve = int(re.search(r"BENCH_RESERVE:-" + either, text).group(1))
    assert total <= 8 * 60 and sum(caps.values()) + caps["VERSIONS"] + reserve <= total, \
        (total, caps, reserve)
    assert subprocess.run(["bash", "-n", os.path.join(ROOT, "benchmarks", "on_gpu.sh")]
                          ).returncode == 0


def test_compile_workload_times_the_programs_outside_the_suite():
    """Issue #35's programs outside the suite are rows of the full `compile` workload (xforms
    against JAX's first call), and the child builds one of them (the RK4 gradient, small
    and on the direct path) to the values of the workload's hand-written Numba gradient
    (JAX is not installed in CI)."""
    sys.path.insert(0, ROOT)
    import numpy as np

    from benchmarks.harness import Context
    from benchmarks.workloads import compile as workload, compile_child, rk4

    rows = [c for c in workload.cases(Context(quick=False)) if c.limit == "jax"]
    assert sorted(c.params["model"] for c in rows) == ["block", "cnn", "heat", "lstm", "rk4"]
    assert all(set(c.systems) == {"xforms", "jax"} for c in rows)
    assert not [c for c in workload.cases(Context(quick=True)) if c.limit == "jax"]
    fn, args, block = compile_child.build({"system": "xforms", "model": "rk4",
                                           "transform": "grad", "backend": "cpu"})
    got = np.array([float(v) for part in block(fn(*args)) for v in part])
    want = np.concatenate(rk4._numba_kernels()[1](np.array(rk4.S0), np.array(rk4.P0), 1000))
    np.testing.assert_allclose(got, want, rtol=1e-9)


def _two_case_workload():
    """A stand-in workload module: two cases of two systems, no timing worth the name."""
    import types
    from benchmarks.harness import Case
    systems = {"xforms": lambda d: ((lambda: 1.0), ()), "numpy": lambda d: ((lambda: 1.0), ())}
    return types.SimpleNamespace(cases=lambda ctx: [
        Case("t", {"n": n}, dict(systems), limit="numpy") for n in (1, 2)])


def test_systems_option_keeps_only_the_named_systems(monkeypatch):
    """--systems xforms: the other systems of every case are not run (on_gpu.sh's table
    keeps xforms, jax and the measured limits; CPU peers at a GPU's sizes took minutes)."""
    import benchmarks.__main__ as main
    monkeypatch.setattr(main, "load", lambda name: _two_case_workload())
    args = main.parse_args(["--only", "dispatch", "--systems", "xforms", "--repeats", "1"])
    rows, _, errors, _ = main._measure_here(args)
    assert not errors and [(r["system"], r["params"]["n"]) for r in rows] == [
        ("xforms", 1), ("xforms", 2)], rows
    assert len(main._keep_systems(_two_case_workload().cases(None), ["jax"])) == 0
    assert main.parse_args(["--only", "dispatch"]).system_names == []


def test_a_child_writes_its_rows_after_every_case(monkeypatch, tmp_path):
    """A workload's process writes the rows of the cases it has finished after each one, so
    a process stopped past its share of --budget-s keeps them, and the parent keeps them with
    an error that says it was stopped (it lost every row before)."""
    import benchmarks.__main__ as main
    monkeypatch.setattr(main, "load", lambda name: _two_case_workload())
    out = str(tmp_path / "rows.json")
    seen = []
    args = main.parse_args(["--only", "dispatch", "--repeats", "1"])
    main._measure_here(args, lambda r, e, m: (main._write_rows(out, r, e, m),
                                              seen.append(len(json.load(open(out))["rows"]))))
    assert seen == [2, 4] and not os.path.exists(out + ".part")

    def stopped_child(cmd, cap):        # a child that finished one case, then was stopped
        path = cmd[cmd.index("--rows-out") + 1]
        main._write_rows(path, [dict(workload="dispatch", system="xforms")], [], {"k": 1})
        open(path + ".part", "w").write("{")          # (stopped halfway through a write)
        return f"was stopped after its share of --budget-s ({cap:.1f} s)"
    monkeypatch.setattr(main, "_run_child", stopped_child)
    rows, _, errors, meta = main._measure_isolated(
        main.parse_args(["--only", "dispatch", "--budget-s", "5"]))
    assert [r["system"] for r in rows] == ["xforms"] and meta == {"k": 1}
    assert len(errors) == 1 and "was stopped after its share" in errors[0] \
        and "the 1 rows of the cases it finished are kept" in errors[0], errors


def test_habit_times_the_second_call_on_without_waiting(monkeypatch):
    """`python -m benchmarks --habit` (benchmarks/habit.py): one call of a tiered jit, then
    timing as the harness times a row but without waiting for the compiled tier; a program
    whose later calls wait (tiered.py `patient`) answers only its first call on the fast
    tier, and the time to compiled code is recorded.  Its figures reach the JSON's ratios
    and the `compare habit` table (no timing asserted)."""
    sys.path.insert(0, ROOT)
    import xforms as xf
    import xforms.numpy as xnp
    from benchmarks import compare, habit, harness
    from benchmarks.report import add_ratios
    monkeypatch.setattr(harness, "SETTLE_S", 0.0)
    fn = xf.jit(lambda x: xnp.sum(xnp.cos(x) * 3.0 + 1.0), tiered=True)
    h = habit.measure(fn, (np.linspace(0.0, 1.0, 7),), repeats=3, target=1e-4, budget=0.05)
    assert h["fast_calls"] == 1 and h["tiers"][0].startswith("waits"), h
    assert h["ttc_s"] >= h["first_s"] > 0 and h["ratio"] > 0 and h["ttc_cpu_s"] is not None
    base = dict(workload="w", task="t", params={"n": 1}, status="ok", scale=1.0, limit="jax")
    rows = [dict(base, system="xforms", median_s=1.0, habit=dict(h, ttc_s=3.0, ttc_cpu_s=1.0)),
            dict(base, system="jax", median_s=1.0, first_call_s=2.0, first_call_cpu_s=0.5)]
    add_ratios(rows)
    assert rows[0]["habit"]["ttc_x_jax_first"] == 1.5
    assert rows[0]["habit"]["ttc_cpu_x_jax_first"] == 2.0
    table = compare.habit_rows({compare._key(r): r for r in rows})
    assert len(table) == 3 and "| 1.50 (2.00) | waits" in table[2], table
