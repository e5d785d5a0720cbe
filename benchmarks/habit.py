"""The JAX timing habit on an xforms row: call once, then time, in a fresh process.

A JAX user calls a jitted function once ("to compile it") and then times it with `timeit`,
or trains.  The harness instead waits for xforms' compiled tier after the first call
(`harness.wait_for_compiled`), so its rows never show what that user measures.  Under
``python -m benchmarks --habit`` every xforms row that has a compiled tier is measured
again in a process of its own (``benchmarks/workloads/habit_child.py``) with an empty
``XFORMS_CACHE_DIR``, as a new user's first run: the first call (tiered, the default),
then `timing.measure` at once, exactly as the harness times a row but without waiting
(``habit_s``); then it waits for the compiled tier and times the steady state the
harness's way (``steady_s``).  The row's JSON gets a ``habit`` dict:

* ``ratio``: habit_s / steady_s, both from that process (issue #35's bar: <= 1.2);
* ``ttc_s``: time to compiled code, from the first call's start until the compiled tier
  was ready (a compile finished during the first call counts as its end; a first call that
  compiled synchronously: its own time); ``ttc_cpu_s`` the CPU seconds spent meanwhile by
  that process and its children (the compile worker): steadier on a loaded machine;
* ``tiers``: what each signature's later calls did (`tier_note`), ``first_s``,
  ``fast_calls`` (calls answered by the fast tier), ``load`` (1-minute load average);
* ``ttc_x_jax_first`` / ``ttc_cpu_x_jax_first`` (report.add_ratios): ttc over the JAX
  row's first call (trace + compile + run, in the workload's process), wall and CPU.

The measurement itself (`measure`) runs in the child; `of_row` starts it.

    >>> import xforms as xf, xforms.numpy as xnp, numpy as np
    >>> r = measure(xf.jit(lambda x: xnp.sum(x * x), tiered=True), (np.ones(3),), 3, 1e-4, 0.05)
    >>> sorted(r)[:3]
    ['fast_calls', 'first_cpu_s', 'first_s']
"""
from __future__ import annotations

import json
import os
import tempfile
import threading
import time

from . import harness, timing

try:
    import resource
except ImportError:               # (no CPU of children off Unix: wall figures only)
    resource = None

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def children_cpu() -> float | None:
    """CPU seconds of this process's children: the live ones (the compile worker, read from
    /proc) and the ones already waited for; None where /proc cannot be read."""
    done = 0.0
    if resource is not None:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = r.ru_utime + r.ru_stime
    me, live = os.getpid(), 0
    try:
        for task in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{task}/children") as fh:
                for pid in fh.read().split():
                    live += _proc_ticks(pid)
    except OSError:
        return None
    return done + live / _TICK


def _proc_ticks(pid) -> int:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:                 # (it exited since the list was read)
        return 0
    return int(fields[11]) + int(fields[12])          # utime, stime (fields 14 and 15)


def clock() -> tuple:
    """(wall s, CPU s of this process and its children) now."""
    kids = children_cpu()
    return time.perf_counter(), time.process_time() + (kids or 0.0)


class _Ready:
    """The `clock()` reading when a TieredExecutable's compile ends (a thread blocked on
    it: no CPU, one wake-up)."""

    def __init__(self, exe):
        self.exe, self.at = exe, None
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        self.exe.wait()
        self.at = clock()


def tier_note(exe) -> str:
    """What a fast-tier signature's later calls do: wait for the compile, or go on eagerly
    because the fast tier should be about as fast (xforms/exec/tiered.py `patient`)."""
    from xforms.exec.eager_cost import fast_tier_estimate
    slowdown = fast_tier_estimate(exe.closed)[1]
    how = "waits" if exe.patient else "eager"
    race = "" if exe.race is None else ", raced"
    return f"{how} (fast tier x{slowdown:.2g} est.{race})"


def measure(fn, args, repeats=7, target=0.02, budget=2.0) -> dict:
    """The habit on `fn(*args)` in this process (its first call not made yet): the fields
    of the module docstring, less the JAX ratios."""
    t0 = clock()
    fn(*args)
    t1 = clock()
    exes = harness.tiered_executables(fn)
    watch = [_Ready(e) for e in exes if not e.done]
    with harness._window() as window:
        habit = timing.measure(fn, args, repeats=repeats, target=target, budget=budget)
    fast_calls = sum(e.fast_calls for e in exes)
    harness.wait_for_compiled(fn)
    for w in watch:
        w.thread.join(5.0)
    failed = [e for e in exes if e.compiled is None]
    steady = timing.measure(fn, args, repeats=repeats, target=target, budget=budget)
    ends = [w.at for w in watch if w.at is not None] + [t1]
    end = max(ends, key=lambda c: c[0])
    if failed or not hasattr(fn, "_fast"):     # (not a jit: an eager op's kernel, unknown)
        end = (None, None)
    out = {"first_s": t1[0] - t0[0], "first_cpu_s": t1[1] - t0[1], "habit_s": habit.median,
           "steady_s": steady.median, "ratio": habit.median / steady.median,
           "samples_ms": [round(x * 1e3, 4) for x in habit.taken], "window": window,
           "ttc_s": None if end[0] is None else end[0] - t0[0],
           "ttc_cpu_s": None if end[1] is None else end[1] - t0[1],
           "fast_calls": fast_calls,
           "tiers": [tier_note(e) for e in exes] or
           ["compiled" if hasattr(fn, "_fast") else "not a jit"],
           "load": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None}
    if failed:
        out["failed"] = f"{len(failed)} signature(s) stayed on the fast tier"
    return out


def of_row(ctx, workload: str, case) -> dict:
    """The habit of `case`'s xforms row, measured by a child process with an empty cache
    (its JSON), or {"error": why}."""
    from .workloads.compile import child
    spec = {"workload": workload, "task": case.task, "params": case.params,
            "quick": ctx.quick, "backend": ctx.backend, "sim": ctx.sim, "seed": ctx.seed,
            "repeats": ctx.repeats, "target": ctx.target, "budget": ctx.budget}
    cache = tempfile.mkdtemp(prefix="habit-", dir=ctx.tmpdir)
    try:
        # (Numba's own cache where it keeps it: the runtime helpers, once per installation)
        r = child(ctx, json.loads(json.dumps(spec, default=str)), cache, numba_cache=False,
                  module="benchmarks.workloads.habit_child", timeout=max(ctx.timeout, 600))
    except Exception as exc:        # (a record on the row, never a failure of it)
        return {"error": harness.one_line(exc)}
    r.pop("wall_s", None)
    return r
