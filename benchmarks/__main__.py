"""``python -m benchmarks [--quick] [--backend cpu|cuda] [--only NAME[,NAME]] [--out DIR]``.

Runs the selected workloads for every system side by side, prints a table,
and writes ``<date>_<machine>[_quick].json`` plus one PNG per workload.  Each workload
runs in a child process of its own unless ``--in-process`` is given.
Exit status: 0 when the harness ran (systems that failed are reported in the
table), 1 when the harness itself broke, 2 on a usage error or when
``--backend cuda`` is asked for without a CUDA GPU.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

from . import gpu_turns, peers, report   # none imports NumPy at module level (pin_threads)
from .workloads import REGISTRY, load

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[1])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, few repeats (CI smoke test)")
    ap.add_argument("--backend", choices=("cpu", "cuda"), default="cpu", help="xforms backend")
    ap.add_argument("--only", default="", help="comma-separated workloads: " + ",".join(REGISTRY))
    ap.add_argument("--out", default=RESULTS, help="output directory (default benchmarks/results)")
    ap.add_argument("--repeats", type=int, default=None, help="repeats per measurement (median)")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads for BLAS/XLA/OpenMP (default 1: every system single-threaded; "
                         "0: leave the libraries' defaults)")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    ap.add_argument("--in-process", action="store_true",
                    help="run every workload in this process (default: each workload in a "
                         "child process of its own, so that no figure depends on what ran before)")
    ap.add_argument("--processes", type=int, default=1,
                    help="measure each workload in this many fresh processes, one after the "
                         "other; a row reports the median over them, each process's ratio to "
                         "JAX and the spread (a row that runs at two speeds shows it)")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="seconds for all the workloads' processes together: each gets an "
                         "equal share of what is left, is stopped past it (its rows lost, "
                         "an error in the table), and the JSON is written in time")
    ap.add_argument("--parallel", type=int, default=1,
                    help="workload processes run at once, their GPU timings in turn "
                         "(benchmarks/gpu_turns.py: starts, compiles and checks overlap, a "
                         "row's timing runs alone on the device); on_gpu.sh's table")
    ap.add_argument("--systems", default="",
                    help="comma-separated systems to run (default: every system of a case); "
                         "on_gpu.sh's table keeps xforms, jax and the measured limits")
    ap.add_argument("--cache-dir", default=None,
                    help="the xforms compile cache to use and keep (default: a new, private "
                         "one, removed after: first calls are cold); on_gpu.sh passes the one "
                         "benchmarks/gpu_warm.py filled")
    ap.add_argument("--habit", action="store_true",
                    help="also time every xforms row as a JAX user does, in a fresh process "
                         "with an empty cache: one call, then timing without waiting for the "
                         "compiled tier; and the time to compiled code (benchmarks/habit.py)")
    ap.add_argument("--rows-out", default=None, help=argparse.SUPPRESS)   # a child's rows go here
    args = ap.parse_args(argv)
    args.system_names = [n.strip() for n in args.systems.split(",") if n.strip()]
    args.names = [n.strip() for n in args.only.split(",") if n.strip()] or list(REGISTRY)
    unknown = [n for n in args.names if n not in REGISTRY]
    if unknown:
        ap.error(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(REGISTRY)}")
    return args


class _Progress:
    """tqdm if it is installed, else a line per workload on stderr."""

    def __init__(self, total):
        try:
            from tqdm import tqdm
            self.bar = tqdm(total=total, unit="run", dynamic_ncols=True, file=sys.stderr)
        except ImportError:
            self.bar = None

    def tick(self, label):
        if self.bar is not None:
            self.bar.set_description_str(label[:50].ljust(50))
            self.bar.update(1)
        else:
            print(label, file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def pin_threads(n: int) -> None:
    """Give BLAS, OpenMP and XLA ``n`` threads, before NumPy or JAX is imported.

    One thread by default: peers compare per-core efficiency, and multi-threaded
    OpenBLAS on a small, shared VM can be 100x slower at random.
    """
    if n <= 0:
        return
    if "numpy" in sys.modules:
        print("warning: NumPy already imported; --threads may not apply to BLAS", file=sys.stderr)
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(n)
    xla = f"--xla_cpu_multi_thread_eigen={'false' if n == 1 else 'true'} intra_op_parallelism_threads={n}"
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {xla}".strip()


def _keep_systems(cases, names):
    """The cases with only the systems named (all where `names` is empty); a case left with
    none is dropped.  (A GPU table beside JAX needs no CPU peers at the GPU's sizes: NumPy's
    batch-4096 MLP step or autograd's would take its minutes.)"""
    if not names:
        return cases
    kept = [dataclasses.replace(c, systems={k: v for k, v in c.systems.items() if k in names})
            for c in cases]
    return [c for c in kept if c.systems]


def _habit_measure():
    """benchmarks/habit.py's per-row measurement, for the harness's `Context.habit`."""
    from .habit import of_row
    return of_row


def _measure_here(args, on_case=lambda rows, errors, meta: None):
    """Run the selected workloads in this process -> (rows, wall, errors, meta);
    `on_case(rows, errors, meta)` after every case (a child writes its rows so far: a
    child stopped past its share of --budget-s keeps the cases it finished)."""
    from .harness import Context, run_case
    quick = args.quick
    sim = quick and args.backend == "cuda" and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    ctx = Context(quick=quick, backend=args.backend, sim=sim,
                  repeats=args.repeats or (3 if quick else 7),
                  target=0.005 if quick else 0.02, budget=0.3 if quick else 2.0,
                  timeout=300.0 if sim else 60.0 if quick else 600.0,
                  habit=_habit_measure() if args.habit else None)
    plan, harness_errors = [], []
    for name in args.names:
        try:
            module = load(name)
            plan.append((name, module, _keep_systems(module.cases(ctx), args.system_names)))
        except Exception:
            harness_errors.append(f"{name}: building cases\n{traceback.format_exc()}")

    progress = _Progress(sum(len(c.systems) for _, _, cases in plan for c in cases))
    rows, wall = [], {}
    for name, _, cases in plan:
        t0 = time.perf_counter()
        for case in cases:
            try:
                rows += run_case(ctx, name, case, progress.tick)
            except Exception:
                harness_errors.append(f"{name} {case.task} {case.params}\n{traceback.format_exc()}")
            on_case(rows, harness_errors, ctx.meta)
        wall[name] = round(time.perf_counter() - t0, 2)
    progress.close()
    shutil.rmtree(ctx.tmpdir, ignore_errors=True)
    return rows, wall, harness_errors, ctx.meta


def _measure_isolated(args):
    """Each workload in a child process of its own (`--rows-out`), sharing the compile cache:
    a long process's state (its allocator, its libraries' thread pools) shifted some rows by
    up to 60% depending on the workloads run before them (benchmarks/README.md)."""
    rows, wall, errors, meta = [], {}, [], {}
    runs = [(n, k) for n in args.names for k in range(max(1, args.processes))]
    end = time.perf_counter() + args.budget_s if args.budget_s is not None else None
    side = max(1, args.parallel)

    def one(j, name):
        # an equal share of what is left, each of `side` processes at once taking one
        cap = None if end is None else \
            (end - time.perf_counter()) * min(side, len(runs) - j) / (len(runs) - j)
        fd, path = tempfile.mkstemp(prefix=f"bench-{name}-", suffix=".json")
        os.close(fd)
        cmd = [sys.executable, "-m", "benchmarks", "--only", name, "--rows-out", path,
               "--backend", args.backend, "--threads", str(args.threads)]
        cmd += ["--quick"] if args.quick else []
        cmd += ["--habit"] if args.habit else []
        cmd += ["--repeats", str(args.repeats)] if args.repeats else []
        cmd += ["--systems", args.systems] if args.system_names else []
        t0 = time.perf_counter()
        return path, _run_child(cmd, cap), time.perf_counter() - t0

    with _side_by_side(side) as pool:
        done = list(pool.map(one, range(len(runs)), [n for n, _ in runs]))
    for (name, k), (path, status, seconds) in zip(runs, done):
        wall[name] = round(wall.get(name, 0.0) + seconds, 2)
        try:
            with open(path) as fh:
                child = json.load(fh)
            rows += [dict(r, process=k) for r in child["rows"]]
            errors += child["errors"]
            meta.update(child["meta"])
            if status.startswith("was stopped"):
                errors.append(f"{name}: its process {status}; the {len(child['rows'])} "
                              "rows of the cases it finished are kept")
        except (OSError, ValueError, KeyError):
            errors.append(f"{name}: its process {status} and wrote no rows")
        finally:
            for leftover in (path, path + ".part"):      # (.part: a child stopped mid-write)
                if os.path.exists(leftover):
                    os.unlink(leftover)
    return rows, wall, errors, meta


@contextlib.contextmanager
def _side_by_side(n):
    """A pool of `n` threads, each running a workload's process in turn; with n > 1 the
    processes take turns on the GPU for their timings (XFORMS_BENCH_GPU_TURNS: a folder of
    lock files, benchmarks/gpu_turns.py)."""
    from concurrent.futures import ThreadPoolExecutor
    old = os.environ.get(gpu_turns.ENV)
    folder = tempfile.mkdtemp(prefix="bench-turns-") if n > 1 else None
    if folder:
        os.environ[gpu_turns.ENV] = folder
    try:
        with ThreadPoolExecutor(n) as pool:
            yield pool
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
            os.environ.pop(gpu_turns.ENV)
            if old is not None:
                os.environ[gpu_turns.ENV] = old


def _run_child(cmd, cap):
    """Run a workload's process, stopped after `cap` seconds (None: no cap); -> what became
    of it, for the error of a process that wrote no rows."""
    if cap is not None and cap <= 0:
        return "was not started: --budget-s was spent"
    try:
        proc = subprocess.run(cmd, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              timeout=cap)
    except subprocess.TimeoutExpired:
        return f"was stopped after its share of --budget-s ({cap:.1f} s)"
    return f"exited with status {proc.returncode}"


def run(args) -> int:
    isolated = not args.in_process and not args.rows_out and (
        len(args.names) > 1 or args.processes > 1 or args.budget_s is not None)
    if not isolated:
        pin_threads(args.threads)
    # JAX runs where xforms runs: CPU, or its default device (a GPU if jax has one) under --backend cuda.
    if args.backend == "cpu":
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    started = time.perf_counter()
    # A private, empty xforms compile cache: first-call times are cold, the user's cache
    # untouched (a child process of an isolated run uses its parent's).
    own_cache = not args.rows_out and not args.cache_dir
    if own_cache:
        os.environ["XFORMS_CACHE_DIR"] = tempfile.mkdtemp(prefix="xforms-cache-")
    elif args.cache_dir:            # (compiled ahead: benchmarks/gpu_warm.py; first calls warm)
        os.environ["XFORMS_CACHE_DIR"] = args.cache_dir
    load_before = _loadavg()
    quick = args.quick
    if isolated:
        rows, wall, harness_errors, ctx_meta = _measure_isolated(args)
    else:
        write = (lambda r, e, m: _write_rows(args.rows_out, r, e, m)) if args.rows_out else (
            lambda r, e, m: None)
        rows, wall, harness_errors, ctx_meta = _measure_here(args, write)
    if args.rows_out:
        _write_rows(args.rows_out, rows, harness_errors, ctx_meta)
        return 1 if harness_errors else 0
    plan = []
    for name in args.names:          # for the plots (a module that fails is reported above)
        try:
            plan.append((name, load(name)))
        except Exception:
            pass

    rows = report.merge_processes(rows)
    report.add_ratios(rows)
    print(report.table(rows))
    os.makedirs(args.out, exist_ok=True)
    stem = f"{time.strftime('%Y%m%d-%H%M%S')}_{report.machine_tag()}" + ("_quick" if quick else "")
    meta = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": report.machine_tag(),
            "cpu": report.cpu_model(), "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "python": sys.version.split()[0], "argv": sys.argv[1:], "quick": quick,
            "backend": args.backend, "workloads": args.names, "peers": peers.versions(),
            "repeats": args.repeats or (3 if quick else 7),
            "threads": args.threads or "library defaults", "processes": args.processes,
            "workloads_in": "one process each" if isolated else "one process",
            "xforms_cache_dir": os.environ["XFORMS_CACHE_DIR"],
            "first_calls": "cold (a new cache)" if own_cache else "from --cache-dir",
            "habit": args.habit,
            "workload_wall_s": wall, "loadavg_before": load_before, "loadavg_after": _loadavg(),
            "blas_env": _blas_env(), **ctx_meta, "harness_errors": harness_errors}
    if args.backend == "cuda":   # the GPU's model, driver, CUDA libraries' and packages' versions
        meta["gpu"] = _gpu_meta()
    written = []
    for name, module in plan:
        path = os.path.join(args.out, f"{stem}_{name}.png")
        try:
            if report.plot_workload(path, name, module, [r for r in rows if r["workload"] == name]):
                written.append(path)
        except Exception:
            harness_errors.append(f"{name}: plotting\n{traceback.format_exc()}")
    meta["wall_s"] = time.perf_counter() - started
    json_path = os.path.join(args.out, f"{stem}.json")
    report.write_json(json_path, meta, rows)
    print(f"\nwrote {json_path}\n      {len(written)} plot(s): {stem}_<workload>.png"
          f"\nwall time {meta['wall_s']:.1f} s ("
          + ", ".join(f"{k} {v:.1f}" for k, v in wall.items()) + ")")
    busy = max(filter(None, [load_before, meta["loadavg_after"]]), default=0)
    if busy > (os.cpu_count() or 1) * 0.75:
        print(f"note: load average {busy} on {os.cpu_count()} cores -- other processes were running, "
              "timings are noisy")
    if "OPENBLAS_CORETYPE" in meta["blas_env"]:
        print(f"note: OPENBLAS_CORETYPE={meta['blas_env']['OPENBLAS_CORETYPE']} pins OpenBLAS's kernels "
              "(NumPy's, SciPy's and xforms' products); JAX's XLA ignores it")
    for err in harness_errors:
        print(f"\nHARNESS ERROR in {err}", file=sys.stderr)
    if own_cache:
        shutil.rmtree(os.environ["XFORMS_CACHE_DIR"], ignore_errors=True)
    return 1 if harness_errors else 0


