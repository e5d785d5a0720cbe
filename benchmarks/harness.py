"""Cases, the run context, and the loop that times every system of a case.

A workload module returns a list of :class:`Case`.  Each case names the
systems it runs; each system is a *setup* function ``setup(data) -> fn`` or
``-> (fn, args)`` that builds (but does not time) the callable.  The harness
times the first call (compile + run), checks the result against the limit's,
then takes the median of repeats.  A system that raises is reported as
``failed: <reason>``; a missing package as ``absent``.
"""
from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

try:
    import resource             # (Unix: page faults and context switches of a timing)
except ImportError:
    resource = None

import numpy as np

from . import gpu_turns, machine_speed, peers, timing
from .report import fmt_params

UNIT_SCALE = {"s": 1.0, "ms": 1e3, "µs": 1e6, "ns": 1e9}
NO_CHECK = {"f", "bandwidth"}   # systems whose output is not the case's answer


@dataclass
class Measured:
    """Returned by a setup that measured itself (subprocesses, bandwidth)."""
    seconds: float
    extra: dict = field(default_factory=dict)


@dataclass
class Case:
    """One benchmark point: a task at fixed parameters, run by several systems."""
    task: str
    params: dict
    systems: dict[str, Callable]
    make: Callable[[], object] = lambda: None   # builds the shared input data
    unit: str = "µs/call"                        # display unit; prefix picks the scale
    per: float = 1.0                             # seconds are divided by this (e.g. n iterations)
    limit: str = "numba"                         # system the ×limit column divides by
    rtol: float = 1e-6                           # tolerance of the result check
    background: Callable | None = None           # context manager around every system's run

    def scale(self) -> float:
        return UNIT_SCALE[self.unit.split("/")[0]] / self.per


