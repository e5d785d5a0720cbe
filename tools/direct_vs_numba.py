"""Steady state of the direct LLVM path against the Numba path, workload by workload.

Runs every CPU benchmark workload's xforms rows (benchmarks/workloads/) in fresh processes
with ``XFORMS_LLVM_KERNELS=1`` and ``=0`` in turn, and reports, for each row the direct path
takes (at least one of its programs compiled from LLVM IR: xforms/kernels/cpu/llvm/), the
medians of the CPU time per call of both and their ratio, with the load average beside
them.  Issue #37: the ODE gradient's kernel on the direct path ran 20x slower than the
Numba one (a copy of every checkpoint stack each loop step), and nothing but the full
benchmark run showed it.  Not a test: the machine's load moves the figures; read the
ratios, alternate rounds, and rerun what stands out.

    python tools/direct_vs_numba.py                      # every workload, 2 rounds
    python tools/direct_vs_numba.py --only ode mlp --rounds 3 --json out.json
    python tools/direct_vs_numba.py --quick              # the workloads' quick sizes
    python tools/direct_vs_numba.py --report out.json    # the table of a run's file

A child (``--child WORKLOAD``) prints one JSON line per xforms row: whether the direct path
took it (`direct`: programs compiled from LLVM IR, `numba`: programs Numba compiled), the
median CPU ms per call of `--batches` batches, and the wall ms beside it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# (compile: subprocesses timing compiles; cuda_graphs: the CUDA backend's)
SKIP = {"compile", "cuda_graphs"}
THRESHOLD = 1.2


def _count_paths():
    """Counters of the programs this process compiles from LLVM IR and with Numba."""
    from xforms.kernels.cpu import backend
    seen = {"direct": 0, "numba": 0}
    llvm_kernel, emit = backend._llvm_kernel, backend._emit

    def counted_kernel(prep):
        kernel = llvm_kernel(prep)
        seen["direct"] += kernel is not None
        return kernel

    def counted_emit(prep):
        seen["numba"] += 1
        return emit(prep)
    backend._llvm_kernel, backend._emit = counted_kernel, counted_emit
    return seen


def _cpu_per_call(fn, args, batches, target=0.03):
    """(median CPU s, median wall s) per call over `batches` batches of ~`target` CPU s."""
    t = time.process_time()
    fn(*args)
    one = max(time.process_time() - t, 1e-6)
    number = max(1, int(target / one))
    cpu, wall = [], []
    for _ in range(batches):
        c, w = time.process_time(), time.perf_counter()
        for _ in range(number):
            fn(*args)
        cpu.append((time.process_time() - c) / number)
        wall.append((time.perf_counter() - w) / number)
    return statistics.median(cpu), statistics.median(wall)


def child(workload, quick, batches):
    """Time `workload`'s xforms rows in this process; one JSON line per row."""
    sys.path.insert(0, ROOT)
    from benchmarks import harness, workloads
    seen = _count_paths()
    ctx = harness.Context(quick=quick)
    for case in workloads.load(workload).cases(ctx):
        setup = case.systems.get("xforms")
        if setup is None:
            continue
        row = {"workload": workload, "task": case.task, "params": case.params}
        before = dict(seen)
        try:
            data = case.make()
            prepared = setup(data)
            if isinstance(prepared, harness.Measured):
                continue                        # (measured by subprocesses of its own)
            fn, args = prepared if isinstance(prepared, tuple) else (prepared, ())
            fn(*args)
            wait = getattr(fn, "wait_compiled", None)
            if wait is not None:        # (the compiled tier; then the harness's settling:
                wait()                  # the BLAS thread policy counted the compile as load)
                time.sleep(harness.SETTLE_S)
            for _ in range(3):
                fn(*args)
            cpu, wall = _cpu_per_call(fn, args, batches)
            row.update(cpu_ms=cpu * 1e3, wall_ms=wall * 1e3)
        except Exception as exc:                # (a row that fails: reported, not timed)
            row["error"] = harness.one_line(exc)
        row.update({k: seen[k] - before[k] for k in seen})
        print("ROW " + json.dumps(row, default=str), flush=True)


