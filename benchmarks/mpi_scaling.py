"""Strong and weak scaling of examples/data_parallel.py on 1 and 2 MPI ranks, and the step
time the ring-allreduce cost model predicts for 8 .. 1024 ranks from those measurements.

    python -m benchmarks.mpi_scaling [--steps 300] [--ranks 1 2]

Strong scaling: a global batch of 256 split over P ranks; weak: 128 per rank.  Each run is
`mpiexec -n P python examples/data_parallel.py --steps S --batch B` (one compute thread
per rank); its "ms/step" excludes the first step (compilation).

Cost model: `T(P) = T_c(B / P) + T_ar(P, M)` with the compute `T_c(b) = c0 + c1 b` fitted
to the two 1-rank runs (b = 128 and 256; the per-call overheads land in c0) and a ring
allreduce of the M gradient bytes, `T_ar = 2 (P - 1) a + 2 (P - 1) / P * M / beta`.  The
latency a and bandwidth beta are taken twice: measured here (2 ranks on one machine, from
`benchmarks/results/mpi_2.json` of `mpiexec -n 2 python -m benchmarks.mpi_bench`, else from
the 2-rank step times), and for a cluster interconnect (a = 2 us, beta = 10 GB/s).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = (2e-6, 10e9)


def run_example(ranks, batch, steps):
    """-> ms per step of the data-parallel example."""
    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "examples"),
                                           os.environ.get("PYTHONPATH", "")]))
    mpiexec = shutil.which("mpiexec") or shutil.which("mpirun")
    r = subprocess.run([mpiexec, "-n", str(ranks), sys.executable, "examples/data_parallel.py",
                        "--steps", str(steps), "--batch", str(batch)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=1200)
    m = re.search(r"then ([0-9.]+) ms/step", r.stdout)
    if r.returncode or not m:
        raise RuntimeError(f"data_parallel.py failed:\n{r.stdout}\n{r.stderr[-3000:]}")
    return float(m.group(1))


def gradient_bytes():
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    from mlp_training import init_params
    from xforms.tree_util import tree_leaves
    params = init_params(np.random.default_rng(0), [8, 32, 32, 4])
    return sum(np.asarray(a).nbytes for a in tree_leaves(params))


def measured_link(step_ms, fit):
    """(a, beta) of this machine: from the allreduce sweep when it was run, else a latency
    from the 2-rank strong-scaling step (what it spends beyond its compute)."""
    path = os.path.join(ROOT, "benchmarks", "results", "mpi_2.json")
    if os.path.exists(path):
        rows = json.load(open(path))["allreduce"]
        small, big = rows[0], rows[-1]
        a = small["mpi4py_us"] * 1e-6 / 2                   # 2 (P - 1) a at P = 2
        beta = big["bytes"] / max(big["mpi4py_us"] * 1e-6 - 2 * a, 1e-12)
        return a, beta, "allreduce sweep (benchmarks/results/mpi_2.json)"
    extra = max(step_ms[("strong", 2)] - (fit[0] + fit[1] * 128), 1e-6) * 1e-3
    return extra / 2, 10e9, "2-rank step beyond its compute (bandwidth assumed 10 GB/s)"


def model(P, batch, fit, M, a, beta):
    t_c = (fit[0] + fit[1] * batch / P) * 1e-3
    t_ar = 2 * (P - 1) * a + 2 * (P - 1) / P * M / beta
    return t_c, t_ar


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    step_ms = {}
    for P in args.ranks:
        step_ms[("strong", P)] = run_example(P, 256, args.steps)
        step_ms[("weak", P)] = run_example(P, 128 * P, args.steps)
    load = os.getloadavg()[0]
    print(f"data-parallel MLP (8-32-32-4, float64), ms/step, {args.steps} steps; load average "
          f"{load:.2f} on {os.cpu_count()} cores")
    print(f"{'ranks':>6} {'strong (B=256)':>15} {'weak (B=128 P)':>15}")
    for P in args.ranks:
        print(f"{P:>6} {step_ms[('strong', P)]:>15.3f} {step_ms[('weak', P)]:>15.3f}")
    # T_c(b) = c0 + c1 b through the 1-rank runs at b = 128 (weak) and b = 256 (strong)
    c1 = (step_ms[("strong", 1)] - step_ms[("weak", 1)]) / 128
    fit = (step_ms[("weak", 1)] - 128 * c1, c1)
    M = gradient_bytes()
    print(f"\ncompute T_c(b) = {fit[0]:.3f} ms + {fit[1] * 1e3:.3f} us * b; gradients "
          f"M = {M} bytes")
    links = [measured_link(step_ms, fit), (*CLUSTER, "cluster interconnect (assumed)")]
    for a, beta, what in links:
        print(f"\npredicted ms/step, a = {a * 1e6:.2f} us, beta = {beta / 1e9:.2f} GB/s "
              f"({what})")
        print(f"{'P':>6} {'strong B=256 (compute + allreduce)':>38} {'weak B=128 P':>14}")
        for P in (8, 64, 256, 1024):
            tc, ta = model(P, 256, fit, M, a, beta)
            tw = sum(model(P, 128 * P, fit, M, a, beta))
            print(f"{P:>6} {(tc + ta) * 1e3:>12.3f} ({tc * 1e3:.3f} + {ta * 1e3:.3f})"
                  f"{'':>8} {tw * 1e3:>14.3f}")


if __name__ == "__main__":
    main()
