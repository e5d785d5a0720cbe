"""Compile the GPU table's xforms programs before the table is timed, in parallel processes,
into the xforms compile cache the table then reads (`python -m benchmarks --cache-dir`):

    XFORMS_CACHE_DIR=/tmp/xc python -m benchmarks.gpu_warm --only mlp,cnn --workers 6 [--quick]

The table's programs are specialised to their shapes: at the GPU's sizes its 11 workloads
emit 495 distinct kernels (sm_90, libraries on; tools/gpu_table_kernels.py, 2026-12-01),
and numba-cuda types, lowers and compiles each one in the table's single process, one
after the other, inside its 8-minute window.  Here each worker process calls every xforms
CUDA function of its share of the cases once (round robin over the cases, so that no worker
gets all of cliffs' or cnn's), which compiles its kernels into the shared cache; on_gpu.sh
runs this beside the CUDA tests (neither times anything), so the table's first calls load
kernels from disk.  Prints a line per case and what failed; exits 0 even when some did (the table
reports them).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

PEERS = ("jax", "numpy", "numba", "autograd", "pytensor", "bandwidth")


def shard(jobs, k, n):
    """The k-th of n round-robin shares of `jobs`.

    >>> shard(["a", "b", "c", "d", "e"], 1, 2)
    ['b', 'd']
    """
    return [j for i, j in enumerate(jobs) if i % n == k]


def _context(quick):
    from .harness import Context
    sim = quick and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    return Context(quick=quick, backend="cuda", sim=sim)   # (as benchmarks.__main__ makes it)


def _jobs(names, quick):
    """(workload, case index) of every case of the named workloads."""
    from .workloads import load
    ctx = _context(quick)
    return [(w, i) for w in names for i, _ in enumerate(load(w).cases(ctx))]


def _warm(jobs, quick):
    """Call each case's xforms CUDA functions once (compiling them); -> failures."""
    from . import peers
    from .workloads import load
    ctx, failed, cases = _context(quick), 0, {}
    for workload, i in jobs:
        case = cases.setdefault(workload, load(workload).cases(ctx))[i]
        t0 = time.perf_counter()
        try:
            data = case.make()
            # (outside the case's `background`: its settings -- graphs, the direct
            # launcher -- change how a program launches, not what compiles; a direct-launch
            # row's setup skips here, its program compiled)
            for system, setup in case.systems.items():
                if system in PEERS:
                    continue
                try:
                    prepared = setup(data)
                except (peers.Absent, peers.Skip):
                    continue
                fn, args = prepared if isinstance(prepared, tuple) else (prepared, ())
                if hasattr(fn, "jitted"):              # (ctx.xjit's: an xforms CUDA function)
                    fn(*args)
            print(f"ok   {workload} {case.task} {case.params} {time.perf_counter() - t0:.1f} s",
                  flush=True)
        except Exception as e:                          # noqa: BLE001 (the table reports it)
            failed += 1
            print(f"FAIL {workload} {case.task} {case.params}: {type(e).__name__}: "
                  f"{str(e).strip()[:200]}", flush=True)
    return failed


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.gpu_warm")
    ap.add_argument("--only", required=True, help="comma-separated workloads")
    ap.add_argument("--workers", type=int, default=6)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--shard", default=None, help=argparse.SUPPRESS)     # "k/n": a worker
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    if args.shard:
        k, n = map(int, args.shard.split("/"))
        return 1 if _warm(shard(_jobs(names, args.quick), k, n), args.quick) else 0
    t0, n = time.perf_counter(), max(1, args.workers)
    cmd = [sys.executable, "-m", "benchmarks.gpu_warm", "--only", args.only]
    cmd += ["--quick"] if args.quick else []
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    procs = [subprocess.Popen(cmd + ["--shard", f"{k}/{n}"], cwd=root) for k in range(n)]
    codes = [p.wait() for p in procs]
    print(f"gpu_warm: {n} workers, {sum(c != 0 for c in codes)} with failures, "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