def _run_child(workload, llvm, quick, batches, timeout):
    env = {**os.environ, "XFORMS_LLVM_KERNELS": str(llvm),
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, os.path.abspath(__file__), "--child", workload,
           "--batches", str(batches)] + (["--quick"] if quick else [])
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        text, err = out.stdout, out.stderr
    except subprocess.TimeoutExpired as e:
        text = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = f"timed out after {timeout:.0f} s"
    rows = [json.loads(ln[4:]) for ln in text.splitlines() if ln.startswith("ROW ")]
    if not rows:
        print(f"  {workload} LLVM={llvm}: no rows ({err.strip().splitlines()[-1:] or ''})",
              file=sys.stderr)
    return rows


def _key(row):
    return (row["workload"], row["task"], json.dumps(row["params"], sort_keys=True, default=str))


def compare(names, rounds, quick, batches, timeout, save=None):
    """{row key: {"direct": [cpu ms...], "numba": [...], "loads": [...], "taken": n}},
    written to `save` (a JSON file) after every child, so that a run cut short keeps its
    rows."""
    found = {}
    for r in range(rounds):
        for name in names:
            for llvm in ((1, 0) if r % 2 == 0 else (0, 1)):      # (alternated)
                load = os.getloadavg()[0]
                for row in _run_child(name, llvm, quick, batches, timeout):
                    e = found.setdefault(_key(row), {"direct": [], "numba": [], "loads": [],
                                                     "taken": 0, "errors": set()})
                    e["loads"].append(load)
                    if "error" in row:
                        e["errors"].add(row["error"])
                        continue
                    e["direct" if llvm else "numba"].append(row["cpu_ms"])
                    if llvm:
                        e["taken"] = max(e["taken"], row["direct"])
                print(f"  round {r + 1} {name} LLVM={llvm} (load {load:.1f})", file=sys.stderr,
                      flush=True)
                if save:
                    _save(found, save)
    return found


def _save(found, path):
    with open(path, "w") as f:
        json.dump([{"row": list(k), **{**v, "errors": sorted(v["errors"])}}
                   for k, v in found.items()], f, indent=1)


def load(path):
    """The measurements `--json` wrote, as `compare` returns them (`--report PATH`)."""
    with open(path) as f:
        return {tuple(e.pop("row")): {**e, "errors": set(e["errors"])} for e in json.load(f)}


def report(found, threshold=THRESHOLD):
    """The table: rows the direct path takes, slowest ratio first; -> the rows above
    `threshold`."""
    rows = []
    for (w, task, params), e in found.items():
        if not e["taken"] or not e["direct"] or not e["numba"]:
            continue
        d, n = statistics.median(e["direct"]), statistics.median(e["numba"])
        rows.append((d / n, w, task, params, d, n, min(e["loads"]), max(e["loads"])))
    rows.sort(reverse=True)
    print(f"{'direct/numba':>12} {'direct ms':>10} {'numba ms':>10}  load       row")
    for ratio, w, task, params, d, n, lo, hi in rows:
        flag = "  <-- slower" if ratio > threshold else ""
        print(f"{ratio:12.2f} {d:10.3f} {n:10.3f}  {lo:4.1f}-{hi:<4.1f}  {w} {task} {params}{flag}")
    left = [(w, task, params, sorted(e["errors"])) for (w, task, params), e in found.items()
            if e["errors"]]
    for w, task, params, errs in left:
        print(f"  failed: {w} {task} {params}: {'; '.join(errs)}")
    return [r for r in rows if r[0] > threshold]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="workloads (default: every CPU one)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batches", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per child")
    ap.add_argument("--json", help="write the measurements here (after every child)")
    ap.add_argument("--report", help="print the table of a --json file and stop")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child, a.quick, a.batches)
        return 0
    sys.path.insert(0, ROOT)
    from benchmarks import workloads
    names = a.only or [n for n in workloads.REGISTRY if n not in SKIP]
    if a.report:
        report(load(a.report))
        return 0
    found = compare(names, a.rounds, a.quick, a.batches, a.timeout, a.json)
    report(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