def _write_rows(path, rows, errors, meta):
    """A child's rows so far, replacing the file whole (a reader never sees half of it)."""
    with open(path + ".part", "w") as fh:
        json.dump({"rows": rows, "errors": errors, "meta": meta}, fh,
                  default=lambda v: v.item() if hasattr(v, "item") else str(v))
    os.replace(path + ".part", path)


def _blas_env():
    """The environment settings that pick BLAS kernels, recorded because they move the rows with
    products: e.g. OPENBLAS_CORETYPE=Haswell runs AVX2 kernels on an AVX-512 CPU, while XLA is
    unaffected.  `{"OPENBLAS_CORETYPE": "Haswell"}` or `{}`."""
    names = ("OPENBLAS_CORETYPE", "OPENBLAS_VERBOSE", "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE")
    return {k: os.environ[k] for k in names if k in os.environ}


def _gpu_meta():
    """benchmarks/gpu_info.py's record of the GPU, or why it could not be made."""
    try:
        from .gpu_info import gpu_info
        return gpu_info()
    except Exception as e:
        return f"unavailable ({type(e).__name__}: {e})"


def _loadavg():
    """1-minute load average (other processes skew timings on a shared machine)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.list:
        for name in REGISTRY:
            doc = (load(name).__doc__ or "").strip().splitlines()
            print(f"{name:<16}{doc[0] if doc else ''}")
        return 0
    if args.backend == "cuda" and not peers.cuda_available():
        print("error: --backend cuda needs a CUDA GPU, but numba.cuda.is_available() is False "
              "(no GPU/driver visible to Numba). Use --backend cpu.", file=sys.stderr)
        return 2
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