@dataclass
class Context:
    """Run-wide settings handed to every workload."""
    quick: bool = False
    backend: str = "cpu"
    # --quick on Numba's CUDA simulator (on_gpu.sh's DRY_RUN): every CUDA thread is a Python
    # thread there, so the workloads take sizes that only check their rows run
    sim: bool = False
    repeats: int = 7
    target: float = 0.02
    budget: float = 2.0
    seed: int = 0
    quick_skip: frozenset = frozenset({"pytensor"})   # systems not run under --quick
    timeout: float = 600.0                            # seconds per (case, system), POSIX only
    # --habit: `habit(ctx, workload, case) -> dict` measures each xforms row again in a fresh
    # process with an empty cache as a JAX user times (benchmarks/habit.py `of_row`: one
    # call, then timing without waiting); None: not measured.  A function, not a flag, so
    # that the harness need not import the workloads that run the child process.
    habit: object = None
    meta: dict = field(default_factory=dict)
    tmpdir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="xforms-bench-"))

    def peer(self, name: str):
        """Modules of a peer, or raise :class:`peers.Absent`."""
        return peers.load(name)

    def xjit(self, f, **kw):
        """``xf.jit`` on the selected backend; CUDA calls are synchronised."""
        xf = self.peer("xforms").xf
        g = xf.jit(f, backend=self.backend, **kw)
        if self.backend != "cuda":
            return g
        from numba import cuda

        def synced(*args):
            out = g(*args)
            cuda.synchronize()
            return out
        synced.jitted = g          # for kernel_launches()
        return synced

    def kernel_launches(self, fn, args):
        """Kernels and library calls one call of an xforms CUDA function launches (host
        loops count every iteration), or None off CUDA.  ``fn`` is what :meth:`xjit`
        returned."""
        counts = self.launch_counts(fn, args)
        return None if counts is None else counts["kernels"] + counts["library"]

    def launch_counts(self, fn, args):
        """What one call does on the device, by kind ({"kernels", "library", "host_waits",
        "copies", "uploads"}: xforms/kernels/cuda/backend.launch_counts), or None off CUDA:
        a GPU run's first clue to where a call's time goes (launches, or the host waiting
        for a loop's predicate)."""
        g = getattr(fn, "jitted", None)
        if self.backend != "cuda" or g is None:
            return None
        from xforms.tree_util import tree_leaves
        return g.lower(*args)._exe.launch_counts(*tree_leaves(args))

    def host_us(self, fn, args, seconds):
        """Host microseconds one call of an xforms CUDA function takes before it returns
        (launches queued, not waited for: the time a graph saves), and its graph state
        (`XFORMS_CUDA_GRAPHS=1`: "replaying", "refused: why", ...); (None, None) off CUDA."""
        g = getattr(fn, "jitted", None)
        if self.backend != "cuda" or g is None:
            return None, None
        from numba import cuda
        calls = max(2, min(20, int(0.2 / max(seconds, 1e-9))))   # (the simulator: seconds)
        g(*args)
        cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            g(*args)
        host = (time.perf_counter() - t) / calls * 1e6
        cuda.synchronize()
        from xforms.tree_util import tree_leaves
        info = g.lower(*args)._exe.graph_info(*tree_leaves(args))
        state = None if info is None else (
            info["state"] + (f": {info['reason']}" if info["reason"] else ""))
        return host, state

    def jax_inputs(self, args):
        """JAX's arguments with every NumPy array made a jax Array once, as a JAX program
        keeps its data: jax.jit copies a NumPy argument into a new buffer on every call
        unless it happens to be suitably aligned, so JAX's figures moved with where NumPy's
        allocator put the input (float64 tanh over 10^6, 2-core Xeon VM, 2026-11-28: 1.39 ns
        per element from NumPy, 0.53 from a jax Array; float32 0.33 either way)."""
        jax = self.peer("jax").jax
        return jax.tree_util.tree_map(
            lambda a: jax.device_put(a) if isinstance(a, np.ndarray) else a, args)

    def xput(self, *args):
        """Inputs for an xforms call: moved to the device on the CUDA backend."""
        if self.backend != "cuda":
            return args
        return tuple(self.peer("xforms").xf.device_put(a, backend="cuda") for a in args)

    def direct_launch(self, setup):
        """(setup, background) of a row that times an xforms CUDA function of `setup` with
        xforms/kernels/cuda/launch.py's direct launcher instead of numba-cuda's dispatcher
        (XFORMS_CUDA_FAST_LAUNCH, opt-in until a GPU has checked and measured it): its
        executable's launchers are made again inside the row (`CudaExecutable.relaunch`)
        and as before after it, so the same program is timed both ways.  Skipped where no
        launch site launches directly (the simulator)."""
        made = []

        def direct(data):
            fn, args = setup(data)
            exe = fn.jitted.lower(*args)._exe         # (what the harness counts launches of)
            made.append(exe)
            if not exe.relaunch():
                raise peers.Skip("no launch site launches directly here (the simulator, "
                                 "or launch.py kept numba-cuda's dispatcher)")
            return fn, args

        @contextlib.contextmanager
        def background():
            old = os.environ.get("XFORMS_CUDA_FAST_LAUNCH")
            os.environ["XFORMS_CUDA_FAST_LAUNCH"] = "1"
            try:
                yield
            finally:
                if old is None:
                    del os.environ["XFORMS_CUDA_FAST_LAUNCH"]
                else:
                    os.environ["XFORMS_CUDA_FAST_LAUNCH"] = old
                for exe in made:
                    exe.relaunch()
                made.clear()
        return direct, background

    def jax_call(self, f):
        """``jax.jit(f)`` wrapped to block until the result is ready.

        ``Array.block_until_ready()`` is used when the result is one array:
        ``jax.block_until_ready`` walks the pytree and costs ~10 µs here.
        """
        jax = self.peer("jax").jax
        g = jax.jit(f)

        def call(*args):
            out = g(*args)
            try:
                return out.block_until_ready()
            except AttributeError:
                return jax.block_until_ready(out)
        return call

    def env(self, **extra) -> dict:
        """Environment for child processes.  Python may write bytecode there, as it has for an
        installed package: with PYTHONDONTWRITEBYTECODE inherited, every child of a fresh
        checkout compiled the framework's sources again (inside the first call's figure
        when `jit` first imports the compiler package)."""
        env = {**os.environ, **{k: str(v) for k, v in extra.items()}}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return env


def one_line(exc: BaseException) -> str:
    """``Type: first line of message`` trimmed to fit a table cell."""
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0] if msg else ''}".strip().rstrip(":")[:140]


def flatten(x) -> list:
    """Leaves of a (dict/tuple/list) result as float64 NumPy arrays, in a fixed order."""
    if isinstance(x, dict):
        return [a for k in sorted(x) for a in flatten(x[k])]
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in flatten(v)]
    a = np.asarray(x)
    if a.dtype.kind == "c":       # (both parts: complex results, the eager workload's rows)
        return [a.real.astype(np.float64).ravel(), a.imag.astype(np.float64).ravel()]
    return [a.astype(np.float64).ravel()]


def compare(out, ref, rtol: float) -> str | None:
    """None when ``out`` matches ``ref``, else a one-line description."""
    a, b = np.concatenate(flatten(out) or [np.zeros(0)]), np.concatenate(flatten(ref) or [np.zeros(0)])
    if a.shape != b.shape:
        return f"wrong result: {a.size} values, expected {b.size}"
    if not np.all(np.isfinite(a) == np.isfinite(b)):
        return "wrong result: non-finite values"
    scale = float(np.max(np.abs(b[np.isfinite(b)]), initial=0.0)) or 1.0
    err = float(np.max(np.abs(a - b)[np.isfinite(b)], initial=0.0)) / scale
    return None if err <= rtol else f"wrong result: max error {err:.1e} of max |ref| (rtol {rtol:.0e})"


