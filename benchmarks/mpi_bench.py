"""MPI benchmarks: collective latency and bandwidth inside jit beside mpi4py, and the
data-parallel example's step time on 1 and 2 ranks.

    mpiexec -n 2 python -m benchmarks.mpi_bench [--quick]

1. Allreduce (sum, float64) of 8 B .. 64 MB: `xforms.mpi.allreduce` called REPS times in
   a `lax.fori_loop` inside one jitted call (numba-mpi from the compiled kernel, no Python
   between calls) against `comm.Allreduce` from Python (mpi4py) and a hand-written
   `@njit` loop calling numba-mpi directly, all on the same buffers.  Median of 5 runs,
   time per collective.
2. `pmap` per-call overhead: a jitted pmap step of psum on 8 B with and without the
   argument-signature check.
Results print as a table on rank 0 (and go to benchmarks/results/mpi_<ranks>.json).
"""
import argparse
import json
import os
import time

# one compute thread per rank, the usual MPI layout (several ranks share the cores)
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numba  # noqa: E402
import numba_mpi  # noqa: E402
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

import xforms as xf  # noqa: E402
from xforms import lax, mpi  # noqa: E402

COMM = MPI.COMM_WORLD
SUM = numba_mpi.Operator.SUM


@numba.njit
def _numba_loop(x, out, reps):
    for _ in range(reps):
        numba_mpi.allreduce(x, out, SUM)
    return out


def _median_time(fn, runs=5):
    ts = []
    for _ in range(runs):
        COMM.Barrier()
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def allreduce_sweep(quick):
    sizes = [1, 16, 256, 4096, 65536, 1 << 20, 1 << 23] if not quick else [1, 4096, 1 << 20]
    rows = []
    for n in sizes:
        reps = max(10, min(2000, int(2e8 // max(n * 8, 1) // 10)))
        x = np.random.default_rng(COMM.rank).normal(size=n)
        out = np.empty_like(x)
        # scaling by 0.5 keeps values bounded; its cost is negligible next to the message
        looped = xf.jit(lambda v: lax.fori_loop(0, reps, lambda i, c: mpi.allreduce(c) * 0.5, v))
        looped(x)                                   # compile
        _numba_loop(x, out, 1)

        def mpi4py_loop():
            for _ in range(reps):
                COMM.Allreduce(x, out)
        t_x = _median_time(lambda: looped(x)) / reps
        t_m = _median_time(mpi4py_loop) / reps
        t_n = _median_time(lambda: _numba_loop(x, out, reps)) / reps
        rows.append({"bytes": n * 8, "reps": reps, "xforms_us": t_x * 1e6,
                     "mpi4py_us": t_m * 1e6, "numba_mpi_us": t_n * 1e6,
                     "ratio_vs_mpi4py": t_x / t_m})
    return rows


def pmap_overhead():
    x = np.ones(1)
    checked = xf.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    unchecked = xf.pmap(lambda v: lax.psum(v, "i"), axis_name="i", check_inputs=False)
    checked(x), unchecked(x)
    reps = 2000

    def loop(f):
        return lambda: [f(x) for _ in range(reps)]
    return {"pmap_checked_us": _median_time(loop(checked)) / reps * 1e6,
            "pmap_unchecked_us": _median_time(loop(unchecked)) / reps * 1e6}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rows = allreduce_sweep(args.quick)
    over = pmap_overhead()
    if COMM.rank == 0:
        print(f"Allreduce (sum, float64) on {COMM.size} ranks, time per collective, median of 5")
        print(f"{'bytes':>10} {'xforms jit':>12} {'mpi4py':>10} {'numba-mpi':>10} {'x/mpi4py':>9}")
        for r in rows:
            print(f"{r['bytes']:>10} {r['xforms_us']:>10.2f}us {r['mpi4py_us']:>8.2f}us "
                  f"{r['numba_mpi_us']:>8.2f}us {r['ratio_vs_mpi4py']:>9.2f}")
        print(f"pmap call of psum on 8 B: {over['pmap_checked_us']:.1f} us with the argument "
              f"check, {over['pmap_unchecked_us']:.1f} us without")
        os.makedirs("benchmarks/results", exist_ok=True)
        with open(f"benchmarks/results/mpi_{COMM.size}.json", "w") as f:
            json.dump({"ranks": COMM.size, "allreduce": rows, "pmap": over}, f, indent=1)


if __name__ == "__main__":
    main()