@contextlib.contextmanager
def deadline(seconds: float):
    """Raise ``TimeoutError`` in the main thread after ``seconds`` (no-op where unsupported)."""
    if not seconds or not hasattr(signal, "setitimer") \
            or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"gave up after {seconds:.0f} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _row(workload: str, case: Case, system: str) -> dict:
    return {"workload": workload, "task": case.task, "params": dict(case.params), "system": system,
            "unit": case.unit, "scale": case.scale(), "limit": case.limit, "status": "ok", "reason": ""}


SETTLE_S = 2.5


def _setup_check_time(ctx, case, system, data, ref, row):
    # (processes side by side, --parallel: a measured limit times itself in its setup)
    with (gpu_turns.timed() if system == case.limit else gpu_turns.untimed()):
        prepared = case.systems[system](data)
    if isinstance(prepared, Measured):
        row.update(median_s=prepared.seconds, **prepared.extra)
        return row, None
    fn, args = prepared if isinstance(prepared, tuple) else (prepared, ())
    with gpu_turns.untimed():
        row, out = _first_call(ctx, case, system, fn, args, ref, row)
    if row["status"] != "ok":
        return row, None
    with gpu_turns.timed():
        return _timed(ctx, system, fn, out[0], out[1], row)


def tiered_executables(fn) -> list:
    """The signatures of an xforms jitted function `fn` that started on the fast tier
    (xforms/exec/tiered.py `TieredExecutable`), whether compiled since or not."""
    return [entry[0] for entry in getattr(fn, "_fast", {}).values()
            if type(entry[0]).__name__ == "TieredExecutable"]


def wait_for_compiled(fn) -> bool:
    """Wait until a tiered jit `fn` runs compiled code (its `wait_compiled`), then let the
    process settle if a background compile ran; -> whether `fn` has `wait_compiled`."""
    wait = getattr(fn, "wait_compiled", None)
    if wait is None:
        return False
    background = bool(tiered_executables(fn))
    wait()
    if background:
        # a background compile just ended: the BLAS thread policy
        # (xforms/kernels/runtime/products/blas_threads.py) counted its process as load and adds threads back
        # after 2 s of calm; time the steady state, as JAX's in-process compile allows
        time.sleep(SETTLE_S)
    return True


def _first_call(ctx, case, system, fn, args, ref, row):
    """The first call (first_call_s: compile or cache load; under --parallel beside other
    processes' compiles) and the check of its result; -> (row, (args, out))."""
    if system == "jax":
        args = ctx.jax_inputs(args)
    cpu0 = time.process_time()
    row["first_call_s"], out = timing.time_once(fn, args)
    # (CPU seconds of the whole process, its threads included: a loaded machine's wall
    # figure beside what the call cost; JAX's compile threads count too)
    row["first_call_cpu_s"] = round(time.process_time() - cpu0, 5)
    row["first_call_load"] = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    # (a jit, or an eager op with a compiled kernel: time the compiled code, not the fast tier)
    row["waits_compiled"] = wait_for_compiled(fn)
    if system not in NO_CHECK and ref is not None:
        problem = compare(out, ref, case.rtol)
        if problem:
            row.update(status="failed", reason=problem)
    return row, (args, out)


def _timed(ctx, system, fn, args, out, row):
    """The row's figures: median of repeats, launches and host time on CUDA."""
    xf_cpu = system == "xforms" and ctx.backend != "cuda"
    if xf_cpu:
        _thread_history(reset=True)
    # (the machine's own speed just before and after: a row slow beside a slow probe is a
    # slow phase of the VM, every system's; issue #37, benchmarks/machine_speed.py)
    machine = {"before": machine_speed.probe()} if ctx.backend != "cuda" else None
    with _window() as window:
        t = timing.measure(fn, args, repeats=ctx.repeats, target=ctx.target, budget=ctx.budget)
    if machine is not None:
        row["machine"] = dict(machine, after=machine_speed.probe())
    row.update(median_s=t.median, min_s=t.min, q1_s=t.q1, q3_s=t.q3, number=t.number, repeats=t.repeats)
    row["samples_ms"] = [round(x * 1e3, 4) for x in t.taken]      # in the order taken
    row["window"] = window
    if xf_cpu:
        row["blas_threads"] = _blas_threads()
        row.update(_thread_history())
    if ctx.backend == "cuda" and (system == "xforms" or hasattr(fn, "jitted")):
        # (every row an xforms CUDA function times: cnn's forward "f" too, issue 34)
        row["launch_counts"] = counts = ctx.launch_counts(fn, args)
        row["kernel_launches"] = None if counts is None else counts["kernels"] + counts["library"]
        row["host_us"], row["graph"] = ctx.host_us(fn, args, t.median)
    return row, (None if system in NO_CHECK else out)


@contextlib.contextmanager
def _window():
    """Around a row's timing: {wall_s, cpu_s, minflt, nivcsw} of this process over it
    (CPU of all its threads: cpu_s / wall_s near 2 is two busy threads, well below 1 a
    process that waited for a core -- the figures that tell a row's two speeds apart)."""
    out = {}
    usage = (lambda: resource.getrusage(resource.RUSAGE_SELF)) if resource else (lambda: None)
    r0, c0, t0 = usage(), time.process_time(), time.perf_counter()
    try:
        yield out
    finally:
        r1 = usage()
        out.update(wall_s=round(time.perf_counter() - t0, 4), cpu_s=round(time.process_time() - c0, 4))
        if r1 is not None:
            out.update(minflt=r1.ru_minflt - r0.ru_minflt, nivcsw=r1.ru_nivcsw - r0.ru_nivcsw)


def _thread_history(reset=False):
    """xforms' thread choices during a row's timing: the BLAS monitor's seconds at each
    count with the outside load it saw (``blas_history``), and the calls of its parallel
    kernels at each thread count (``parallel_calls``, AdaptiveThreads); `reset` starts
    both afresh before the timing."""
    try:
        from xforms.kernels.runtime import threads
        from xforms.kernels.runtime.products import blas_threads
        if reset:
            blas_threads.HISTORY.reset()
        sequence = threads.calls_sequence()     # (read before calls_summary resets it)
        out = {"blas_history": blas_threads.HISTORY.summary(),
               "parallel_calls": {str(k): v for k, v in threads.calls_summary(reset).items()}}
        if sequence:            # each call's threads, a try's marked *: "2 2 1* 1* 2 ..."
            out["parallel_sequence"] = sequence
        return {} if reset else out
    except Exception as exc:        # (a record, never a failure of the row)
        return {"blas_history": {"error": one_line(exc)}}


def _blas_threads():
    """The OpenBLAS thread counts in force after xforms' timing ({library: count}; the load
    monitor's choice, xforms/kernels/runtime/products/blas_threads.py): one count in a quiet
    process and another in a loaded one is a row's second speed (issue #37's MNIST update:
    16.5 ms a step quiet, 27.9 loaded)."""
    try:
        from xforms.kernels.runtime.products import blas_threads
        return blas_threads.counts()
    except Exception as exc:        # (a record, never a failure of the row)
        return {"error": one_line(exc)}


def run_system(ctx: Context, workload: str, case: Case, system: str, data, ref) -> tuple[dict, object]:
    """Set up, check and time one system; returns ``(row, output)``."""
    row = _row(workload, case, system)
    ok, info = peers.check(system)
    if not ok:
        row.update(status="absent", reason=info)
        return row, None
    if system in ctx.quick_skip and ctx.quick:
        row.update(status="skipped", reason="quick mode (compile takes seconds to minutes)")
        return row, None
    try:
        with deadline(ctx.timeout):
            row, out = _setup_check_time(ctx, case, system, data, ref, row)
        if ctx.habit and system == "xforms" and row.get("waits_compiled"):
            row["habit"] = ctx.habit(ctx, workload, case)   # (its own process, no deadline)
        return row, out
    except peers.Skip as exc:
        row.update(status="skipped", reason=str(exc))
    except peers.Absent as exc:
        row.update(status="absent", reason=str(exc))
    except Exception as exc:   # the system under test failed; the harness goes on
        row.update(status="failed", reason=one_line(exc))
        if os.environ.get("BENCH_TRACEBACK"):
            traceback.print_exc()
    return row, None


def run_case(ctx: Context, workload: str, case: Case, tick=lambda label: None) -> list[dict]:
    """Run every system of ``case``; the most trusted one that works is the reference."""
    data = case.make()
    trust = [case.limit, "numba", "numpy", "jax", "autograd", "pytensor", "xforms"]
    order = sorted(case.systems, key=lambda s: (s in NO_CHECK, trust.index(s) if s in trust else 99))
    rows, ref = {}, None
    for system in order:
        tick(f"{workload}:{case.task} {fmt_params(case.params)} {system}")
        with (case.background() if case.background else contextlib.nullcontext()):
            row, out = run_system(ctx, workload, case, system, data, ref)
        rows[system] = row
        if ref is None and out is not None:
            ref = out
    del data
    return [rows[s] for s in case.systems]
